// libFuzzer target for the capture stores' sizes file (supervisor/log/store_sizes.h), which a
// later run trusts as a cache. Beyond "no crash, no UB, no exception": what parses prints
// back to text that parses to the same sizes, and every name kept is a store's name.
// Built only with -DVIGIL_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "supervisor/log/store_sizes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const vigil::StoreSizes s = vigil::parse_store_sizes(text);
  for (const auto& [name, _] : s) {
    if (name.empty() || name == "." || name == ".." ||
        name.find_first_of("/ \n\t\r", 0) != std::string_view::npos ||
        name.find('\0') != std::string_view::npos)
      std::abort();
  }
  if (vigil::parse_store_sizes(vigil::format_store_sizes(s)) != s) std::abort();
  return 0;
}
