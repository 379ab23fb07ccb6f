#!/usr/bin/env bash
# The wheel of scripts/release.sh as a user gets it: tagged manylinux_2_17 (auditwheel agrees),
# installed into fresh virtual environments of both Pythons here (PyPI's python3 and Debian's),
# it puts the native aml-launch on PATH, `python -m aml_launch` runs it, `import aml_launch`
# reads the same topology as the C ABI (tests/unit/rank_cases.json), TopologyError carries the
# launcher's own message, workers started by the wheel's aml-launch see their ranks, and
# --preflight=gloo finds the wheel's aml-preflight beside it.
# usage: wheel_test.sh WHEEL
set -u
WHEEL=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

check "the wheel is tagged manylinux_2_17 ($(basename "$WHEEL"))" \
  grep -q -- "-py3-none-.*manylinux_2_17_x86_64.*\.whl$" <<<"$WHEEL"
show=$(python3 -m auditwheel show "$WHEEL" 2>&1)
check "auditwheel show agrees: consistent with manylinux_2_17_x86_64" \
  grep -q 'consistent with the following platform tag: "manylinux_2_17_x86_64"' <<<"$(tr '\n' ' ' <<<"$show" | tr -s ' ')"

# Its rank library shows the C ABI only (no libc++ beside PyTorch's and TensorFlow's).
mkdir -p "$WORK/lib"
unzip -q -o -j "$WHEEL" 'aml_launch/libaml_rank.so' -d "$WORK/lib"
out=$(bash "$HERE/../packaging/exports_test.sh" "$WORK/lib/libaml_rank.so" c 2>&1)
check "the wheel's libaml_rank.so exports the C ABI only ($(tail -1 <<<"$out"))" grep -q " 0 failed$" <<<"$out" ||
  echo "$out"

# Gloo is compiled into its aml-preflight: Gloo's license notice comes with the wheel.
check "the wheel carries Gloo's license notice" bash -c \
  'unzip -l "$1" | grep -q "aml_launch-.*\.dist-info/.*gloo-BSD-3-Clause.txt"' _ "$WHEEL" ||
  unzip -l "$WHEEL" | grep -i licen

# The sdist beside it (the wheel was built from it): the version's source, the executable's commit.
sdist=$(ls "$(dirname "$WHEEL")"/aml_launch-*.tar.gz 2>/dev/null)
version=$(basename "$WHEEL" | cut -d- -f2)
check "the sdist of the same version is beside the wheel ($(basename "${sdist:-none}"))" \
  bash -c '[ "$(basename "$1")" = "aml_launch-$2.tar.gz" ] && tar tzf "$1" | grep -qx "aml_launch-$2/src/plan/build_plan.cpp"' _ "$sdist" "$version"
commit=$(git -C "$HERE" rev-parse --short=12 HEAD)
check "the wheel's aml-launch names the commit it was built from (${commit:-no checkout})" \
  bash -c '[ -n "$3" ] && unzip -p "$1" "aml_launch-*.data/scripts/aml-launch" >"$2/bin" && chmod +x "$2/bin" && "$2/bin" --version | grep -q "(commit $3)"' _ "$WHEEL" "$WORK" "$commit"

