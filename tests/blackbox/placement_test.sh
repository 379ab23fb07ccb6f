#!/usr/bin/env bash
# --bind on this machine's real workers (their Cpus_allowed_list, Mems_allowed_list and memory
# policy as the kernel reports them), inside what the launcher was given (taskset), a user's
# OMP_NUM_THREADS kept, a task the scheduler bound left alone; and --dry-run on the fixture
# machines of tests/fixtures/machines.
# usage: placement_test.sh AML_LAUNCH
set -u
AML=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/assert.sh"
W=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$W"
trap 'rm -rf "$W"' EXIT
/usr/bin/python3 "$HERE/../fixtures/machines/make_machines.py" "$W/machines"

# Each worker writes what the kernel says of it: CPUs, memory nodes, memory policy (mode and
# node mask from get_mempolicy), and the thread and UCX variables it was given.
cat > "$W/probe.py" <<'PY'
import ctypes, os, platform
status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
mode, mask = ctypes.c_int(-1), ctypes.c_ulong(0)
number = {"x86_64": 239, "aarch64": 236}[platform.machine()]
ctypes.CDLL(None, use_errno=True).syscall(number, ctypes.byref(mode), ctypes.byref(mask), 64, None, 0)
env = lambda name: os.environ.get(name, "-")
with open(os.path.join(os.environ["W"], "where." + os.environ["LOCAL_RANK"]), "w") as f:
    f.write(" ".join([status["Cpus_allowed_list"].strip(), status["Mems_allowed_list"].strip(),
                      f"mode{mode.value}", f"mask{mask.value}", env("OMP_NUM_THREADS"),
                      env("MKL_NUM_THREADS")]))
PY
where() { cat "$W/where.$1" 2>/dev/null; }
run() { rm -f "$W"/where.*; env W="$W" "$@" -- /usr/bin/python3 "$W/probe.py" >"$W/out" 2>&1; }

ncpu=$(nproc --all)
if [ "$ncpu" -ge 2 ] && [ "$(cat /sys/devices/system/cpu/cpu1/topology/thread_siblings_list)" = 1 ]; then
  run "$AML" --nproc-per-node 2 --bind exclusive
  check "--bind exclusive: rank 0 on CPU 0, rank 1 on CPU 1, memory preferred on node 0, 1 thread" \
    bash -c "[ \"$(where 0)\" = '0 0 mode1 mask1 1 1' ] && [ \"$(where 1)\" = '1 0 mode1 mask1 1 1' ]" ||
    { where 0; where 1; cat "$W/out"; }
fi
run "$AML" --nproc-per-node 2 --bind node --mem-policy bind
check "--bind node --mem-policy bind: both on node 0's CPUs, memory bound to node 0 (MPOL_BIND)" \
  bash -c "[ \"$(where 0)\" = \"0-$((ncpu - 1)) 0 mode2 mask1 $((ncpu / 2 > 0 ? ncpu / 2 : 1)) $((ncpu / 2 > 0 ? ncpu / 2 : 1))\" ]" ||
  { where 0; cat "$W/out"; }
run "$AML" --nproc-per-node 1 --bind node --mem-policy none
check "--mem-policy none: no memory policy (MPOL_DEFAULT)" bash -c "[[ \"$(where 0)\" == *' mode0 mask0 '* ]]" ||
  where 0

# Never outside what was given: taskset -c 1 (the launcher's own affinity bounds everything).
last=$((ncpu - 1))
run taskset -c "$last" "$AML" --nproc-per-node 2 --bind node
check "under taskset -c $last, --bind node: both workers on CPU $last only" \
  bash -c "[[ \"$(where 0)\" == '$last 0 '* ]] && [[ \"$(where 1)\" == '$last 0 '* ]]" ||
  { where 0; where 1; cat "$W/out"; }
run taskset -c "$last" "$AML" --nproc-per-node 2 --bind exclusive
check "under taskset -c $last, --bind exclusive for 2 ranks: exit 2 naming the one core, nothing started" \
  bash -c "grep -q 'error: --bind=exclusive: expected a core for each rank: local ranks 0, 1 belong to NUMA node 0, which has 1 core(s)' '$W/out' && [ ! -e '$W/where.0' ]" ||
  cat "$W/out"
