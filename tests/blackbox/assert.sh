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

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
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
