#!/usr/bin/env bash
# Black-box tests of aml-launch: exit statuses, errors before anything starts, the worker
# environment, signals and fail-fast, against real processes.
# usage: launcher_cli_test.sh AML_LAUNCH RANK_INFO
set -u
BIN=$(realpath "$1")
RANK_INFO=$2
. "$(dirname "$0")/assert.sh"
WORK=$(mktemp -d)
# What the launcher, torch (torchrun's torchelastic_* logs), JAX and TensorFlow write to
# TMPDIR goes with the test's files.
export TMPDIR="$WORK"
trap 'rm -rf "$WORK"' EXIT
clean() { env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "$@"; }

# Exit codes pass through, per-process and per-node.
for code in 0 1 7 42 255; do
  expect_status "exit $code passes through (standalone)" $code clean "$BIN" -- sh -c "exit $code"
  expect_status "exit $code passes through (per-process MPI)" $code clean OMPI_COMM_WORLD_RANK=0 \
    OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 "$BIN" -- sh -c "exit $code"
done
for sig in TERM KILL SEGV USR1; do
  num=$(kill -l $sig)
  expect_status "death by SIG$sig gives 128+$num" $((128 + num)) clean "$BIN" -- sh -c "kill -$sig \$\$"
done

# Bad input: exit 2, a message naming the variable, and the command never ran.
out=$(clean RANK=8 WORLD_SIZE=8 "$BIN" -- touch "$WORK/ran" 2>&1); status=$?
check "bad environment exits 2" [ $status = 2 ]
check "bad environment names the variable and value" grep -q "RANK=8: expected a rank below WORLD_SIZE=8" <<<"$out"
check "bad environment starts nothing" [ ! -e "$WORK/ran" ]
out=$(clean "$BIN" --nproc-per-node lots -- touch "$WORK/ran" 2>&1); status=$?
check "bad flag exits 2 naming it" bash -c "[ $status = 2 ] && grep -q -- '--nproc-per-node=lots' <<<'$out'"
check "bad flag starts nothing" [ ! -e "$WORK/ran" ]
# A launcher inside a launcher (the image's entry point and the job's command): workers of its
# own are refused with the outer count or another, and without the flag it runs once as its rank.
for inner in 2 1; do
  out=$(clean "$BIN" --nproc-per-node 1 -- "$BIN" --nproc-per-node $inner -- touch "$WORK/ran" 2>&1); status=$?
  check "a launcher inside a launcher refuses --nproc-per-node $inner: exit 2, saying so ($out)" \
    bash -c "[ $status = 2 ] && grep -q -- '--nproc-per-node=$inner: expected no --nproc-per-node here: this process is a worker that aml-launch started' <<<\"\$1\" && [ ! -e '$WORK/ran' ]" _ "$out"
done
out=$(clean "$BIN" --nproc-per-node 2 -- "$BIN" -- sh -c 'echo "$RANK/$WORLD_SIZE"' 2>&1); status=$?
check "a launcher inside a launcher without the flag runs once as each rank ($out)" \
  bash -c "[ $status = 0 ] && grep -qx '\[rank 0\] 0/2' <<<\"\$1\" && grep -qx '\[rank 1\] 1/2' <<<\"\$1\"" _ "$out"