run env OMP_NUM_THREADS=3 "$AML" --nproc-per-node 1 --bind node
check "a user's OMP_NUM_THREADS=3 is kept (MKL_NUM_THREADS gets the rank's cores)" \
  bash -c "[[ \"$(where 0)\" == *' 3 $ncpu' ]]" || where 0
run "$AML" --nproc-per-node 2
check "the default (auto) on this one-NUMA-node machine binds nothing: the launcher's CPUs" \
  bash -c "[[ \"$(where 0)\" == \"0-$last 0 mode0 \"* ]]" || where 0

# A task the scheduler bound (srun --cpu-bind: its mask, SLURM_CPU_BIND_TYPE) is left alone,
# whatever --bind asks: local rank 1 keeps CPU 0, where exclusive would have put it on CPU 1.
slurm_task=(env SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=1
  SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=2 SLURM_JOB_NODELIST=localhost
  SLURM_CPU_BIND_TYPE=mask_cpu: SLURM_CPU_BIND=quiet,mask_cpu:0x1 MASTER_PORT=29500)
run taskset -c 0 "${slurm_task[@]}" "$AML" --no-group --bind exclusive
check "a pre-bound Slurm task (mask_cpu:0x1) under --bind exclusive keeps CPU 0 and no memory policy" \
  bash -c "[[ \"$(where 1)\" == '0 0 mode0 '* ]]" || { where 1; cat "$W/out"; }
taskset -c 0 "${slurm_task[@]}" "$AML" --no-group --bind exclusive --dry-run -- true >"$W/dry" 2>&1
check "--dry-run says the scheduler already bound the task" \
  grep -q "placement:       none (the scheduler already bound this task (CPUs 0 of 0-$last; SLURM_CPU_BIND_TYPE=mask_cpu:): left as it is)" "$W/dry" ||
  cat "$W/dry"

# --dry-run on the 8-GPU fixture (ND H100 v5-like): every rank's GPU, node, CPUs, memory, NIC.
M="$W/machines"
AML_LAUNCH_MACHINE_ROOT="$M/nd-h100-v5" "$AML" --nproc-per-node 8 --dry-run --format json -- python train.py >"$W/h100.json"
check "--dry-run --format json on nd-h100-v5: auto binds each rank to its GPU's node, its NIC beside" \
  /usr/bin/python3 - "$W/h100.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["placement"]["bind"] == "node" and plan["placement"]["requested"] == "auto", plan["placement"]
assert len(plan["placement"]["rdma_nics"]) == 9
for w in plan["workers"]:
    r, p = w["local_rank"], w["placement"]
    node = 0 if r < 4 else 1
    assert p["gpu"] == f"{r + 1:04x}:00:00.0", p
    assert p["numa_node"] == node and p["memory_nodes"] == str(node) and p["memory_policy"] == "preferred", p
    assert p["cpus"] == ("0-47" if node == 0 else "48-95"), p
    assert p["nic"] == f"mlx5_ib{r}" and p["nic_port"] == 1 and p["threads"] == 12, p
    assert w["env"]["OMP_NUM_THREADS"] == "12" and w["env"]["MKL_NUM_THREADS"] == "12", w["env"]
    assert "UCX_NET_DEVICES" not in w["env"], w["env"]
PY
AML_LAUNCH_MACHINE_ROOT="$M/nd-a100-v4" "$AML" --nproc-per-node 8 --bind exclusive --dry-run --format json -- python train.py >"$W/a100.json"
check "--dry-run on nd-a100-v4 --bind exclusive: 6 whole cores each, the NIC behind the GPU's switch" \
  /usr/bin/python3 - "$W/a100.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
want = ["12-17", "18-23", "0-5", "6-11", "60-65", "66-71", "48-53", "54-59"]
got = [w["placement"]["cpus"] for w in plan["workers"]]
assert got == want, got
assert [w["placement"]["nic"] for w in plan["workers"]] == [f"mlx5_{r}" for r in range(8)]
assert "shares a PCI switch" in plan["workers"][0]["placement"]["nic_reason"]
PY
AML_LAUNCH_MACHINE_ROOT="$M/grace" "$AML" --nproc-per-node 4 --dry-run --format json -- python train.py >"$W/grace.json"
check "--dry-run on the Grace fixture: CPU nodes 0 and 1 only, never the GPU memory nodes" \
  /usr/bin/python3 - "$W/grace.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
