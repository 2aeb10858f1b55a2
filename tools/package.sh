#!/usr/bin/env bash
# Builds the .deb (CPack) from a build tree: tools/package.sh [BUILD_DIR] (default build-pkg,
# a Release build made here). Prints the .deb's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-pkg}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_TESTS=OFF >/dev/null
fi
cmake --build "$dir" -j "${JOBS:-2}" --target vigil vigil-init vigil-export vigil-tls >/dev/null
(cd "$dir" && cpack -G DEB >/dev/null)
ls -t "$dir"/vigil_*.deb | head -1
