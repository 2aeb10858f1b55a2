#!/usr/bin/env bash
# The whole test suite, from a clean checkout on Debian 12:
#   1. installs what is missing (tools/bootstrap.sh);
#   2. static checks: the layering check (tools/check_layering.py) and its own test;
#   3. dev build: the Release build a user or packager gets (CMAKE_BUILD_TYPE=Release, its
#      -O3 -DNDEBUG) plus line tables and -DVIGIL_WERROR=ON, so the packager's build is
#      shown to build without a warning by this one tree (it used to be built a second
#      time, 400 s of CI's 30 minutes); integration and adversarial tests with the real
#      bwrap as the calling user (the unit tests are built and run once, in step 5's tree,
#      with -DVIGIL_WERROR=ON there too);
#   4. the packager's configuration (Release, -DVIGIL_TESTS=OFF) configures;
#   5. ASan+UBSan build: the unit tests;
#   6. the libFuzzer targets, built with clang (build-fuzz/), each run once over its
#      committed corpus in tests/fuzz/corpus/ (a regression check of seconds);
#   7. when run as root: the integration and adversarial tests again as an unprivileged user
#      (vigil-ci), with a second unprivileged user (vigil-ci-other, a helper started here
#      before dropping) for the tests that act as another user: nothing skips for want of
#      privilege; and the .deb (tools/package.sh) unpacked into a clean tree and used as that
#      user.
#
# Every step runs to the end whatever the others did, so one failure does not hide the
# state of the rest; the exit status is non-zero when anything failed. The last line is
#   summary: N passed, M failed, K skipped
# N, M and K count gtest tests only (fuzz corpora are reported on their own line); a step
# that is not a gtest suite (a build, the fuzz regression, the layering check) and fails
# adds one to M. A suite that ran fewer tests than it lists (--gtest_list_tests, without
# DISABLED_ ones) fails, the missing tests counted as failed: a crash or a stray filter
# cannot pass as green.
#
# Every suite runs with a clean environment (env -i and only what it needs): a caller's
# GTEST_FILTER, VIGIL_UPDATE_GOLDEN (which turns golden comparisons into writes) or
# XDG_* variables never reach it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Wall-clock time per step, one "time: STEP N s" line each, so a slow step shows in CI's
# log (the whole run must stay inside CI's 30 minutes).
run_start=$SECONDS
step_start=$SECONDS
step_time() {  # step_time LABEL: the time since the last call (or the start), then restart
  echo "time: $1 $((SECONDS - step_start)) s"
  step_start=$SECONDS
}

tools/bootstrap.sh || { echo "bootstrap FAILED"; echo "summary: 0 passed, 1 failed, 0 skipped"; exit 1; }

step_time bootstrap

passed=0
failed=0
skipped=0
failures=()   # the names of the steps and suites that failed, for the end

step_failed() {  # step_failed LABEL: a non-gtest step failed (one count in "failed")
  echo "$1 FAILED"
  failures+=("$1")
  failed=$((failed + 1))
}

