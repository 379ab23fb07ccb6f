#!/usr/bin/env bash
# Command 2 of the README: the whole test suite.
#  1. a clang build with AddressSanitizer + UndefinedBehaviorSanitizer (and fuzzer coverage), a
#     unity build (that every header stands on its own includes is the main build's check:
#     cmake/HeadersAlone.cmake), then every test but those that load the rank library into
#     python3 (an ASan library cannot be loaded there), the style check, the packaging tests
#     (their consumer is built by gcc), the release tests and the container test (they test the
#     release artifacts), the client frameworks (they test the launcher's environment, not its
#     memory safety), the docs' tests (their Python loads the rank library), and the tests whose
#     time is another program's, on paths of the launcher's that other tests here take: JAX's
#     (Python and XLA), the scheduler examples' (Python), a real Slurm's daemons, 256 launchers
#     at once (the stage's one scale test would hold the machine alone: the 3-node and elastic
#     tests cover the same code), and the 3-node torch jobs under each scheduler's variables
#     (torch's time; the hostile clients are launcher.store_hostile's, the losses
#     launcher.node_liveness's and elastic's)
#  2. the main gcc build (a user's Release build, with each header compiled alone too:
#     scripts/build.sh): the GPU-only tests (reported as skipped where there is no GPU), then
#     every other test, the client frameworks among them; then the release artifacts' tests
#     (scripts/release.sh for x86_64 and aarch64), the newcomers' walks through the docs among
#     them (they take the release's binaries)
#  3. beside the tests, at low priority (they take only the CPU the tests leave, so the tests
#     run as on a quiet machine), the builds the next stage's tests wait for ahead of the rest:
#     during the sanitizer tests the main build, and beside it the libFuzzer targets
#     (scripts/fuzz.sh --suite: each kept corpus replayed, then a short burst of new inputs);
#     then the release build (for step 2's release tests), and behind it README's pip install .
#     from a fresh tree (docs.get_it) and the build a user types (gcc Release;
#     scripts/build-types.sh: warnings are errors only in the project's own builds)
# Every compile goes through ccache (its folder, ~/.cache/ccache, outlives the clone, as the
# pinned sources in ~/.cache/aml-launch do): the gcc Release build a user types takes every
# object from the main build, README's pip install . its x86_64 objects from the release's
# (both Zig, cmake/PortableCompilerCache.cmake), and a run after another of the same sources
# compiles nothing again, in any clone (no compile command holds the clone's path). Each build's
# hit rate is printed at the end.
# Each stage's time is printed at the end (and at a failure, up to it), with the CPUs' busy share
# meanwhile, each job beside the tests' own CPU-seconds and the suite's core-seconds in all, each
# build's ccache hits, and the 20 slowest tests; the last line counts every test of every ctest
# run, and the machine check.
# The machine check (tests/machine/machine_state.py, DESIGN §7): before the first build, that no
# earlier run left the machine damaged (/dev/null and the other devices, /tmp, /etc's files; a
# damaged machine stops the suite there, repaired by nothing but a person or scripts/setup.sh),
# and at the end, that the suite left it as it found it (devices, /etc/hosts, /etc/resolv.conf,
# /tmp's mode, temporary entries, network namespaces and interfaces, mounts, listening sockets,
# the suite's processes): a change is a failed test, named.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
repo=$PWD
machine_state=(/usr/bin/python3 "$repo/tests/machine/machine_state.py")
machine_passed=0 machine_failed=0
if ! "${machine_state[@]}" sane; then
  echo "0 passed, 1 failed"
  exit 1
