#!/usr/bin/env bash
# The whole test suite, from a clean checkout on Debian 12:
#   1. installs what is missing (tools/bootstrap.sh);
#   2. dev build (warnings are errors): unit tests, then integration tests with the real
#      bwrap as the calling user;
#   3. ASan+UBSan build: unit tests;
#   4. the libFuzzer targets, built with clang (build-fuzz/), each run once over its
#      committed corpus in tests/fuzz/corpus/ (a regression check of seconds);
#   5. when run as root: the integration tests again as an unprivileged user, and the
#      .deb (tools/package.sh) unpacked into a clean tree and used as that user.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

tools/bootstrap.sh

passed=0
failed=0
count() {  # sums gtest's "[  PASSED  ] N tests." / "[  FAILED  ] N tests," from a log
  local log=$1 p f
  p=$(grep -oE '^\[  PASSED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -n1 || true)
  f=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' | tail -n1 || true)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
}
run_suite() {  # run_suite LABEL CMD...: runs a gtest binary, shows its tail, counts it
  local label=$1; shift
  local log
  log=$(mktemp)
  echo "== $label"
  if "$@" >"$log" 2>&1; then
    tail -n 3 "$log"
    count "$log"
    rm -f "$log"
  else
    cat "$log"
    count "$log"
    rm -f "$log"
    echo "$label FAILED"
    echo "summary: $passed passed, $((failed > 0 ? failed : 1)) failed"
    exit 1
  fi
}

echo "== dev build (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIGIL_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
run_suite "unit tests" build/tests/vigil_unit_tests
run_suite "integration tests as $(id -un)" build/tests/vigil_integration_tests
run_suite "adversarial probes as $(id -un)" build/tests/vigil_adversarial_tests

echo "== sanitizer build (build-asan/)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs" --target vigil_unit_tests
run_suite "unit tests under ASan+UBSan" build-asan/tests/vigil_unit_tests

echo "== fuzz targets over their committed corpora (build-fuzz/, clang)"
if tools/fuzz.sh regress; then
  passed=$((passed + $(tools/fuzz.sh list | wc -l)))
else
  echo "fuzz regression FAILED"
  echo "summary: $passed passed, $((failed + 1)) failed"
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  # Most users are not root: every guarantee is tested again as one. The binaries are
  # staged where that user can read them (the checkout may sit under /root).
  user=vigil-ci
  id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
  stage=$(mktemp -d /tmp/vigil-stage.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  cp build/supervisor/vigil build/observer/vigil-init build/tests/vigil_integration_tests \
     build/tests/vigil_adversarial_tests build/tests/vigil_probe "$stage/"
  mkdir -p "$stage/home"
  chown "$user" "$stage/home"
  chmod 755 "$stage"
  run_suite "integration tests as $user (unprivileged)" \
    runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/home" \
      VIGIL_BIN="$stage/vigil" "$stage/vigil_integration_tests"
  run_suite "adversarial probes as $user (unprivileged)" \
    runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/home" \
      VIGIL_BIN="$stage/vigil" VIGIL_PROBE="$stage/vigil_probe" "$stage/vigil_adversarial_tests"
  echo "== the .deb, installed into a clean tree, used as $user"
  if deb=$(tools/package.sh build) && tools/test_package.sh "$deb" "$user"; then
    passed=$((passed + 1))
  else
    echo "package test FAILED"
    echo "summary: $passed passed, $((failed + 1)) failed"
    exit 1
  fi
else
  echo "== not root: the unprivileged pass above is the only integration pass"
fi

echo "summary: $passed passed, $failed failed"
