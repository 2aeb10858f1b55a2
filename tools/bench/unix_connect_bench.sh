#!/usr/bin/env bash
# What brokering AF_UNIX connect() costs (network.allowUnixSockets): vigil_unix_connect_loop
# makes N x {socket; connect; close} to a listener of its own and times them from inside
# the sandbox (start-up and the final drain stay out), under
#   @all     `vigil run` with network.allowAllUnixSockets: the same sandbox and observer,
#            connect() not trapped (the reference)
#   @broker  `vigil run` with network.allowUnixSockets listing the loop's socket: every
#            connect() goes to vigil-init, which connects the caller's socket itself
# for three kinds of connect: a blocking unix socket (vigil-init connects it on a thread of
# its own, as a full backlog would block it), a non-blocking one (connected inline), and
# TCP to 127.0.0.1 (also trapped under the broker: seccomp cannot see a socket's family).
# Rounds are interleaved (each round runs every entrant, the order rotating). Reported:
# the median ns per connect of each, the broker's cost per connect (@broker - @all) and
# the ratio @broker / @all.
# Usage: unix_connect_bench.sh [--vigil PATH] [--loop PATH] [-n ROUNDS] [--calls N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
loop=${VIGIL_UNIX_CONNECT_LOOP:-$root/build/tools/bench/vigil_unix_connect_loop}
rounds=10
calls=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    --loop) loop=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "unix_connect_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$vigil" ] || { echo "unix_connect_bench: no vigil at $vigil (build first)" >&2; exit 1; }
[ -x "$loop" ] || { echo "unix_connect_bench: no vigil_unix_connect_loop at $loop (build it)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/vigil-unixbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ws=$tmp/ws
mkdir -p "$ws" "$tmp/conf"
cp "$loop" "$tmp/loop"  # outside the workspace: read-only inside, as a tool would be
cd "$ws"
export XDG_STATE_HOME="$tmp/state"  # session logs of the runs go here, and away with it
sock=$ws/s.sock
printf '{"filesystem": {"allowWrite": ["."]}, "network": {"allowAllUnixSockets": true}}\n' \
  >"$tmp/conf/all.json"
printf '{"filesystem": {"allowWrite": ["."]}, "network": {"allowUnixSockets": ["%s"]}}\n' "$sock" \
  >"$tmp/conf/broker.json"
samples=$tmp/samples
: >"$samples"
labels=(all broker)
modes=(block nonblock tcp)
for r in $(seq 0 "$rounds"); do  # round 0 is a warm-up
  for i in "${!labels[@]}"; do
    l=${labels[$(((i + r) % ${#labels[@]}))]}
    for m in "${modes[@]}"; do
      out=$("$vigil" run --settings "$tmp/conf/$l.json" -- "$tmp/loop" "$calls" "$sock" "$m" 2>/dev/null) ||
        { echo "unix_connect_bench: @$l $m failed" >&2; exit 1; }
      ((r == 0)) || echo "$l $m ${out%% *}" >>"$samples"
    done
  done
done
echo "unix connect broker cost: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $calls connects, $(date -u +%Y-%m-%dT%H:%MZ)"
python3 - "$samples" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def med(label, mode):
    return statistics.median(float(r[2]) for r in rows if r[0] == label and r[1] == mode)
for mode in ("block", "nonblock", "tcp"):
    a, b = med("all", mode), med("broker", mode)
    print(f"{mode:<9} @all {a:>8.0f} ns   @broker {b:>8.0f} ns   broker cost {(b - a) / 1000:>6.1f} us"
          f" per connect   ratio {b / a:.2f}x")
PY
