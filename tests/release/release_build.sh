#!/usr/bin/env bash
# The release artifacts for the tests that follow (ctest's fixture "release"): scripts/release.sh
# into DIST, then a check that every artifact is there and runs.
# scripts/test.sh builds the release beside the other tests instead, at idle priority, and says
# so with AML_RELEASE_BUILT_BY=FILE: FILE.lock is held while that build runs, and FILE holds its
# exit status; this test then waits for it rather than build a second time.
# usage: release_build.sh DIST
set -u
DIST=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../blackbox/assert.sh"
if [ -n "${AML_RELEASE_BUILT_BY:-}" ]; then
  exec {lock}>"$AML_RELEASE_BUILT_BY.lock"
  flock "$lock"  # until that build has ended
  status=$(cat "$AML_RELEASE_BUILT_BY" 2>/dev/null)
  check "scripts/release.sh, run beside the tests by scripts/test.sh, ended well (${status:-no status})" \
    [ "$status" = 0 ] || tail -40 "$AML_RELEASE_BUILT_BY.log" 2>/dev/null
else
  # Alone, it would take both cores from the tests beside it: it yields to them.
  chrt --idle 0 bash "$HERE/../../scripts/release.sh" "$DIST"
  check "scripts/release.sh built the release into $DIST" [ $? = 0 ]
fi
for arch in x86_64 aarch64; do
  check "the $arch launcher, its preflight and its wheel are there" bash -c \
    "[ -x '$DIST/aml-launch-$arch' ] && [ -x '$DIST/aml-preflight-$arch' ] && ls '$DIST'/aml_launch-*$arch*.whl >/dev/null"
done
version=$("$DIST/aml-launch" --version 2>&1 | head -1)
check "this machine's release runs ($version)" grep -Eq '^aml-launch [0-9]+\.[0-9]+\.[0-9]+' <<<"$version"
check "the source distribution is there" bash -c "ls '$DIST'/aml_launch-*.tar.gz >/dev/null"
finish
