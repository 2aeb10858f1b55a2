// read_fs_write_line() against the general parser: it takes the lines vigil-init writes
// (built here with vigil-init's own EventLine, every optional field, escapes, bytes that
// are not UTF-8), and for every line, hand-picked or mutated at random, it either gives
// nothing (the general way then reads it) or exactly the record the general parser gives.
#include "supervisor/core/events/fs_write_line.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <variant>

#include "observer/event_line.h"
#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events {
namespace {

const Limits kLim = Limits::untrusted();

// The property: nothing, or the general parser's own record (which must then parse).
void expect_agrees(std::string_view line) {
  const auto fast = read_fs_write_line(line, kLim);
  if (!fast) return;
  const auto general = detail::parse_untrusted_event_line_general(line, kLim);
  ASSERT_TRUE(general.ok()) << "fast read a line the general parser refuses: " << line << " ("
                            << general.error().message << ")";
  const auto* w = std::get_if<FsWrite>(&*general);
  ASSERT_NE(w, nullptr) << line;
  EXPECT_EQ(*fast, *w) << line;
}

// Read by the fast path (the point of it), and the same as the general parser.
void expect_fast(std::string_view line) {
  ASSERT_TRUE(read_fs_write_line(line, kLim).has_value()) << line;
  expect_agrees(line);
  const auto via_entry = parse_untrusted_event_line(line, kLim);
  ASSERT_TRUE(via_entry.ok()) << line;
}

// Not read by the fast path; what the general parser says stands.
void expect_declined(std::string_view line) {
  EXPECT_FALSE(read_fs_write_line(line, kLim).has_value()) << line;
}

std::string observer_line(const std::string& path, const std::string& resolved,
                          const std::string& reason, bool with_from, const char* result) {
  std::string s;
  init::EventLine ev(&s, "fs.write");
  ev.number("pid", 4242).bytes("syscall", "openat").bytes("path", path).unsigned_number("flags", 577);
  if (with_from) ev.bytes("from", "old name").bytes("from_resolved", "/ws/old name");
  ev.bytes("resolved", resolved).bytes("verdict", "allowed").bytes("reason", reason);
  if (result != nullptr) ev.bytes("result", result);
  ev.finish();
  s.pop_back();  // the newline: the supervisor's splitter takes it off
  return s;
}

TEST(FsWriteLine, ReadsWhatVigilInitWrites) {
  expect_fast(observer_line("f", "/ws/f", "writable", false, "0"));
  expect_fast(observer_line("a/b", "/ws/a/b", "the call failed with EEXIST", true, "EEXIST"));
  expect_fast(observer_line("f", "/ws/f", "witnessed", false, nullptr));  // no result: witness
  // Every escape vigil-init writes, DEL, and names that go as base64 (not ASCII, not UTF-8,
  // mostly control bytes).
  expect_fast(observer_line("q\"b\\s\x01\x1f\x7f", "/ws/q", "r\n\t", false, "0"));
  expect_fast(observer_line("caf\xc3\xa9", "/ws/caf\xc3\xa9", "ok", false, "0"));
  expect_fast(observer_line("\xff\xfe", "/ws/\xff", "ok", false, "0"));
  expect_fast(observer_line(std::string("\x01\x02\x03\x04\x05", 5), "/ws/x", "ok", false, "0"));
  expect_fast(observer_line("", "", "not a path", false, "ENOENT"));  // empty resolved
}

TEST(FsWriteLine, TheOtherEscapesJsonHas) {
  expect_fast(R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a\/b\b\f\r","flags":0,)"
              R"("resolved":"\/ws\u002fa","verdict":"denied","reason":"x\u0041","result":"EROFS"})");
  // Keys in any order, and spelled with escapes, are the same keys.
  expect_fast(R"({"reason":"r","verdict":"ephemeral","resolved":"/tmp/x","flags":1,"path":"x",)"
              R"("syscall":"unlink","pid":4194304,"kind":"fs.\u0077rite"})");
}

TEST(FsWriteLine, LeavesEverythingElseToTheGeneralParser) {
  const std::string good = observer_line("f", "/ws/f", "writable", false, "0");
  ASSERT_EQ(good.back(), '}');
  const std::string head = good.substr(0, good.size() - 1);
  const char* const lines[] = {
      // Other kinds, and what the observer never sends in an fs.write.
      R"({"kind":"proc.exec","pid":1,"ppid":0,"argv":[],"cwd":"/"})",
      R"({"v":1,"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r","unguarded":".bashrc"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r","rule_id":"x"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"denied","reason":"r","ignored":"x"})",
      R"({"kind":"fs.write","seq":3,"pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      // Duplicates, missing fields, whitespace, trailing bytes.
      R"({"kind":"fs.write","pid":1,"pid":2,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"verdict":"allowed","reason":"r"})",
      R"({"kind": "fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"} )",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"}x)",
      R"({})",
      // Numbers other than plain digits, and out of range.
      R"({"kind":"fs.write","pid":01,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":-1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":0,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":4194305,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":1.0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":1e3,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":99999999999999999999,"resolved":"/a","verdict":"allowed","reason":"r"})",
      // Values the schema refuses.
      R"({"kind":"fs.write","pid":1,"syscall":"read","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"maybe","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a","flags":0,"resolved":"/a","verdict":"allowed","reason":"r","result":"nope"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a\u0000b","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":{"b64":"!!"},"flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":{"b64":"YQ==","x":1},"flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":7,"flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      // Text the strict subset leaves to the general parser (UTF-8 raw, \u above 0x7f).
      "{\"kind\":\"fs.write\",\"pid\":1,\"syscall\":\"mkdir\",\"path\":\"caf\xc3\xa9\",\"flags\":0,\"resolved\":\"/a\",\"verdict\":\"allowed\",\"reason\":\"r\"}",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"\u00e9","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
      R"({"kind":"fs.write","pid":1,"syscall":"mkdir","path":"a\x","flags":0,"resolved":"/a","verdict":"allowed","reason":"r"})",
  };
  for (const char* line : lines) {
    expect_declined(line);
    expect_agrees(line);
  }
  expect_declined(head);  // cut short
  expect_declined(head + ",\"path\":\"again\"}");
  // Over the bounds: a path one byte past max_path, a reason past max_text.
  expect_declined(observer_line(std::string(kLim.max_path + 1, 'a'), "/ws/f", "r", false, "0"));
  expect_fast(observer_line(std::string(kLim.max_path, 'a'), "/ws/f", "r", false, "0"));
  expect_declined(observer_line("f", "/ws/f", std::string(kLim.max_text + 1, 'r'), false, "0"));
}

