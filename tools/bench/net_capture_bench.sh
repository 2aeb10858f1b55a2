#!/usr/bin/env bash
# What capturing a connection costs (vigil.network.capture): inside one `vigil run` with
# capture on, a python client times, in interleaved rounds, the set-up and one request of
#   captured  socket.create_connection(("allowed.test", PORT)): a name from vigil-init's
#             DNS stub, connect() trapped and carried through the proxy by vigil-init
#   aware     the same request as a proxy-aware client makes it: TCP to the bridge on
#             127.0.0.1:3128, CONNECT allowed.test:PORT, read the 200
# then GET /x over the tunnel and read the whole answer. The server is a loopback HTTP
# server on the host (reached only through the proxy: --test-allow-loopback, test mode).
# Reported: the median microseconds of each, and the ratio captured / aware (target <=1.2).
# Usage: net_capture_bench.sh [--vigil PATH] [-n ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
rounds=200
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    *) echo "net_capture_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$vigil" ] || { echo "net_capture_bench: no vigil at $vigil (build first)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/vigil-capbench.XXXXXX)
srv_pid=
cleanup() { [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/ws" "$tmp/www"
head -c 1024 /dev/zero >"$tmp/www/x"
export XDG_STATE_HOME="$tmp/state"
(cd "$tmp/www" && exec python3 -c '
import http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' >"$tmp/port") &
srv_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
printf '{"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": ["allowed.test"]}, "vigil": {"network": {"capture": true}}}\n' >"$tmp/settings.json"
cat >"$tmp/client.py" <<'PY'
import socket, statistics, sys, time
port, rounds = int(sys.argv[1]), int(sys.argv[2])
req = b"GET /x HTTP/1.0\r\nHost: allowed.test\r\n\r\n"
def finish(s):
    s.sendall(req)
    while s.recv(65536):
        pass
    s.close()
def captured():
    finish(socket.create_connection(("allowed.test", port)))
def aware():
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n" % (port, port))
    head = b""
    while b"\r\n\r\n" not in head:  # nothing follows it before our request is sent
        head += s.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head
    finish(s)
times = {"captured": [], "aware": []}
for r in range(rounds + 1):
    order = [captured, aware] if r % 2 else [aware, captured]
    for f in order:
        t = time.perf_counter_ns()
        f()
        if r:
            times[f.__name__].append((time.perf_counter_ns() - t) / 1000)
c, a = statistics.median(times["captured"]), statistics.median(times["aware"])
print(f"captured {c:.0f} us, aware {a:.0f} us (medians of {rounds}), ratio {c / a:.2f}")
PY
cd "$tmp/ws"
echo "net capture cost: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
VIGIL_TEST_MODE=1 "$vigil" run --settings "$tmp/settings.json" --test-resolve allowed.test=127.0.0.1 \
  --test-allow-loopback -- python3 "$tmp/client.py" "$port" "$rounds" 2>/dev/null
