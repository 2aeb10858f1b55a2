#!/usr/bin/env bash
# launch_check_bench.sh: what the launch check costs per `vigil run -- true` (bwrap's
# --block-fd and the supervisor's check of the sandbox's finished mount table,
# supervisor/launch/launch_check.h), beside the build before it, in one interleaved run.
#
#   launch_check_bench.sh --before PATH [--vigil PATH] [--launcher PATH] [-n ROUNDS] [-w N]
#
# --before is an earlier vigil binary (its vigil-init found where it finds it, e.g. a
# build of main). Both run `vigil run -- true` from the same throw-away workspace, round
# by round with vigil_launch_bench (which rotates the order), @before first so the
# ratio column is this build over the one before. The load average is printed before
# and after: read the ratio, not the milliseconds.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
VIGIL=${VIGIL:-$REPO_ROOT/build/supervisor/vigil}
BEFORE=${VIGIL_BEFORE:-}
LAUNCHER=${VIGIL_LAUNCH_BENCH:-$REPO_ROOT/build/tools/bench/vigil_launch_bench}
ROUNDS=40
WARMUPS=3

die() { echo "launch_check_bench: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --vigil) VIGIL=${2:?--vigil needs a path}; shift 2 ;;
    --before) BEFORE=${2:?--before needs a path}; shift 2 ;;
    --launcher) LAUNCHER=${2:?--launcher needs a path}; shift 2 ;;
    -n) ROUNDS=${2:?-n needs a number}; shift 2 ;;
    -w) WARMUPS=${2:?-w needs a number}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[[ -n $BEFORE ]] || die "--before PATH is required (a vigil built from the commit before the check)"
for b in "$VIGIL" "$BEFORE" "$LAUNCHER"; do
  [[ -x $b ]] || die "$b is not an executable (build it: cmake --build build --target vigil vigil_launch_bench)"
done

WS=$(mktemp -d "${TMPDIR:-/tmp}/vigil-launch-check.XXXXXX")
trap 'rm -rf -- "$WS"' EXIT
cd "$WS"
# A failing build stops here, not after a minute of rounds.
"$VIGIL" run -- true || die "$VIGIL run -- true failed"
"$BEFORE" run -- true || die "$BEFORE run -- true failed"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(bwrap --version)"
"$LAUNCHER" -n "$ROUNDS" -w "$WARMUPS" \
  @before "$BEFORE" run -- true :: @vigil "$VIGIL" run -- true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
