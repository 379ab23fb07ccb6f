#!/usr/bin/env bash
# A rendezvous that is not forming is not silent (issue 63): a waiting launcher says, within
# 10 s of beginning to wait (then every 30 s), what it waits for, what its last dial got and
# the time left; node 0 names the node ranks missing and the addresses it heard from; nothing
# more once the round runs. Two network-namespace hosts (tests/cluster/netns_cluster.sh):
# 1. node 1 first, node 0 absent: node 1 names node 0's store, "connection refused", the time
#    left; then node 0 comes and the job runs, and node 1 says nothing more of its wait.
# 2. A 3-node job, node 0 first: node 0 names node ranks 1 and 2 missing and its own address;
#    node 1 comes, and its own line quotes node 0's word on who has come (one key node 0
#    writes, not every node's entry read by every node); node 2 comes and the job runs.
# 3. etcd's only endpoint an address nobody has: the line names the endpoint and what the dial
#    got, and the launcher ends at --rdzv-timeout as before.
# 4. An elastic job (--nnodes 2:3) whose node 0 is alone: it says how many of MIN:MAX came and
#    from where; the second node comes and round 0 runs.
# 5. Node 0's port closes node 1's connections unanswered for a while (a store out of
#    descriptors or too busy does so): node 1 tries again, says node 0 did not answer its
#    HELLO, and joins once node 0's store answers.
# 6. The same with node 1's connections held open and silent (a store too busy to read them):
#    after the HELLO's 10 s node 1 says its HELLO got no answer, tries again (one line, not one
#    a try), and joins.
# The cases share the hosts and nothing else (each its own ports and job): they run at once
# (run_cases), each waiting on its own timers.
# usage: rendezvous_progress_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
export TMPDIR="$WORK"
CLUSTER="$(dirname "$0")/../cluster/netns_cluster.sh"
NET="rp$$"
MARK="aml-progress-$$"
HOSTS=3
trap 'kill_marked_processes "$MARK"; bash "$CLUSTER" down "$NET" $HOSTS
      [ -n "${AML_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
netns_up "$CLUSTER" "$NET" $HOSTS || { finish; exit; }
MASTER=$(bash "$CLUSTER" addr 0)
no_env() { :; }
CMD=(sh -c 'echo "rank $RANK of $WORLD_SIZE ran"')
waiting_lines() { grep -c ": waiting for \|: joined .*, waiting for " "$1" 2>/dev/null; }
said_by() {  # said_by FILE PATTERN SECONDS: the pattern appears within SECONDS
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

# --- 1. Node 1 waits for node 0, which is not there yet.
case_absent() {
  J=absent
  ARGS=(--nnodes 2 --master-addr "$MASTER" --master-port 29581 --nproc-per-node 1 --rdzv-timeout 60)
  start $J 1 no_env "${ARGS[@]}" --node-rank 1
  said_by "$WORK/$J.out.1" "waiting for" 12
  check "node 0 absent: within 10 s node 1 names node 0's store, the dial's reason and the time left" \
    grep -q "aml-launch: node 1 (.*): waiting for node 0's rendezvous store at $MASTER:29581: connection refused (nothing listens there yet.*); [0-9]* s of --rdzv-timeout 60 s left$" \
    "$WORK/$J.out.1" || show $J
  check "... one line, not a flood ($(waiting_lines "$WORK/$J.out.1"))" [ "$(waiting_lines "$WORK/$J.out.1")" = 1 ]
  start $J 0 no_env "${ARGS[@]}" --node-rank 0
  s0=$(wait_status $J 0 30); s1=$(wait_status $J 1 30)
  check "node 0 comes: the job runs and ends 0 on both ($s0 $s1)" \
    bash -c "[ '$s0' = 0 ] && [ '$s1' = 0 ] && grep -q 'rank 1 of 2 ran' '$WORK/$J.out.1'" || show $J
  check "... and node 1 said nothing more of its wait ($(waiting_lines "$WORK/$J.out.1") line)" \
    [ "$(waiting_lines "$WORK/$J.out.1")" = 1 ]
}

# --- 2. Node 0 waits for nodes 1 and 2; node 1 comes and waits with it.
case_missing() {
  J=missing
  ADDR1=$(bash "$CLUSTER" addr 1)
  ARGS=(--nnodes 3 --master-addr "$MASTER" --master-port 29582 --nproc-per-node 1 --rdzv-timeout 60)
  start $J 0 no_env "${ARGS[@]}" --node-rank 0
  said_by "$WORK/$J.out.0" "waiting for" 12
  check "nodes 1 and 2 absent: within 10 s node 0 names them missing and the address it heard from" \
    grep -q "aml-launch: node 0 (.*): waiting for the nodes to join node 0's rendezvous store at $MASTER:29582: node ranks 1, 2 of 3 have not come (come: node 0 at $MASTER); [0-9]* s of --rdzv-timeout 60 s left$" \
    "$WORK/$J.out.0" || show $J
  start $J 1 no_env "${ARGS[@]}" --node-rank 1
  said_by "$WORK/$J.out.1" "waiting for the round" 13
  check "node 1 joined: within 10 s it quotes node 0's word on who has come (node 2 not; node 1 at $ADDR1)" \
    grep -q "aml-launch: node 1 (.*): joined node 0's rendezvous store at $MASTER:29582, waiting for the round: node 0 says node rank 2 of 3 has not come (come: node 0 at $MASTER, node 1 at $ADDR1); [0-9]* s of --rdzv-timeout 60 s left$" \
    "$WORK/$J.out.1" || show $J
  start $J 2 no_env "${ARGS[@]}" --node-rank 2
  s0=$(wait_status $J 0 30); s1=$(wait_status $J 1 30); s2=$(wait_status $J 2 30)
  check "node 2 comes: the job runs and ends 0 on all three ($s0 $s1 $s2), node 2 never waited 10 s" \
    bash -c "[ '$s0' = 0 ] && [ '$s1' = 0 ] && [ '$s2' = 0 ] && [ \"\$(grep -c 'waiting for' '$WORK/$J.out.2')\" = 0 ]" || show $J
}

# --- 3. etcd's only endpoint: an address on the hosts' network that nobody has.
case_etcd() {
  J=etcd
  start $J 1 no_env --nnodes 2 --rdzv-backend etcd --rdzv-endpoint 10.77.0.250:2379 --rdzv-id "p-$$" \
    --nproc-per-node 1 --rdzv-timeout 14
  said_by "$WORK/$J.out.1" "waiting for" 13
  check "etcd unreachable: within 10 s the launcher names etcd's endpoint and what the dial got" \
    grep -q "aml-launch: .*: waiting for the job's etcd at 10.77.0.250:2379: .*; [0-9]* s of --rdzv-timeout 14 s left$" \
    "$WORK/$J.out.1" || show $J
  status=$(wait_status $J 1 30)
  check "... and it ends at --rdzv-timeout with the error as before (exit $status)" \
    bash -c "[ '$status' = 2 ] && grep -q '10.77.0.250:2379.*--rdzv-timeout 14 s' '$WORK/$J.out.1'" || show $J
}

# --- 4. Elastic: node 0 alone waits for MIN.
case_elastic() {
  J=elastic
  ARGS=(--nnodes 2:3 --rdzv-endpoint "$MASTER:29583" --rdzv-id "e-$$" --nproc-per-node 1 --rdzv-timeout 60
    --rdzv-last-call 1)
  start $J 0 no_env "${ARGS[@]}"
  said_by "$WORK/$J.out.0" "waits for at least" 12
  check "elastic, one of 2:3 nodes: within 10 s node 0 says round 0 waits for 2, 1 came, from where" \
    grep -q "aml-launch: node 0 (.*): round 0 waits for at least 2 nodes (--nnodes 2:3) at node 0's rendezvous store at $MASTER:29583: 1 came: .* ($MASTER); [0-9]* s of --rdzv-timeout 60 s left$" \
    "$WORK/$J.out.0" || show $J
  start $J 1 no_env "${ARGS[@]}"
  s0=$(wait_status $J 0 30); s1=$(wait_status $J 1 30)
  check "elastic: the second node comes, round 0 runs, both end 0 ($s0 $s1)" \
    bash -c "[ '$s0' = 0 ] && [ '$s1' = 0 ] && grep -q 'rank [01] of 2 ran' '$WORK/$J.out.1'" || show $J
}
# --- 5 and 6. HELLOs unanswered for a while, then node 0's store at that port.
# unanswered_then_store JOB PORT HOW SECONDS WORDS: for SECONDS node 0's host listens on PORT
# and, HOW, closes each connection at once ("close") or holds it open, never reading ("hold");
# node 1 waits, says its HELLO got no answer (WORDS), still tries when the listener is gone, and
# joins node 0's store there.
unanswered_then_store() {
  local J=$1 port=$2 how=$3 seconds=$4 words=$5 listener s0 s1 ARGS
  ARGS=(--nnodes 2 --master-addr "$MASTER" --master-port "$port" --nproc-per-node 1 --rdzv-timeout 60)
  bash "$CLUSTER" exec "$NET" 0 env AML_TEST_MARK="$MARK" /usr/bin/python3 -c '
import socket, sys, time
server = socket.create_server((sys.argv[1], int(sys.argv[2])))
server.settimeout(0.2)
held, end = [], time.time() + float(sys.argv[4])
while time.time() < end:
    try:
        connection = server.accept()[0]
    except socket.timeout:
        continue
    if sys.argv[3] == "close":
        connection.close()
    else:
        held.append(connection)
' "$MASTER" "$port" "$how" "$seconds" &
  listener=$!
  start $J 1 no_env "${ARGS[@]}" --node-rank 1
  said_by "$WORK/$J.out.1" "waiting for" 16
  check "HELLOs met by a listener that does \"$how\": node 1 says node 0 did not answer its HELLO ($words)" \
    grep -q "aml-launch: node 1 (.*): waiting for node 0's rendezvous store at $MASTER:$port: node 0's launcher did not answer this launcher's HELLO ($words): too busy or out of descriptors (its own log says which), or something else listens on the port; [0-9]* s of --rdzv-timeout 60 s left$" \
    "$WORK/$J.out.1" || show $J
  wait $listener
  check "... node 1 still tries: not ended when the listener let go" [ ! -e "$WORK/$J.status.1" ] || show $J
  start $J 0 no_env "${ARGS[@]}" --node-rank 0
  s0=$(wait_status $J 0 30); s1=$(wait_status $J 1 30)
  check "node 0's store answers: node 1 joins, the job runs and ends 0 on both ($s0 $s1), one waiting line ($(waiting_lines "$WORK/$J.out.1"))" \
    bash -c "[ '$s0' = 0 ] && [ '$s1' = 0 ] && grep -q 'rank 1 of 2 ran' '$WORK/$J.out.1' && [ $(waiting_lines "$WORK/$J.out.1") = 1 ]" || show $J
}
case_closed() { unanswered_then_store unanswered 29584 close 12 "the connection closed"; }
case_held() { unanswered_then_store silent 29585 hold 14 "no answer"; }
run_cases case_absent case_missing case_etcd case_elastic case_closed case_held
finish
