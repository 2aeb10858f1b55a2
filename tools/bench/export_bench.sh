#!/usr/bin/env bash
# What `vigil export --follow` costs and carries (issue 37), against a real rsyslogd on
# 127.0.0.1 (started here with its own config and work directory, killed by PID):
#   1. records/s through the exporter to rsyslog, plain TCP and TLS (a test CA made here
#      with openssl): SESSIONS logs of CALLS trapped writes each are made first, then one
#      `vigil export --follow --until-idle` is timed from its start until everything was
#      sent and the collector's TCP took it (--settle-ms 0); rsyslog's file is counted to
#      confirm every record arrived.
#   2. the added cost to a sandboxed command's trapped write while the exporter runs:
#      vigil_write_loop (tools/bench/write_loop.cc) times CALLS write-opens from inside
#      `vigil run`, in interleaved rounds with the exporter following (and shipping that
#      very session's log to rsyslog) and without; medians of ns per write, and the ratio.
#      The command and its vigil run on one CPU in both arms (taskset -c PIN, 0 unless
#      --pin says otherwise; --pin none: where the scheduler puts them): whether the loop
#      and vigil-init share a CPU moves a trapped write by 5x (8 or 51 us), which would
#      decide the figure instead of the exporter. The exporter is left to the scheduler.
# Usage: export_bench.sh [--vigil PATH] [--exporter PATH] [--loop PATH] [-n ROUNDS]
#                        [--calls N] [--sessions N] [--pin CPU|none]
# --exporter: the binary whose `export` subcommand runs (default: --vigil).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
loop=${VIGIL_WRITE_LOOP:-$root/build/tools/bench/vigil_write_loop}
exporter=
rounds=10
calls=20000
sessions=8
pin=0
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    --loop) loop=$2; shift 2 ;;
    --exporter) exporter=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --sessions) sessions=$2; shift 2 ;;
    *) echo "export_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
exporter=${exporter:-$vigil}
[ -x "$vigil" ] || { echo "export_bench: no vigil at $vigil (build first)" >&2; exit 1; }
[ -x "$loop" ] || { echo "export_bench: no vigil_write_loop at $loop (build it)" >&2; exit 1; }
[ -x /usr/sbin/rsyslogd ] || { echo "export_bench: no rsyslogd (tools/bootstrap.sh)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/vigil-exportbench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/ws" "$tmp/rs"
cp "$loop" "$tmp/loop"
cd "$tmp/ws"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The CA and rsyslog's two inputs (docs/fleet.md's configuration).
(cd "$tmp/rs" &&
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
    -out ca.pem -days 2 -subj '/CN=vigil bench CA' 2>/dev/null &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key \
    -out server.csr -subj '/CN=127.0.0.1' 2>/dev/null &&
  printf 'subjectAltName=IP:127.0.0.1\n' >ext.cnf &&
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
    -days 2 -extfile ext.cnf 2>/dev/null)
tcp_port=$(free_port)
tls_port=$(free_port)
cat >"$tmp/rs/rsyslog.conf" <<CONF
global(workDirectory="$tmp/rs" maxMessageSize="128k"
       DefaultNetstreamDriverCAFile="$tmp/rs/ca.pem"
       DefaultNetstreamDriverCertFile="$tmp/rs/server.pem"
       DefaultNetstreamDriverKeyFile="$tmp/rs/server.key")
module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")
module(load="imptcp")
template(name="vigilraw" type="string" string="%rawmsg%\n")
input(type="imptcp" address="127.0.0.1" port="$tcp_port" ruleset="plain")
input(type="imtcp" address="127.0.0.1" port="$tls_port" ruleset="tls")
ruleset(name="plain") { action(type="omfile" file="$tmp/rs/tcp.log" template="vigilraw") }
ruleset(name="tls") { action(type="omfile" file="$tmp/rs/tls.log" template="vigilraw") }
CONF
/usr/sbin/rsyslogd -n -f "$tmp/rs/rsyslog.conf" -i "$tmp/rs/pid" 2>"$tmp/rs/err" &
pids+=($!)
for _ in $(seq 200); do
  (exec 3<>/dev/tcp/127.0.0.1/$tcp_port) 2>/dev/null && break
  sleep 0.05
