#!/usr/bin/env bash
# capture_bounds_bench.sh: capture stays within its byte and time bounds (#39) — the wall
# time of one `vigil run` whose command writes to a 1 TiB sparse file and asks to
# truncate a procfs file, against the same command on a small file and /dev/null.
#
#   tools/bench/capture_bounds_bench.sh [--vigil BUILD/vigil] [--rounds 7] [--timeout 120]
#
# Both commands open the file for appending (vigil-init keeps its pre-image first: a
# 1 TiB sparse file is named with its size, never read) and run
# `: > /proc/self/pagemap` (O_WRONLY|O_CREAT|O_TRUNC, which the kernel refuses, but
# whose pre-image vigil-init took before the open: it used to read the 256 GiB it says
# it holds; without, a small file it may not write), then rewrite 200 small files so that the run does a command's worth of
# work. Rounds alternate the order. The target: median(with) / median(without) <= 1.05.
# A run that takes longer than --timeout is killed and counted at the timeout.
# (The supervisor's post-run hashing of the same file is the backstop's: gate39b.)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
VIGIL=${VIGIL:-$root/build/supervisor/vigil} ROUNDS=7 TIMEOUT=120
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) VIGIL=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    *) echo "capture_bounds_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
VIGIL=$(realpath "$VIGIL" 2>/dev/null || echo "$VIGIL")
[ -x "$VIGIL" ] || { echo "capture_bounds_bench.sh: give --vigil BUILD/vigil" >&2; exit 2; }

work=$(mktemp -d /tmp/vigil-capture-bounds.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_STATE_HOME="$work/state"
mkdir -p "$XDG_STATE_HOME"
printf '{"filesystem": {"allowWrite": ["."]}}\n' >"$work/s.json"

declare -A times
now() { date +%s.%N; }
one() {  # with|without
  local mode=$1 t0 t1 target=ro
  rm -rf "$work/ws" "$XDG_STATE_HOME/vigil/captures"
  mkdir -p "$work/ws"
  for i in $(seq 0 199); do printf 'small %d\n' "$i" >"$work/ws/s$i"; done
  if [ "$mode" = with ]; then
    truncate -s 1T "$work/ws/big"
    target=/proc/self/pagemap
  else
    printf 'small\n' >"$work/ws/big"
    # A small file the command may not write: refused (EACCES) as pagemap is, so the two
    # runs differ only in what a pre-image would have read.
    printf 'small\n' >"$work/ws/ro"
    chmod 0400 "$work/ws/ro"
  fi
  script=": >> big; true > $target 2>/dev/null; for i in \$(seq 0 199); do echo y > s\$i; done"
  t0=$(now)
  (cd "$work/ws" && timeout "$TIMEOUT" "$VIGIL" run --settings "$work/s.json" \
    --log "$work/l.jsonl" -- sh -c "$script" >/dev/null 2>"$work/err") || cat "$work/err" >&2
  t1=$(now)
  rm -f "$work/l.jsonl"
  times[$mode]+="$(echo "$t1 - $t0" | bc -l) "
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for ((r = 0; r < ROUNDS; r++)); do
  if ((r % 2 == 0)); then one with; one without; else one without; one with; fi
done
with=$(echo "${times[with]}" | median)
without=$(echo "${times[without]}" | median)
printf 'capture bounds: with a 1 TiB sparse file and /proc/self/pagemap %.3f s, without %.3f s, ratio %.3f (median of %d rounds; target <= 1.05)\n' \
  "$with" "$without" "$(echo "$with / $without" | bc -l)" "$ROUNDS"
