// libFuzzer target for the planned writable mounts' wire format
// (supervisor/core/expected_mounts.h), which vigil-init decodes before it lets the
// command run. Beyond "no crash, no UB":
//  - whatever decodes re-encodes to exactly the bytes it came from (one list has one
//    spelling: nothing skipped, no number written two ways);
//  - every decoded path is absolute.
// Built only with -DVIGIL_FUZZ=ON and clang (see supervisor/core/CMakeLists.txt).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "supervisor/core/expected_mounts.h"
#include "tests/fuzz/fuzz_property.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto mounts = vigil::decode_expected_mounts(bytes);
  if (!mounts) {
    if (mounts.error().message.empty()) fail();
    return 0;
  }
  for (const auto& m : *mounts) {
    if (m.path.empty() || m.path.front() != '/') fail();
  }
  if (vigil::encode_expected_mounts(*mounts) != bytes) fail();
  return 0;
}