expect_status "unknown option exits 2" 2 clean "$BIN" --no-such-flag -- true
expect_status "no command exits 2" 2 clean "$BIN"
# Wrong flags (elastic ones first): each named, nothing started.
flag_error() {  # flag_error NAME NAMING ARGS...: exit 2, the message names NAMING
  local name=$1 naming=$2
  shift 2
  out=$(clean "$BIN" "$@" -- touch "$WORK/ran" 2>&1)
  status=$?
  check "$name: exit 2 naming $naming, nothing started ($out)" \
    bash -c "[ $status = 2 ] && grep -q -- '$naming' <<<\"\$1\" && [ ! -e '$WORK/ran' ]" _ "$out"
}
flag_error "elastic, MIN above MAX" "--nnodes=4:2" --nnodes 4:2 --rdzv-endpoint 127.0.0.1
flag_error "elastic, a node rank" "--node-rank" --nnodes 2:4 --node-rank 1 --rdzv-endpoint 127.0.0.1
flag_error "elastic, a rendezvous backend of nobody's" "--rdzv-backend=zookeeper" --nnodes 2:4 --rdzv-backend zookeeper
flag_error "elastic, etcd's v2 API (gone in etcd 3.6)" "--rdzv-backend=etcd-v2" --nnodes 2:4 --rdzv-backend etcd-v2
flag_error "elastic, etcd without its members" "--rdzv-endpoint is not set: etcd" --nnodes 2:4 --rdzv-backend etcd
# Health flags: each wrong one named, nothing started; a node alone stops at a check it names.
flag_error "a check of nobody's" '--health-checks=gpu,disk: expected auto, none, or a list' --health-checks gpu,disk
flag_error "paths without a path" '--health-checks=paths: expected paths with at least one --health-path' --health-checks paths
flag_error "command without a command" '--health-checks=command: expected command with --health-command' --health-checks command
flag_error "a bound of 0" '--health-timeout=0' --health-timeout 0
flag_error "a bench of 0 rounds" '--bench-after=0' --bench-after 0
out=$(clean "$BIN" --health-command 'echo scratch is full; exit 3' -- touch "$WORK/ran" 2>&1); status=$?
check "a node alone whose --health-command fails: exit 2 (nothing started) naming it, nothing started ($out)" \
  bash -c "[ $status = 2 ] && grep -q 'this node failed its health check: command: exit 3: scratch is full' <<<\"\$1\" && [ ! -e '$WORK/ran' ]" _ "$out"
out=$(clean AML_NVML_LIBRARY="$WORK/no-libnvidia-ml.so.1" "$BIN" --health-checks gpu -- touch "$WORK/ran" 2>&1); status=$?
check "a node alone asking for a GPU check where there is no GPU: exit 2, nothing started ($out)" \
  bash -c "[ $status = 2 ] && grep -q 'this node failed its health check: gpu: .*no NVIDIA driver here' <<<\"\$1\" && [ ! -e '$WORK/ran' ]" _ "$out"
out=$(clean "$BIN" --health-checks paths --health-path /proc -- touch "$WORK/ran" 2>&1); status=$?
check "--health-path /proc: exit 2 and the real reason, not ENOENT ($out)" \
  bash -c "[ $status = 2 ] && grep -q 'path /proc: not writable: it is on /proc' <<<\"\$1\" && ! grep -q 'No such file' <<<\"\$1\"" _ "$out"
flag_error "elastic, etcd with a member that is no host" "--rdzv-endpoint" --nnodes 2:4 --rdzv-backend etcd \
  --rdzv-endpoint e0:2379,:x
flag_error "elastic, --admit-newcomers" "--admit-newcomers=sometimes" --nnodes 2:4 --admit-newcomers sometimes
flag_error "elastic, {node_rank} in --summary-file" "--summary-file" --nnodes 2:4 --rdzv-endpoint 127.0.0.1 \
  --summary-file "$WORK/s.{node_rank}.json"
flag_error "elastic, --preflight" "--preflight=gloo" --nnodes 2:4 --rdzv-endpoint 127.0.0.1 --preflight
flag_error "elastic, no endpoint" "--rdzv-endpoint" --nnodes 2:4
for bad in "--term-timeout -1" "--term-timeout 1s" "--rdzv-timeout 0" "--rdzv-timeout nan" \
  "--preflight-min-busbw 0" "--preflight-min-busbw 2x" "--preflight=fast"; do
  expect_status "$bad is refused with exit 2" 2 clean "$BIN" $bad -- true
done
out=$(clean "$BIN" -- /no/such/program 2>&1); status=$?
check "a command that cannot run exits 127 naming it" bash -c "[ $status = 127 ] && grep -q /no/such/program <<<'$out'"

# The program after the flags, as torchrun runs it (program_command.hpp): a Python script under
# Python with -u, a module with -m, anything that can run as it is; --dry-run says which.
plan_command() {  # plan_command ENV... -- ARGS...: the plan's command and how it runs, as JSON
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  (cd "$WORK" && env -i PATH=/usr/bin:/bin HOME="$WORK" TMPDIR="$WORK" "${vars[@]}" "$BIN" --dry-run --format json "$@" 2>&1) |
    /usr/bin/python3 -c 'import json, sys
try:
    p = json.load(sys.stdin)
    print(json.dumps([p["command"], p["program"]["interpreter"], p["program"]["about"]]))
except ValueError:
    print("not a plan")'
}
printf 'print("hello")\n' >"$WORK/train.py"
printf 'print("hello")\n' >"$WORK/no_suffix"
printf '#!/bin/sh\necho run\n' >"$WORK/run.sh"
chmod +x "$WORK/run.sh"
cp "$WORK/run.sh" "$WORK/tool.py"
python3_path=$(PATH=/usr/bin:/bin command -v python3)
out=$(plan_command -- --nproc_per_node=2 train.py --lr 0.1)
check "a .py script runs under python3 -u with its arguments ($out)" \
  grep -qF "[[\"$python3_path\", \"-u\", \"train.py\", \"--lr\", \"0.1\"], \"$python3_path\"" <<<"$out"
