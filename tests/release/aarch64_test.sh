#!/usr/bin/env bash
# The aarch64 (Grace) release under user-mode emulation (Debian's qemu-user-static) with
# Debian 12's aarch64 glibc in a root of its own (tests/release/debian_debs.sh): the binary's
# launch, fail-fast, exit statuses, signals, relay without loss (tagged: the NEON tagging, and
# its unit tests compiled for aarch64), --dry-run of the repository's
# environment cases (and the shared contract's where present), two nodes on loopback with a job
# secret (one of them the x86_64 release), --preflight=gloo with the aarch64 aml-preflight
# (Gloo built in), and the aarch64 wheel pip-installed for Debian's
# aarch64 Python, whose ranks read their topology through its library. Emulation checks
# behaviour only: nothing here is timed beyond generous limits. The workers are this machine's
# own programs (sh, an aarch64 python), as a container's would be.
# usage: aarch64_test.sh DIST_DIR
set -u
DIST=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
W=$(mktemp -d)
trap 'pkill -KILL -f "$W/" 2>/dev/null; rm -rf "$W"' EXIT
BIN=$DIST/aml-launch-aarch64
QEMU=$(command -v qemu-aarch64-static || true)
if [ -z "$QEMU" ]; then
  check "qemu-aarch64-static is installed (scripts/install-deps.sh: qemu-user-static)" false
  finish; exit
fi
ROOT=$W/root
mkdir -p "$ROOT"
if ! debs=$("$HERE/debian_debs.sh" bookworm arm64 libc6 python3.11-minimal libpython3.11-minimal \
  libpython3.11-stdlib libffi8 zlib1g libexpat1 2>"$W/debs.err"); then
  cat "$W/debs.err"
  check "Debian's aarch64 glibc and Python can be fetched (apt-get download, arm64)" false
  finish; exit
fi
for deb in $debs; do dpkg-deb -x "$deb" "$ROOT"; done
# The launcher runs emulated; what it starts (sh, the host's programs) runs natively, and an
# aarch64 program it starts (Python below) through binfmt where registered, else by a wrapper.
aml() { "$QEMU" -L "$ROOT" "$BIN" "$@"; }

check "dist/aml-launch-aarch64 is an aarch64 executable" bash -c "file '$BIN' | grep -q 'ARM aarch64'"
check "--version under emulation" bash -c "'$QEMU' -L '$ROOT' '$BIN' --version | grep -q '^aml-launch '"

out=$(aml --nproc-per-node 3 -- sh -c 'echo "rank $RANK of $WORLD_SIZE local $LOCAL_RANK"' 2>&1); status=$?
check "3 workers run and exit 0 (exit $status)" bash -c "[ $status = 0 ] && [ \$(grep -c '^\[rank [0-2]\] rank [0-2] of 3 local [0-2]\$' <<<\"\$1\") = 3 ]" _ "$out" ||
  echo "$out"

start=$(date +%s%N)
out=$(aml --nproc-per-node 2 -- sh -c '[ "$RANK" = 1 ] && exit 7; exec sleep 60' 2>&1); status=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "fail-fast: rank 1 exits 7, rank 0 stopped, the launcher exits 7 naming rank 1 ($ms ms)" \
  bash -c "[ $status = 7 ] && [ $ms -lt 30000 ] && grep -q 'rank 1 (local rank 1).*failed first.*exit code 7' <<<\"\$1\"" _ "$out" ||
  echo "$out"
aml --nproc-per-node 1 -- sh -c 'kill -KILL $$' >/dev/null 2>&1; status=$?
check "a worker killed by SIGKILL: exit 137 ($status)" [ "$status" = 137 ]

"$QEMU" -L "$ROOT" "$BIN" --nproc-per-node 2 -- \
  sh -c 'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.1; done' >"$W/term.out" 2>&1 &
launcher=$!
for _ in $(seq 300); do [ "$(grep -c ready "$W/term.out")" = 2 ] && break; sleep 0.1; done
kill -TERM "$launcher"
wait "$launcher"; status=$?
check "SIGTERM to the launcher: both workers get TERM, the launcher exits 143 ($status)" \
  bash -c "[ $status = 143 ] && [ \$(grep -c 'got TERM' '$W/term.out') = 2 ]" || cat "$W/term.out"

aml --nproc-per-node 2 --tag none -- sh -c 'seq 1 20000' >"$W/lines" 2>/dev/null
check "relay without loss: 2 x 20,000 lines, each once" \
  bash -c "[ \$(wc -l <'$W/lines') = 40000 ] && [ \$(sort -n '$W/lines' | uniq -c | awk '\$1 != 2' | wc -l) = 0 ]"
# Tagged (the NEON block-wise tagging): lines of every length from 0 to 80 bytes.
aml --nproc-per-node 2 -- sh -c 'i=0; while [ $i -lt 3000 ]; do printf "%$((i % 81))s|%d\n" "" $i; i=$((i + 1)); done' \
  >"$W/tagged" 2>/dev/null
