# Sourced by scripts/fetch-gloo.sh and scripts/fetch-sodium.sh: a folder out of a source
# distribution on PyPI, pinned by version and SHA-256, kept in ~/.cache/aml-launch.
# pinned_sdist_folder PACKAGE VERSION SHA256 FOLDER_IN_TARBALL CACHE_NAME FILE_THAT_MUST_EXIST
# prints the kept folder's path (PYTHON: the interpreter whose pip downloads; python3).
pinned_sdist_folder() {
  local package=$1 version=$2 sha256=$3 inside=$4 name=$5 must=$6
  local python=${PYTHON:-python3}
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch/$name
  local leaf work tarball
  leaf=$(basename "$inside")
  if [ ! -f "$cache/$leaf/$must" ]; then
    work=$(mktemp -d)
    "$python" -m pip download -q --no-deps --no-binary :all: "$package==$version" -d "$work" \
      >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; rm -rf "$work"; return 1; }
    tarball=$(ls "$work"/*.tar.gz)
    echo "$sha256  $tarball" | sha256sum -c --quiet - >&2 ||
      { echo "$(basename "$tarball") is not the pinned $package $version source" >&2; rm -rf "$work"; return 1; }
    tar xzf "$tarball" -C "$work" "$inside"
    mkdir -p "$cache"
    rm -rf "${cache:?}/$leaf"
    mv "$work/$inside" "$cache/$leaf"
    rm -rf "$work"
  fi
  echo "$cache/$leaf"
}