fi
machine_before=$("${machine_state[@]}" snapshot /dev/stdout)
netns_mounted_before=$(findmnt -n /run/netns >/dev/null && echo yes || echo no)
# Every process of the suite carries it (the tests' own netns launchers carry AML_TEST_MARK).
export AML_TEST_SUITE="suite-$$-$(date +%s)"
jobs=$(nproc)
# Tests at once: two a core. A test mostly waits (for its processes, a timeout, a line): with
# nothing beside them (a run whose builds all come from ccache), the sanitizer tests took 525 s
# at three, 444 s at four (the two cores 62 % busy). Where a build runs beside them it takes
# the rest, at its lower priority. RUN_SERIAL tests run alone.
test_jobs=$((jobs * 2))
export AML_WARNINGS_AS_ERRORS=ON  # the project's own builds (scripts/build.sh reads it)
work=$(mktemp -d)
# ccache for every compile of every build, the packaging tests' and pip's among them. Paths
# under the repository are hashed relative to each build folder (the main build and the build a
# user types share objects); each build counts its own hits (CCACHE_STATSLOG, set per build).
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$repo"
# A clone elsewhere (CI's, after a developer's run) takes the same objects: the clone's path
# leaves __FILE__ and the debug info (-ffile-prefix-map: "src/x.cpp", not "/clone/src/x.cpp"),
# so neither it nor the build folder (hash_dir) need be hashed. CMake's unity files include
# their sources by absolute path: those hit in ccache's preprocessed mode, the rest direct.
prefix_map="-ffile-prefix-map=$repo/="
export CFLAGS="$prefix_map" CXXFLAGS="$prefix_map" CCACHE_IGNOREOPTIONS='-ffile-prefix-map=*' CCACHE_NOHASHDIR=true
mkdir "$work/ccache"

