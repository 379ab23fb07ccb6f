#!/usr/bin/env bash
# Makes a root folder with an old glibc: Debian 11's libc6 (glibc 2.31, as Ubuntu 20.04 and the
# Azure ML base images have) from the Debian archive (tests/release/debian_debs.sh: apt-get with
# sources of its own), and busybox for the workers' shell.
# usage: old_glibc_root.sh ROOT
set -eu
ROOT=$1
SUITE=${AML_OLD_GLIBC_SUITE:-bullseye}
mkdir -p "$ROOT"
deb=$("$(dirname "$0")/debian_debs.sh" "$SUITE" amd64 libc6)

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
