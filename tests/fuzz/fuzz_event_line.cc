// libFuzzer target: arbitrary bytes as a line from the observer (untrusted: it comes
// from inside the sandbox), and as a record read back from a session log.
//
// Beyond "never crash", it checks the properties the supervisor relies on:
//  * a rejected line gets a one-line, bounded error;
//  * an accepted line becomes a record the writer can log and the reader reads back
//    identically (serialize -> parse_log_record -> same event, same bytes), in ASCII;
//  * a log record that parses is exactly its canonical serialisation;
//  * the display escapes leave no control byte (terminal) and no markup (HTML);
//  * the annotation built from an accepted event is still one block: two tags, and
//    every line a "deny ..." line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "supervisor/report/annotation.h"
#include "supervisor/core/events/event_schema.h"

using namespace vigil;
using namespace vigil::events;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_annotation(const Body& body, std::string_view log_path) {
  ViolationCollector c;
  c.add(body, 1);
  c.add(body, 2);
  const std::string block =
      render_annotation(c, AnnotationOptions{kAnnotationMaxLines, std::string(log_path)});
  if (block.empty()) return;
  std::size_t tags = 0;
  for (const char ch : block) {
    if (ch == '<') ++tags;
    check(ch == '\n' || (static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f));
  }
  check(tags == 2);
  check(block.rfind("<sandbox_violations>\ndeny ", 0) == 0);
  constexpr std::string_view kClose = "</sandbox_violations>\n";
  check(block.size() >= kClose.size() &&
        block.compare(block.size() - kClose.size(), kClose.size(), kClose) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  auto body = parse_untrusted_event_line(in);
  if (!body.ok()) {
    check(body.error().message.find('\n') == std::string::npos);
    check(body.error().message.size() < 256);
  } else {
    check(validate(*body, Limits::untrusted()).ok());
    Event e;
    e.seq = 7;
    e.t = 42;
    e.session = "fuzz-session";
    e.src = Source::kObserver;
    e.prev = std::string(kGenesisPrev);
    e.body = *body;
    const std::string line = serialize(e);
    for (const char ch : line) check(ch >= 0x20 && ch < 0x7f);
    auto back = parse_log_record(line);
    check(back.ok());
    check(*back == e);
    check(serialize(*back) == line);
    check_annotation(*body, in.substr(0, 64));
  }

  auto rec = parse_log_record(in);
  if (rec.ok()) check(serialize(*rec) == in);

  for (const char ch : escape_for_terminal(in)) {
    const auto u = static_cast<unsigned char>(ch);
    check(u >= 0x20 && u != 0x7f);
  }
  for (const char ch : escape_for_html(in))
    check(ch != '<' && ch != '>' && ch != '"' && ch != '\'');

  // The splitter never hands out more than its bound, however the bytes are chunked.
  LineSplitter sp(64);
  const std::size_t cut = size / 2;
  sp.feed(in.substr(0, cut), [](std::string_view l) {
    check(l.size() <= 64 && l.find('\n') == std::string_view::npos);
  });
  sp.feed(in.substr(cut), [](std::string_view l) {
    check(l.size() <= 64 && l.find('\n') == std::string_view::npos);
  });
  return 0;
}
