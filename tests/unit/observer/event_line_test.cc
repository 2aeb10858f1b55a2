// The observer's event lines: exact text for a table of fields, and every line read back
// by the supervisor's own untrusted-line parser to the very bytes that went in (ASCII
// with every escape, UTF-8, bytes that are not UTF-8, all 256 byte values).
#include "observer/event_line.h"

#include <gtest/gtest.h>

#include <variant>

#include "supervisor/core/events/event_schema.h"

namespace vigil::init {
namespace {

TEST(EventLine, ExactText) {
  struct Case {
    const char* name;
    std::string (*build)();
    std::string want;
  };
  const Case cases[] = {
      {"kind only",
       [] {
         std::string s;
         EventLine(&s, "observer.stats").finish();
         return s;
       },
       "{\"kind\":\"observer.stats\"}\n"},
      {"numbers and bool",
       [] {
         std::string s;
         EventLine(&s, "k")
             .number("a", -42)
             .unsigned_number("b", 18446744073709551615ULL)
             .number("c", 0)
             .boolean("t", true)
             .boolean("f", false)
             .finish();
         return s;
       },
       "{\"kind\":\"k\",\"a\":-42,\"b\":18446744073709551615,\"c\":0,\"t\":true,\"f\":false}\n"},
      {"escapes",
       [] {
         std::string s;
         EventLine(&s, "k")
             .bytes("p", std::string("a file name that is mostly text: q\"b\\s/\n\t\x01\x7f~", 44))
             .finish();
         return s;
       },
       "{\"kind\":\"k\",\"p\":\"a file name that is mostly text: "
       "q\\\"b\\\\s/\\u000a\\u0009\\u0001\\u007f~\"}\n"},
      {"mostly control bytes go as base64 (escaped they would be six times as long)",
       [] {
         std::string s;
         EventLine(&s, "k").bytes("p", std::string("q\"b\\s/\n\t\x01\x1f\x7f~", 12)).finish();
         return s;
       },
       "{\"kind\":\"k\",\"p\":{\"b64\":\"cSJiXHMvCgkBH39+\"}}\n"},
      {"non-ASCII goes as base64",
       [] {
         std::string s;
         EventLine(&s, "k").bytes("p", "caf\xc3\xa9").bytes("q", "\xff").finish();
         return s;
       },
       "{\"kind\":\"k\",\"p\":{\"b64\":\"Y2Fmw6k=\"},\"q\":{\"b64\":\"/w==\"}}\n"},
      {"arrays",
       [] {
         std::string s;
         EventLine(&s, "k")
             .bytes_array("e", {})
             .bytes_array("a", {"sh", "-c", "echo \"x\"", "\x80"})
             .finish();
         return s;
       },
       "{\"kind\":\"k\",\"e\":[],\"a\":[\"sh\",\"-c\",\"echo \\\"x\\\"\",{\"b64\":\"gA==\"}]}\n"},
      {"appends to what is there",
       [] {
         std::string s = "{\"kind\":\"x\"}\n";
         EventLine(&s, "y").finish();
         return s;
       },
       "{\"kind\":\"x\"}\n{\"kind\":\"y\"}\n"},
  };
  for (const auto& c : cases) EXPECT_EQ(c.build(), c.want) << c.name;
}

TEST(EventLine, NoValueGrowsBeyondBase64) {
  // The worst cases for each form: control bytes (escaped: 6 bytes each), quotes, and
  // non-ASCII; a full PATH_MAX of each stays within 4/3 + 10 bytes (plus the key).
  for (const char c : {'\x01', '"', '\x80', 'a'}) {
    const std::string v(4096, c);
    std::string s;
    EventLine(&s, "k").bytes("p", v).finish();
    const std::size_t overhead = std::string("{\"kind\":\"k\",\"p\":}\n").size();
    EXPECT_LE(s.size() - overhead, 4 * ((v.size() + 2) / 3) + 10) << int(c);
  }
}

TEST(EventLine, Base64Vectors) {
  // RFC 4648 section 10.
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [in, want] : vectors) {
    std::string out;
    append_base64(&out, in);
    EXPECT_EQ(out, want) << in;
  }
  // Every byte value in every position of a 1-, 2- and 3-byte group decodes back.
  for (int len = 1; len <= 3; ++len) {
    for (int pos = 0; pos < len; ++pos) {
      for (int b = 0; b < 256; ++b) {
        std::string in(static_cast<size_t>(len), 'A');
        in[static_cast<size_t>(pos)] = static_cast<char>(b);
        std::string out;
        append_base64(&out, in);
        EXPECT_EQ(events::base64_decode(out), in) << len << " " << pos << " " << b;
      }
    }
  }
}

events::FsWrite read_back(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  auto body = events::parse_untrusted_event_line(std::string_view(line).substr(0, line.size() - 1));
  EXPECT_TRUE(body.ok()) << (body.ok() ? "" : body.error().message) << "\n" << line;
  if (!body.ok()) return {};
  const auto* w = std::get_if<events::FsWrite>(&*body);
  EXPECT_NE(w, nullptr);
  return w != nullptr ? *w : events::FsWrite{};
}

TEST(EventLine, TheSupervisorReadsBackTheExactBytes) {
  std::vector<std::string> paths = {
      "/w/plain.txt",
      "rel/with space/and\"quote",
      "/w/back\\slash",
      "/w/new\nline/tab\there",
      "/w/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80",  // UTF-8
      "/w/\xff\xfe/latin1-\xe9",                       // not UTF-8
      "/w/\xed\xa0\x80",                               // a UTF-8-encoded surrogate
      std::string(4000, 'x'),
  };
  std::string every_byte = "/w/";
  for (int b = 1; b < 256; ++b) every_byte.push_back(static_cast<char>(b));
  paths.push_back(every_byte);
  for (const auto& p : paths) {
    std::string line;
    EventLine(&line, "fs.write")
        .number("pid", 7)
        .bytes("syscall", "renameat2")
        .bytes("path", p)
        .unsigned_number("flags", 0x241)
        .bytes("from", p + "-old")
        .bytes("from_resolved", "/w/" + p + "-old")
        .bytes("resolved", "/w/" + p)
        .bytes("verdict", "denied")
        .bytes("reason", "read-only: outside the writable roots")
        .finish();
    const events::FsWrite w = read_back(line);
    EXPECT_EQ(w.pid, 7);
    EXPECT_EQ(w.syscall, "renameat2");
    EXPECT_EQ(w.path, p);
    EXPECT_EQ(w.resolved, "/w/" + p);
    EXPECT_EQ(w.from, p + "-old");
    EXPECT_EQ(w.from_resolved, "/w/" + p + "-old");
    EXPECT_EQ(w.flags, 0x241u);
    EXPECT_EQ(w.verdict, vigil::Verdict::kDenied);
    EXPECT_EQ(w.reason, "read-only: outside the writable roots");
  }
}

TEST(EventLine, ExecRecordReadsBack) {
  const std::vector<std::string> argv = {"python3", "-c", "print(\"\xe2\x82\xac\")", "\x01\xff"};
  std::string line;
  EventLine(&line, "proc.exec")
      .number("pid", 12)
      .number("ppid", 1)
      .bytes_array("argv", argv)
      .bytes("cwd", "/w/\xff")
      .boolean("truncated", true)
      .finish();
  auto body = events::parse_untrusted_event_line(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(body.ok()) << body.error().message << "\n" << line;
  const auto* e = std::get_if<events::ProcExec>(&*body);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->pid, 12);
  EXPECT_EQ(e->ppid, 1);
  EXPECT_EQ(e->argv, argv);
  EXPECT_EQ(e->cwd, "/w/\xff");
  EXPECT_TRUE(e->truncated);
}

}  // namespace
}  // namespace vigil::init
