#!/usr/bin/env bash
# The whole suite's time, as CI runs it: `bash .ci/run` on a clean clone of HEAD (../shared beside
# it, as root, no standard input), RUNS times in turn, each on a new clone in a folder of its
# own. The first run is cold: the caches of this project's builds are moved aside first
# (ccache's, Zig's, ~/.cache/aml-launch*, as a new machine has none of them); the ones after it
# are warm (right after a run of the same commit elsewhere, as CI runs after a developer's
# session). Each run's closing line, wall time and
# core-seconds, and from the suite's own report its stage times and each build's ccache hits,
# are printed and kept in OUT (default: a temporary folder, named at the end). The caches moved
# aside are put back at the end, and this benchmark's are removed: the machine as it was found.
# usage: [SUITE_TIME_COLD=0] benchmarks/suite_time.sh [RUNS] [OUT]   (default 3: one cold, two
#        warm; the machine otherwise idle; about 90 minutes)
set -eu
cd "$(dirname "$0")/.."
repo=$PWD
runs=${1:-3}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
place=$(mktemp -d)
# A clone others can read, as CI's is: the Slurm test runs a client as another user (nobody).
chmod 755 "$place"
aside=$(mktemp -d)
caches=("$HOME/.cache/ccache" "$HOME/.cache/zig" "$HOME"/.cache/aml-launch*)
restore() {
  local c
  for c in "${caches[@]}"; do
    rm -rf "$c"
    [ ! -e "$aside/${c##*/}" ] || mv "$aside/${c##*/}" "$c"
  done
  rm -rf "$place" "$aside"
}
# SUITE_TIME_COLD=0: every run warm, on the caches there are (right after a run of the same
# commit, as CI runs after a developer's session): nothing is moved aside.
cold=${SUITE_TIME_COLD:-1}
if [ "$cold" = 1 ]; then
  trap restore EXIT
  for c in "${caches[@]}"; do [ ! -e "$c" ] || mv "$c" "$aside/"; done
else
  trap 'rm -rf "$place" "$aside"' EXIT
fi
# CI has ../shared beside the clone; without it the suite runs what the repository carries.
shared="$repo/../shared"  # outside-the-repository: optional
[ -d "$shared" ] || echo "suite_time: no $shared: the runs go without it, unlike CI's" >&2
echo "suite_time: $runs runs of $(git rev-parse --short=12 HEAD) in $place/run-N/main on $(nproc) cores ($(date -u +%F)), each on a new clone"
for run in $(seq "$runs"); do
  kind=warm
  [ "$run" = 1 ] && [ "$cold" = 1 ] && kind=cold
  # A clean clone each run, as CI's, and in a folder of its own: no build folder of the run
  # before, and a path of its own (CI's clone is not where the developer's run was).
  rm -rf "$place"/run-*
  mkdir "$place/run-$run"
  [ ! -d "$shared" ] || ln -s "$(realpath "$shared")" "$place/run-$run/shared"
  git -C "$repo" clone -q "$repo" "$place/run-$run/main"
  log="$out/run-$run-$kind.log"
  read -r _ u n s _ _ q sq st _ </proc/stat
  busy0=$((u + n + s + q + sq + st)) t0=$(date +%s)
  status=0
  (cd "$place/run-$run/main" && bash .ci/run </dev/null >"$log" 2>&1) || status=$?
  read -r _ u n s _ _ q sq st _ </proc/stat
  busy=$(((u + n + s + q + sq + st - busy0) / $(getconf CLK_TCK))) wall=$(($(date +%s) - t0))
  echo "== run $run ($kind): exit $status, $wall s wall, $busy core-seconds; $(tail -1 "$log")"
  # The suite's own report: its stage times, each build's ccache hits.
  sed -n '/^== stage times/,/^== the [0-9]* slowest tests/p' "$log" | sed '$d'
done
echo "suite_time: the runs' output in $out"
