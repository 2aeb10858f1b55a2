#!/usr/bin/env bash
# caps_bench.sh: what the resource caps (vigil.limits) cost per `vigil run -- true`,
# beside the build before them, in one interleaved run.
#
#   @caps    $VIGIL run -- true            (default caps: the mechanism `vigil probe` names)
#   @before  $VIGIL_BEFORE run -- true     (an earlier build, with its own vigil-init beside it)
#            or, with --caps-off, $VIGIL itself with every cap at 0 (the caps' own cost)
# Each round runs both, in alternating order, from a throw-away workspace; prints the load
# average before and after, the medians and the ratio caps/before. Target: <= 1.05.
#
# usage: caps_bench.sh --vigil PATH (--vigil-before PATH | --caps-off) [-n ROUNDS] [-w WARMUPS]
set -euo pipefail

VIGIL=${VIGIL:-}
VIGIL_BEFORE=${VIGIL_BEFORE:-}
ROUNDS=40
CAPS_OFF=0
WARMUPS=3
while (($#)); do
  case $1 in
    --vigil) VIGIL=${2:?--vigil needs a path}; shift 2 ;;
    --vigil-before) VIGIL_BEFORE=${2:?--vigil-before needs a path}; shift 2 ;;
    --caps-off) CAPS_OFF=1; shift ;;
    -n) ROUNDS=${2:?-n needs a number}; shift 2 ;;
    -w) WARMUPS=${2:?-w needs a number}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "caps_bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $VIGIL ]] || { echo "caps_bench: --vigil PATH (an executable vigil) is required" >&2; exit 2; }
((CAPS_OFF)) && VIGIL_BEFORE=$VIGIL
[[ -x $VIGIL_BEFORE ]] || { echo "caps_bench: --vigil-before PATH or --caps-off is required" >&2; exit 2; }

WS=$(mktemp -d /tmp/vigil-caps-bench.XXXXXX)
trap 'rm -rf "$WS"' EXIT
cd "$WS"
export XDG_STATE_HOME=$WS/state XDG_RUNTIME_DIR=$WS/run
mkdir -p "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# The settings (outside the workspace): the workspace writable, and for --caps-off every cap 0.
mkdir -p "$WS/conf" "$WS/w"
echo "{\"filesystem\":{\"allowWrite\":[\"$WS/w\"]}}" >"$WS/conf/on.json"
echo "{\"filesystem\":{\"allowWrite\":[\"$WS/w\"]},\"vigil\":{\"limits\":{\"processes\":0,\"memoryBytes\":0,\"maxFileBytes\":0}}}" >"$WS/conf/off.json"
cd "$WS/w"

# One timed `run -- true`, in nanoseconds, on stdout; any failure stops the benchmark.
# $2: "before" (with --caps-off: the settings with every cap at 0).
one() {
  local t0 t1 settings=(--settings "$WS/conf/on.json")
  [[ ${2:-} == before ]] && ((CAPS_OFF)) && settings=(--settings "$WS/conf/off.json")
  t0=$(date +%s%N)
  if ! "$1" run "${settings[@]}" -- true >/dev/null 2>"$WS/err"; then
    echo "caps_bench: $1 run -- true failed: $(head -c 2000 "$WS/err")" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  echo $((t1 - t0))
}

echo "mechanism: $("$VIGIL" probe | grep 'resource caps' || true)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < WARMUPS; i++)); do one "$VIGIL" >/dev/null; one "$VIGIL_BEFORE" before >/dev/null; done
: >"$WS/caps"
: >"$WS/before"
for ((i = 0; i < ROUNDS; i++)); do
  if ((i % 2 == 0)); then
    one "$VIGIL" >>"$WS/caps"; one "$VIGIL_BEFORE" before >>"$WS/before"
  else
    one "$VIGIL_BEFORE" before >>"$WS/before"; one "$VIGIL" >>"$WS/caps"
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mc=$(median "$WS/caps")
mb=$(median "$WS/before")
awk -v c="$mc" -v b="$mb" -v n="$ROUNDS" 'BEGIN {
  printf "rounds %d (interleaved)\n@caps   median %.2f ms\n@before median %.2f ms\ncaps/before %.3f\n",
         n, c / 1e6, b / 1e6, c / b }'