venvs=0
for python in python3 /usr/bin/python3; do
  venv="$WORK/venv-$((++venvs))"
  label="$("$python" -c 'import sys; print(f"Python {sys.version.split()[0]}")') ($python)"
  if ! "$python" -m venv "$venv" >"$WORK/venv.log" 2>&1 ||
    ! "$venv/bin/pip" install -q --no-index "$WHEEL" >>"$WORK/venv.log" 2>&1; then
    cat "$WORK/venv.log"
    check "$label: the wheel installs into a fresh venv" false
    continue
  fi
  bin="$venv/bin/aml-launch"
  check "$label: pip put aml-launch on the venv's PATH, the native executable itself" \
    bash -c '[ -x "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d " ")" = "177ELF" ]' _ "$bin"
  check "$label: python -m aml_launch --version runs it" bash -c \
    '"$1/bin/python" -m aml_launch --version | grep -Eq "^aml-launch [0-9]+\.[0-9]+\.[0-9]+"' _ "$venv"
  out=$("$venv/bin/python" "$HERE/../unit/rank_cases_test.py" package "$venv/bin/python" 2>&1)
  check "$label: import aml_launch: the rank cases ($(tail -1 <<<"$out"))" grep -q " 0 failed$" <<<"$out" ||
    echo "$out"

  # The same message from the package as from the launcher, for the same broken environment.
  error=$(env -i PATH=/usr/bin:/bin RANK=9 WORLD_SIZE=2 "$venv/bin/python" -c \
    'import aml_launch
try:
    aml_launch.rank()
except aml_launch.TopologyError as e:
    print(e)' 2>&1)
  launcher=$(env -i PATH=/usr/bin:/bin RANK=9 WORLD_SIZE=2 "$bin" --dry-run -- true 2>&1)
  check "$label: TopologyError says what the launcher says ($error)" bash -c \
    '[ -n "$1" ] && [ "$2" = "aml-launch: error: $1" ]' _ "$error" "$launcher"

  # Workers of the wheel's aml-launch, reading their ranks through the wheel's package.
  out=$(env PATH="$venv/bin:/usr/bin:/bin" aml-launch --nproc-per-node 2 -- python -c \
    'import aml_launch as a, json; t = a.topology(); print(json.dumps([a.rank(), a.world_size(), a.is_master(), t["source"], t["launch"]]))' 2>&1)
  check "$label: aml-launch --nproc-per-node 2 -- python -c 'import aml_launch ...' ($(tr '\n' ' ' <<<"$out"))" bash -c \
    'grep -qx "\[rank 0\] \[0, 2, true, \"aml-launch\", \"per-process\"\]" <<<"$1" &&
     grep -qx "\[rank 1\] \[1, 2, false, \"aml-launch\", \"per-process\"\]" <<<"$1"' _ "$out"

  # The preflight came with the wheel, Gloo in it; Open MPI (this machine's) opened at run time.
  out=$(env PATH="$venv/bin:/usr/bin:/bin" AML_PREFLIGHT_MAX_BYTES=65536 aml-launch --nproc-per-node 2 \
    --preflight=gloo -- echo command-ran 2>&1)
  check "$label: --preflight=gloo from the venv: passed, then the command" bash -c \
    'grep -q "aml-preflight: passed" <<<"$1" && [ "$(grep -c command-ran <<<"$1")" = 2 ]' _ "$out" || echo "$out"
  out=$(env PATH="$venv/bin:/usr/bin:/bin" AML_PREFLIGHT_MAX_BYTES=65536 \
    mpirun --allow-run-as-root --oversubscribe -np 2 aml-launch --no-group --preflight=mpi -- echo command-ran 2>&1)
  check "$label: --preflight=mpi under mpirun: the wheel's preflight opens this machine's Open MPI" bash -c \
    'grep -q "allreduce over 2 ranks (mpi)" <<<"$1" && grep -q "aml-preflight: passed" <<<"$1" &&
     [ "$(grep -c command-ran <<<"$1")" = 2 ]' _ "$out" || echo "$out"

  # aml_launch.progress(): a worker that computes for 3 s without a word is not hung
  # (--hang-timeout 1) while it calls it; outside aml-launch it does nothing.
  out=$(env PATH="$venv/bin:/usr/bin:/bin" aml-launch --hang-timeout 1 -- python -c \
    'import aml_launch, time
end = time.time() + 3
step = 0
while time.time() < end:
    step += 1
    aml_launch.progress(step)
print("done after", step)' 2>&1)
  check "$label: aml_launch.progress() keeps a silent, busy worker from counting as hung ($(tail -1 <<<"$out"))" \
    grep -q "^done after [0-9]" <<<"$out"
  check "$label: aml_launch.progress() outside aml-launch does nothing" \
    env -i PATH=/usr/bin:/bin "$venv/bin/python" -c 'import aml_launch; aml_launch.progress(); aml_launch.progress(7)'
done
finish
