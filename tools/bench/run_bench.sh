#!/usr/bin/env bash
# run_bench.sh: launch cost of vigil next to its references, on this machine.
#
# Times, interleaved round by round with vigil_launch_bench, from inside a small
# throw-away git workspace:
#   @bwrap  a bare bubblewrap with a minimal sandbox argv (the floor for any bwrap sandbox)
#   @vigil  $VIGIL run -- true
#   @sandbox vigil's sandbox without its supervisor process: @bwrap's argv plus --as-pid-1
#           running vigil-init (found next to vigil as vigil itself finds it) with the
#           observer on (its events to /dev/null) and the proxy bridges listening, then
#           true. vigil - sandbox is what the supervisor process (vigil's own exec, the
#           policy, scan and plan, the log, the proxy, the wait and the teardown) adds;
#           sandbox - bwrap is what vigil-init (its exec, the fork of the worker, the
#           filters, the observer) adds. vigil-init compiles its seccomp program itself
#           here (under vigil the supervisor sends it), so @sandbox is a little high.
#   @before $VIGIL_BEFORE run -- true, when given: an earlier build, for a before/after
#           comparison in the same interleaved run
#   @srt    srt -c true, the reference (Anthropic's sandbox-runtime CLI), with a settings
#           file that allows writes to the workspace (passed with --settings; the user's
#           ~/.srt-settings.json is never read or written)
#   @fork   /bin/true (fork+exec floor)
# and prints medians plus the ratios vigil/bwrap and vigil/srt. If vigil_scan_bench sits
# next to the launcher it is run too (on its own generated tree) and its output included.
#
# Setup it does when needed: installs srt (pinned version) with npm into a cache dir and,
# as root on Debian/Ubuntu, apt-get installs ripgrep, socat, bubblewrap (srt needs all
# three) and git. Temp dirs are removed on exit unless --keep.
set -euo pipefail

readonly SRT_VERSION=0.0.83
readonly SRT_PKG=@anthropic-ai/sandbox-runtime

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)

ROUNDS=30
WARMUPS=3
MARKDOWN=0
KEEP=0
NO_VIGIL=0
NO_INSTALL=0
NO_SCAN=0
VIGIL=${VIGIL:-}
VIGIL_BEFORE=${VIGIL_BEFORE:-}
LAUNCHER=${VIGIL_LAUNCH_BENCH:-}
SRT_BIN=${SRT:-}
SRT_DIR=${SRT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vigil-bench/srt}
# Extra words put between `vigil run` and `--` (word-split on purpose), e.g. "--verbose".
VIGIL_RUN_ARGS=${VIGIL_RUN_ARGS:-}
# Arguments for vigil_scan_bench (default: none, i.e. its own generated tree).
SCAN_BENCH_ARGS=${SCAN_BENCH_ARGS:-}

usage() {
  cat <<EOF
usage: $(basename "$0") [options]

  --vigil PATH      vigil binary (default: \$VIGIL, else $REPO_ROOT/build/supervisor/vigil)
  --no-vigil        measure only the references (bwrap, srt, fork)
  --vigil-before PATH  also time this vigil binary (an earlier build, with its vigil-init
                    where it finds it) as @before, interleaved with the rest (default:
                    \$VIGIL_BEFORE)
  --launcher PATH   vigil_launch_bench binary (default: \$VIGIL_LAUNCH_BENCH, else found in
                    build-bench/ or build/ under the repo, else compiled into a temp dir)
  --srt PATH        use this srt CLI instead of the cached install (default: \$SRT)
  --srt-dir DIR     npm prefix for the cached srt $SRT_VERSION install
                    (default: \${XDG_CACHE_HOME:-\$HOME/.cache}/vigil-bench/srt)
  --no-install      never run npm/apt-get; fail with what is missing instead
  --no-scan         skip vigil_scan_bench even if it is built next to the launcher
  -n N              timed rounds (default $ROUNDS, at least 30 recommended)
  -w N              warm-up rounds (default $WARMUPS)
  --markdown        print the result as a markdown table
  --keep            keep the temp workspace and settings (path is printed)
  -h, --help        this text

Environment: VIGIL_RUN_ARGS="..." adds arguments between 'vigil run' and '--';
SCAN_BENCH_ARGS="..." is passed to vigil_scan_bench (e.g. "--runs 10 --root DIR").
EOF
}

