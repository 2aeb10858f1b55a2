#!/usr/bin/env bash
# capture_bench.sh: what change capture (pre- and post-images, vigil.capture) costs, in
# one interleaved run of one binary with capture on and off.
#
#   tools/bench/capture_bench.sh --vigil BUILD/vigil [--files 20000] [--rewrites 1000] [--rounds 5]
#
# Two workloads, each round in alternating order with "vigil.capture.enabled" true and
# false (the reference is the same binary with capture off, in the same run):
#   extract  tar x of an archive of --files new small files into an empty directory (new
#            files have nothing to keep: this is the cost of looking);
#   rewrite  --rewrites existing 100 KB files each rewritten whole (cp over them: every one
#            is kept once before it changes, and hashed again after the command).
# Prints the median wall time of each and the ratio on/off.
set -euo pipefail

VIGIL="" FILES=20000 REWRITES=1000 ROUNDS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) VIGIL=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --rewrites) REWRITES=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "capture_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$VIGIL" ] || { echo "capture_bench.sh: give --vigil BUILD/vigil" >&2; exit 2; }

work=$(mktemp -d /tmp/vigil-capture-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export XDG_STATE_HOME="$work/state"
mkdir -p "$work/src" "$work/ws" "$XDG_STATE_HOME"
for mode in on off; do
  enabled=$([ "$mode" = on ] && echo true || echo false)
  printf '{"filesystem": {"allowWrite": ["."]}, "vigil": {"capture": {"enabled": %s}}}\n' \
    "$enabled" >"$work/$mode.json"
done
# The archive: FILES files of 100 bytes in directories of 1000.
(cd "$work/src" && for ((i = 0; i < FILES; i++)); do
  d=d$((i / 1000)); [ -d "$d" ] || mkdir "$d"; printf '%099d\n' "$i" >"$d/f$i"; done)
tar -C "$work/src" -cf "$work/files.tar" .
rm -rf "$work/src"
head -c 102400 /dev/urandom >"$work/100k"

declare -A times
now() { date +%s.%N; }
one() {  # workload mode
  local what=$1 mode=$2 t0 t1
  rm -rf "$work/ws" "$XDG_STATE_HOME/vigil/captures"
  mkdir -p "$work/ws"
  if [ "$what" = rewrite ]; then
    for ((i = 0; i < REWRITES; i++)); do head -c 102400 /dev/urandom >"$work/ws/r$i"; done
    script="for i in \$(seq 0 $((REWRITES - 1))); do cp $work/100k r\$i; done"
  else
    script="tar -xf $work/files.tar"
  fi
  t0=$(now)
  (cd "$work/ws" && "$VIGIL" run --settings "$work/$mode.json" --log "$work/l.jsonl" -- \
    sh -c "$script" >/dev/null)
  t1=$(now)
  rm -f "$work/l.jsonl"
  times[$what-$mode]+="$(echo "$t1 - $t0" | bc -l) "
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for ((r = 0; r < ROUNDS; r++)); do
  for what in extract rewrite; do
    if ((r % 2 == 0)); then one "$what" on; one "$what" off; else one "$what" off; one "$what" on; fi
  done
done
for what in extract rewrite; do
  on=$(echo "${times[$what-on]}" | median)
  off=$(echo "${times[$what-off]}" | median)
  printf '%-8s capture on %.3f s, off %.3f s, ratio %.3f (median of %d rounds)\n' \
    "$what" "$on" "$off" "$(echo "$on / $off" | bc -l)" "$ROUNDS"
done
