#!/usr/bin/env bash
# Ports the launcher picks (MASTER_PORT and its own store's on one node, a round's ports on node
# 0) are held from the pick until exit, so launchers starting at once on one host never pick the
# same one. In a network namespace of its own whose ephemeral range is 700 ports: 200 one-node
# launchers started at once (400 picks) all run their worker and exit 0, and none says a port
# was in use. Then a port the launcher holds is bound by the worker that serves it: torch's own
# store in rank 0's worker (--worker-store torch, Debian's torch, gloo over env://).
# usage: port_picks_test.sh AML_LAUNCH   (as root: it enters a network namespace with unshare)
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${AML_PORT_PICKS_NETNS:-}" != 1 ]; then
  exec env AML_PORT_PICKS_NETNS=1 unshare --net bash -c \
    'ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range="40000 40699" && exec "$@"' \
    _ bash "$0" "$@"
fi
. "$HERE/assert.sh"
WORK=$(mktemp -d)
COUNT=200
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  wait
  rm -rf "$WORK"
}
trap cleanup EXIT

for i in $(seq 0 $((COUNT - 1))); do
  W="$WORK" "$BIN" --nnodes 1 --nproc-per-node 1 -- sh -c 'touch "$W/up.$0"; sleep 2' "$i" \
    >/dev/null 2>"$WORK/launcher.$i.err" &
  pids+=("$!")
done
bad=0
for pid in "${pids[@]}"; do wait "$pid" || bad=$((bad + 1)); done
pids=()
up=$(ls "$WORK" | grep -c '^up\.')
in_use=$(cat "$WORK"/launcher.*.err | grep -c 'Address already in use')
check "$COUNT one-node launchers at once in 700 ports: all ran their worker ($up) and exited 0 ($bad did not)" \
  test "$up" = "$COUNT" -a "$bad" = 0
check "none found a port it picked in use ($in_use said so)" test "$in_use" = 0
[ "$in_use" = 0 ] || grep -h 'Address already in use' "$WORK"/launcher.*.err | head -3

cat >"$WORK/job.py" <<'PY'
import datetime, os
import torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
t = torch.ones(1)
dist.all_reduce(t)
print(f"rank {dist.get_rank()} sum {t.item()} at port {os.environ['MASTER_PORT']}", flush=True)
dist.destroy_process_group()
PY
out=$(timeout 120 "$BIN" --nproc-per-node 2 --worker-store torch -- /usr/bin/python3 "$WORK/job.py" 2>&1)
status=$?
check "--worker-store torch: rank 0's torch store binds the port the launcher holds ($status)" \
  bash -c "[ $status = 0 ] && [ \$(grep -c 'sum 2.0' <<<\"\$0\") = 2 ]" "$out" || echo "$out"
finish