check "--dry-run says why and how to choose another interpreter" grep -q "PYTHON_EXEC" <<<"$out"
out=$(plan_command PYTHON_EXEC=/bin/cat -- train.py)
check "PYTHON_EXEC chooses the interpreter ($out)" grep -qF '[["/bin/cat", "-u", "train.py"]' <<<"$out"
out=$(plan_command -- -m pkg.train --config a.toml)
check "-m runs a module ($out)" grep -qF "[[\"$python3_path\", \"-u\", \"-m\", \"pkg.train\", \"--config\", \"a.toml\"]" <<<"$out"
out=$(plan_command -- --no_python ./tool.py x)
check "--no_python runs even a .py as it is ($out)" grep -qF '[["./tool.py", "x"], null' <<<"$out"
out=$(plan_command -- ./run.sh x)
check "a program that can run itself runs as it is ($out)" grep -qF '[["./run.sh", "x"], null' <<<"$out"
out=$(plan_command -- no_suffix a)
check "a file that cannot run itself is a Python script, as torchrun has it ($out)" \
  grep -qF "[[\"$python3_path\", \"-u\", \"no_suffix\", \"a\"]" <<<"$out"
out=$(plan_command -- -- train.py)
check "after --, a .py that cannot run itself still gets Python ($out)" \
  grep -qF "[[\"$python3_path\", \"-u\", \"train.py\"]" <<<"$out"
out=$(plan_command -- -- ./tool.py)
check "after --, a .py that can run itself runs as it is ($out)" grep -qF '[["./tool.py"], null' <<<"$out"
out=$(plan_command -- train.py -- --x)
check "the first -- after the script is torchrun's, not the script's ($out)" \
  grep -qF "[[\"$python3_path\", \"-u\", \"train.py\", \"--x\"]" <<<"$out"
out=$(cd "$WORK" && env -i PATH=/nowhere HOME="$WORK" TMPDIR="$WORK" "$BIN" train.py 2>&1); status=$?
check "no Python on PATH: exit 2 naming PYTHON_EXEC and --no-python ($status)" \
  bash -c '[ "$1" = 2 ] && grep -q "PYTHON_EXEC" <<<"$2" && grep -q -- "--no-python" <<<"$2"' _ "$status" "$out"
out=$(cd "$WORK" && clean "$BIN" --nproc_per_node=2 --monitor_interval=1 train.py 2>&1); status=$?
check "torchrun's form runs: two workers print hello, a flag with no use is said once ($status)" \
  bash -c '[ "$1" = 0 ] && [ "$(grep -c "hello" <<<"$2")" = 2 ] &&
           [ "$(grep -c "monitor-interval: not used" <<<"$2")" = 1 ]' _ "$status" "$out"
expect_status "--no-python with -m is refused" 2 clean "$BIN" --no-python -m pkg -- true
expect_status "a switch with a value is refused" 2 clean "$BIN" --standalone=yes -- true
expect_status "a flag without its value is refused" 2 clean "$BIN" --nproc_per_node

# --help documents every flag and the variables read; --version.
help=$(clean "$BIN" --help)
for word in --nnodes --nproc-per-node --node-rank --master-addr --master-port --dry-run --format --run-id \
            --term-timeout OMPI_COMM_WORLD_RANK AZ_BATCH_MASTER_NODE TF_CONFIG SLURM_STEP_NODELIST PET_NNODES \
            SM_HOSTS JSM_NAMESPACE_RANK TORCHELASTIC_RUN_ID CUDA_VISIBLE_DEVICES NCCL_SOCKET_IFNAME; do
  check "--help mentions $word" grep -q -- "$word" <<<"$help"
