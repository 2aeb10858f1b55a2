#!/usr/bin/env bash
# Per-call cost of the observer: N write-intent opens inside `vigil run` against the same
# loop under a bare bwrap, both with N=0 as their fixed cost, interleaved.
#   per_call = ((vigil_N - vigil_0) - (bwrap_N - bwrap_0)) / N
# Usage: observer_bench.sh [--vigil PATH] [-n ROUNDS] [--calls N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
launcher=${VIGIL_LAUNCH_BENCH:-$root/build/tools/bench/vigil_launch_bench}
rounds=10
calls=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "observer_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$vigil" ] || { echo "observer_bench: no vigil at $vigil (build first)" >&2; exit 1; }
[ -x "$launcher" ] || { echo "observer_bench: no launcher at $launcher (build vigil_launch_bench)" >&2; exit 1; }
ws=$(mktemp -d /tmp/vigil-obsbench.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
export XDG_STATE_HOME="$ws/state"  # session logs of the runs go here, and away with it
loop() { echo "import os
for i in range($1):
  os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))"; }
bw=(bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" --unshare-all --die-with-parent --new-session --cap-drop ALL --)
out=$("$launcher" -n "$rounds" -w 1 \
  @bwrap_0 "${bw[@]}" python3 -c "$(loop 0)" :: @bwrap_N "${bw[@]}" python3 -c "$(loop "$calls")" :: \
  @vigil_0 "$vigil" run -- python3 -c "$(loop 0)" :: \
  @vigil_N "$vigil" run -- python3 -c "$(loop "$calls")" 2>&1) || { echo "$out" >&2; exit 1; }
echo "$out"
med() { echo "$out" | awk -v l="@$1" '$1==l {print $2}'; }
python3 - "$(med bwrap_0)" "$(med bwrap_N)" "$(med vigil_0)" "$(med vigil_N)" "$calls" <<'PY'
import sys
b0, bn, v0, vn, n = map(float, sys.argv[1:])
print(f"observer cost per trapped call: {((vn - v0) - (bn - b0)) / n * 1000:.1f} us "
      f"(bwrap loop {(bn - b0) / n * 1000:.1f} us/call, under vigil {(vn - v0) / n * 1000:.1f} us/call)")
PY