say() { printf '[run_bench] %s\n' "$*" >&2; }
die() {
  printf '[run_bench] ERROR: %s\n' "$*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --vigil) VIGIL=${2:?--vigil needs a path}; shift 2 ;;
    --no-vigil) NO_VIGIL=1; shift ;;
    --vigil-before) VIGIL_BEFORE=${2:?--vigil-before needs a path}; shift 2 ;;
    --launcher) LAUNCHER=${2:?--launcher needs a path}; shift 2 ;;
    --srt) SRT_BIN=${2:?--srt needs a path}; shift 2 ;;
    --srt-dir) SRT_DIR=${2:?--srt-dir needs a directory}; shift 2 ;;
    --no-install) NO_INSTALL=1; shift ;;
    --no-scan) NO_SCAN=1; shift ;;
    -n) ROUNDS=${2:?-n needs a number}; shift 2 ;;
    -w) WARMUPS=${2:?-w needs a number}; shift 2 ;;
    --markdown) MARKDOWN=1; shift ;;
    --keep) KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "-n wants a positive number, got '$ROUNDS'"
[[ $WARMUPS =~ ^[0-9]+$ ]] || die "-w wants a number, got '$WARMUPS'"
((ROUNDS >= 30)) || say "note: $ROUNDS rounds; 30 or more give steadier medians"

