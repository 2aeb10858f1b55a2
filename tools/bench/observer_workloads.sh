#!/usr/bin/env bash
# What the observer costs real work: four workloads, each under
#   @bwrap  bubblewrap only, with the same shape of mounts as vigil (--ro-bind / /, the
#           workspace bound writable, --unshare-all, --die-with-parent, --cap-drop ALL);
#   @vigil  `vigil run` (mounts, vigil-init, filters, the observer, proxy, session log);
#   @srt    srt 0.0.83 through its library with its seccomp monitor on
#           (reference-bench/wrap-monitored.mjs; its "run" time, which leaves out srt's own
#           start and its per-command ripgrep scan, so srt is flattered, not penalised).
# Workloads, in a throw-away workspace:
#   git_status   `git status` in a repository of 5,000 committed files
#   tar_read     `tar cf - /usr/include | cat >/dev/null` (piped: GNU tar reads nothing
#                when its archive is /dev/null)
#   gxx          `g++ -pipe -c small.cc` (a file that includes <vector> and <string>)
#   untar_20k    extracting a 20,000-file tarball into a fresh directory
#   cat_all      `find repo -type f | xargs cat >/dev/null`: 5,000 opens for reading
#   open_20k     python3 opening one file for reading 20,000 times: the per-open cost of
#                vigil.observer.reads stands out of the noise here
#   true         `true`: each sandbox's fixed start-up cost. When it is measured, a second
#                ratio leaves it out of the others: (w - true) / (w_bwrap - true_bwrap),
#                what the workload itself costs more under the observer.
# Rounds are interleaved: each round runs every (workload, sandbox) pair once, the order of
# the sandboxes rotating, and the extraction's output directory is removed between runs
# (untimed). Timing is wall-clock around the command. Medians and ratio to @bwrap.
#
# With --reads, a sandbox @reads joins: `vigil run` with "vigil": {"observer": {"reads":
# true}} (every open goes to vigil-init, reads of hidden paths are told), and @vigil then
# runs with the same settings but reads off, so that the two differ only in the setting
# (both hide a directory of the run's own with denyRead).
#
# Usage: observer_workloads.sh [--vigil PATH] [-n ROUNDS] [--only W1,W2] [--no-srt]
#                              [--srt-ref DIR] [--keep] [--reads]
# srt: the package in --srt-ref (default ~/srt-ref, else ~/.cache/vigil-bench/srt, as
# run_bench.sh installs it); wrap-monitored.mjs from $REFERENCE_BENCH (default
# /work/shared/reference-bench) or --wrap PATH.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/supervisor/vigil}
rounds=5
only=true,git_status,tar_read,gxx,untar_20k
use_srt=1
keep=0
reads=0
srt_ref=
wrap=${REFERENCE_BENCH:-/work/shared/reference-bench}/wrap-monitored.mjs
while [ $# -gt 0 ]; do
  case "$1" in
    --vigil) vigil=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-srt) use_srt=0; shift ;;
    --srt-ref) srt_ref=$2; shift 2 ;;
    --wrap) wrap=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --reads) reads=1; shift ;;
    *) echo "observer_workloads: unknown option $1" >&2; exit 2 ;;
  esac
done
say() { printf '[observer_workloads] %s\n' "$*" >&2; }
[ -x "$vigil" ] || { say "no vigil at $vigil (build first, or --vigil PATH)"; exit 1; }
vigil=$(cd "$(dirname "$vigil")" && pwd)/$(basename "$vigil")
srt_pkg=
if ((use_srt)); then
  for d in "$srt_ref" "$HOME/srt-ref" "${XDG_CACHE_HOME:-$HOME/.cache}/vigil-bench/srt"; do
    if [ -n "$d" ] && [ -f "$d/node_modules/@anthropic-ai/sandbox-runtime/dist/index.js" ]; then
      srt_pkg=$d/node_modules/@anthropic-ai/sandbox-runtime
      break
    fi
  done
  if [ -z "$srt_pkg" ] || [ ! -f "$wrap" ] || ! command -v node >/dev/null; then
    say "srt or wrap-monitored.mjs or node not found: measuring without @srt (install: see"
    say "  tools/bench/run_bench.sh, or pass --srt-ref DIR --wrap PATH; --no-srt to silence)"
    use_srt=0
  fi
fi

tmp=$(mktemp -d /tmp/vigil-obswork.XXXXXX)
cleanup() { if ((keep)); then say "kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
ws=$tmp/ws
mkdir -p "$ws" "$tmp/state"
export XDG_STATE_HOME=$tmp/state  # vigil's session logs go here, and away with it

say "building the workspace in $ws"
(
  cd "$ws"
  mkdir repo && cd repo
  git init -q .
  for d in $(seq -w 1 50); do
    mkdir "d$d"
    for f in $(seq -w 1 100); do printf 'file %s/%s\n' "$d" "$f" >"d$d/f$f.txt"; done
  done
  git add -A
  git -c user.name=bench -c user.email=bench@localhost -c commit.gpgsign=false commit -qm init
  git status >/dev/null  # the index is fresh: the timed runs only read
)
cat >"$ws/small.cc" <<'EOF'
#include <string>
#include <vector>
int count_long(const std::vector<std::string>& v) {
  int n = 0;
  for (const auto& s : v) n += s.size() > 8;
  return n;
}
EOF
# The tarball lives outside the workspace (read-only in every sandbox), made once.
(
  mkdir -p "$tmp/src/t"
  cd "$tmp/src/t"
  for d in $(seq -w 1 200); do
    mkdir "d$d"
    for f in $(seq -w 1 100); do printf '%s%s\n' "$d" "$f" >"d$d/f$f"; done
  done
  cd "$tmp/src" && tar cf "$tmp/t20k.tar" t
)
say "tarball: $(tar tf "$tmp/t20k.tar" | grep -vc '/$') files"

cat >"$tmp/srt-settings.json" <<EOF
{ "filesystem": { "denyRead": [], "allowWrite": ["$ws"], "denyWrite": [] },
  "network": { "allowedDomains": [], "deniedDomains": [] } }
EOF

workload_cmd() {  # the shell command of each workload, run with the workspace as cwd
  case $1 in
    git_status) echo 'git -C repo status >/dev/null' ;;
    tar_read) echo 'tar cf - /usr/include 2>/dev/null | cat >/dev/null' ;;
    gxx) echo 'g++ -pipe -c small.cc -o small.o' ;;
    untar_20k) echo "tar xf $tmp/t20k.tar -C out" ;;
    cat_all) echo 'find repo -type f -name "*.txt" | xargs cat >/dev/null' ;;
    open_20k) echo 'python3 -c "import os
