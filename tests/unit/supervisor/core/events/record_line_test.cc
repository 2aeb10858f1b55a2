// serialize_fast() against events::serialize(): byte for byte the same line for every
// fs.write record, hand-picked (each escape, a surrogate pair, DEL, bytes that are not
// UTF-8, every optional field, a session's command id) and random; other kinds are left
// to serialize().
#include "supervisor/core/events/record_line.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace vigil::events {
namespace {

Event write_event(FsWrite w) {
  Event e;
  e.seq = 12;
  e.t = 3456789;
  e.session = "20261202T010000Z-0123456789ab";
  e.src = Source::kObserver;
  e.prev = std::string(64, 'a');
  e.body = std::move(w);
  return e;
}

void expect_same(const Event& e) {
  const auto fast = serialize_fast(e);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, serialize(e));
}

TEST(RecordLine, HandPickedWritesPrintAsTheSchemaPrintsThem) {
  FsWrite w{7, "openat", "f", "/w/f", 0x241, Verdict::kAllowed, "writable root", "", "", "", ""};
  w.result = "0";
  expect_same(write_event(w));
  FsWrite odd = w;
  odd.path = std::string("q\"b\\s\b\f\n\r\t\x01\x1f\x7f/ \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  odd.resolved = "/w/\xed\x9f\xbf\xef\xbf\xbf";  // U+D7FF, U+FFFF
  odd.reason = std::string("not utf-8: \xff\xfe \xc3", 15);
  odd.from = std::string("a\0b", 3);
  odd.from_resolved = "/w/\xc3\x28";  // a bad continuation byte
  odd.unguarded = ".bashrc";
  odd.verdict = Verdict::kDenied;
  odd.result = "EROFS";
  odd.ignored = "ignoreViolations[0] \xe2\x9c\x93";
  odd.rule_id = "filesystem.allowWrite[2] \"~/.n\xffpm\"";
  expect_same(write_event(odd));
  Event in_session = write_event(w);
  in_session.cmd = 4;
  in_session.seq = 18446744073709551615ULL;
  expect_same(in_session);
  FsWrite empty{1, "unlinkat", "", "", 0, Verdict::kAllowed, "", "", "", "", ""};
  expect_same(write_event(empty));

  Event other = write_event(w);
  other.body = IoStdout{"x"};
  EXPECT_FALSE(serialize_fast(other).has_value());
}

TEST(RecordLine, RandomWritesPrintAsTheSchemaPrintsThem) {
  std::mt19937_64 rng(1202);
  // Bytes drawn mostly from the tricky ones: controls, quotes, DEL, lead and
  // continuation bytes (so that some strings are UTF-8 and some are not), whole
  // multi-byte characters.
  const std::vector<std::string> pieces = {"a", "/", " ", "\"", "\\", "\n", "\t", "\x01", "\x7f",
                                           "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                           "\xf4\x8f\xbf\xbf", "\x80", "\xc3", "\xff", "\xed\xa0\x80",
                                           std::string(1, '\0')};
  auto text = [&] {
    std::string s;
    const std::size_t n = rng() % 12;
    for (std::size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    return s;
  };
  for (int i = 0; i < 5000; ++i) {
    FsWrite w{static_cast<std::int64_t>(rng() % 4194304), rng() % 2 ? "openat" : "renameat2", text(),
              text(), rng(), rng() % 2 ? Verdict::kAllowed : Verdict::kDenied, text(), text(),
              text(), rng() % 3 ? "" : ".git/config", ""};
    w.result = rng() % 2 ? "0" : "";
    w.ignored = rng() % 4 ? "" : text();
    w.rule_id = rng() % 3 ? "" : text();
    Event e = write_event(w);
    if (rng() % 2) e.cmd = rng() % 100;
    SCOPED_TRACE(i);
    expect_same(e);
    if (HasFatalFailure() || HasFailure()) break;
  }
}

}  // namespace
}  // namespace vigil::events
