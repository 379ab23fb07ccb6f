#!/usr/bin/env bash
# aml-launch as the real PID 1 of a real container: a FROM scratch image assembled here
# (aml-launch, busybox-static, the glibc files aml-launch needs), run by podman with runc.
# Exit statuses pass through; `podman kill -s TERM` reaches the workers and gives 143;
# `podman stop` ends within aml-launch's grace, not podman's; orphans are reaped with no
# zombie left; per-rank logs land on a mounted volume; the containers guide's Dockerfile builds
# and runs. podman keeps its images, containers and state in this test's folder (a wrapper first
# on PATH gives it --root, --runroot and --tmpdir there, and a containers.conf whose file locks
# live there too, not in /dev/shm/libpod_lock), never in /var/lib/containers or /run; they are
# removed afterwards, with every mount under the folder.
# usage: container_test.sh AML_LAUNCH
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
IMAGE="localhost/aml-launch-test:$$"
WORK=$(mktemp -d)
CTX="$WORK/context"
LOGS="$WORK/logs"
cleanup() {
  podman ps -aq --filter "ancestor=$IMAGE" 2>/dev/null | xargs -r podman rm -f >/dev/null 2>&1
  podman rmi -f "$IMAGE-guide" "$IMAGE-base" "$IMAGE" >/dev/null 2>&1
  # The storage's overlay mounts (its home, a layer still mounted), deepest first.
  findmnt -rn -o TARGET | grep "^$WORK/" | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
for tool in podman runc busybox; do
  command -v "$tool" >/dev/null || { check "$tool is installed (scripts/install-deps.sh installs it)" false; finish; exit; }
done
mkdir -p "$WORK/bin"
printf '[engine]\nlock_type = "file"\n' >"$WORK/containers.conf"
printf '#!/bin/sh\nCONTAINERS_CONF=%s exec %s --root %s --runroot %s --tmpdir %s "$@"\n' \
  "$WORK/containers.conf" "$(command -v podman)" "$WORK/storage" "$WORK/runroot" "$WORK/libpod" \
  >"$WORK/bin/podman"
chmod +x "$WORK/bin/podman"
export PATH="$WORK/bin:$PATH"

# The image: nothing but aml-launch, busybox for the workers, and glibc's loader and libc.
mkdir -p "$CTX/bin" "$LOGS"
cp "$BIN" "$CTX/bin/aml-launch"
cp "$(command -v busybox)" "$CTX/bin/busybox"
for applet in sh sleep seq cat grep ls echo kill true wc; do ln -s busybox "$CTX/bin/$applet"; done
for lib in $(ldd "$BIN" | grep -o '/[^ ]*'); do
  mkdir -p "$CTX$(dirname "$lib")"
  cp -L "$lib" "$CTX$lib"
done
printf 'FROM scratch\nCOPY . /\nENV PATH=/bin\nENTRYPOINT ["/bin/aml-launch", "--"]\n' >"$CTX/Containerfile"
check "podman builds the FROM scratch image" bash -c "podman build -q -t '$IMAGE' '$CTX' >'$WORK/build.log' 2>&1" ||
  { cat "$WORK/build.log"; finish; exit; }

run() {  # run [podman run options...] -- aml-launch arguments...
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  podman --runtime runc run --network none --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
    -v "$LOGS:/logs" --entrypoint /bin/aml-launch "${opts[@]}" "$IMAGE" "$@"
}

# Exit statuses, and who is PID 1.
for code in 0 7 255; do
  run --rm -- -- sh -c "exit $code" >/dev/null 2>&1
  status=$?
  check "exit status $code passes through the container ($status)" [ "$status" = "$code" ]
done
run --rm -- -- sh -c 'kill -SEGV $$' >/dev/null 2>&1
status=$?
check "a worker killed by SIGSEGV gives 139 ($status)" [ "$status" = 139 ]
out=$(run --rm -- -- sh -c 'echo "pid1=$(cat /proc/1/comm) parent=$PPID"' 2>&1)
check "aml-launch is PID 1 and the worker's parent ($out)" grep -q "pid1=aml-launch parent=1" <<<"$out"

# podman kill -s TERM: the workers get TERM, the container exits 143.
rm -f "$LOGS"/*
run -d --name "term$$" -- --nproc-per-node 2 -- \
  sh -c 'trap "echo got TERM > /logs/term.\$RANK; trap - TERM; kill -TERM \$\$" TERM; echo up > /logs/up.$RANK; while :; do sleep 0.05; done' >/dev/null
for _ in $(seq 100); do [ -f "$LOGS/up.0" ] && [ -f "$LOGS/up.1" ] && break; sleep 0.05; done
podman kill -s TERM "term$$" >/dev/null
status=$(podman wait "term$$")
check "podman kill -s TERM: the container exits 143 ($status)" [ "$status" = 143 ]
check "podman kill -s TERM: both workers got TERM" bash -c "[ -f '$LOGS/term.0' ] && [ -f '$LOGS/term.1' ]"
podman rm -f "term$$" >/dev/null 2>&1

# podman stop with a worker that ignores TERM: aml-launch's --term-timeout (1 s) ends it,
# long before podman's own 30 s timeout would.
run -d --name "stop$$" -- --term-timeout 1 -- sh -c 'trap "" TERM; echo up > /logs/up.stop; while :; do sleep 0.05; done' >/dev/null
for _ in $(seq 100); do [ -f "$LOGS/up.stop" ] && break; sleep 0.05; done
start=$(date +%s%N)
podman stop -t 30 "stop$$" >/dev/null
took=$((($(date +%s%N) - start) / 1000000))
status=$(podman inspect -f '{{.State.ExitCode}}' "stop$$")
check "podman stop: done in ${took} ms, within aml-launch's grace (< 10 s), a stop: status 143 ($status)" \
  bash -c "[ $took -lt 10000 ] && [ '$status' = 143 ]"
podman rm -f "stop$$" >/dev/null 2>&1

# 100 orphans: each exits after its worker's parent shell has left them to PID 1.
out=$(run --rm -- -- sh -c 'for i in $(seq 100); do (sleep 0.2 &); done; sleep 1;
  z=0; for s in /proc/[0-9]*/stat; do read -r line < "$s" 2>/dev/null; case "$line" in *") Z "*) z=$((z+1));; esac; done
  echo "zombies=$z"' 2>&1)
