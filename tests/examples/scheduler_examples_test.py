"""The scheduler examples cannot rot: every Azure ML job file loads with the real Azure ML SDK
(azure-ai-ml's load_job, offline), and for every example, the environment its scheduler sets
on the second node is derived from the example's own numbers (nodes, processes per node) and
fed to the aml-launch arguments the example itself uses; the --dry-run plan must give the
ranks, world size and master that the example means.
usage: /usr/bin/python3 scheduler_examples_test.py AML_LAUNCH EXAMPLES_DIR"""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import yaml

BIN, EXAMPLES = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    passed, failed = passed + ok, failed + (not ok)


def launcher_args(command):
    """The aml-launch flags in a command line (a string or argv list), up to '--'."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if "aml-launch" not in argv:
        return None
    after = argv[argv.index("aml-launch") + 1:]
    return after[:after.index("--")] if "--" in after else after


def dry_run(env, args):
    out = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin"] + [f"{k}={v}" for k, v in env.items()] +
                         [BIN, "--dry-run", "--format", "json"] + args + ["--", "true"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout), ""


def expect_plan(name, env, args, nodes, per_node, node_rank, master, ranks, launch):
    plan, error = dry_run(env, args)
    if plan is None:
        check(name, False, error)
        return
    got = {"nnodes": plan["nnodes"], "node_rank": plan["node_rank"], "world_size": plan["world_size"],
           "master_addr": plan["master_addr"], "launch": plan["launch"],
           "ranks": [w["rank"] for w in plan["workers"]]}
    want = {"nnodes": nodes, "node_rank": node_rank, "world_size": nodes * per_node, "master_addr": master,
            "launch": launch, "ranks": ranks}
    check(name, got == want, f"plan {got}, expected {want}")


MASTER = "10.0.0.4"

# --- Azure ML command jobs.
for file in sorted(os.listdir(f"{EXAMPLES}/azureml")):
    if not file.endswith(".yml"):
        continue
    path = f"{EXAMPLES}/azureml/{file}"
    loaded = subprocess.run(["python3", "-c", "import sys; from azure.ai.ml import load_job; load_job(sys.argv[1])", path],
                            capture_output=True, text=True)
    check(f"azureml/{file}: azure-ai-ml load_job accepts it", loaded.returncode == 0,
          loaded.stderr.strip().splitlines()[-1:] if loaded.stderr else "")
    job = yaml.safe_load(open(path))
    nodes = job["resources"]["instance_count"]
    dist = job["distribution"]
    args = launcher_args(job["command"])
    nproc_flag = int(args[args.index("--nproc-per-node") + 1]) if "--nproc-per-node" in args else None
    # The job files put the job's secret (from Key Vault) in AML_LAUNCH_SECRET first.
    base = {"AZUREML_RUN_ID": "example_run", "AML_LAUNCH_SECRET": "0123456789abcdef-from-key-vault"}
    if dist["type"] == "pytorch":
        per_instance = dist["process_count_per_instance"]
        local = per_instance - 1  # the last process of node 1
        rank = per_instance + local
        env = dict(base, MASTER_ADDR=MASTER, MASTER_PORT="6105", WORLD_SIZE=str(nodes * per_instance), RANK=str(rank),
                   LOCAL_RANK=str(local), NODE_RANK="1", LOCAL_WORLD_SIZE=str(per_instance))
        if per_instance == 1:  # per-node: aml-launch spawns --nproc-per-node workers
            expect_plan(f"azureml/{file}: node 1 spawns ranks {nproc_flag}..{2 * nproc_flag - 1}", env, args, nodes,
                        nproc_flag, 1, MASTER, list(range(nproc_flag, 2 * nproc_flag)), "per-node")
        else:
            expect_plan(f"azureml/{file}: rank {rank} supervised as itself", env, args, nodes, per_instance, 1, MASTER,
                        [rank], "per-process")
    elif dist["type"] == "mpi":
        env = dict(base, OMPI_COMM_WORLD_RANK="1", OMPI_COMM_WORLD_SIZE=str(nodes), OMPI_COMM_WORLD_LOCAL_RANK="0",
                   OMPI_COMM_WORLD_LOCAL_SIZE=str(dist["process_count_per_instance"]),
                   AZ_BATCH_MASTER_NODE=f"{MASTER}:6000")
        expect_plan(f"azureml/{file}: node 1 spawns ranks {nproc_flag}..{2 * nproc_flag - 1}", env, args, nodes,
                    nproc_flag, 1, MASTER, list(range(nproc_flag, 2 * nproc_flag)), "per-node")
    elif dist["type"] == "tensorflow":
        workers = [f"10.0.0.{4 + i}:2222" for i in range(dist["worker_count"])]
        env = dict(base, TF_CONFIG=json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": 1}}))
        plan, error = dry_run(env, args)
        ok = plan is not None and [w["rank"] for w in plan["workers"]] == [1] and \
            plan["world_size"] == dist["worker_count"] and plan["master_addr"] == "10.0.0.4"
        check(f"azureml/{file}: TF_CONFIG worker 1 of {dist['worker_count']} is rank 1, worker 0 the master", ok,
              error or plan)

# The environment the job files name: Azure ML builds it from the Dockerfile beside it.
path = f"{EXAMPLES}/azureml/environment/environment.yml"
loaded = subprocess.run(["python3", "-c", "import sys; from azure.ai.ml import load_environment; "
                         "e = load_environment(sys.argv[1]); print(e.name)", path], capture_output=True, text=True)
names = {yaml.safe_load(open(f"{EXAMPLES}/azureml/{f}"))["environment"].split(":")[1].split("@")[0]
         for f in os.listdir(f"{EXAMPLES}/azureml") if f.endswith(".yml")}
check("azureml/environment/environment.yml: azure-ai-ml load_environment accepts it, and it is the one "
      f"every job file names ({names})", loaded.returncode == 0 and names == {loaded.stdout.strip()},
      loaded.stderr.strip().splitlines()[-1:] if loaded.stderr else loaded.stdout)
dockerfile = open(f"{EXAMPLES}/azureml/environment/Dockerfile").read()
installs = [line for line in dockerfile.replace("\\\n", " ").split("\n") if line.startswith("RUN pip install")]
check("azureml/environment/Dockerfile installs aml-launch's wheel (copied in) and get_secret.py's Key Vault client",
      "COPY aml_launch-*.whl /tmp/" in dockerfile and len(installs) == 1 and
      all(p in installs[0] for p in ("/tmp/aml_launch-*.whl", "azure-keyvault-secrets", "azure-identity")),
      installs)

# --- Kubeflow PyTorchJob: one pod per node, the master pod is node 0.
job = yaml.safe_load(open(f"{EXAMPLES}/kubeflow/pytorchjob.yaml"))
specs = job["spec"]["pytorchReplicaSpecs"]
nodes = specs["Master"]["replicas"] + specs["Worker"]["replicas"]
nproc = int(job["spec"]["nprocPerNode"])
args = launcher_args(specs["Worker"]["template"]["spec"]["containers"][0]["command"])
master = f"{job['metadata']['name']}-master-0"
env = {"PET_NNODES": str(nodes), "PET_NODE_RANK": "1", "PET_NPROC_PER_NODE": str(nproc), "PET_MASTER_ADDR": master,
       "PET_MASTER_PORT": "23456", "MASTER_ADDR": master, "MASTER_PORT": "23456", "RANK": "1",
       "WORLD_SIZE": str(nodes), "AML_LAUNCH_SECRET": "0123456789abcdef-from-a-secret"}
expect_plan(f"kubeflow/pytorchjob.yaml: worker pod 0 (node 1 of {nodes}) spawns ranks {nproc}..{2 * nproc - 1}",
            env, args, nodes, nproc, 1, master, list(range(nproc, 2 * nproc)), "per-node")

# --- Kubeflow PyTorchJob whose preStop hook sends the notice: the master pod's command, alone
# (a job of one node), its workers saving at SIGUSR1; then the hook's own command, the pod's
# pid 1 being the launcher's pid here. The job must end preempted (200), every worker saved.
job = yaml.safe_load(open(f"{EXAMPLES}/kubeflow/pytorchjob-notice.yaml"))
container = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
args = launcher_args(container["command"])
nproc = int(args[args.index("--nproc-per-node") + 1])
hook = container["lifecycle"]["preStop"]["exec"]["command"]
with tempfile.TemporaryDirectory() as saves:
    worker = ("trap 'touch \"$SAVES/$RANK\"; exit 0' USR1; touch \"$SAVES/up.$RANK\"; "
              "while :; do sleep 0.05; done")
    env = {"PET_NNODES": "1", "PET_NODE_RANK": "0", "PET_MASTER_ADDR": "127.0.0.1", "SAVES": saves,
           "AML_LAUNCH_SECRET": "0123456789abcdef-from-a-secret"}
    launcher = subprocess.Popen(["env", "-i", "PATH=/usr/bin:/bin"] + [f"{k}={v}" for k, v in env.items()] +
                                [BIN] + args + ["--", "/bin/sh", "-c", worker], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len([f for f in os.listdir(saves) if f.startswith("up.")]) < nproc:
        time.sleep(0.05)
    pod_hook = [part.replace("kill -USR1 1;", f"kill -USR1 {launcher.pid};") for part in hook]
    sent = subprocess.Popen(pod_hook, start_new_session=True)
    try:
        status = launcher.wait(timeout=30)
    except subprocess.TimeoutExpired:
        launcher.kill()
        status = launcher.wait()
    os.killpg(sent.pid, signal.SIGKILL)  # the hook's sleep ends with the pod's container
    sent.wait()
    said = launcher.stderr.read()
    saved = sorted(f for f in os.listdir(saves) if not f.startswith("up."))
check(f"kubeflow/pytorchjob-notice.yaml: the preStop hook's signal ({' '.join(hook)}) gives all {nproc} workers "
      f"the notice, and the job ends preempted (200)",
      status == 200 and saved == sorted(str(r) for r in range(nproc)) and "kill -USR1 1;" in hook[-1],
      f"exit {status}, saved by ranks {saved}: {said[-600:]}")

# --- Kubeflow elastic PyTorchJob with rdzvBackend etcd: the pods' environment as the operator
# sets it from the elasticPolicy; the rendezvous is etcd's, at the client Service.
docs = list(yaml.safe_load_all(open(f"{EXAMPLES}/kubeflow/elastic-pytorchjob-etcd.yaml")))
job = next(d for d in docs if d["kind"] == "PyTorchJob")
policy = job["spec"]["elasticPolicy"]
etcd_set = next(d for d in docs if d["kind"] == "StatefulSet")
args = launcher_args(job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"])
# The files rdzvConf names are the pod's mounted Secret: here, files of the same names.
import atexit
import shutil
mounted = tempfile.mkdtemp()
atexit.register(shutil.rmtree, mounted, True)
conf = []
for entry in policy["rdzvConf"]:
    local = os.path.join(mounted, os.path.basename(entry["value"]))
    open(local, "w").write("a PEM file\n")
    conf.append(f"{entry['key']}={local}")
env = {"PET_NNODES": f"{policy['minReplicas']}:{policy['maxReplicas']}", "PET_RDZV_BACKEND": policy["rdzvBackend"],
       "PET_RDZV_ENDPOINT": f"{policy['rdzvHost']}:{policy['rdzvPort']}", "PET_RDZV_ID": policy["rdzvId"],
       "PET_RDZV_CONF": ",".join(conf), "PET_MAX_RESTARTS": str(policy["maxRestarts"]),
       "AML_LAUNCH_SECRET": "0123456789abcdef-from-a-secret"}
plan, error = dry_run(env, args)
etcd_flags = etcd_set["spec"]["template"]["spec"]["containers"][0]["command"]
ok = plan is not None and plan["rendezvous"] is not None and plan["rendezvous"]["backend"] == "etcd" and \
    plan["rendezvous"]["endpoints"] == ["etcd-client:2379"] and plan["elastic"]["serves_store"] is False and \
    etcd_set["spec"]["replicas"] == 3 and plan["run_id"] == policy["rdzvId"] and \
    "TLS" in (plan["rendezvous"]["access"] or "") and "--client-cert-auth" in etcd_flags
check("kubeflow/elastic-pytorchjob-etcd.yaml: the rendezvous is the guarded three-member etcd beside the "
      "job (TLS, client certificates), the job's id its rdzvId, no pod serves it", ok, error or plan)

# --- Kubeflow Trainer v2 TrainJob on the torch-distributed runtime: PET_* on every node's pod.
job = yaml.safe_load(open(f"{EXAMPLES}/kubeflow/trainjob.yaml"))
trainer = job["spec"]["trainer"]
nodes = trainer["numNodes"]
args = launcher_args(trainer["command"])
nproc = int(args[args.index("--nproc-per-node") + 1])
master = f"{job['metadata']['name']}-node-0-0.{job['metadata']['name']}"
env = {"PET_NNODES": str(nodes), "PET_NODE_RANK": "1", "PET_NPROC_PER_NODE": str(nproc), "PET_MASTER_ADDR": master,
       "PET_MASTER_PORT": "29400", "AML_LAUNCH_SECRET": "0123456789abcdef-from-a-secret"}
expect_plan(f"kubeflow/trainjob.yaml: node 1 of {nodes} spawns ranks {nproc}..{2 * nproc - 1}", env, args, nodes,
            nproc, 1, master, list(range(nproc, 2 * nproc)), "per-node")

# --- Slurm batch script: one task per node, srun starts aml-launch on each.
lines = open(f"{EXAMPLES}/slurm/train.sbatch").read().splitlines()
sbatch = dict(line[len("#SBATCH --"):].split("=", 1) for line in lines if line.startswith("#SBATCH --"))
nodes = int(sbatch["nodes"])
srun = next(line for line in lines if line.startswith("srun "))
args = launcher_args(srun)
nproc = int(args[args.index("--nproc-per-node") + 1])
env = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": "1", "SLURM_NTASKS": str(nodes),
       "SLURM_NNODES": str(nodes), "SLURM_NODEID": "1", "SLURM_LOCALID": "0",
       "SLURM_NTASKS_PER_NODE": sbatch["ntasks-per-node"], "SLURM_STEP_NODELIST": f"gpu[01-{nodes:02d}]",
       "SLURM_JOB_NODELIST": f"gpu[01-{nodes:02d}]", "SLURM_STEP_TASKS_PER_NODE": f"1(x{nodes})"}
expect_plan(f"slurm/train.sbatch: node 1 of {nodes} spawns ranks {nproc}..{2 * nproc - 1}, master gpu01", env, args,
            nodes, nproc, 1, "gpu01", list(range(nproc, 2 * nproc)), "per-node")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