TMP_ROOT=
cleanup() {
  if [[ -n $TMP_ROOT && -d $TMP_ROOT ]]; then
    if ((KEEP)); then
      say "kept temp dir: $TMP_ROOT"
    else
      rm -rf -- "$TMP_ROOT"
    fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
TMP_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench.XXXXXX")

abspath() { # resolves a path that exists; prints nothing otherwise
  if [[ -e $1 ]]; then (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); fi
}

# ---------------------------------------------------------------- system packages
ensure_system_tools() {
  local -a missing_pkgs=() missing_cmds=()
  local pair cmd pkg
  for pair in bwrap:bubblewrap rg:ripgrep socat:socat git:git; do
    cmd=${pair%%:*} pkg=${pair#*:}
    if ! command -v "$cmd" >/dev/null 2>&1; then
      missing_cmds+=("$cmd") missing_pkgs+=("$pkg")
    fi
  done
  ((${#missing_pkgs[@]})) || return 0
  say "missing commands: ${missing_cmds[*]} (apt packages: ${missing_pkgs[*]})"
  if ((NO_INSTALL)); then
    die "install them first: apt-get install -y ${missing_pkgs[*]}"
  fi
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    die "not root or no apt-get; install them yourself: sudo apt-get install -y ${missing_pkgs[*]}"
  fi
  say "apt-get install -y ${missing_pkgs[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing_pkgs[@]}" >&2; then
    say "install failed; running apt-get update and retrying"
    apt-get update -q >&2 || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing_pkgs[@]}" >&2 ||
      die "apt-get install ${missing_pkgs[*]} failed"
  fi
  for cmd in "${missing_cmds[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || die "'$cmd' still missing after apt-get install"
  done
}

# ---------------------------------------------------------------- srt (reference)
srt_installed_version() { # $1 = npm prefix
  local pj=$1/node_modules/$SRT_PKG/package.json
  [[ -f $pj ]] || return 0
  node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$pj" 2>/dev/null || true
}

ensure_srt() {
  command -v node >/dev/null 2>&1 ||
    die "node is missing (srt is a node program; it wants node >= 22 and runs on node 20)"
  if [[ -n $SRT_BIN ]]; then
    [[ -x $SRT_BIN ]] || die "--srt $SRT_BIN: not an executable"
    SRT_BIN=$(abspath "$SRT_BIN")
    return 0
  fi
  SRT_BIN=$SRT_DIR/node_modules/.bin/srt
  local have
  have=$(srt_installed_version "$SRT_DIR")
  if [[ -x $SRT_BIN && $have == "$SRT_VERSION" ]]; then
    return 0
  fi
  if ((NO_INSTALL)); then
    die "srt $SRT_VERSION not installed in $SRT_DIR (found: '${have:-nothing}'); run without --no-install or pass --srt PATH"
  fi
  command -v npm >/dev/null 2>&1 || die "npm is missing; it is needed to install srt $SRT_VERSION (or pass --srt PATH)"
  say "installing $SRT_PKG@$SRT_VERSION into $SRT_DIR (npm)"
  mkdir -p "$SRT_DIR"
  [[ -f $SRT_DIR/package.json ]] ||
    printf '{ "name": "vigil-bench-srt", "private": true }\n' >"$SRT_DIR/package.json"
  npm install --prefix "$SRT_DIR" --no-audit --no-fund --loglevel=error \
    "$SRT_PKG@$SRT_VERSION" >&2 || die "npm install $SRT_PKG@$SRT_VERSION failed"
  have=$(srt_installed_version "$SRT_DIR")
  [[ -x $SRT_BIN && $have == "$SRT_VERSION" ]] ||
    die "after npm install: $SRT_BIN missing or version '$have' != $SRT_VERSION"
}

# ---------------------------------------------------------------- launcher and vigil
find_launcher() {
  local cand cxx
  if [[ -n $LAUNCHER ]]; then
    [[ -x $LAUNCHER ]] || die "launcher $LAUNCHER is not an executable"
    LAUNCHER=$(abspath "$LAUNCHER")
    return 0
  fi
  for cand in "$REPO_ROOT/build-bench/tools/bench/vigil_launch_bench" \
    "$REPO_ROOT/build/tools/bench/vigil_launch_bench"; do
    if [[ -x $cand ]]; then
      LAUNCHER=$cand
      return 0
    fi
  done
  cxx=$(command -v "${CXX:-c++}" || command -v g++ || command -v clang++ || true)
  [[ -n $cxx ]] || die "vigil_launch_bench not built and no C++ compiler to build it; build it (ninja -C build vigil_launch_bench) or pass --launcher PATH"
  say "vigil_launch_bench not built; compiling it into $TMP_ROOT with $cxx"
  "$cxx" -std=c++20 -O2 -o "$TMP_ROOT/vigil_launch_bench" "$SCRIPT_DIR/launch_bench.cc" ||
    die "compiling $SCRIPT_DIR/launch_bench.cc failed"
  LAUNCHER=$TMP_ROOT/vigil_launch_bench
}

find_vigil() {
  ((NO_VIGIL)) && return 0
  local given=${VIGIL:-$REPO_ROOT/build/supervisor/vigil}
  if [[ ! -x $given ]]; then
    die "vigil binary not found at '$given'. Build it (cmake --build build --target vigil), pass --vigil PATH (or set \$VIGIL), or use --no-vigil to measure only the references."
  fi
  VIGIL=$(abspath "$given")
  local dir c
  dir=$(dirname "$VIGIL")
  VIGIL_INIT=
  for c in "$dir/vigil-init" "$dir/../libexec/vigil/vigil-init" "$dir/../observer/vigil-init"; do
    if [[ -x $c ]]; then
      VIGIL_INIT=$(abspath "$c")
      break
    fi
  done
  [[ -n $VIGIL_INIT ]] || die "vigil-init not found next to $VIGIL (as vigil looks for it)"
  if [[ -n $VIGIL_BEFORE ]]; then
    [[ -x $VIGIL_BEFORE ]] || die "--vigil-before $VIGIL_BEFORE is not an executable"
    VIGIL_BEFORE=$(abspath "$VIGIL_BEFORE")
  fi
}

# ---------------------------------------------------------------- workspace
# A small project that looks like an agent's usual checkout: sources in a few packages,
# tests, docs, CI config, dotfiles, and a committed git history (~200 files).
make_workspace() {
  local ws=$1 d i
  mkdir -p "$ws"
  (
    cd "$ws"
    mkdir -p .github/workflows docs scripts assets tests/unit tests/integration
    for d in core net ui util cli storage; do
      mkdir -p "src/$d"
      for i in $(seq 1 22); do
        cat >"src/$d/mod_$i.ts" <<EOF
// src/$d/mod_$i.ts
import { helper } from "../util/mod_1";

export interface ${d^}Item$i { id: number; name: string; tags: string[] }

export function process$i(items: ${d^}Item${i}[]): number {
  return items.filter((x) => x.tags.includes("$d")).map((x) => helper(x.id + $i)).length;
}
EOF
      done
      printf 'export * from "./mod_1";\n' >"src/$d/index.ts"
    done
    for i in $(seq 1 25); do
      printf 'import { process%d } from "../../src/core/mod_%d";\ntest("p%d", () => { expect(process%d([])).toBe(0); });\n' \
        "$i" "$i" "$i" "$i" >"tests/unit/mod_$i.test.ts"
    done
    for i in $(seq 1 10); do
      printf 'describe("flow %d", () => { it("runs", async () => {}); });\n' "$i" >"tests/integration/flow_$i.test.ts"
    done
    for i in $(seq 1 12); do
      printf '# Design note %d\n\nSome prose about component %d.\n' "$i" "$i" >"docs/note_$i.md"
    done
    for i in $(seq 1 5); do
      printf '#!/bin/sh\nset -e\necho "step %d"\n' "$i" >"scripts/step_$i.sh"
      chmod +x "scripts/step_$i.sh"
    done
    for i in $(seq 1 6); do head -c 2048 /dev/urandom >"assets/blob_$i.bin"; done
    cat >package.json <<'EOF'
{ "name": "bench-workspace", "version": "1.0.0", "private": true,
  "scripts": { "test": "jest", "build": "tsc -p ." } }
EOF
    printf '{ "compilerOptions": { "strict": true, "outDir": "dist" } }\n' >tsconfig.json
    printf '# bench workspace\n\nA synthetic project for launch benchmarks.\n' >README.md
    printf 'node_modules/\ndist/\n.env\n' >.gitignore
    printf 'API_URL=http://localhost:8080\n' >.env.example
    printf 'name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n' \
      >.github/workflows/ci.yml
    printf 'all:\n\tnpm run build\n' >Makefile
    git init -q .
    git -c user.name=bench -c user.email=bench@localhost -c commit.gpgsign=false add -A
    git -c user.name=bench -c user.email=bench@localhost -c commit.gpgsign=false \
      commit -q -m "initial import"
  ) >&2
  [[ -d $ws/.git ]] || die "could not create the workspace in $ws"
}

# ---------------------------------------------------------------- main
find_vigil
ensure_system_tools
ensure_srt
find_launcher

WS=$TMP_ROOT/ws
make_workspace "$WS"
nfiles=$(git -C "$WS" ls-files | wc -l)
say "workspace: $WS ($nfiles tracked files)"

SRT_SETTINGS=$TMP_ROOT/srt-settings.json
cat >"$SRT_SETTINGS" <<EOF
{
  "filesystem": { "denyRead": [], "allowWrite": ["$WS"], "denyWrite": [] },
  "network": { "allowedDomains": [], "deniedDomains": [] }
}
EOF

# Each command once by hand first, so a broken one fails with its own output visible.
cd "$WS"
BWRAP_CMD=(bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WS" "$WS"
  --unshare-all --die-with-parent --new-session --cap-drop ALL -- true)
SRT_CMD=("$SRT_BIN" --settings "$SRT_SETTINGS" -c true)
# shellcheck disable=SC2206  # VIGIL_RUN_ARGS is split into words on purpose
# Each build keeps its state (logs, change stores) apart and fresh: what one leaves behind
# (an older build leaves an empty change store per run) is not the other's to account for.
mkdir -p "$TMP_ROOT/state-vigil" "$TMP_ROOT/state-before"
VIGIL_CMD=(XDG_STATE_HOME="$TMP_ROOT/state-vigil" "$VIGIL" run $VIGIL_RUN_ARGS -- true)
# @sandbox: the observer writes its events to fd 9 (/dev/null, inherited through the
# launcher and bwrap); the bridges' socket is a placeholder file, never connected to.
SANDBOX_CMD=()
if ((!NO_VIGIL)); then
  exec 9>/dev/null
  : >"$TMP_ROOT/proxy.sock"
  SANDBOX_CMD=(bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind "$WS" "$WS"
    --unshare-all --die-with-parent --new-session --cap-drop ALL --as-pid-1
    --ro-bind "$TMP_ROOT/proxy.sock" "$TMP_ROOT/proxy.sock"
    -- "$VIGIL_INIT" --events-fd 9 --proxy-socket "$TMP_ROOT/proxy.sock" -- true)
  "${SANDBOX_CMD[@]}" || die "bwrap + vigil-init failed (exit $?): ${SANDBOX_CMD[*]}"
fi
"${BWRAP_CMD[@]}" || die "bare bwrap failed (exit $?): ${BWRAP_CMD[*]}"
"${SRT_CMD[@]}" || die "srt failed (exit $?): ${SRT_CMD[*]}"
# shellcheck disable=SC2206  # VIGIL_RUN_ARGS is split into words on purpose
BEFORE_CMD=(XDG_STATE_HOME="$TMP_ROOT/state-before" "$VIGIL_BEFORE" run $VIGIL_RUN_ARGS -- true)
if ((!NO_VIGIL)); then
  env "${VIGIL_CMD[@]}" || die "vigil failed (exit $?): ${VIGIL_CMD[*]}"
  if [[ -n $VIGIL_BEFORE ]]; then
    env "${BEFORE_CMD[@]}" || die "vigil (before) failed (exit $?): ${BEFORE_CMD[*]}"
  fi
fi

BENCH_ARGS=(-n "$ROUNDS" -w "$WARMUPS" @bwrap "${BWRAP_CMD[@]}")
((NO_VIGIL)) || BENCH_ARGS+=(:: @vigil "${VIGIL_CMD[@]}" :: @sandbox "${SANDBOX_CMD[@]}")
((NO_VIGIL)) || [[ -z $VIGIL_BEFORE ]] || BENCH_ARGS+=(:: @before "${BEFORE_CMD[@]}")
BENCH_ARGS+=(:: @srt "${SRT_CMD[@]}" :: @fork /bin/true)

say "timing $ROUNDS rounds (+$WARMUPS warm-up) with $LAUNCHER; srt costs ~0.5-0.7 s a run, so expect ~$(((ROUNDS + WARMUPS) * 6 / 10 + 1)) s"
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$LOAD1" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
  say "warning: the machine is busy (1-min load $LOAD1 on $(nproc) CPUs): absolute times will be inflated; the interleaved ratios stay comparable"
fi
RESULT=$TMP_ROOT/launch.txt
"$LAUNCHER" "${BENCH_ARGS[@]}" >"$RESULT" || die "vigil_launch_bench failed (see above)"

# Optional: the mandatory-deny scan benchmark, if it was built next to the launcher. By
# default it generates and times its own ~100,000-file tree; SCAN_BENCH_ARGS overrides.
SCAN_OUT=
SCAN_BIN=$(dirname "$LAUNCHER")/vigil_scan_bench
if ((!NO_SCAN)) && [[ -x $SCAN_BIN ]]; then
  # shellcheck disable=SC2206  # SCAN_BENCH_ARGS is split into words on purpose
  SCAN_CMD=("$SCAN_BIN" $SCAN_BENCH_ARGS)
  say "running ${SCAN_CMD[*]}"
  if ! SCAN_OUT=$("${SCAN_CMD[@]}"); then
    SCAN_OUT="${SCAN_CMD[*]} failed (non-zero exit); the launch figures above stand"
    say "$SCAN_OUT"
  fi
fi

median_of() { awk -v l="@$1" '$1 == l { print $2 }' "$RESULT"; }
M_BWRAP=$(median_of bwrap)
M_SRT=$(median_of srt)
M_FORK=$(median_of fork)
M_VIGIL=
M_BEFORE=
M_SANDBOX=
((NO_VIGIL)) || M_VIGIL=$(median_of vigil)
((NO_VIGIL)) || M_SANDBOX=$(median_of sandbox)
((NO_VIGIL)) || [[ -z $VIGIL_BEFORE ]] || M_BEFORE=$(median_of before)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

echo "vigil launch benchmark: $(uname -srm), $(nproc) CPUs, load $LOAD1 at start, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "workspace: $nfiles files in a git repo; srt $SRT_VERSION via $(node --version); $(bwrap --version)"
if ((MARKDOWN)); then
  echo
  echo "| command | median ms | p10 ms | p90 ms | min ms | x @bwrap |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk '$1 ~ /^@/ { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", $1, $2, $3, $4, $5, $6 }' "$RESULT"
  echo
  if [[ -n $M_VIGIL ]]; then
    echo "| ratio | value |"
    echo "|---|---:|"
    echo "| vigil / bwrap | $(ratio "$M_VIGIL" "$M_BWRAP") |"
    echo "| vigil / srt | $(ratio "$M_VIGIL" "$M_SRT") |"
    echo "| srt / vigil | $(ratio "$M_SRT" "$M_VIGIL") |"
    echo "| sandbox / bwrap | $(ratio "$M_SANDBOX" "$M_BWRAP") |"
    echo "| vigil-init adds (sandbox - bwrap, ms) | $(minus "$M_SANDBOX" "$M_BWRAP") |"
    echo "| the supervisor adds (vigil - sandbox, ms) | $(minus "$M_VIGIL" "$M_SANDBOX") |"
    if [[ -n $M_BEFORE ]]; then
      echo "| before / bwrap | $(ratio "$M_BEFORE" "$M_BWRAP") |"
      echo "| vigil / before | $(ratio "$M_VIGIL" "$M_BEFORE") |"
    fi
  fi
  if [[ -n $SCAN_OUT ]]; then
    echo
    echo "mandatory-deny scan (vigil_scan_bench ${SCAN_BENCH_ARGS:-with its defaults}):"
    echo
    echo '```'
    echo "$SCAN_OUT"
    echo '```'
  fi
else
  cat "$RESULT"
  if [[ -n $M_VIGIL ]]; then
    echo "vigil/bwrap = $(ratio "$M_VIGIL" "$M_BWRAP")   vigil/srt = $(ratio "$M_VIGIL" "$M_SRT")   (srt/vigil = $(ratio "$M_SRT" "$M_VIGIL"))"
    echo "sandbox/bwrap = $(ratio "$M_SANDBOX" "$M_BWRAP"): vigil-init adds $(minus "$M_SANDBOX" "$M_BWRAP") ms, the supervisor $(minus "$M_VIGIL" "$M_SANDBOX") ms"
    if [[ -n $M_BEFORE ]]; then
      echo "before/bwrap = $(ratio "$M_BEFORE" "$M_BWRAP")   vigil/before = $(ratio "$M_VIGIL" "$M_BEFORE")"
    fi
  fi
  echo "medians (ms): bwrap $M_BWRAP  srt $M_SRT  fork $M_FORK${M_VIGIL:+  vigil $M_VIGIL}${M_SANDBOX:+  sandbox $M_SANDBOX}${M_BEFORE:+  before $M_BEFORE}"
  if [[ -n $SCAN_OUT ]]; then
    echo
    echo "mandatory-deny scan (vigil_scan_bench ${SCAN_BENCH_ARGS:-with its defaults}):"
    echo "$SCAN_OUT"
  fi
fi