status=$?
check "100 orphans reaped by PID 1: no zombie ($out), exit 0 ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "^zombies=0$" <<<"$2"' _ "$status" "$out"

# The containers guide's Dockerfile (examples/containers/Dockerfile), as written, on a base of
# the test's own: this image's files without aml-launch stand for the training image.
GUIDE="$WORK/guide"
mkdir -p "$GUIDE"
cp "$HERE/../../examples/containers/Dockerfile" "$GUIDE/"
cp "$BIN" "$GUIDE/aml-launch-x86_64"
cp -a "$CTX" "$WORK/base"
rm "$WORK/base/bin/aml-launch"
printf 'FROM scratch\nCOPY . /\nENV PATH=/usr/local/bin:/bin\n' >"$WORK/base/Containerfile"
check "podman builds the guide's Dockerfile on a training image" bash -c \
  "podman build -q -t '$IMAGE-base' '$WORK/base' >'$WORK/guide.log' 2>&1 &&
   podman build -q -t '$IMAGE-guide' --build-arg BASE='$IMAGE-base' '$GUIDE' >>'$WORK/guide.log' 2>&1" ||
  cat "$WORK/guide.log"
out=$(podman --runtime runc run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
  "$IMAGE-guide" sh -c 'echo "rank $RANK of $WORLD_SIZE, pid 1: $(cat /proc/1/comm), $(command -v aml-launch)"' 2>&1)
check "the guide's image runs its command under aml-launch, its entry point ($out)" \
  grep -qx "rank 0 of 1, pid 1: aml-launch, /usr/local/bin/aml-launch" <<<"$out"

# Per-rank logs on a mounted volume.
rm -f "$LOGS"/*
run --rm -- --nproc-per-node 2 --log-dir /logs -- sh -c 'echo "line from rank $RANK"' >/dev/null 2>&1
check "per-rank logs on the mounted volume" bash -c \
  "grep -qx 'line from rank 0' '$LOGS/std_log_process_0.txt' && grep -qx 'line from rank 1' '$LOGS/std_log_process_1.txt'"
finish