done
check "--version prints the version" bash -c "'$BIN' --version | grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+'"

# A job secret file others can read: said, with the way to mend it; refused under --require-auth.
head -c 32 /dev/urandom | base64 >"$WORK/open.secret"
chmod 644 "$WORK/open.secret"
two=(--nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port 1)
out=$(clean "$BIN" --dry-run "${two[@]}" --rdzv-secret-file "$WORK/open.secret" -- true 2>&1 >/dev/null)
check "a secret file of mode 0644: a warning naming it, the mode and chmod 600" \
  grep -q "warning: the job's secret file $WORK/open.secret (mode 0644) can be read by other users.*chmod 600" <<<"$out"
out=$(clean "$BIN" --dry-run "${two[@]}" --rdzv-secret-file "$WORK/open.secret" --require-auth -- true 2>&1); status=$?
check "a secret file of mode 0644 under --require-auth: exit 2 naming it ($status)" \
  bash -c '[ "$1" = 2 ] && grep -q "error: --require-auth.*secret file .*open.secret (mode 0644)" <<<"$2"' _ "$status" "$out"
chmod 600 "$WORK/open.secret"
out=$(clean "$BIN" --dry-run "${two[@]}" --rdzv-secret-file "$WORK/open.secret" --require-auth -- true 2>&1); status=$?
check "the same file at mode 0600: taken without a word ($status)" \
  bash -c '[ "$1" = 0 ] && ! grep -q "warning" <<<"$2"' _ "$status" "$out"

# --dry-run: JSON that parses, text for people, nothing started.
json=$(clean "$BIN" --dry-run --format json --nproc-per-node 3 -- touch "$WORK/ran")
check "--dry-run json parses with 3 workers" /usr/bin/python3 -c \
  "import json,sys; p=json.loads(sys.argv[1]); assert [w['rank'] for w in p['workers']]==[0,1,2], p" "$json"
check "--dry-run starts nothing" [ ! -e "$WORK/ran" ]
text=$(clean "$BIN" --dry-run -- true)
check "--dry-run text names the source and why" grep -q "source: *standalone (no scheduler variables" <<<"$text"
check "--dry-run without a scheduler: one node, said so" grep -q "standalone (.*: a single node)" <<<"$text"
text=$(clean "$BIN" --dry-run --nnodes 2 --master-addr 10.0.0.1 -- true)
check "--dry-run --nnodes 2 without a scheduler: the reason names --nnodes, not a single node" \
  bash -c 'grep -q "standalone (.*the node count from --nnodes)" <<<"$1" && ! grep -q "single node" <<<"$1" &&
           grep -q "^nodes: *2 " <<<"$1"' _ "$text"

# Workers get the DESIGN §3 environment, one per local rank.
clean "$BIN" --nproc-per-node 3 -- sh -c 'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $NODE_RANK $MASTER_ADDR $AML_LAUNCH_WORKER" > "$0/env.$RANK"' "$WORK"
check "three workers each got their rank" bash -c "cat '$WORK'/env.* | sort | tr '\n' '|' | grep -qx '0 0 3 3 0 127.0.0.1 1|1 1 3 3 0 127.0.0.1 1|2 2 3 3 0 127.0.0.1 1|'"
clean OMP_NUM_THREADS=7 "$BIN" -- sh -c 'echo $OMP_NUM_THREADS > "$0/omp"' "$WORK"
check "OMP_NUM_THREADS already set is kept" grep -qx 7 "$WORK/omp"
clean "$BIN" --nproc-per-node 2 -- sh -c 'echo $OMP_NUM_THREADS > "$0/omp.$RANK"' "$WORK"
check "OMP_NUM_THREADS is set when unset" grep -Eqx '[1-9][0-9]*' "$WORK/omp.0"

# The rank library agrees with the launcher.
out=$(clean "$BIN" --nproc-per-node 2 -- "$RANK_INFO" | sort)
check "rank_info under aml-launch: rank 0 is master" grep -q "rank 0 of 2, local rank 0 of 2, node 0, source aml-launch, is_master true" <<<"$out"
check "rank_info under aml-launch: rank 1 is not" grep -q "rank 1 of 2, local rank 1 of 2, node 0, source aml-launch, is_master false" <<<"$out"