for _ in range(20000): os.close(os.open(\"small.cc\", os.O_RDONLY))"' ;;
    true) echo 'true' ;;
  esac
}
# --reads: @vigil and @reads differ only in vigil.observer.reads.
vigil_settings=()
if ((reads)); then
  mkdir -p "$tmp/hidden"
  echo secret >"$tmp/hidden/key"
  for on in false true; do
    printf '{"filesystem": {"allowWrite": ["%s"], "denyRead": ["%s"]},\n "vigil": {"observer": {"reads": %s}}}\n' \
      "$ws" "$tmp/hidden" "$on" >"$tmp/reads-$on.json"
  done
  vigil_settings=(--settings "$tmp/reads-false.json")
fi
bw=(bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" --unshare-all
  --die-with-parent --new-session --cap-drop ALL --chdir "$ws" --)
now_ns() { date +%s%N; }
samples=$tmp/samples.txt
: >"$samples"
run_one() {  # workload sandbox -> appends "workload sandbox ms"
  local w=$1 s=$2 cmd t0 t1 ms
  cmd=$(workload_cmd "$w")
  rm -rf "$ws/out" "$ws/small.o"
  mkdir "$ws/out"
  case $s in
    bwrap)
      t0=$(now_ns)
      "${bw[@]}" sh -c "$cmd" || { say "FAILED: bwrap $w"; exit 1; }
      t1=$(now_ns)
      ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
      ;;
    vigil | reads)
      local settings=("${vigil_settings[@]}")
      [ "$s" = reads ] && settings=(--settings "$tmp/reads-true.json")
      t0=$(now_ns)
      (cd "$ws" && "$vigil" run "${settings[@]}" -- sh -c "$cmd") ||
        { say "FAILED: $s $w"; exit 1; }
      t1=$(now_ns)
      ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
      ;;
    srt)
      local out
      out=$(cd "$ws" && SRT_PKG=$srt_pkg node "$wrap" --settings "$tmp/srt-settings.json" \
        --json -- "$cmd" 2>/dev/null | tail -1)
      ms=$(printf '%s' "$out" | node -e '
        let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
          const j = JSON.parse(s); if (j.exitCode !== 0) process.exit(1);
          process.stdout.write(j.runs[0].runMs.toFixed(1)); });') ||
        { say "FAILED: srt $w: $out"; exit 1; }
      ;;
  esac
  echo "$w $s $ms" >>"$samples"
}

sandboxes=(bwrap vigil)
((reads)) && sandboxes+=(reads)
((use_srt)) && sandboxes+=(srt)
IFS=, read -r -a workloads <<<"$only"
say "warm-up, then $rounds interleaved rounds of: ${workloads[*]} x ${sandboxes[*]}"
for w in "${workloads[@]}"; do for s in "${sandboxes[@]}"; do run_one "$w" "$s"; done; done
: >"$samples"
for r in $(seq 1 "$rounds"); do
  for w in "${workloads[@]}"; do
    k=${#sandboxes[@]}
    for i in $(seq 0 $((k - 1))); do run_one "$w" "${sandboxes[$(((i + r) % k))]}"; done
  done
  say "round $r/$rounds done"
done

echo "observer workloads: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds, $(date -u +%Y-%m-%dT%H:%MZ)"
python3 - "$samples" "${sandboxes[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
boxes = sys.argv[2:]
order = []
for w, _, _ in rows:
    if w not in order: order.append(w)
def median_of(w, b):
    return statistics.median(float(t) for ww, bb, t in rows if ww == w and bb == b)
base = {b: median_of("true", b) for b in boxes} if "true" in order else None
print(f"{'workload':<12}" + "".join(f"{b + ' ms':>14}" for b in boxes)
      + "".join(f"{b + '/bwrap':>12}" for b in boxes[1:])
      + ("".join(f"{b + ' net':>12}" for b in boxes[1:]) if base else "")
      + (f"{'reads/vigil':>13}" if "reads" in boxes else "")
      + "   (medians; min-max)")
for w in order:
    med, rng = {}, {}
    for b in boxes:
        xs = [float(t) for ww, bb, t in rows if ww == w and bb == b]
        med[b] = statistics.median(xs)
        rng[b] = f"{min(xs):.0f}-{max(xs):.0f}"
    print(f"{w:<12}" + "".join(f"{med[b]:>14.1f}" for b in boxes)
          + "".join(f"{med[b] / med['bwrap']:>11.2f}x" for b in boxes[1:])
          + ("".join(f"{(med[b] - base[b]) / max(med['bwrap'] - base['bwrap'], 1e-9):>11.2f}x"
                     for b in boxes[1:]) if base and w != "true" else "")
          + (f"{med['reads'] / med['vigil']:>12.2f}x" if "reads" in boxes else "")
          + "   " + " ".join(f"{b}:{rng[b]}" for b in boxes))
PY
