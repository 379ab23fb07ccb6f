#!/usr/bin/env bash
# README's "Get it", from a clone, as a newcomer follows it: a copy of the tree as a clone has
# it, a new venv of Debian's Python (where its torch is), and README's get-it block run there as
# written. `pip install .` builds the portable aml-launch, fetching the pinned sources it
# compiles in, and `aml-launch --nproc-per-node 2 train.py` runs a torch gloo job. Then what pip
# installed: the preflight with Gloo, `import aml_launch`, glibc 2.17's symbols alone. And a
# build that cannot fetch the pinned sources says which and what to do, at once.
# usage: get_it_test.sh
# scripts/test.sh runs it beside the release build at idle priority, where it takes only the CPU
# the other tests leave (nothing here is timed but the offline build's stop).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/../blackbox/assert.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The block under <!-- doc-test: get-it --> in README.md.
block=$(awk '/^<!-- doc-test: get-it -->$/ {on = 1; next} on && /^```/ {if (in_block) exit; in_block = 1; next}
             in_block {print}' "$ROOT/README.md")
check "README.md has a get-it block with pip install . in it" grep -q "^pip install \.  " <<<"$block" ||
  { finish; exit; }

# What a clone has: the tracked files and those git does not ignore, as they are now.
mkdir "$WORK/aml-launch"
(cd "$ROOT" && git ls-files -z -c -o --exclude-standard | xargs -0 -I{} sh -c '[ -e "$1" ] && printf "%s\0" "$1"' _ {} |
  tar --null -T - -cf - | tar -xf - -C "$WORK/aml-launch")
cp "$HERE/gloo_train.py" "$WORK/aml-launch/train.py"
/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
started=$(date +%s)
# The block as written. Its build folder is the one scripts/release.sh gives this architecture's
# wheel in its own tree, so that where ccache is the compiler launcher (scripts/test.sh) the two
# share their objects (cmake/PortableCompilerCache.cmake); pip's command is the user's.
(cd "$WORK/aml-launch" && . "$WORK/venv/bin/activate" &&
  SKBUILD_BUILD_DIR="build-wheel/$(uname -m)" bash -e -c "$block") >"$WORK/block.log" 2>&1
status=$?
took=$(($(date +%s) - started))
check "README's get-it block runs from a fresh tree and a new venv (exit $status; $took s)" [ "$status" = 0 ] ||
  tail -40 "$WORK/block.log"
check "its 2 workers ran a torch gloo all_reduce" bash -c \
  "grep -q 'rank 0 of 2: all_reduce 3' '$WORK/block.log' && grep -q 'rank 1 of 2: all_reduce 3' '$WORK/block.log'" ||
  tail -20 "$WORK/block.log"

bin="$WORK/venv/bin"
check "pip installed aml-launch, aml-preflight and aml_launch" bash -c \
  "[ -x '$bin/aml-launch' ] && [ -x '$bin/aml-preflight' ] && '$bin/python' -c 'import aml_launch'"
version=$("$bin/aml-launch" --version 2>&1)
check "its preflight has Gloo compiled in ($(grep backends <<<"$version"))" grep -q "^aml::comm backends: gloo" <<<"$version"
newest=$(objdump -T "$bin/aml-launch" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
check "it needs glibc 2.17 or older symbols alone ($newest)" bash -c \
  "printf '%s\n' GLIBC_2.17 '$newest' | sort -V -C"

# Where PyPI cannot be reached: the first pinned source named, and how to give it, in seconds
# (at the tests' own priority where the suite runs this at idle priority: its time is the stop's).
normal=()
chrt --other 0 true 2>/dev/null && normal=(chrt --other 0)
started=$(date +%s%N)
XDG_CACHE_HOME="$WORK/no-cache" PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_NO_CACHE_DIR=1 \
  PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_RETRIES=0 \
  "${normal[@]}" cmake -S "$WORK/aml-launch" -B "$WORK/offline" -DAML_PORTABLE=ON >"$WORK/offline.log" 2>&1
status=$?
ms=$((($(date +%s%N) - started) / 1000000))
check "offline: the portable build stops (exit $status, $ms ms), naming the source and -DAML_JSON_INCLUDE_DIR" bash -c \
  "[ $status != 0 ] && [ $ms -lt 30000 ] && tr -s ' \n' ' ' <'$WORK/offline.log' |
   grep -q 'nlohmann_json 3.11.2 from a pinned copy, and it could not be fetched.*-DAML_JSON_INCLUDE_DIR=DIR'" ||
  cat "$WORK/offline.log"
finish
