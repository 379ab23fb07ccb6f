#!/usr/bin/env bash
# Makes a root folder with an old glibc: Debian 11's libc6 (glibc 2.31, as Ubuntu 20.04 and the
# Azure ML base images have) from the Debian archive, and busybox for the workers' shell.
# apt-get runs with a source list, lists and cache of its own: the machine's apt setup is
# neither read for packages nor changed. The .deb is kept in ~/.cache/aml-launch-tests.
# usage: old_glibc_root.sh ROOT
set -eu
ROOT=$1
SUITE=${AML_OLD_GLIBC_SUITE:-bullseye}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch-tests/$SUITE
mkdir -p "$cache" "$ROOT"

# The Debian mirror this machine already uses, from its own apt sources (deb822 or one-line).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^ ]*\/debian\)\/*[[:space:]].*/\2/p' \
  /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -1)
[ -n "$mirror" ] || { echo "old_glibc_root: no Debian mirror in this machine's apt sources" >&2; exit 1; }

deb=$(ls "$cache"/libc6_*_amd64.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
  apt_dir=$(mktemp -d)
  trap 'rm -rf "$apt_dir"' EXIT
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
  : >"$apt_dir/status"  # no installed packages: the candidate is the suite's, not the machine's
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main" >"$apt_dir/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
            -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/status" -o Dir::Cache="$apt_dir"
            -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Get::List-Cleanup=0)
  apt-get -qq "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log" >&2; exit 1; }
  (cd "$cache" && apt-get -qq "${apt_opts[@]}" download libc6 >/dev/null 2>"$apt_dir/download.log") ||
    { cat "$apt_dir/download.log" >&2; exit 1; }
  deb=$(ls "$cache"/libc6_*_amd64.deb | head -1)
fi

dpkg-deb -x "$deb" "$ROOT"
# Debian 11 keeps its libraries in /lib, reached also through /usr/lib (not merged yet).
mkdir -p "$ROOT/bin" "$ROOT/etc" "$ROOT/tmp" "$ROOT/proc" "$ROOT/lib64"
[ -e "$ROOT/lib64/ld-linux-x86-64.so.2" ] || [ -L "$ROOT/lib64/ld-linux-x86-64.so.2" ] || ln -s /lib/x86_64-linux-gnu/ld-2.31.so "$ROOT/lib64/ld-linux-x86-64.so.2"
cp "$(command -v busybox)" "$ROOT/bin/busybox"
for applet in sh sleep cat grep ls echo kill true wc seq tr cut sed head tail date env test \[ mkdir rm touch; do
  ln -sf busybox "$ROOT/bin/$applet"
done
chmod 1777 "$ROOT/tmp"
mkdir -p "$ROOT/dev"
[ -c "$ROOT/dev/null" ] || mknod -m 666 "$ROOT/dev/null" c 1 3
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"
printf 'hosts: files\n' >"$ROOT/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n127.0.0.1 node0.training.internal\n' >"$ROOT/etc/hosts"