done
now_ns() { date +%s%N; }

# 1. Throughput.
export XDG_STATE_HOME="$tmp/state1"
printf '{"filesystem": {"allowWrite": ["."]}}\n' >"$tmp/s.json"
spids=()
for i in $(seq "$sessions"); do
  "$vigil" run --settings "$tmp/s.json" -- "$tmp/loop" "$calls" "f$i" >/dev/null 2>&1 &
  spids+=($!)
done
wait "${spids[@]}"
records=$(cat "$XDG_STATE_HOME"/vigil/sessions/*.jsonl | wc -l)
for mode in tcp tls; do
  if [ $mode = tcp ]; then to=syslog://127.0.0.1:$tcp_port; extra=(); else
    to=syslog+tls://127.0.0.1:$tls_port; extra=(--ca "$tmp/rs/ca.pem"); fi
  t0=$(now_ns)
  "$exporter" export --follow --format vigil --to "$to" "${extra[@]}" --state "$tmp/st-$mode" \
    --settle-ms 0 --until-idle 2>"$tmp/ex-$mode.err"
  t1=$(now_ns)
  for _ in $(seq 600); do
    [ "$(wc -l <"$tmp/rs/$mode.log" 2>/dev/null || echo 0)" -ge "$records" ] && break
    sleep 0.1
  done
  got=$(wc -l <"$tmp/rs/$mode.log")
  python3 -c "import sys; r,ns=int(sys.argv[1]),int(sys.argv[2]); print(f'throughput $mode: {r} records in {ns/1e9:.2f} s = {r/(ns/1e9):,.0f} records/s (rsyslog wrote {sys.argv[3]})')" \
    "$records" "$((t1 - t0))" "$got"
  "$exporter" verify --stream "$tmp/rs/$mode.log" | tail -1
done

# 2. The trapped write with and without the exporter following.
export XDG_STATE_HOME="$tmp/state2"
mkdir -p "$XDG_STATE_HOME"
pinned=()
[ "$pin" != none ] && pinned=(taskset -c "$pin")
run_loop() { "${pinned[@]}" "$vigil" run --settings "$tmp/s.json" -- "$tmp/loop" "$calls" f | awk '{print $1}'; }
: >"$tmp/with"
: >"$tmp/without"
for r in $(seq "$rounds"); do
  order="with without"
  [ $((r % 2)) -eq 0 ] && order="without with"
  for o in $order; do
    if [ $o = with ]; then
      "$exporter" export --follow --format vigil --to "syslog://127.0.0.1:$tcp_port" \
        --state "$tmp/st2" --settle-ms 100 2>>"$tmp/ex2.err" &
      ex=$!
      sleep 0.3  # the exporter is up and following before the command starts
      run_loop >>"$tmp/with"
      kill "$ex"
      wait "$ex" 2>/dev/null || true
    else
      run_loop >>"$tmp/without"
    fi
  done
done
python3 - "$tmp/with" "$tmp/without" "$calls" "$rounds" "$pin" <<'PY'
import statistics, sys
w = [float(x) for x in open(sys.argv[1]).read().split()]
wo = [float(x) for x in open(sys.argv[2]).read().split()]
mw, mwo = statistics.median(w), statistics.median(wo)
print(f"trapped write ({sys.argv[3]} per run, {sys.argv[4]} interleaved rounds, pinned to CPU {sys.argv[5]}): "
      f"median {mwo:.0f} ns without the exporter, {mw:.0f} ns with it: "
      f"{(mw / mwo - 1) * 100:+.2f}%")
print("  without:", " ".join(f"{x:.0f}" for x in wo))
print("  with:   ", " ".join(f"{x:.0f}" for x in w))
PY
