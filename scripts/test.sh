#!/usr/bin/env bash
# Command 2 of the README: the whole test suite.
#  1. a clang build with AddressSanitizer + UndefinedBehaviorSanitizer (and fuzzer coverage),
#     one file a compile (no unity build: every file must stand on its own includes), then every
#     test but those that load the rank library into python3 (an ASan library cannot be loaded
#     there), the style check, the packaging tests (their consumer is built by gcc), the release
#     tests and the container test (they test the release artifacts), the client frameworks
#     (they test the launcher's environment, not its memory safety), the docs' tests (their
#     Python loads the rank library), and the tests whose time is another program's, on paths
#     of the launcher's that other tests here take: JAX's (Python and XLA), the scheduler
#     examples' (Python), a real Slurm's daemons, 256 launchers at once (the stage's one scale
#     test would hold the machine alone: the 3-node and elastic tests cover the same code), and
#     the 3-node torch jobs under each scheduler's variables (torch's time; the hostile clients
#     are launcher.store_hostile's, the losses launcher.node_liveness's and elastic's)
#  2. the main gcc build (RelWithDebInfo, the unity build a user gets, with -g1 (line tables) in
#     place of -g: the same code, a third less CPU; scripts/build.sh): the GPU-only tests
#     (reported as skipped where there is no GPU), then every other test, the client frameworks
#     among them; then the release artifacts' tests (scripts/release.sh for x86_64 and aarch64),
#     the newcomers' walks through the docs among them (they take the release's binaries)
#  3. beside the tests, at idle priority (they take only the CPU the tests leave, so the tests
#     run as on a quiet machine), in the order the tests need them: during the sanitizer tests
#     the main build, and beside it the libFuzzer targets, a fixed number of inputs each
#     (environment parsers, store frames, the store's handshake with a real server and a job
#     secret, console tagging, etcd's gRPC messages, torch's wire, the relay's); then the
#     release build (for step 2's release tests) and beside it README's pip install . from a
#     fresh tree (docs.get_it: a build of its own); once the release build is done, the build a
#     user types that
#     the suite's own do not cover (gcc Release; the release is clang's Release, the sanitizer
#     build clang's Debug; scripts/build-types.sh: warnings are errors only in this script's own
#     builds)
# Each stage's time is printed at the end (and at a failure, up to it), with the CPUs' busy share
# meanwhile, each job beside the tests' own CPU-seconds and the suite's core-seconds in all;
# the last line counts every test of every ctest run, and the machine check.
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
export AML_WARNINGS_AS_ERRORS=ON  # the project's own builds (scripts/build.sh reads it)
work=$(mktemp -d)

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