got = [(w["placement"]["cpus"], w["placement"]["memory_nodes"]) for w in plan["workers"]]
assert got == [("0-71", "0"), ("0-71", "0"), ("72-143", "1"), ("72-143", "1")], got
PY
# A binding the kernel refuses does not stop the worker: the fixture's node 1 (CPUs 48-95) is
# not this machine's, so ranks 4-7 start unbound and the console says so.
AML_LAUNCH_MACHINE_ROOT="$M/nd-h100-v5" "$AML" --nproc-per-node 8 --bind node -- true >"$W/refused" 2>&1
status=$?
check "a refused binding: the job runs (exit $status), rank 4 named with what the kernel refused" bash -c \
  "[ $status = 0 ] && grep -q 'warning: rank 4 runs without the placement --bind gave it: the kernel refused its CPU affinity (sched_setaffinity: ' '$W/refused' && ! grep -q 'rank 3 runs without' '$W/refused'" ||
  cat "$W/refused"
AML_LAUNCH_MACHINE_ROOT="$M/nd-h100-v5" UCX_TLS=rc "$AML" --nproc-per-node 8 --dry-run -- true >"$W/ucx"
check "a UCX job (UCX_TLS set) gets UCX_NET_DEVICES=<its NIC>:1 per rank" \
  bash -c "grep -q '^  UCX_NET_DEVICES=mlx5_ib0:1$' '$W/ucx' && grep -q '^  UCX_NET_DEVICES=mlx5_ib7:1$' '$W/ucx'" ||
  grep UCX "$W/ucx"
AML_LAUNCH_MACHINE_ROOT="$M/nd-h100-v5" UCX_NET_DEVICES=mlx5_ib3:1 "$AML" --nproc-per-node 8 --dry-run -- true >"$W/ucx2"
check "a user's UCX_NET_DEVICES is kept" bash -c "! grep -q '^  UCX_NET_DEVICES' '$W/ucx2'"
AML_LAUNCH_MACHINE_ROOT="$M/single-socket" AML_LAUNCH_BIND=exclusive "$AML" --nproc-per-node 2 --dry-run -- true >"$W/env-bind"
check "AML_LAUNCH_BIND=exclusive is the default where --bind is not given" \
  grep -q "CPUs 0-7,16-23 (8 of the 16 cores" "$W/env-bind"
AML_LAUNCH_MACHINE_ROOT="$M/single-socket" "$AML" --nproc-per-node 2 --numa-binding exclusive --dry-run -- true >"$W/numa-binding"
check "torchrun's --numa-binding exclusive is --bind exclusive" \
  grep -q "placement:       exclusive (--bind exclusive)" "$W/numa-binding"
expect_status "--bind bogus: exit 2" 2 "$AML" --bind bogus --dry-run -- true
check "--bind bogus names the flag and the modes" bash -c \
  "'$AML' --bind bogus --dry-run -- true 2>&1 | grep -q 'error: --bind=bogus: expected none, node, socket, exclusive, core-complex or auto'"
check "AML_LAUNCH_BIND=wrong names the variable" bash -c \
  "AML_LAUNCH_BIND=wrong '$AML' --dry-run -- true 2>&1 | grep -q 'error: AML_LAUNCH_BIND=wrong'"
check "--bind node where the layout cannot be read: exit 2 naming the file" bash -c \
  "AML_LAUNCH_MACHINE_ROOT=$W/none '$AML' --bind node --dry-run -- true 2>&1 | grep -q '$W/none/sys/devices/system/cpu/online'"
check "auto where the layout cannot be read: nothing bound, and why" bash -c \
  "AML_LAUNCH_MACHINE_ROOT=$W/none '$AML' --dry-run -- true 2>&1 | grep -q 'placement:       none (auto: the machine.s layout could not be read'"
finish