check "tagged relay: 2 x 3,000 lines of 0 to 80 bytes, each once, each after its rank's tag" bash -c \
  "for r in 0 1; do [ \$(grep -c \"^\\[rank \$r\\] *|[0-9]*\$\" '$W/tagged') = 3000 ] || exit 1; done;
   [ \$(sed 's/.*|//' '$W/tagged' | sort -n | uniq -c | awk '\$1 != 2' | wc -l) = 0 ] && [ \$(wc -l <'$W/tagged') = 6000 ]"

# The tagging's unit tests (tests/unit/tag_lines_test.cpp), compiled for aarch64 with Zig and
# GoogleTest's sources (Debian's googletest): the NEON block-wise path against line by line.
zig=$(python3 -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null)
gtest=/usr/src/googletest/googletest
src=$HERE/../..
if [ -x "$zig" ] && [ -d "$gtest/src" ] &&
  "$zig" c++ -target aarch64-linux-gnu.2.17 -std=c++20 -O2 -isystem "$gtest/include" -I"$gtest" -I"$src/src" \
    "$gtest/src/gtest-all.cc" "$gtest/src/gtest_main.cc" "$src/tests/unit/tag_lines_test.cpp" \
    "$src/src/supervisor/tag_lines.cpp" -o "$W/tag_lines_test" -lpthread >"$W/zig.log" 2>&1; then
  out=$("$QEMU" -L "$ROOT" "$W/tag_lines_test" 2>&1)
  check "tag_lines_test on aarch64 (the NEON path): $(grep -E '^\[  (PASSED|FAILED)' <<<"$out" | head -1)" \
    grep -q "^\[  PASSED  \] 4 tests" <<<"$out" || echo "$out"
else
  cat "$W/zig.log" 2>/dev/null
  check "tag_lines_test compiles for aarch64 (Zig from PyPI, Debian's googletest sources)" false
fi

# The --dry-run cases through the emulated binary: the repository's own always
# (tests/fixtures/dry_run_cases.json), and the organisation's contract where a checkout has it
# beside the repository (CI does; a user's clone does not).
printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$QEMU" "$ROOT" "$BIN" >"$W/aml-launch-arm64"
chmod +x "$W/aml-launch-arm64"
out=$(/usr/bin/python3 "$HERE/../blackbox/dry_run_cases.py" --bin "$W/aml-launch-arm64" 2>&1)
check "the repository's --dry-run cases through the aarch64 binary ($(tail -1 <<<"$out"))" bash -c \
  "tail -1 <<<\"\$1\" | grep -Eq '^[1-9][0-9]* passed, 0 failed'" _ "$out" || tail -20 <<<"$out"
contract=$HERE/../../../shared/tools/check-env-cases  # outside-the-repository: optional
if [ -x "$contract" ]; then
  out=$(/usr/bin/python3 "$contract" --bin "$W/aml-launch-arm64" 2>&1)
  check "the shared contract's cases through the aarch64 binary ($(tail -1 <<<"$out"))" bash -c \
    "tail -1 <<<\"\$1\" | grep -Eq '(^| )0 failed'" _ "$out" || tail -20 <<<"$out"
else
  echo "note: no shared contract beside the repository; its cases are among the repository's own"
fi

# Two nodes on loopback with a job secret: node 0 the emulated aarch64 launcher, node 1 the
# x86_64 release: the libsodium compiled into each gives the same proofs on both.
reserve_port port
head -c 32 /dev/urandom | base64 >"$W/secret"
"$QEMU" -L "$ROOT" "$BIN" --nnodes 2 --node-rank 0 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port $port \
  --rdzv-timeout 120 --rdzv-secret-file "$W/secret" -- sh -c 'echo "rank $RANK of $WORLD_SIZE $AML_LAUNCH_STORE_AUTH"' >"$W/node.0" 2>&1 &
node0=$!
"$DIST/aml-launch-x86_64" --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port $port \
  --rdzv-timeout 120 --rdzv-secret-file "$W/secret" -- sh -c 'echo "rank $RANK of $WORLD_SIZE $AML_LAUNCH_STORE_AUTH"' >"$W/node.1" 2>&1 &
node1=$!
wait "$node0"; s0=$?
wait "$node1"; s1=$?
check "two nodes with a secret, aarch64 and x86_64: both exit 0 ($s0 $s1), ranks 0-3 of 4" bash -c \
  "[ $s0 = 0 ] && [ $s1 = 0 ] && [ \$(cat '$W/node.0' '$W/node.1' | grep -c 'rank [0-3] of 4 key') = 4 ]" ||
  cat "$W/node.0" "$W/node.1"

