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
