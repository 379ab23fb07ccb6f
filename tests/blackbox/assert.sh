# Small assertion helpers for the black-box tests: each check prints ok/FAIL, the script ends
# with "N passed, N failed" and a non-zero status when anything failed.
passed=0
failed=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; return 1; fi
}

expect_status() {  # expect_status NAME WANTED COMMAND...
  local name=$1 wanted=$2; shift 2
  "$@" >/dev/null 2>&1
  local got=$?
  if [ "$got" = "$wanted" ]; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name: exit $got, wanted $wanted"; fi
}

# Cases of one test that wait on timers of their own (a progress line's 10 s, a timeout) and
# share nothing but the test's hosts, at once rather than one after another: each FUNCTION in
# a subshell of its own, in the background; then each one's output in the order given, and its
# checks added to this shell's. A case that ended without its counts is a failed check.
run_cases() {  # run_cases FUNCTION...
  local f p q pids=() dir
  dir=$(mktemp -d)
  for f in "$@"; do
    (passed=0 failed=0; "$f"; echo "run_cases: $passed $failed") >"$dir/$f" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  for f in "$@"; do
    grep -v '^run_cases: ' "$dir/$f"
    if read -r _ p q < <(grep '^run_cases: ' "$dir/$f"); then
      passed=$((passed + p)) failed=$((failed + q))
    else
      failed=$((failed + 1)) && echo "FAIL case $f ended before it counted its checks"
    fi
  done
  rm -rf "$dir"
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}

# A port on this machine's own network for this test alone. A port the kernel calls free now may
# be another test's in a moment (ctest runs two at once): it is taken below the ephemeral range
# (where neither bind to port 0 nor an outgoing connection lands) and held with a lock file that
# every test of the suite respects, until this test's shell exits.
reserve_port() {  # reserve_port VAR: sets VAR to the port (exit 1 when none could be had)
  # Its own names are odd ones: printf -v must set the caller's VAR, not a local of this.
  local _rp_low _rp_fd _rp_port _rp_dir=/tmp/aml-launch-test-ports
  read -r _rp_low _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$_rp_low" -gt 12000 ] || _rp_low=32768
  mkdir -p "$_rp_dir"
  for _ in $(seq 200); do
    _rp_port=$((10000 + RANDOM % (_rp_low - 10000)))
    exec {_rp_fd}>"$_rp_dir/$_rp_port"
    if flock -n "$_rp_fd" && /usr/bin/python3 -c 'import socket, sys
s = socket.socket(); s.bind(("", int(sys.argv[1])))' "$_rp_port" 2>/dev/null; then
      printf -v "$1" %s "$_rp_port"
      return 0
    fi
    exec {_rp_fd}>&-
  done
  return 1
}

# The multi-launcher tests (node_liveness, per_process_group): launchers started in the
# background into ${pids[@]}, whose workers each touch $WORK/up.<rank> when they run.
workers_up() {  # workers_up N: until N workers ran (10 s at most)
  for _ in $(seq 200); do
    [ "$(ls "$WORK"/up.* 2>/dev/null | wc -l)" = "$1" ] && return 0
    sleep 0.05
  done
  return 1
}
wait_launchers() {  # wait_launchers N: $s<i> each one's status, $ms<i> when it ended (since $t0)
  local i
  for i in $(seq 0 $(($1 - 1))); do
    wait "${pids[i]}"
    eval "s$i=$?"
    eval "ms$i=$((($(date +%s%N) - t0) / 1000000))"
  done
}