# beside NAME [--after OTHER] COMMAND...: runs at idle priority beside the foreground stages, in
# a process group of its own (once OTHER, run beside too, is done: the work the tests need first
# gets the idle CPU first); its output goes to a log shown if it fails.
beside() {
  local name=$1 after=""
  shift
  if [ "$1" = --after ]; then after=$2 && shift 2; fi
  set -m
  (
    while [ -n "$after" ] && [ ! -e "$work/$after.done" ]; do sleep 1; done
    started=$(date +%s) status=0
    chrt --idle 0 "$@" >"$work/$name.log" 2>&1 || status=$?
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
  (set -o pipefail; ctest -j"$jobs" --output-on-failure "$@" 2>&1 | tee "$work/ctest-$name.log")
}

stage "sanitizer build (clang, ASan + UBSan, a file a compile)"
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$san_flags -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$san_flags" -DCMAKE_SHARED_LINKER_FLAGS="$san_flags" \
  -DAML_BUILD_FUZZERS=ON -DAML_BUILD_BENCHMARKS=OFF -DAML_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build build-san

beside "main build (gcc)" scripts/build.sh
# fuzz TARGET SEED_DIR RUNS: RUNS inputs (the same work whatever else the machine does),
# starting from the seeds kept in the repository. Sized to what each finds (2026-11-28, a quiet
# core, -seed=1): the targets still finding new edges near the end of 35 s keep their 35 s of
# inputs (env parsers, the handshake, etcd's answers); the others stop at about twice the input
# where their last new edge came (store frames 264k, torch's wire 109k, the relay's 1.3k,
# tagging 2.7k: their last inputs found features of edges already covered).
fuzz() {
  local corpus status=0
  corpus=$(mktemp -d)
  cp "$2"/* "$corpus"/
  echo "== fuzzing $1 ($3 inputs)"
  # -timeout is wall time, and at idle priority the tests beside can leave a target no CPU for
  # seconds (the handshake target timed out in one suite run): a hang is still caught at 120 s.
  build-san/tests/fuzz/"$1" -runs="$3" -max_total_time=900 -max_len=4096 -timeout=120 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$corpus/" "$corpus" \
    >"$corpus.log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    tail -40 "$corpus.log"  # the crash, its stack and the input that caused it
  else
    grep -E "^stat::number_of_executed_units|^Done" "$corpus.log"
  fi
  rm -rf "$corpus" "$corpus.log"
  return "$status"
}
fuzz_all() {
  fuzz fuzz_env_parsers tests/fuzz/corpus 175000 &&
    fuzz fuzz_store_frames tests/fuzz/store_corpus 500000 &&
    fuzz fuzz_store_handshake tests/fuzz/handshake_corpus 50000 &&
    fuzz fuzz_tag_lines tests/fuzz/tag_corpus 250000 &&
    fuzz fuzz_etcd_answers tests/fuzz/etcd_corpus 250000 &&
    fuzz fuzz_torch_wire tests/fuzz/torch_corpus 250000 &&
    fuzz fuzz_relay_wire tests/fuzz/relay_corpus 300000
}
export -f fuzz fuzz_all
# From the sanitizer build on, beside the main build: one core's work, and the main build is
# done long before the sanitizer tests are.
# Their corpora in the suite's own folder: a suite stopped by a failed stage kills them before
# they clean up, and what they leave goes with that folder.
beside "fuzzing" env TMPDIR="$work" bash -c fuzz_all
stage "sanitizer tests"
# The elastic suite under etcd and the lease's fault suite run once, in the main stage: here
# etcd's code is covered by its own suite (launcher.etcd_rendezvous) and the elastic suite on
# node 0's store.
(cd build-san && run_ctest sanitizer -E 'python_ctypes|torch_allreduce|style\.|packaging\.|container\.|release\.|clients\.|docs\.|elastic_etcd|lease_faults|launcher\.jax$|examples\.schedulers|cluster\.slurm|cluster\.scale_256|launcher\.multinode')

stage "waiting for the main build"
wait_for "main build (gcc)"
# The release's tests (step 2) wait for this one through their fixture (tests/release/release_build.sh).
export AML_RELEASE_BUILT_BY="$work/release"
exec {release_lock}>"$AML_RELEASE_BUILT_BY.lock"
flock "$release_lock"
beside "release build (x86_64 and aarch64)" bash -c \
  'scripts/release.sh build/dist 2>&1 | tee "$1.log"; status=${PIPESTATUS[0]}; echo $status >"$1"; exit $status' _ \
  "$AML_RELEASE_BUILT_BY"
exec {release_lock}>&-  # the build holds it now, until it ends
# README's pip install . from a fresh tree: a build of its own that needs nothing of the others,
# beside the release build from here (at the end of the suite, after the release's, it was the
# release stage's longest test: 200-300 s on the critical path). Its ctest log is counted too.
# Its folders under the suite's own: a test killed at its timeout leaves nothing in /tmp.
beside "ctest-readme-get-it" env TMPDIR="$work" bash -c 'cd build && ctest -R "^docs\.get_it$" --output-on-failure'

# After the release build: its tests wait for it, these only the suite's end.
beside "the builds a user types" --after "release build (x86_64 and aarch64)" scripts/build-types.sh

cd build
stage "GPU-only tests"
ctest -L gpu --output-on-failure
stage "every other test"
run_ctest main -LE gpu -E '^(release|container)\.|^docs\.(walk_|get_it)'
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
