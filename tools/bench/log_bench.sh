#!/usr/bin/env bash
# log_bench.sh: what logging the command's output costs, before and after, in one
# interleaved run.
#
#   tools/bench/log_bench.sh --vigil NEW/vigil --before OLD/vigil [--mb 100] [--rounds 5]
#
# Each round runs, in alternating order, `vigil run --log L -- head -c N /dev/zero` with
# stdout to /dev/null under both binaries (NUL bytes: the densest binary output there is
# for a JSON log), plus the same command without vigil as the floor. Prints the median
# wall time and log size of each and the ratios after/before. The logs are written to a
# temp dir removed on exit. --settings FILE is passed to the new binary only (e.g. to
# set vigil.log.maxOutputBytes high enough that all output is logged, as before).
# The machine's load (1-minute average, /proc/loadavg) is printed at the start and the end:
# the ratios compare like with like, the absolute times depend on it.
set -euo pipefail

VIGIL="" BEFORE="" MB=100 ROUNDS=5 SETTINGS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) VIGIL=$2; shift 2 ;;
    --before) BEFORE=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --settings) SETTINGS=$2; shift 2 ;;
    *) echo "log_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$VIGIL" ] && [ -x "$BEFORE" ] || { echo "log_bench.sh: give --vigil and --before binaries" >&2; exit 2; }

work=$(mktemp -d /tmp/vigil-log-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws"
bytes=$((MB * 1000 * 1000))
declare -A times sizes

now() { date +%s.%N; }
one() {  # name binary [extra args...]
  local name=$1 bin=$2; shift 2
  local log="$work/$name.jsonl"
  rm -f "$log"
  local t0 t1
  t0=$(now)
  if [ "$bin" = "-" ]; then
    head -c "$bytes" /dev/zero >/dev/null
  else
    (cd "$work/ws" && "$bin" run "$@" --log "$log" -- head -c "$bytes" /dev/zero >/dev/null)
  fi
  t1=$(now)
  times[$name]+="$(echo "$t1 - $t0" | bc -l) "
  sizes[$name]+="$( [ -f "$log" ] && stat -c %s "$log" || echo 0) "
  rm -f "$log"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

load() { cut -d' ' -f1 /proc/loadavg; }
load_start=$(load)
new_args=()
[ -n "$SETTINGS" ] && new_args=(--settings "$SETTINGS")
for ((r = 0; r < ROUNDS; r++)); do
  if ((r % 2 == 0)); then
    one before "$BEFORE"; one after "$VIGIL" "${new_args[@]}"
  else
    one after "$VIGIL" "${new_args[@]}"; one before "$BEFORE"
  fi
  one floor -
done
printf '%s MB of NUL bytes on stdout, %s rounds (median); load %s at the start, %s at the end, %s cores\n' \
  "$MB" "$ROUNDS" "$load_start" "$(load)" "$(nproc)"
for n in floor before after; do
  printf '  %-7s %8.2f s   log %10d bytes\n' "$n" "$(echo "${times[$n]}" | median)" "$(echo "${sizes[$n]}" | median)"
done
tb=$(echo "${times[before]}" | median); ta=$(echo "${times[after]}" | median)
sb=$(echo "${sizes[before]}" | median); sa=$(echo "${sizes[after]}" | median)
printf '  after/before: time %.2f, log size %.2f\n' "$(echo "$ta / $tb" | bc -l)" "$(echo "$sa / $sb" | bc -l)"