# The aarch64 preflight, Gloo built in: dist/aml-launch-aarch64 finds aml-preflight-aarch64
# beside it. Without binfmt here, an aarch64 program the emulated launcher starts needs a
# wrapper: the one beside the launcher's copy runs the real aml-preflight-aarch64 under qemu.
check "dist/aml-preflight-aarch64 is an aarch64 executable" bash -c "file '$DIST/aml-preflight-aarch64' | grep -q 'ARM aarch64'"
mkdir -p "$W/dist"
cp "$BIN" "$W/dist/aml-launch-aarch64"
printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$QEMU" "$ROOT" "$DIST/aml-preflight-aarch64" >"$W/dist/aml-preflight-aarch64"
chmod +x "$W/dist/aml-preflight-aarch64"
out=$("$QEMU" -L "$ROOT" "$W/dist/aml-launch-aarch64" --version 2>&1)
check "--version: gloo built in, the preflight beside it" bash -c \
  'grep -q "^target: aarch64 Linux, glibc 2.17 or newer" <<<"$1" && grep -q "^aml::comm backends: gloo mpi nccl$" <<<"$1" &&
   grep -q "^--preflight: .*/aml-preflight-aarch64 (gloo built in" <<<"$1"' _ "$out" || echo "$out"
out=$(AML_PREFLIGHT_MAX_BYTES=4096 "$QEMU" -L "$ROOT" "$W/dist/aml-launch-aarch64" --nproc-per-node 2 \
  --preflight=gloo -- echo command-ran 2>&1); status=$?
check "--preflight=gloo with the aarch64 preflight: passed, then the command ($status)" bash -c \
  '[ "$1" = 0 ] && grep -q "allreduce over 2 ranks (gloo)" <<<"$2" && grep -q "aml-preflight: passed" <<<"$2" &&
   [ "$(grep -c command-ran <<<"$2")" = 2 ]' _ "$status" "$out" || echo "$out"

# The aarch64 wheel, pip-installed for an aarch64 Python 3.11 (pip's --platform), read from
# Debian's aarch64 python3.11 under emulation.
wheel=$(ls "$DIST"/aml_launch-*manylinux_2_17_aarch64*.whl 2>/dev/null | head -1)
check "the aarch64 wheel is in dist/ ($(basename "${wheel:-none}"))" [ -n "$wheel" ]
if [ -n "$wheel" ]; then
  show=$(python3 -m auditwheel show "$wheel" 2>&1 | tr '\n' ' ' | tr -s ' ')
  check "auditwheel show agrees: consistent with manylinux_2_17_aarch64" \
    grep -q 'consistent with the following platform tag: "manylinux_2_17_aarch64"' <<<"$show" || echo "$show"
  python3 -m pip install -q --root-user-action=ignore --no-deps --only-binary=:all: \
    --platform manylinux_2_17_aarch64 --python-version 3.11 --target "$W/site" "$wheel" >"$W/pip.log" 2>&1
  check "pip installs it for aarch64 Python 3.11" bash -c "[ -f '$W/site/aml_launch/libaml_rank.so' ]" ||
    cat "$W/pip.log"
  check "its library is aarch64" bash -c "file '$W/site/aml_launch/libaml_rank.so' | grep -q 'ARM aarch64'"
  check "its aml-preflight is beside its aml-launch, aarch64" bash -c "file '$W/site/bin/aml-preflight' | grep -q 'ARM aarch64'"
  out=$(bash "$HERE/../packaging/exports_test.sh" "$W/site/aml_launch/libaml_rank.so" c 2>&1)
  check "its library exports the C ABI only ($(tail -1 <<<"$out"))" grep -q " 0 failed$" <<<"$out" || echo "$out"
  PY=("$QEMU" -L "$ROOT" "$ROOT/usr/bin/python3.11")
  got=$(env -i PATH=/usr/bin:/bin PYTHONPATH="$W/site" RANK=5 WORLD_SIZE=8 LOCAL_RANK=1 \
    LOCAL_WORLD_SIZE=4 MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 "${PY[@]}" -c \
    'import aml_launch, platform; print(platform.machine(), aml_launch.rank(), aml_launch.world_size(), aml_launch.is_master())' 2>&1)
  check "aarch64 Python: import aml_launch reads RANK 5 of 8 through its library ($got)" \
    [ "$got" = "aarch64 5 8 False" ]
  printf '#!/bin/sh\nPYTHONPATH=%s exec %s -L %s %s "$@"\n' "$W/site" "$QEMU" "$ROOT" "$ROOT/usr/bin/python3.11" \
    >"$W/python-arm64"
  chmod +x "$W/python-arm64"
  out=$("$QEMU" -L "$ROOT" "$W/site/bin/aml-launch" --nproc-per-node 2 --tag none -- "$W/python-arm64" -c \
    'import aml_launch; t = aml_launch.topology(); print("rank", t["rank"], "of", t["world_size"], t["source"])' 2>&1)
  check "the wheel's aml-launch starts aarch64 Python ranks that read their topology" bash -c \
    "[ \$(grep -c '^rank [01] of 2 aml-launch\$' <<<\"\$1\") = 2 ]" _ "$out" || echo "$out"
fi
finish
