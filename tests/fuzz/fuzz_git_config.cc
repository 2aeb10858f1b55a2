// libFuzzer target for the git config parser and the allowlist judge
// (supervisor/core/policy/git_safety.h), which decide whether a repository left by a session can
// make git run a program. Beyond "no crash, no UB":
//  - the verdict is safe exactly when the text parses and every key is on the allowlist;
//  - section and key names come out lowercased key characters;
//  - what parses, written back in git's canonical form, parses to the same entries (the
//    parser loses nothing an attacker could hide behind).
// Built only with -DVIGIL_FUZZ=ON and clang (see supervisor/core/CMakeLists.txt).
#include <cstdint>
#include <string>
#include <string_view>

#include "supervisor/core/policy/git_safety.h"
#include "tests/fuzz/fuzz_property.h"

namespace {

bool lower_key_chars(std::string_view s, bool dots) {
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                    (dots && c == '.');
    if (!ok) return false;
  }
  return true;
}

// A subsection takes only \" and \\ (git reads "\t" there as 't'); a value takes \n, \t, \b too.
std::string quoted(std::string_view s, bool value = true) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (!value) {
      out.push_back(c);
      continue;
    }
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\t') {
      out += "\\t";
      continue;
    }
    if (c == '\b') {
      out += "\\b";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

std::string canonical(const std::vector<vigil::git::ConfigEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += "[" + e.section;
    if (e.has_subsection) out += " " + quoted(e.subsection, false);
    out += "]\n" + e.name;
    if (e.has_value) out += " = " + quoted(e.value);
    out += "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto entries = vigil::git::parse_config(text);
  const auto verdict = vigil::git::judge_config(text);
  if (!entries) {
    if (verdict.safe || verdict.unsafe.size() != 1) fail();
    return 0;
  }
  bool all_safe = true;
  for (const auto& e : *entries) {
    if (!lower_key_chars(e.section, false) || !lower_key_chars(e.name, false)) fail();
    if (e.name.empty()) fail();
    all_safe = all_safe && vigil::git::is_safe_key(e);
  }
  if (verdict.safe != all_safe) fail();
  // A subsection written quoted cannot hold a newline: such entries have no canonical form.
  for (const auto& e : *entries) {
    if (e.subsection.find('\n') != std::string::npos) return 0;
  }
  auto again = vigil::git::parse_config(canonical(*entries));
  if (!again || again->size() != entries->size()) fail();
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& a = (*entries)[i];
    const auto& b = (*again)[i];
    if (a.key() != b.key() || a.value != b.value || a.has_value != b.has_value) fail();
  }
  return 0;
}
