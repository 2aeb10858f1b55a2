// libFuzzer target for the seccomp program's wire format (filters/program_wire.h), which
// vigil-init decodes before it starts the command. Beyond "no crash, no UB":
//  - whatever decodes re-encodes to exactly the bytes it came from (one message has one
//    spelling: nothing after it, nothing ignored);
//  - a decoded program is never empty and never over the kernel's limit.
// Built only with -DVIGIL_FUZZ=ON and clang (see filters/CMakeLists.txt).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "filters/program_wire.h"
#include "tests/fuzz/fuzz_property.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto program = vigil::decode_program(bytes);
  if (!program) {
    if (program.error().message.empty()) fail();
    return 0;
  }
  if (program->empty() || program->size() > vigil::kMaxProgramInstructions) fail();
  auto again = vigil::encode_program(*program);
  if (!again || *again != bytes) fail();
  return 0;
}
