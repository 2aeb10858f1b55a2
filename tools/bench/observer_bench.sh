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
# Two optional entrants join the same interleaved rounds, so that what is compared was
# measured in the same minutes on this noisy machine:
#   --vigil-b PATH  a second build (before/after a change): @sync_b and @nosync_b
#   --floor PATH    a bare notify loop (`PATH -n CALLS -S -b write`, e.g. obsbench built from
#                   the reference bench): its ns per trapped write-open, the floor an observer
#                   can reach here; per_write is also shown as a ratio to it
# Usage: observer_bench.sh [--vigil PATH] [--vigil-b PATH] [--floor PATH] [--loop PATH]
#                          [-n ROUNDS] [--calls N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
loop=${VIGIL_WRITE_LOOP:-$root/build/tools/bench/vigil_write_loop}
vigil_b=
floor=
rounds=10
calls=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    --vigil-b) vigil_b=$2; shift 2 ;;
    --floor) floor=$2; shift 2 ;;
    --loop) loop=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "observer_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$vigil" ] || { echo "observer_bench: no vigil at $vigil (build first)" >&2; exit 1; }
[ -x "$loop" ] || { echo "observer_bench: no vigil_write_loop at $loop (build it)" >&2; exit 1; }
[ -z "$vigil_b" ] || [ -x "$vigil_b" ] || { echo "observer_bench: no vigil at $vigil_b" >&2; exit 1; }
[ -z "$floor" ] || [ -x "$floor" ] || { echo "observer_bench: no floor loop at $floor" >&2; exit 1; }
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
    sync_b) printf '%s\n' "$vigil_b" run --settings "$tmp/sync.json" -- "$tmp/loop" "$2" f ;;
    nosync_b) printf '%s\n' "$vigil_b" run --settings "$tmp/nosync.json" -- "$tmp/loop" "$2" f ;;
    floor) printf '%s\n' "$floor" -n "$2" -S -b write ;;
  esac
}
# Runs a command, prints "<ns per iteration> <user+sys ms of it and its children>": the
# first word of its stdout, or the floor loop's wr_ns=.
run_timed() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
words = out.decode().split()
ns = next((w[len("wr_ns="):] for w in words if w.startswith("wr_ns=")), words[0])
print(ns, f"{cpu:.1f}")
PY
}
labels=(bwrap sync nosync)
[ -z "$vigil_b" ] || labels+=(sync_b nosync_b)
[ -z "$floor" ] || labels+=(floor)
samples=$tmp/samples
: >"$samples"
for r in $(seq 0 "$rounds"); do  # round 0 is a warm-up
  for i in "${!labels[@]}"; do
    l=${labels[$(((i + r) % ${#labels[@]}))]}
    ns=("$calls" 1)
    [ "$l" != floor ] || ns=("$calls")  # the floor loop's figure is per call already
    for n in "${ns[@]}"; do
      mapfile -t c < <(cmd_of "$l" "$n")
      res=$(run_timed "${c[@]}") || { echo "observer_bench: @$l failed" >&2; exit 1; }
      ((r == 0)) || echo "$l $n $res" >>"$samples"
    done
  done
done
echo "observer per-write cost: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $calls opens, $(date -u +%Y-%m-%dT%H:%MZ)"
python3 - "$samples" "$calls" "${labels[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
calls = sys.argv[2]
labels = sys.argv[3:]
def med(label, n, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == label and r[1] == n)
ns = {l: med(l, calls, 2) for l in labels}
cpu = {l: (med(l, calls, 3) - med(l, "1", 3)) / int(calls) * 1e6 for l in labels if l != "floor"}
for l in labels:
    spread = [float(r[2]) for r in rows if r[0] == l and r[1] == calls]
    print(f"@{l:<8} {ns[l]:>9.0f} ns/iteration (min {min(spread):.0f}, max {max(spread):.0f})"
          + (f"   CPU {cpu[l]:>7.0f} ns/iteration" if l in cpu else "   (bare loop, per write-open incl. the open)"))
whats = {"sync": "with SYNC_WAKE_UP", "nosync": "without SYNC_WAKE_UP",
         "sync_b": "with SYNC_WAKE_UP, build B", "nosync_b": "without SYNC_WAKE_UP, build B"}
for l in labels:
    if l not in whats:
        continue
    per = (ns[l] - ns["bwrap"]) / 1000
    ratio = f", {per * 1000 / ns['floor']:.2f}x the floor" if "floor" in ns else ""
    print(f"observer cost per trapped write, {whats[l]}: {per:.1f} us wall,"
          f" {(cpu[l] - cpu['bwrap']) / 1000:.1f} us CPU{ratio}")
print(f"SYNC_WAKE_UP: wall per write x{(ns['nosync'] - ns['bwrap']) / max(ns['sync'] - ns['bwrap'], 1):.1f} cheaper")
if "floor" in ns:
    # per_write leaves the loop's own open out; the floor's figure has it in. Both ways:
    print(f"floor (bare notify loop, SYNC_WAKE_UP + batched output): {ns['floor'] / 1000:.1f} us"
          f" per trapped write-open; a whole iteration under @sync is {ns['sync'] / ns['floor']:.2f}x it"
          + (f", under @sync_b {ns['sync_b'] / ns['floor']:.2f}x" if "sync_b" in ns else ""))
PY
