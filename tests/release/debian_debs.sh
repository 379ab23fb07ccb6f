#!/usr/bin/env bash
# Downloads Debian packages of a suite and architecture from the Debian mirror this machine
# already uses, and prints their .deb paths. apt-get runs with a source list, lists, status and
# cache of its own: the machine's apt setup is neither read for packages nor changed. The .debs
# are kept in ~/.cache/aml-launch-tests/SUITE-ARCH.
# usage: debian_debs.sh SUITE ARCH PACKAGE...   (ARCH: amd64, arm64)
set -eu
SUITE=$1 ARCH=$2
shift 2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch-tests/$SUITE-$ARCH
mkdir -p "$cache"

missing=()
for package in "$@"; do
  ls "$cache/${package}"_*_"$ARCH".deb "$cache/${package}"_*_all.deb >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  # The Debian mirror of this machine's own apt sources (deb822 or one-line).
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^ ]*\/debian\)\/*[[:space:]].*/\2/p' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -1)
  [ -n "$mirror" ] || { echo "debian_debs: no Debian mirror in this machine's apt sources" >&2; exit 1; }
  apt_dir=$(mktemp -d)
  trap 'rm -rf "$apt_dir"' EXIT
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
  : >"$apt_dir/status"  # no installed packages: the candidate is the suite's, not the machine's
  echo "deb [arch=$ARCH signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main" \
    >"$apt_dir/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
            -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/status" -o Dir::Cache="$apt_dir"
            -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Get::List-Cleanup=0
            -o APT::Architecture="$ARCH" -o APT::Architectures="$ARCH")
  apt-get -qq "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log" >&2; exit 1; }
  (cd "$cache" && apt-get -qq "${apt_opts[@]}" download "${missing[@]}" >/dev/null 2>"$apt_dir/download.log") ||
    { cat "$apt_dir/download.log" >&2; exit 1; }
fi
for package in "$@"; do
  ls "$cache/${package}"_*_"$ARCH".deb "$cache/${package}"_*_all.deb 2>/dev/null | head -1
done