# Fail fast: one worker exits 7, the others (sleeping) are stopped; the first failure is named.
start=$(date +%s%N)
out=$(clean "$BIN" --nproc-per-node 3 -- sh -c '[ "$RANK" = 1 ] && exit 7; exec sleep 60' 2>&1); status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "fail-fast exits with the first failure's code" [ $status = 7 ]
check "fail-fast does not wait for the sleepers (${elapsed_ms} ms)" [ $elapsed_ms -lt 10000 ]
check "the failure summary names rank 1 and its exit code" grep -q "rank 1 (local rank 1) on node 0 .* failed first at .*Z: exit code 7" <<<"$out"

# A worker that ignores SIGTERM is killed after --term-timeout.
start=$(date +%s%N)
# Rank 0 fails only once rank 1 has set its trap.
clean "$BIN" --nproc-per-node 2 --term-timeout 1 -- sh -c \
  'if [ "$RANK" = 0 ]; then while [ ! -e "$0/trapped" ]; do sleep 0.01; done; exit 3; fi
   trap "" TERM; touch "$0/trapped"; while :; do sleep 0.1; done' "$WORK" >/dev/null 2>&1
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "TERM-ignoring worker is killed after the grace period (exit $status, ${elapsed_ms} ms)" \
  bash -c "[ $status = 3 ] && [ $elapsed_ms -ge 900 ] && [ $elapsed_ms -lt 10000 ]"

# Signals to the launcher reach every worker's group; TERM tears down.
marker="aml-test-$$-$RANDOM"
# env execs the launcher, so $! is the launcher itself.
env -i PATH=/usr/bin:/bin MARK=$marker "$BIN" --nproc-per-node 2 -- sh -c \
  'trap "echo got-usr1 > \"$0/usr1.$RANK\"" USR1; trap "exit 0" TERM; touch "$0/up.$RANK"; while :; do sleep 0.1; done' "$WORK" &
launcher=$!
for _ in $(seq 100); do [ -e "$WORK/up.0" ] && [ -e "$WORK/up.1" ] && break; sleep 0.05; done
kill -USR1 $launcher; sleep 0.5
kill -TERM $launcher; wait $launcher; status=$?
check "USR1 forwarded to every worker" bash -c "[ -e '$WORK/usr1.0' ] && [ -e '$WORK/usr1.1' ]"
check "TERM to the launcher stops the workers: a stop, exit 143 ($status)" [ $status = 143 ]

# A second INT moves on to TERM, a third kills at once: workers that ignore INT and TERM are
# not waited for.
env -i PATH=/usr/bin:/bin "$BIN" --nproc-per-node 2 --term-timeout 60 -- sh -c \
  'trap "" INT TERM; touch "$0/deaf.$RANK"; while :; do sleep 0.1; done' "$WORK" >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 100); do [ -e "$WORK/deaf.0" ] && [ -e "$WORK/deaf.1" ] && break; sleep 0.05; done
start=$(date +%s%N)
kill -INT $launcher; sleep 0.3; kill -INT $launcher; sleep 0.3; kill -INT $launcher; wait $launcher; status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "third INT kills at once: a stop by INT all the same (exit $status after ${elapsed_ms} ms, grace was 60 s)" \
  bash -c "[ $status = 130 ] && [ $elapsed_ms -lt 5000 ]"

# No process of the job is left: background children in the workers' groups go too.
clean MARK=$marker "$BIN" --nproc-per-node 2 -- sh -c 'sleep 600 & [ "$RANK" = 1 ] && exit 5; wait' >/dev/null 2>&1
sleep 0.2
check "no process with the job's marker is left" bash -c "! grep -l 'MARK=$marker' /proc/[0-9]*/environ 2>/dev/null | grep -q ."

# torchrun's --log-line-prefix-template: its macros are each worker's (and this host's).
out=$("$BIN" --nproc-per-node 2 --log-line-prefix-template '[${role_name}${rank}:${local_rank}@${hostname}] ' \
  -- sh -c 'echo line' 2>&1)
check "--log-line-prefix-template: each line gets its worker's prefix ($(tr '\n' '|' <<<"$out"))" \
  bash -c "grep -qx '\[default0:0@$(hostname)\] line' <<<\"\$0\" && grep -qx '\[default1:1@$(hostname)\] line' <<<\"\$0\"" "$out"

