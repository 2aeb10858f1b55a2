// libFuzzer target: arbitrary bytes as a settings file. The loader must return a value or
// an error, never crash; and every error must be one line (it is printed to the user and
// must not be able to forge extra output lines).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "supervisor/core/policy/policy_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const vigil::LoadContext ctx{"/w", "/home/u"};
  auto r =
      vigil::parse_policy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", ctx);
  if (!r.ok() && r.error().message.find('\n') != std::string::npos) std::abort();
  return 0;
}