# What the machine's CPUs did, from /proc/stat: "BUSY IDLE" in clock ticks since boot (busy:
# user, nice, system, irq, softirq, steal; idle: idle, iowait). A stage's share of busy ticks
# says whether its time was the CPUs' work (near 100 %: only less work makes it shorter) or
# waiting (room for the work beside it).
ticks=$(getconf CLK_TCK)
cpu_ticks() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((idle + iowait))"
}
busy_share() {  # busy_share "BUSY IDLE" "BUSY IDLE": the CPUs' busy share in between, in %
  local b0 i0 b1 i1 all
  read -r b0 i0 <<<"$1"
  read -r b1 i1 <<<"$2"
  all=$(((b1 - b0) + (i1 - i0)))
  echo $(((b1 - b0) * 100 / (all > 0 ? all : 1)))
}
stages=()
stage_start=$(date +%s)
stage_cpu=$(cpu_ticks)
stage_name=""
stage() {  # stage NAME: ends the stage before (its time and the CPUs' busy share kept), starts NAME
  local now cpu
  now=$(date +%s) cpu=$(cpu_ticks)
  [ -z "$stage_name" ] || stages+=("$(printf '%5d s  %s (CPUs busy %d %%)' $((now - stage_start)) \
    "$stage_name" "$(busy_share "$stage_cpu" "$cpu")")")
  stage_name=$1 stage_start=$now stage_cpu=$cpu
  [ -z "$1" ] || echo "== $1"
}
suite_start=$(date +%s)
suite_cpu=$(cpu_ticks)
declare -A beside=()
finish_up() {
  local status=$?
  local stopped_in=$stage_name broken=0
  stage ""
  for pid in "${beside[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  local cpu_now busy_then busy_now
  cpu_now=$(cpu_ticks)
  read -r busy_then _ <<<"$suite_cpu"
  read -r busy_now _ <<<"$cpu_now"
  echo "== stage times (the whole suite: $(($(date +%s) - suite_start)) s; its CPUs busy" \
    "$(busy_share "$suite_cpu" "$cpu_now") %: $(((busy_now - busy_then) / ticks)) core-seconds on $jobs cores)"
  printf '%s\n' "${stages[@]}"
  ccache_hits
  slowest_tests 20
  # The closing line: every test of every ctest run, as ctest counted them.
  local passed=0 failed=0 total bad
  for log in "$work"/ctest-*.log; do
    [ -e "$log" ] || continue
    read -r total bad < <(sed -nE 's/.* tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\2 \1/p' "$log" | tail -1) ||
      continue
    passed=$((passed + total - bad)) failed=$((failed + bad))
  done
  # A stage that stopped the suite with no failed test to show for it (a build that failed):
  # a failed test of the closing line, named, never a run that only looks shorter.
  if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
    echo "FAIL the stage \"${stopped_in:-the set-up}\" stopped the suite (exit $status)"
    broken=1
  fi
  rm -rf "$work" /tmp/aml-launch-test-ports
  check_machine || status=1
  echo "$((passed + machine_passed)) passed, $((failed + machine_failed + broken)) failed"
  exit "$status"
}
ccache_hits() {  # each build's compiles: how many ccache answered from the cache
  local log calls hits
  echo "== ccache hits (of each build's compiles; ~/.cache/ccache)"
  for log in "$work"/ccache/*; do
    [ -e "$log" ] || continue
    calls=$(grep -c '^# ' "$log" || true)
    hits=$(grep -cxE '(direct|preprocessed)_cache_hit' "$log" || true)
    printf '%5d of %5d (%3d %%)  %s\n' "$hits" "$calls" $((calls > 0 ? hits * 100 / calls : 0)) "${log##*/}"
  done
}
slowest_tests() {  # slowest_tests N: the N longest tests of every ctest run, with their stage
  echo "== the $1 slowest tests"
  for log in "$work"/ctest-*.log; do
    [ -e "$log" ] || continue
    sed -nE "s/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec\$/\2 \1/p" "$log" |
      sed "s/\$/ (${log##*/ctest-})/; s/\.log)\$/)/"
  done | sort -rn | head -"$1" | awk '{printf "%7.1f s  %s %s\n", $1, $2, $3}'
}
check_machine() {  # the machine as the suite found it (one test of the closing line)
  # ip netns add makes /run/netns a mount point of its own, once: the suite's, when it was not one.
  if [ "$netns_mounted_before" = no ] && findmnt -n /run/netns >/dev/null &&
    [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    umount /run/netns && echo "machine check: unmounted /run/netns (made by the suite's first ip netns add)"
  fi
  if "${machine_state[@]}" compare /dev/stdin --path "$repo" --settle 20 <<<"$machine_before"; then
    machine_passed=1
  else
    machine_failed=1
    return 1
  fi
}
trap finish_up EXIT

# beside NAME [--first] COMMAND...: runs beside the foreground stages at idle priority, in a
# process group of its own; its output goes to a log shown if it fails. --first: a build the
# next stage's tests wait for, ahead of the other jobs beside (nice 19 rather than the idle
# class: the tests still come first, with 1024 shares of a core to its 15 where both want one;
# an idle job gets 3).
beside() {
  local name=$1 priority=(chrt --idle 0)
  shift
  if [ "$1" = --first ]; then priority=(nice -n 19) && shift; fi
  set -m
  (
    started=$(date +%s) status=0
    "${priority[@]}" "$@" >"$work/$name.log" 2>&1 || status=$?
    # Its CPU time (user + system, of every process it waited for): what it cost the tests.
    times >"$work/$name.times"  # not in a pipe: a subshell's children would be none
    cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
      printf "%d", s }' "$work/$name.times")
    echo "$status $(($(date +%s) - started)) $cpu" >"$work/$name.done"
  ) &
  set +m
  beside[$name]=$!
}
# wait_for NAME: until it is done; its time goes among the stage times.
wait_for() {
  local status took cpu
  wait "${beside[$1]}" || true
  unset "beside[$1]"
  read -r status took cpu <"$work/$1.done"
  stages+=("$(printf '%5d s  %s (beside the tests, idle priority; %d core-seconds)' "$took" "$1" "$cpu")")
  if [ "$status" != 0 ]; then
    tail -60 "$work/$1.log"
    echo "$1 failed (status $status)"
    return 1
  fi
}
run_ctest() {  # run_ctest NAME ARGS...: ctest with its output kept for the count at the end
  local name=$1
  shift
  (set -o pipefail; ctest -j"$test_jobs" --output-on-failure "$@" 2>&1 | tee "$work/ctest-$name.log")
}

