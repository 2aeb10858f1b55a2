#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz) and their committed corpora (tests/fuzz/corpus/<target>).
#
#   tools/fuzz.sh regress            build every target, run each over its committed corpus
#                                    once (seconds; what tools/test.sh runs)
#   tools/fuzz.sh fuzz TARGET SECS   fuzz TARGET for SECS seconds, starting from its corpus;
#                                    new inputs go to build-fuzz/work/TARGET (not committed)
#   tools/fuzz.sh merge TARGET       minimise corpus + build-fuzz/work/TARGET back into the
#                                    committed corpus (libFuzzer -merge=1); FUZZ_MAX_LEN=N
#                                    truncates inputs to N bytes (fuzz_seatbelt_log's
#                                    corpus is merged with 4096: its mutated 34 KB logs
#                                    made 9 MB for 1% more edges)
#   tools/fuzz.sh list               the target names
#
# The fuzz build is its own tree (build-fuzz/), always configured with clang and clang++
# whatever compiler the dev build uses, with warnings not fatal (clang warns about other
# things than the GCC 12 the -Werror build is held to) and without the test suites: only
# the fuzz targets are built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${VIGIL_FUZZ_BUILD:-$root/build-fuzz}
corpus_root=$root/tests/fuzz/corpus

targets() {
  # Every tests/fuzz/fuzz_*.cc is a target of the same name.
  local f
  for f in "$root"/tests/fuzz/fuzz_*.cc; do
    f=${f##*/}
    echo "${f%.cc}"
  done
}

configure() {
  local cc cxx
  cc=$(command -v clang || true)
  cxx=$(command -v clang++ || true)
  if [ -z "$cc" ] || [ -z "$cxx" ]; then
    echo "fuzz: clang/clang++ not found (tools/bootstrap.sh installs them)" >&2
    exit 1
  fi
  # An existing tree configured with another compiler cannot be switched in place.
  if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=$cxx\$" "$build/CMakeCache.txt"; then
    rm -rf "$build"
  fi
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  # -O1 with line tables, as libFuzzer's own examples build: 130 s against 156 s at -O2 -g
  # for the regression CI runs each time, stack traces still with lines.
  CC=$cc CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
    -DVIGIL_FUZZ=ON -DVIGIL_WERROR=OFF -DVIGIL_TESTS=OFF >/dev/null
}

build_targets() {
  configure
  # shellcheck disable=SC2046
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target $(targets)
}

# Where the build put a target (each part's CMakeLists declares its own).
bin_of() {
  local b
  b=$(find "$build" -type f -name "$1" -perm -u+x -not -path '*/CMakeFiles/*' | head -n1)
  [ -n "$b" ] || { echo "fuzz: $1 was not built" >&2; exit 1; }
  echo "$b"
}

known() {
  targets | grep -qx "$1" || { echo "fuzz: unknown target $1 (tools/fuzz.sh list)" >&2; exit 2; }
}

cmd=${1:-regress}
case $cmd in
  list)
    targets
    ;;
  regress)
    build_targets
    status=0
    for t in $(targets); do
      dir=$corpus_root/$t
      if [ ! -d "$dir" ] || [ -z "$(ls -A "$dir")" ]; then
        echo "fuzz: $t has no committed corpus in tests/fuzz/corpus/$t" >&2
        status=1
        continue
      fi
      log=$(mktemp)
      # -runs=0: execute every committed input once, then stop (no new inputs).
      if "$(bin_of "$t")" -runs=0 -rss_limit_mb=4096 "$dir" >"$log" 2>&1; then
        echo "fuzz: $t: $(find "$dir" -type f | wc -l) inputs, no crash"
      else
        cat "$log" >&2
        echo "fuzz: $t FAILED on its committed corpus" >&2
        status=1
      fi
      rm -f "$log"
    done
    exit $status
    ;;
  fuzz)
    t=${2:?fuzz needs a TARGET}
    secs=${3:?fuzz needs SECONDS}
    known "$t"
    build_targets
    mkdir -p "$build/work/$t" "$corpus_root/$t"
    # New inputs are written to the first directory only: the committed corpus stays as
    # it is until `merge`.
    "$(bin_of "$t")" -max_total_time="$secs" -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$build/work/$t-" "$build/work/$t" "$corpus_root/$t"
    ;;
  merge)
    t=${2:?merge needs a TARGET}
    known "$t"
    build_targets
    mkdir -p "$build/work/$t" "$corpus_root/$t"
    out=$build/work/$t.merged
    rm -rf "$out"
    mkdir -p "$out"
    "$(bin_of "$t")" -merge=1 -rss_limit_mb=4096 ${FUZZ_MAX_LEN:+-max_len=$FUZZ_MAX_LEN} \
      "$out" "$corpus_root/$t" "$build/work/$t"
    rm -rf "${corpus_root:?}/$t"
    mv "$out" "$corpus_root/$t"
    echo "fuzz: $t: $(find "$corpus_root/$t" -type f | wc -l) inputs committed-to-be"
    ;;
  *)
    echo "usage: tools/fuzz.sh regress | fuzz TARGET SECONDS | merge TARGET | list" >&2
    exit 2
    ;;
esac
