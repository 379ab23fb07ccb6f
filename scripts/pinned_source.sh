# Sourced by scripts/fetch-*.sh: a folder out of a file on PyPI (a source distribution, or a
# wheel that is only headers), pinned by its name and SHA-256, kept in ~/.cache/aml-launch.
# pinned_source_folder PACKAGE VERSION FILE SHA256 FOLDER_IN_FILE CACHE_NAME FILE_THAT_MUST_EXIST
# prints the kept folder's path. pip downloads it from the index pip is configured with (a
# mirror, a proxy: pip's own settings), with the first of $PYTHON, $AML_BUILD_PYTHON (the
# build's, cmake/PinnedSources.cmake), python3 and /usr/bin/python3 that has pip. Called from a
# build that pip isolates (pip install .), it leaves that build's PYTHONPATH, which hides the
# interpreter's own pip.
pinned_source_folder() {
  local package=$1 version=$2 file=$3 sha256=$4 inside=$5 name=$6 must=$7
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch/$name
  local leaf work kind python=""
  leaf=$(basename "$inside")
  if [ -f "$cache/$leaf/$must" ]; then
    echo "$cache/$leaf"
    return 0
  fi
  for candidate in ${PYTHON:-} ${AML_BUILD_PYTHON:-} python3 /usr/bin/python3; do
    if env -u PYTHONPATH -u PYTHONNOUSERSITE "$candidate" -m pip --version >/dev/null 2>&1; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "fetching $file: no Python with pip (tried: ${PYTHON:-} ${AML_BUILD_PYTHON:-} python3 /usr/bin/python3)" >&2
    return 1
  fi
  # Only this file: a source distribution is not built (--no-binary for it alone, its build's
  # own requirements as wheels), a wheel is not resolved against this machine.
  case "$file" in
    *.whl) kind=(--only-binary :all:) ;;
    *) kind=(--no-binary "$package") ;;
  esac
  work=$(mktemp -d)
  if ! env -u PYTHONPATH -u PYTHONNOUSERSITE "$python" -m pip download -q --no-deps "${kind[@]}" \
    "$package==$version" -d "$work" >"$work/pip.log" 2>&1 || [ ! -f "$work/$file" ]; then
    tail -5 "$work/pip.log" >&2
    echo "fetching $file: $python -m pip download $package==$version failed (above)" >&2
    rm -rf "$work"
    return 1
  fi
  if ! echo "$sha256  $work/$file" | sha256sum -c --quiet - >/dev/null 2>&1; then
    echo "fetching $file: it is not the pinned one (SHA-256 $sha256)" >&2
    rm -rf "$work"
    return 1
  fi
  case "$file" in
    *.whl | *.zip) env -u PYTHONPATH "$python" -m zipfile -e "$work/$file" "$work" ;;
    *) tar xzf "$work/$file" -C "$work" "$inside" ;;
  esac
  mkdir -p "$cache"
  [ -f "$cache/$leaf/$must" ] || rm -rf "${cache:?}/$leaf"  # a broken leftover
  # One rename: two builds that fetch at once (pip install . beside scripts/release.sh) both
  # end with a whole folder, and neither removes the one the other compiles from.
  if ! mv -T "$work/$inside" "$cache/$leaf" 2>/dev/null && [ ! -f "$cache/$leaf/$must" ]; then
    echo "fetching $file: could not keep it in $cache/$leaf" >&2
    rm -rf "$work"
    return 1
  fi
  rm -rf "$work"
  echo "$cache/$leaf"
}
