#!/usr/bin/env bash
# The README's test command must pass in a clone with nothing beside it: no script or build
# file of the suite may look up a path outside the repository, except where it is marked
# optional ("outside-the-repository: optional", on that line or the one before) and then
# checks the same thing with what the repository carries when the path is not there.
# Found: a ../shared lookup, ${PROJECT_SOURCE_DIR}/.. or ${CMAKE_SOURCE_DIR}/.., or more
# "../" in a row than the file's own folder is deep (a path relative to the file's folder
# that climbs out of the repository). Comment lines are not lookups.
# usage: self_contained_test.sh REPO_ROOT
set -u
ROOT=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
cd "$ROOT"
marker='outside-the-repository: optional'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -co --exclude-standard)
else
  mapfile -t files < <(find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
fi
scanned=0 marked=()
leaks=()
for f in "${files[@]}"; do
  case "$f" in
    *.sh | *.py | *.cmake | *CMakeLists.txt | .ci/* | *.cpp | *.hpp | *.c) ;;
    *) continue ;;
  esac
  [ -f "$f" ] || continue
  scanned=$((scanned + 1))
  depth=$(awk -F/ '{print NF - 1}' <<<"$f")
  previous=""
  lineno=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    code=${line#"${line%%[![:space:]]*}"}
    case "$code" in '#'* | '//'*) previous=$line; continue ;; esac
    climbs=$(grep -o '\(\.\./\)\+\(\.\.\)\?' <<<"$code" | awk '{n = gsub(/\.\./, ""); if (n > m) m = n} END {print m + 0}')
    if grep -Eq '\.\./shared|(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/\.\.' <<<"$code" || [ "$climbs" -gt "$depth" ]; then
      if grep -qF "$marker" <<<"$line$previous"; then
        marked+=("$f:$lineno")
      else
        leaks+=("$f:$lineno: $code")
      fi
    fi
    previous=$line
  done <"$f"
done

check "the suite's scripts and build files were read ($scanned files)" [ "$scanned" -gt 50 ]
[ ${#marked[@]} = 0 ] || echo "optional lookups outside the repository (marked): ${marked[*]}"
check "no unmarked lookup outside the repository (${#leaks[@]} found)" [ ${#leaks[@]} = 0 ] ||
  printf '  %s\n' "${leaks[@]}"
finish