// Random lines of vigil-init's shape, then each mutated: a byte changed, dropped or doubled.
TEST(FsWriteLine, RandomLinesAndMutationsAgree) {
  std::mt19937 rng(13);
  auto random_bytes = [&](std::size_t max) {
    std::string s(rng() % (max + 1), '\0');
    for (char& c : s) {
      const auto r = rng() % 10;
      c = r < 7 ? static_cast<char>('a' + rng() % 26) : r < 8 ? '/' : static_cast<char>(rng() % 256);
    }
    return s;
  };
  const char* const results[] = {"0", "EEXIST", "EROFS", nullptr};
  int fast = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string line = observer_line(random_bytes(40), "/" + random_bytes(40), random_bytes(30),
                                     rng() % 2 == 0, results[rng() % 4]);
    const auto read = read_fs_write_line(line, kLim);
    if (read) ++fast;
    expect_agrees(line);
    for (int m = 0; m < 8; ++m) {
      std::string mutated = line;
      const std::size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0:
          mutated[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          mutated.erase(at, 1);
          break;
        default:
          mutated.insert(at, 1, mutated[at]);
      }
      expect_agrees(mutated);
    }
  }
  // Names with NUL bytes are refused by both; every other line must take the fast path.
  EXPECT_GT(fast, 3000);
}

}  // namespace
}  // namespace vigil::events