# Installed into a virtual environment (as pip installs the wheel), a script runs under that
# environment's Python, as torchrun runs it under its own sys.executable; PYTHON_EXEC still wins.
/usr/bin/python3 -m venv "$WORK/venv"
cp "$BIN" "$WORK/venv/bin/aml-launch"
echo 'import sys; print("prefix", sys.prefix)' >"$WORK/tv.py"
out=$(cd "$WORK" && env PATH=/usr/bin:/bin venv/bin/aml-launch --nproc-per-node 1 tv.py 2>&1)
check "a venv's aml-launch runs a script under the venv's Python ($out)" \
  bash -c "grep -qx 'prefix $WORK/venv' <<<\"\$0\"" "$out"
out=$(cd "$WORK" && env PATH=/usr/bin:/bin PYTHON_EXEC=/usr/bin/python3 venv/bin/aml-launch --nproc-per-node 1 tv.py 2>&1)
check "PYTHON_EXEC names the interpreter even there ($out)" bash -c "grep -qx 'prefix /usr' <<<\"\$0\"" "$out"
out=$(cd "$WORK" && env PATH=/usr/bin:/bin "$BIN" --nproc-per-node 1 tv.py 2>&1)
check "outside an environment, python3 on PATH ($out)" bash -c "grep -qx 'prefix /usr' <<<\"\$0\"" "$out"

# torchrun's --print-completion: aml-launch's own, for bash (completing flags and their values
# from this binary's --help), zsh and tcsh (registered, from the flag table).
bin_dir=$(dirname "$BIN")
out=$(PATH="$bin_dir:/usr/bin:/bin" bash -c '
  source <(aml-launch --print-completion bash) || exit 1
  COMP_WORDS=(aml-launch --worker-st) COMP_CWORD=1; _aml_launch; echo "flags: ${COMPREPLY[*]}"
  COMP_WORDS=(aml-launch --worker-store r) COMP_CWORD=2; _aml_launch; echo "values: ${COMPREPLY[*]}"' 2>&1)
check "--print-completion bash completes a flag and its value ($(tr '\n' '|' <<<"$out"))" \
  bash -c "grep -qx 'flags: --worker-store' <<<\"\$0\" && grep -qx 'values: relay' <<<\"\$0\"" "$out"
# compinit writes its dump beside the file -d names and renames it over that file: the dump is
# this test's own (pointed at /dev/null, it replaced the device with a regular file).
out=$(PATH="$bin_dir:/usr/bin:/bin" ZDUMP="$WORK/zcompdump" zsh -fc '
  autoload -Uz compinit && compinit -u -d "$ZDUMP"
  source <(aml-launch --print-completion zsh) || exit 1
  print -r -- "registered: $_comps[aml-launch]"; which _aml_launch | grep -c "worker-store=.*launcher relay torch"' 2>&1)
check "--print-completion zsh registers _aml_launch with every flag ($(tr '\n' '|' <<<"$out"))" \
  bash -c "grep -qx 'registered: _aml_launch' <<<\"\$0\" && grep -qx 1 <<<\"\$0\"" "$out"
check "compinit kept its dump in the test's folder, and /dev/null is still a character device" \
  bash -c "[ -s '$WORK/zcompdump' ] && [ -c /dev/null ]"
out=$(PATH="$bin_dir:/usr/bin:/bin" tcsh -fc 'eval "`aml-launch --print-completion tcsh`"; complete aml-launch' 2>&1)
check "--print-completion tcsh registers the flags and their values ($(head -c 120 <<<"$out"))" \
  bash -c "grep -q 'worker-store' <<<\"\$0\" && grep -q 'n/--worker-store/(launcher relay torch)/' <<<\"\$0\"" "$out"
"$BIN" --print-completion fish >/dev/null 2>"$WORK/fish.err"; status=$?
check "--print-completion of another shell: exit 2 naming it ($status)" \
  bash -c "[ $status = 2 ] && grep -q 'bash, zsh or tcsh' '$WORK/fish.err'"

# The launcher raises its own descriptor limit to serve the workers' store; its workers get the
# limit it was started with.
out=$(prlimit --nofile=1024:4096 "$BIN" --nproc-per-node 1 -- sh -c 'echo "soft $(ulimit -Sn) hard $(ulimit -Hn)"' 2>&1)
check "a worker gets the descriptor limit the launcher was started with ($out)" \
  [ "$out" = "soft 1024 hard 4096" ]

finish
