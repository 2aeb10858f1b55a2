// libFuzzer target for `vigil verify --stream`'s input: the lines a collector wrote
// (supervisor/export/stream_verify.h), and the export cursor's parser (the file a restarted
// exporter trusts; input starting with '{'). Beyond "no crash, no UB, no exception", it
// checks what the verifier promises:
//  - a parsed record has a session of 1..64 bytes, a chain of 64 hex digits (a record)
//    or a known mark, and a prev that is empty or 64 hex digits;
//  - the report counts every line: records + duplicates + other lines + malformed + marks
//    = lines;
//  - a stream judged intact has no problem but redeliveries;
//  - a cursor that parses prints back to text that parses to the same cursor.
// Built only with -DVIGIL_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "supervisor/export/export_cursor.h"
#include "supervisor/export/stream_verify.h"

namespace {

[[noreturn]] void fail() { std::abort(); }

bool hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text[0] == '{') {
    auto c = vigil::parse_cursor(text, "cursor");
    if (c.ok()) {
      auto again = vigil::parse_cursor(vigil::cursor_json(*c), "cursor");
      if (!again.ok() || !(*again == *c)) fail();
    }
  }
  vigil::StreamVerifier v;
  std::size_t lines = 0, malformed = 0;
  for (std::size_t a = 0; a <= text.size();) {
    std::size_t b = text.find('\n', a);
    if (b == std::string_view::npos) b = text.size();
    const std::string_view line = text.substr(a, b - a);
    auto r = vigil::parse_stream_line(line);
    if (!r.ok()) {
      ++malformed;
    } else if (r->has_value()) {
      const auto& rec = **r;
      if (rec.session.empty() || rec.session.size() > 64) fail();
      if (rec.mark.empty() ? !hex64(rec.chain) : (rec.mark != "broken" && rec.mark != "lost"))
        fail();
      if (!rec.prev.empty() && !hex64(rec.prev)) fail();
    }
    v.add_line(line);
    ++lines;
    a = b + 1;
  }
  const vigil::StreamReport rep = v.finish();
  std::size_t marks = 0;
  for (const auto& p : rep.problems) marks += p.what == "broken" || p.what == "lost";
  if (rep.lines != lines) fail();
  if (rep.records + rep.duplicates + rep.other_lines + malformed + marks != lines) fail();
  if (rep.ok(false)) {
    for (const auto& p : rep.problems)
      if (p.what != "duplicate") fail();
  }
  (void)vigil::render_stream_report(rep, "f", true);
  return 0;
}
