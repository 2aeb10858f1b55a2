#!/usr/bin/env bash
# Per-call cost of the observer: vigil_write_loop makes N write-intent opens and times
# them from inside the sandbox (start-up and the final drain stay out), under
#   @bwrap   a bare bwrap (same mounts shape; nothing trapped: the loop's own cost)
#   @sync    `vigil run`, observer with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (the default)
#   @nosync  `vigil run` with "vigil": {"observer": {"syncWakeUp": false}}
# Rounds are interleaved (each round runs all three, the order rotating). Reported:
# medians of ns per iteration, and the observer's cost per trapped write
#   per_write = median(@vigil) - median(@bwrap)
# A second figure, less sensitive to other load on the machine, is CPU time: the whole
# `vigil run` tree's user+sys (vigil, bwrap, vigil-init, the loop) for N writes minus the
# same for N=0, divided by N (from wait4's rusage of the launched process and its children).
# Usage: observer_bench.sh [--vigil PATH] [--loop PATH] [-n ROUNDS] [--calls N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
loop=${VIGIL_WRITE_LOOP:-$root/build/tools/bench/vigil_write_loop}
rounds=10
calls=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    --loop) loop=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "observer_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$vigil" ] || { echo "observer_bench: no vigil at $vigil (build first)" >&2; exit 1; }
[ -x "$loop" ] || { echo "observer_bench: no vigil_write_loop at $loop (build it)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/vigil-obsbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ws=$tmp/ws
mkdir -p "$ws"
cp "$loop" "$tmp/loop"  # outside the workspace: read-only inside, as a tool would be
cd "$ws"
export XDG_STATE_HOME="$tmp/state"  # session logs of the runs go here, and away with it
printf '{"filesystem": {"allowWrite": ["."]}}\n' >"$tmp/sync.json"
printf '{"filesystem": {"allowWrite": ["."]}, "vigil": {"observer": {"syncWakeUp": false}}}\n' \
  >"$tmp/nosync.json"
bw=(bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" --unshare-all
  --die-with-parent --new-session --cap-drop ALL --chdir "$ws" --)
cmd_of() {  # label n -> the command line, one word per line
  case $1 in
    bwrap) printf '%s\n' "${bw[@]}" "$tmp/loop" "$2" f ;;
    sync) printf '%s\n' "$vigil" run --settings "$tmp/sync.json" -- "$tmp/loop" "$2" f ;;
    nosync) printf '%s\n' "$vigil" run --settings "$tmp/nosync.json" -- "$tmp/loop" "$2" f ;;
  esac
}
# Runs a command, prints "<its stdout's first word> <user+sys ms of it and its children>".
run_timed() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
print(out.split()[0].decode(), f"{cpu:.1f}")
PY
}
labels=(bwrap sync nosync)
samples=$tmp/samples
: >"$samples"
for r in $(seq 0 "$rounds"); do  # round 0 is a warm-up
  for i in 0 1 2; do
    l=${labels[$(((i + r) % 3))]}
    for n in "$calls" 1; do
      mapfile -t c < <(cmd_of "$l" "$n")
      res=$(run_timed "${c[@]}") || { echo "observer_bench: @$l failed" >&2; exit 1; }
      ((r == 0)) || echo "$l $n $res" >>"$samples"
    done
  done
done
echo "observer per-write cost: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $calls opens, $(date -u +%Y-%m-%dT%H:%MZ)"
python3 - "$samples" "$calls" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
calls = sys.argv[2]
def med(label, n, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == label and r[1] == n)
ns = {l: med(l, calls, 2) for l in ("bwrap", "sync", "nosync")}
cpu = {l: (med(l, calls, 3) - med(l, "1", 3)) / int(calls) * 1e6 for l in ("bwrap", "sync", "nosync")}
for l in ("bwrap", "sync", "nosync"):
    spread = [float(r[2]) for r in rows if r[0] == l and r[1] == calls]
    print(f"@{l:<7} {ns[l]:>9.0f} ns/iteration (min {min(spread):.0f}, max {max(spread):.0f})"
          f"   CPU {cpu[l]:>7.0f} ns/iteration")
for l, what in (("sync", "with SYNC_WAKE_UP"), ("nosync", "without SYNC_WAKE_UP")):
    print(f"observer cost per trapped write, {what}: {(ns[l] - ns['bwrap']) / 1000:.1f} us wall,"
          f" {(cpu[l] - cpu['bwrap']) / 1000:.1f} us CPU")
print(f"SYNC_WAKE_UP: wall per write x{(ns['nosync'] - ns['bwrap']) / max(ns['sync'] - ns['bwrap'], 1):.1f} cheaper")
PY