# The network-namespace tests: every process whose environment carries AML_TEST_MARK=MARK (the
# test's launchers and whatever they started), this shell excepted, SIGKILLed.
kill_marked_processes() {  # kill_marked_processes MARK
  local p
  for p in $(grep -l -s -a "AML_TEST_MARK=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    [ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
  done
}

# The tests on a cluster of network namespaces (tests/cluster/netns_cluster.sh).
netns_up() {  # netns_up CLUSTER NET N: the hosts, or a failed check saying why there are none
  if ! bash "$1" up "$2" "$3" 2>"$WORK/up.err"; then
    cat "$WORK/up.err"
    check "network namespaces can be made (ip netns, veth, bridge)" false
    return 1
  fi
}
# A namespace-cluster test's setup: $WORK its folder (TMPDIR too: what it makes stays there),
# $CLUSTER and $ETCD the cluster scripts, $NET its namespaces' prefix (NAME and this shell's pid).
cluster_test_folders() {  # cluster_test_folders NAME
  WORK=$(mktemp -d)
  export TMPDIR="$WORK"
  local scripts
  scripts="$(dirname "${BASH_SOURCE[0]}")/../cluster"
  CLUSTER="$scripts/netns_cluster.sh"
  ETCD="$scripts/etcd_cluster.sh"
  NET="$1$$"
}
# An etcd test's end, whatever ends it: its marked processes ($MARK), etcd's members, its hosts
# and $WORK go.
etcd_test_cleanup_at_exit() {
  trap 'kill_marked_processes "$MARK"; bash "$ETCD" down "$WORK"; bash "$CLUSTER" down "$NET" $HOSTS; rm -rf "$WORK"' EXIT
}
# $WORK/worker.sh: a worker that says it ran ($W/ran.HOST_ID.ROUND), then runs until $W/done.
write_worker_until_done() {
  cat >"$WORK/worker.sh" <<'EOS'
#!/bin/sh
touch "$W/ran.$HOST_ID.$TORCHELASTIC_RESTART_COUNT"
until [ -e "$W/done" ]; do sleep 0.05; done
EOS
  chmod +x "$WORK/worker.sh"
}
# An etcd test's hosts: $HOSTS netns hosts, a three-member etcd on hosts 0-2 ($ENDPOINTS its
# members); false where there are none (a failed check says why). $CLUSTER, $ETCD, $NET and
# $WORK as the test sets them.
etcd_hosts_up() {
  if ! command -v etcd >/dev/null; then
    check "etcd is installed (scripts/install-deps.sh installs etcd-server)" false
    return 1
  fi
  netns_up "$CLUSTER" "$NET" "$HOSTS" || return 1
  check "a three-member etcd cluster starts on hosts 0-2" bash "$ETCD" up "$NET" "$WORK" 0 1 2
  ENDPOINTS=$(bash "$ETCD" endpoints 0 1 2)
}
wait_file() {  # wait_file PATH SECONDS
  for _ in $(seq $(($2 * 20))); do [ -e "$1" ] && return 0; sleep 0.05; done
  return 1
}
# An elastic job's launchers as these tests start them: $WORK/JOB.status.HOST their exit
# status, $WORK/JOB.rank.HOST.ROUND the node rank their worker had in a round,
# $WORK/JOB.out.* what they said.
wait_status() { wait_file "$WORK/$1.status.$2" "$3" && cat "$WORK/$1.status.$2"; }
# A status file whole or not at all: a reader that sees it exist must not read it before the
# number is in it (a plain "echo $? >F" creates F empty first).
write_status() { echo "$2" >"$1.part" && mv -f "$1.part" "$1"; }  # write_status FILE STATUS
rank_of() { cut -d' ' -f1 "$WORK/$1.rank.$2.$3" 2>/dev/null; }  # rank_of JOB HOST ROUND
host_with_rank() {  # host_with_rank JOB ROUND RANK (the hosts FIRST_HOST.. HOSTS-1)
  local h
  for h in $(seq "${FIRST_HOST:-0}" $((HOSTS - 1))); do
    [ "$(rank_of "$1" "$h" "$2")" = "$3" ] && echo "$h"
  done
}
show() {  # show JOB: what its launchers said, and what etcd's members logged if it ran
  for f in "$WORK/$1".out.*; do echo "--- $f"; cat "$f"; done
  [ -z "${ETCD:-}" ] || bash "$ETCD" warnings "$WORK"
}
# A checkpointing torch job (examples/elastic_checkpoint.py): until its checkpoint reached a step.
# Read from torch.save's zip by Python alone: the state holds no tensor, and an import of torch
# for each look took seconds of CPU on a loaded machine while the job ran on (a test that was to
# stop it at a step found it done).
wait_checkpoint_step() {  # wait_checkpoint_step FILE STEP (60 s at most)
  /usr/bin/python3 - "$1" "$2" <<'PY'
import pickle, sys, time, zipfile
path, step = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        with zipfile.ZipFile(path) as saved:
            state = next(name for name in saved.namelist() if name.endswith("/data.pkl"))
            if pickle.loads(saved.read(state))["step"] >= step:
                sys.exit(0)
    except (OSError, KeyError, StopIteration, zipfile.BadZipFile, pickle.UnpicklingError):
        pass  # not there yet
    time.sleep(0.05)
sys.exit(1)
PY
}

# Launchers on netns hosts, marked so that a host's loss can be played: $CLUSTER, $NET, $MARK,
# $BIN, $WORK and the command CMD as the test sets them. Their TMPDIR (hang stacks) is $WORK.
# start JOB HOST ENV-FUNCTION ARGS...: host HOST's launcher in the background; ENV-FUNCTION
# prints more variables for it (no_env: none).
no_env() { :; }
start() {
  local job=$1 host=$2 envf=$3
  shift 3
  (
    bash "$CLUSTER" exec "$NET" "$host" env -i PATH=/usr/bin:/bin TMPDIR="$WORK" W="$WORK" JOB="$job" \
      HOST_ID="$host" AML_TEST_MARK="$MARK" LAUNCHER="$MARK-$job-$host" $($envf) "$BIN" "$@" \
      --summary-file "$WORK/$job.summary.$host.json" -- "${CMD[@]}" \
      >"$WORK/$job.out.$host" 2>&1
    write_status "$WORK/$job.status.$host" $?
  ) 2>/dev/null &
}
# Hosts lost: every process of their launchers (guardian, supervisor) and workers, at once.
# The supervisor first: one that outlived its guardian by a moment would report "its launcher
# was killed", a stop of the whole job, where a lost host reports nothing. (Not frozen first:
# a stopped process group that its guardian's death orphans gets SIGHUP and SIGCONT.)
# Several hosts are found in one look and killed by one kill: one at a time, on a loaded machine
# the last host could hear of the first one's loss and start a round before its own kill.
# host_pids JOB HOST...: their processes, each host's supervisor first. The look reads every
# process's environment, seconds on a loaded machine: a test whose timing starts at the kill
# looks first (kill -KILL $(host_pids ...)).
host_pids() {
  local job=$1 hosts pids p parent first=""
  shift
  [ -n "$*" ] || return 1  # no host named: an empty pattern would match every host
  hosts=$(IFS='|'; echo "$*")
  pids=$(grep -l -s -a -E "LAUNCHER=$MARK-$job-($hosts)\b" /proc/[0-9]*/environ | cut -d/ -f3)
  for p in $pids; do
    parent=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
    case " $(echo $pids) " in
      *" $parent "*) [ "$(cat /proc/"$p"/comm 2>/dev/null)" = aml-launch ] && first="$first $p" ;;
    esac
  done
  echo $first $pids
}
kill_host() {  # kill_host JOB HOST...
  local pids
  pids=$(host_pids "$@") || return 1
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
}