stage "sanitizer build (clang, ASan + UBSan, unity)"
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$san_flags $prefix_map -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san_flags $prefix_map" \
  -DCMAKE_EXE_LINKER_FLAGS="$san_flags" -DCMAKE_SHARED_LINKER_FLAGS="$san_flags" \
  -DAML_BUILD_FUZZERS=ON -DAML_BUILD_BENCHMARKS=OFF -DAML_WARNINGS_AS_ERRORS=ON >/dev/null
CCACHE_STATSLOG="$work/ccache/sanitizer build" cmake --build build-san

beside "main build (gcc)" --first env CCACHE_STATSLOG="$work/ccache/main build" scripts/build.sh
# The fuzzers from the sanitizer build, beside the main build: one core's work for a minute.
# Their copies of the corpora in the suite's own folder: a suite stopped by a failed stage kills
# them before they clean up, and what they leave goes with that folder.
beside "fuzzing" env TMPDIR="$work" scripts/fuzz.sh --suite
stage "sanitizer tests"
# The elastic suite under etcd and the lease's fault suite run once, in the main stage: here
# etcd's code is covered by its own suite (launcher.etcd_rendezvous) and the elastic suite on
# node 0's store.
(cd build-san && run_ctest sanitizer -E 'python_ctypes|torch_allreduce|style\.|packaging\.|container\.|release\.|clients\.|docs\.|elastic_etcd|lease_faults|launcher\.jax$|examples\.schedulers|cluster\.slurm|cluster\.scale_256|launcher\.multinode|chaos\.')

stage "waiting for the main build"
wait_for "main build (gcc)"
# The release's tests (step 2) wait for this one through their fixture (tests/release/release_build.sh).
export AML_RELEASE_BUILT_BY="$work/release"
exec {release_lock}>"$AML_RELEASE_BUILT_BY.lock"
flock "$release_lock"
# Ahead of README's pip install . (below), which compiles the same x86_64 objects a few times
# slower and so mostly takes them from ccache.
# Its temporary folders (python -m build's isolated venvs) in the suite's own: a suite stopped
# by a failed stage kills it before it cleans up.
beside "release build (x86_64 and aarch64)" --first env TMPDIR="$work" \
  CCACHE_STATSLOG="$work/ccache/release build (x86_64 and aarch64)" bash -c \
  'scripts/release.sh build/dist 2>&1 | tee "$1.log"; status=${PIPESTATUS[0]}; echo $status >"$1"; exit $status' _ \
  "$AML_RELEASE_BUILT_BY"
exec {release_lock}>&-  # the build holds it now, until it ends
# README's pip install . from a fresh tree: its own build, beside the release build. Its ctest
# log is counted too. Its folders under the suite's own: a test killed at its timeout leaves
# nothing in /tmp.
beside "ctest-readme-get-it" env CCACHE_STATSLOG="$work/ccache/README's pip install ." TMPDIR="$work" bash -c \
  'cd build && ctest -R "^docs\.get_it$" --output-on-failure'
# The gcc Release build a user types: every object from the main build's, through ccache.
beside "the builds a user types" env CCACHE_STATSLOG="$work/ccache/the builds a user types" \
  scripts/build-types.sh

cd build
stage "GPU-only tests"
ctest -L gpu --output-on-failure
stage "every other test"
run_ctest main -LE 'gpu|chaos' -E '^(release|container)\.|^docs\.(walk_|get_it)'
# The fault campaigns (tests/chaos) alone among the tests, all at once (each on its own
# namespaces, a sixth of the CPUs or less): their faults' effects are timed against
# --node-timeout, and the release build beside them yields the cores at idle priority.
stage "the fault campaigns"
run_ctest chaos -L chaos -j3
stage "waiting for the release build"
wait_for "release build (x86_64 and aarch64)"
stage "the release's tests"
run_ctest release -R '^(release|container)\.|^docs\.walk_'
cd ..
stage "waiting for README's pip install ., fuzzing and the builds a user types"
wait_for "ctest-readme-get-it"
wait_for "fuzzing"
sed 's/^/fuzz: /' "$work/fuzzing.log"
wait_for "the builds a user types"
cat "$work/the builds a user types.log"