# The tests a binary will run: --gtest_list_tests prints "Suite." lines and indented test
# lines; DISABLED_ tests and suites are listed but never run.
listed_tests() {
  local suite="" line n=0
  while IFS= read -r line; do
    if [[ $line == "  "* ]]; then
      line=${line#  }
      line=${line%%  #*}
      [[ $suite == DISABLED_* || $line == DISABLED_* ]] || n=$((n + 1))
    elif [[ -n $line ]]; then
      suite=${line%%.*}
      suite=${suite##*/}
    fi
  done
  echo "$n"
}

# gtest's own totals: "[  PASSED  ] N tests.", "[  FAILED  ] N tests, listed below:",
# "[  SKIPPED ] N tests, listed below:".
gtest_total() {  # gtest_total LOG KIND
  grep -oE "^\[  $2 *\] [0-9]+ tests?[,.]" "$1" | grep -oE '[0-9]+' | tail -n1
}

# Every suite's environment: nothing inherited but what is named here.
clean_path=/usr/local/bin:/usr/bin:/bin

# run_suite LABEL RUNNER... @@ BINARY: RUNNER is the clean environment (and runuser, for
# the unprivileged pass); the binary is listed, run, its log tailed and its totals added.
run_suite() {
  local label=$1; shift
  local runner=() bin
  while [ "$1" != "@@" ]; do runner+=("$1"); shift; done
  shift
  bin=$1
  echo "== $label"
  if [ ! -x "$bin" ]; then step_failed "$label (binary $bin missing: its build failed)"; return; fi
  local log listed rc p f s ran missing filter='*'
  # A pass may leave out suites it cannot be the one to run (EXCLUDE, gtest's negative
  # pattern): they are neither listed nor run here, and the pass says so by name.
  if [ -n "${EXCLUDE:-}" ]; then
    filter="*-$EXCLUDE"
    echo "(not in this pass: $EXCLUDE; ${EXCLUDE_WHY:-})"
  fi
  log=$(mktemp)
  # The filter here, never the caller's: what the binary holds for this pass.
  listed=$("${runner[@]}" "$bin" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | listed_tests)
  "${runner[@]}" "$bin" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  p=$(gtest_total "$log" PASSED); f=$(gtest_total "$log" FAILED); s=$(gtest_total "$log" SKIPPED)
  p=${p:-0}; f=${f:-0}; s=${s:-0}
  ran=$((p + f + s))
  missing=$((listed - ran))
  [ "$missing" -gt 0 ] || missing=0
  if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$missing" -eq 0 ]; then
    tail -n 3 "$log"
  else
    cat "$log"
  fi
  # Skips are named: a skipped guarantee is an untested one.
  grep -E '^\[  SKIPPED \] [A-Za-z_][A-Za-z_0-9/.]*$' "$log" | sort -u || true
  passed=$((passed + p))
  skipped=$((skipped + s))
  failed=$((failed + f + missing))
  if [ "$missing" -gt 0 ]; then
    echo "$label: ran $ran of $listed listed tests (exit $rc): the $missing missing count as failed"
  fi
  if [ "$rc" -ne 0 ] || [ "$f" -gt 0 ] || [ "$missing" -gt 0 ]; then
    if [ "$f" -eq 0 ] && [ "$missing" -eq 0 ]; then failed=$((failed + 1)); fi
    echo "$label FAILED"
    failures+=("$label")
  fi
  echo "$label: listed $listed, passed $p, failed $f, skipped $s"
  rm -f "$log"
}

echo "== layering check (tools/check_layering.py) and its planted violations"
python3 tools/check_layering.py "$root" || step_failed "layering check"
python3 tools/check_layering_test.py || step_failed "layering check's own test"
step_time "layering check"

echo "== display-text lints (tools/lint_display_text.py) and the escape table's generator check"
# Nothing printed without the one escaping function, and the lint still catches what it
# must (planted violations); the escape table matches the Unicode data it came from.
python3 tools/lint_display_text.py --self-test || step_failed "display-text lint's own test"
python3 tools/lint_display_text.py || step_failed "display-text lint"
python3 tools/gen_display_escape_table.py --check supervisor/core/base/display_escape_table.inc ||
  step_failed "escape table out of date"
step_time "display-text lints"

echo "== the macOS-only files parse as a Mac's compiler would (tools/check_macos_syntax.sh)"
tools/check_macos_syntax.sh || step_failed "macOS files' syntax check"
step_time "macOS syntax check"

scratch=$(mktemp -d /tmp/vigil-test.XXXXXX)
stage=""
other_pid=""
cleanup() {
  [ -z "$other_pid" ] || { kill "$other_pid" 2>/dev/null; wait "$other_pid" 2>/dev/null; }
  [ -z "$stage" ] || for d in "$stage"/small-*; do mountpoint -q "$d" && umount "$d"; done
  rm -rf "$scratch"; [ -z "$stage" ] || rm -rf "$stage"
}
trap cleanup EXIT
mkdir -p "$scratch/home"

echo "== dev build (build/: Release with line tables, -DVIGIL_WERROR=ON)"
# Release's own flags (-O3 -DNDEBUG, CMake's default for it) so that this is the build a
# user or packager runs, with -Werror: a warning the optimiser finds there fails here.
# Line tables only (-g1), which do not change the code: a failure's backtrace still names
# files and lines, at about a third less CPU than full debug info. (A precompiled gtest
# header saved a fifth more, but GCC 12 inlines differently with it and reported a false
# -Warray-bounds: not used.)
if cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_WERROR=ON \
     -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG -g1" -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG -g1" \
     -DVIGIL_UNIT_TESTS=OFF >/dev/null &&
   cmake --build build -j "$jobs"; then :; else step_failed "dev build"; fi
step_time "dev build"
# The pass identity test (tests/integration/pass_identity.cc) checks the pass runs as the
# user it claims: root here when we are root, unprivileged otherwise.
expect_unpriv=0
[ "$(id -u)" -eq 0 ] || expect_unpriv=1
# VIGIL_REQUIRE_TOOLS=1: a test that drives a tool bootstrap installs (cargo, npm) fails
# when it is missing instead of leaving that part out.
env_dev=(env -i PATH="$clean_path" HOME="$scratch/home" LANG=C.UTF-8 VIGIL_REQUIRE_TOOLS=1)
# The tests that show one user cannot reach another's session act as a second user
# (tests/integration/other_user.h): as root, by dropping to vigil-ci; in the vigil-ci pass,
# through a helper started below as vigil-ci-other. With VIGIL_REQUIRE_OTHER_USER=1 a
# missing second user fails those tests rather than skipping them.
require_other=()
if [ "$(id -u)" -eq 0 ]; then
  for u in vigil-ci vigil-ci-other; do
    id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$u"
  done
  require_other=(VIGIL_REQUIRE_OTHER_USER=1)
fi
run_suite "integration tests as $(id -un)" "${env_dev[@]}" VIGIL_EXPECT_UNPRIVILEGED=$expect_unpriv \
  "${require_other[@]}" @@ build/tests/vigil_integration_tests
step_time "integration tests as $(id -un)"
run_suite "adversarial probes as $(id -un)" "${env_dev[@]}" VIGIL_EXPECT_UNPRIVILEGED=$expect_unpriv \
  @@ build/tests/vigil_adversarial_tests
step_time "adversarial probes as $(id -un)"

echo "== the packager's configuration (build-release/: Release, -DVIGIL_TESTS=OFF)"
# What a packager runs. Its compile is the dev build's above (the same Release flags, which
# built there with warnings as errors): here the configuration itself must succeed, and
# say nothing but its own lines (a CMake warning fails the step).
rel_log=$(mktemp)
if cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_TESTS=OFF >"$rel_log" 2>&1; then
  if grep -qi 'warning' "$rel_log"; then
    cat "$rel_log"
    step_failed "the packager's configuration (warnings)"
  else
    echo "the packager's configuration: configures, no warning"
  fi
else
  cat "$rel_log"
  step_failed "the packager's configuration"
fi
rm -f "$rel_log"
step_time "the packager's configuration"

echo "== sanitizer build (build-asan/)"
# The libraries in batches (-DVIGIL_UNITY_LIBS=ON, CMakeLists.txt): 731 s to 532 s here.
if cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON -DVIGIL_WERROR=ON \
     -DCMAKE_CXX_FLAGS_DEBUG="-g1" -DVIGIL_UNITY_LIBS=ON >/dev/null &&
   cmake --build build-asan -j "$jobs" --target vigil_unit_tests; then :; else step_failed "sanitizer build"; fi
step_time "sanitizer build"
run_suite "unit tests under ASan+UBSan" "${env_dev[@]}" @@ build-asan/tests/vigil_unit_tests
step_time "unit tests under ASan+UBSan"

echo "== fuzz targets over their committed corpora (build-fuzz/, clang)"
fuzz_log=$(mktemp)
tools/fuzz.sh regress >"$fuzz_log" 2>&1
fuzz_rc=$?
grep -E '^fuzz: ' "$fuzz_log"
if [ "$fuzz_rc" -ne 0 ]; then
  cat "$fuzz_log"
  step_failed "fuzz regression"
fi
fuzz_targets=$(grep -cE '^fuzz: [a-z_0-9]+: [0-9]+ inputs, no crash' "$fuzz_log")
fuzz_inputs=$(grep -oE '^fuzz: [a-z_0-9]+: [0-9]+ inputs, no crash' "$fuzz_log" | awk '{s += $3} END {print s + 0}')
rm -f "$fuzz_log"
step_time "fuzz build and regression"
# Fuzz corpora are not tests: they are reported here, not in the summary's counts.
fuzz_line="fuzz: $fuzz_targets targets, $fuzz_inputs inputs"

if [ "$(id -u)" -eq 0 ]; then
  # Most users are not root: every guarantee is tested again as one. The binaries are
  # staged where that user can read them (the checkout may sit under /root).
  user=vigil-ci
  stage=$(mktemp -d /tmp/vigil-stage.XXXXXX)
  # vigil-tls (the TLS helper) exists where OpenSSL did at build time.
  tls_helper=()
  [ -x build/supervisor/vigil-tls ] && tls_helper=(build/supervisor/vigil-tls)
  if cp build/supervisor/vigil build/supervisor/vigil-export "${tls_helper[@]}" build/observer/vigil-init build/tests/vigil_integration_tests \
        build/tests/vigil_adversarial_tests build/tests/vigil_probe build/tests/vigil_other_user \
        "$stage/" &&
     # The MCP SDK client (tests/integration/mcp_sdk_test.cc), where $user can read it.
     cp -r tests/clients/mcp-sdk "$stage/mcp-sdk" && chmod -R a+rX "$stage/mcp-sdk"; then
    mkdir -p "$stage/home" "$stage/other"
    chown "$user" "$stage/home"
    chown vigil-ci-other "$stage/other"
    chmod 755 "$stage" "$stage/other"
    # The second user of this pass, started as root before the pass drops to $user: it
    # acts with vigil-ci-other's own credentials (setpriv execs it: $! is its PID).
    setpriv --reuid=vigil-ci-other --regid=vigil-ci-other --clear-groups \
      "$stage/vigil_other_user" "$stage/other/sock" "$(id -u "$user")" &
    other_pid=$!
    for _ in $(seq 100); do [ -S "$stage/other/sock" ] && break; sleep 0.1; done
    # Two small file systems for the full-disk cases (Fidelity.AFullFileSystem...): a user
    # cannot mount them, so they are mounted here, as root, owned by $user.
    small_fs=()
    for side in direct vigil; do
      mkdir -p "$stage/small-$side"
      if mount -t tmpfs -o "size=4m,nr_inodes=48,mode=0700,uid=$(id -u "$user"),gid=$(id -g "$user")" \
           tmpfs "$stage/small-$side"; then small_fs+=("$stage/small-$side"); fi
    done
    env_ci=(env -i PATH="$clean_path" HOME="$stage/home" LANG=C.UTF-8 VIGIL_BIN="$stage/vigil"
            VIGIL_EXPECT_UNPRIVILEGED=1 VIGIL_REQUIRE_OTHER_USER=1 VIGIL_REQUIRE_TOOLS=1
            VIGIL_OTHER_USER_SOCKET="$stage/other/sock" VIGIL_MCP_SDK="$stage/mcp-sdk")
    [ "${#small_fs[@]}" -eq 2 ] && env_ci+=(VIGIL_SMALL_FS="${small_fs[0]}:${small_fs[1]}")
    EXCLUDE='OddMounts.*' EXCLUDE_WHY="host mounts need root to set up: the root pass builds \
each case and runs vigil in it as root and as $user" \
      run_suite "integration tests as $user (unprivileged)" runuser -u "$user" -- "${env_ci[@]}" \
      @@ "$stage/vigil_integration_tests"
    step_time "integration tests as $user"
    # Nothing a test ran may outlive it. Anything of $user's still running now is named
    # (for the next reader of this log) and ended by PID, so that it cannot count against
    # the next pass's process caps.
    # (Zombies are not counted: dead, only not yet reaped by this machine's PID 1.)
    left=$(ps -u "$user" -o pid=,stat= | awk '$2 !~ /^Z/ {printf "%s%s", sep, $1; sep=","}')
    if [ -n "$left" ]; then
      echo "LEFTOVER: processes of $user outlived the integration pass:"
      ps -o pid,ppid,etime,args -p "$left" || true
      kill -KILL ${left//,/ } 2>/dev/null || true
    fi
    EXCLUDE='Caps.ACgroupLeftByAKilledVigilWithThisPidIsTakenOver' EXCLUDE_WHY="it plants a \
cgroup as root to stand for a killed vigil's leftover: the root pass runs it" \
      run_suite "adversarial probes as $user (unprivileged)" runuser -u "$user" -- "${env_ci[@]}" \
      VIGIL_PROBE="$stage/vigil_probe" @@ "$stage/vigil_adversarial_tests"
    step_time "adversarial probes as $user"
    kill "$other_pid" 2>/dev/null; wait "$other_pid" 2>/dev/null; other_pid=""
    for d in "${small_fs[@]}"; do umount "$d" || step_failed "unmounting $d"; done
  else
    step_failed "unprivileged pass (staging the binaries)"
  fi
  # The .deb as a user gets it: built with CPack, unpacked into a clean tree, `vigil doctor`
  # and `vigil run -- true` run from the installed paths as $user. Not a gtest test: it is
  # reported on its own line, and a failure fails the run.
  echo "== the .deb (tools/package.sh), installed into a clean tree, used as $user"
  # From the dev tree: its binaries are the Release build's (with line tables).
  if deb=$(tools/package.sh build) && tools/test_package.sh "$deb" "$user"; then
    package_line="package: the .deb installs and runs as $user"
  else
    step_failed "the .deb, installed into a clean tree, used as $user"
    package_line="package: FAILED"
  fi
  step_time "the .deb"
else
  echo "== not root: the unprivileged pass above is the only integration pass"
fi

echo "time: total $((SECONDS - run_start)) s"
echo "$fuzz_line"
[ -z "${package_line:-}" ] || echo "$package_line"
if [ "${#failures[@]}" -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
