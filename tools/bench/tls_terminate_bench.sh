#!/usr/bin/env bash
# What TLS termination costs a client inside the sandbox, through the real `vigil run`:
# one python client (http.client through the proxy's CONNECT, as SDKs do) against a
# loopback HTTPS server, in interleaved rounds of three paths:
#   unterminated  vigil, no tlsTerminate: the client's own TLS through an opaque tunnel
#   terminated    vigil with tlsTerminate and a masked variable sent in every request
#                 (vigil-tls terminates, swaps the sentinel, re-encrypts to the server)
#   srt-masked    srt (its CLI, the same settings: tlsTerminate and the masked variable),
#                 where srt and node are found (SRT_PKG, else the cache run_bench.sh fills)
# Each round measures keep-alive requests on one tunnel (us per request) and new tunnels
# per second (a tunnel, one request, close). Medians over the rounds are printed, with
# the load average before and after: run it on a quiet machine.
#
#   VIGIL_BIN=<release build>/supervisor/vigil tools/bench/tls_terminate_bench.sh [ROUNDS]
#
# Everything is on 127.0.0.1. Targets (issue 34): terminated keep-alive <= 2x
# unterminated; terminated tunnels/s >= 3x srt's masked path.
set -euo pipefail
rounds=${1:-5}
vigil=${VIGIL_BIN:-build/supervisor/vigil}
srt_pkg=${SRT_PKG:-$HOME/.cache/vigil-bench/srt/node_modules/@anthropic-ai/sandbox-runtime}
work=$(mktemp -d /tmp/vigil-tls-bench.XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -s "$work/errors.txt" ] && tail -5 "$work/errors.txt"
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mkdir ws
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=bench.test -addext "subjectAltName=DNS:bench.test,IP:127.0.0.1" \
  -keyout key.pem -out cert.pem 2>/dev/null
cat > server.py <<'PY'
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        # One write: a head and a body written apart meet the client's delayed ACK.
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("cert.pem", "key.pem")
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
PY
cat > ws/client.py <<'PY'
import http.client, os, ssl, statistics, sys, time
host, port, cafile, trust = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
proxy = (os.environ.get("HTTPS_PROXY") or os.environ["https_proxy"]).split("//")[1].rstrip("/")
auth = None
if "@" in proxy:
    import base64
    cred, proxy = proxy.split("@")
    auth = {"Proxy-Authorization": "Basic " + base64.b64encode(cred.encode()).decode()}
ph, pp = proxy.rsplit(":", 1)
# "env": the bundle the sandbox was given (SSL_CERT_FILE); "file": the server's own.
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"] if trust == "env" else cafile)
headers = {"Authorization": "Bearer " + os.environ.get("BENCH_TOKEN", "none")}
def tunnel():
    c = http.client.HTTPSConnection(ph, int(pp), context=ctx, timeout=20)
    c.set_tunnel(host, port, headers=auth)
    return c
c = tunnel()
c.request("GET", "/", headers=headers); c.getresponse().read()
n = 300
t = time.perf_counter()
for _ in range(n):
    c.request("GET", "/", headers=headers); c.getresponse().read()
print("keepalive_us %.1f" % ((time.perf_counter() - t) / n * 1e6))
c.close()
n = 60
t = time.perf_counter()
for _ in range(n):
    c = tunnel(); c.request("GET", "/", headers=headers); c.getresponse().read(); c.close()
print("tunnels_per_s %.1f" % (n / (time.perf_counter() - t)))
PY
python3 server.py > port.txt &
server_pid=$!
for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
port=$(cat port.txt)
cat > plain.json <<JSON
{"network": {"allowedDomains": ["bench.test"]}}
JSON
cat > term.json <<JSON
{"network": {"allowedDomains": ["bench.test"], "tlsTerminate": {}},
 "credentials": {"envVars": [{"name": "BENCH_TOKEN", "mode": "mask"}]}}
JSON
cat > srt.json <<JSON
{"network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": [], "tlsTerminate": {}},
 "filesystem": {"denyRead": [], "allowWrite": ["$work/ws"], "denyWrite": []},
 "credentials": {"envVars": [{"name": "BENCH_TOKEN", "mode": "mask"}]}}
JSON
vigil_args=(--test-resolve bench.test=127.0.0.1 --test-allow-loopback)
run_path() {  # PATH-NAME -> "keepalive_us N" and "tunnels_per_s N" lines
  case $1 in
    unterminated)
      (cd ws && VIGIL_TEST_MODE=1 BENCH_TOKEN=real-token "$vigil" run --settings ../plain.json \
        "${vigil_args[@]}" -- python3 client.py bench.test "$port" ../cert.pem file 2>>../errors.txt) ;;
    terminated)
      (cd ws && VIGIL_TEST_MODE=1 BENCH_TOKEN=real-token "$vigil" run --settings ../term.json \
        "${vigil_args[@]}" --test-upstream-ca ../cert.pem -- \
        python3 client.py bench.test "$port" ../cert.pem env 2>>../errors.txt) ;;
    srt-masked)
      (cd ws && NODE_EXTRA_CA_CERTS=../cert.pem BENCH_TOKEN=real-token \
        node "$srt_pkg/dist/cli.js" --settings ../srt.json -- \
        python3 client.py 127.0.0.1 "$port" ../cert.pem env 2>>../errors.txt) ;;
  esac
}
paths=(unterminated terminated)
if [ -f "$srt_pkg/dist/cli.js" ] && command -v node >/dev/null; then
  paths+=(srt-masked)
else
  echo "srt not found at $srt_pkg: its column is left out"
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for i in "${!paths[@]}"; do
    p=${paths[$(((i + r) % ${#paths[@]}))]}
    run_path "$p" | sed "s/^/$p /" >> results.txt || echo "$p round $r failed"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2); else print "n/a"}'; }
for p in "${paths[@]}"; do
  ka=$(awk -v p="$p" '$1 == p && $2 == "keepalive_us" {print $3}' results.txt | median)
  tp=$(awk -v p="$p" '$1 == p && $2 == "tunnels_per_s" {print $3}' results.txt | median)
  echo "$p: keep-alive ${ka} us/request, ${tp} tunnels/s (median of $rounds)"
done
