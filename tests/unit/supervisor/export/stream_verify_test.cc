#include "supervisor/export/stream_verify.h"

#include <gtest/gtest.h>

#include "supervisor/core/base/sha256.h"
#include "supervisor/export/export_item.h"

namespace vigil {
namespace {

// A session of `n` records as the exporter sends them (vigil format: the payload hashes
// to the chain), one line each as rsyslog writes %rawmsg%.
std::vector<std::string> session(const std::string& host, const std::string& id, int n) {
  std::vector<std::string> out;
  std::string prev(64, '0');
  for (int i = 0; i < n; ++i) {
    ExportItem it;
    it.host = host;
    it.session = id;
    it.seq = static_cast<std::uint64_t>(i);
    it.payload = "{\"seq\":" + std::to_string(i) + ",\"prev\":\"" + prev + "\"" +
                 (i == n - 1 ? ",\"kind\":\"session.end\"}" : "}");
    it.chain = sha256_hex(it.payload);
    it.prev = prev;
    it.kind = i == n - 1 ? "session.end" : "x";
    it.verified = true;
    it.format = "vigil";
    out.push_back(syslog_message(it));
    prev = it.chain;
  }
  return out;
}

StreamReport check(const std::vector<std::string>& lines) {
  StreamVerifier v;
  for (const auto& l : lines) v.add_line(l);
  return v.finish();
}

std::vector<std::string> whats(const StreamReport& r) {
  std::vector<std::string> out;
  for (const auto& p : r.problems) out.push_back(p.what + " " + p.session + " " + p.text);
  return out;
}

TEST(StreamVerifyTest, InterleavedSessionsOfTwoHostsAreIntact) {
  auto a = session("h1", "s-a", 5), b = session("h2", "s-a", 4), c = session("h1", "s-c", 3);
  std::vector<std::string> lines = {"Dec  7 12:00:00 other program: hello"};
  for (std::size_t i = 0; i < 5; ++i) {
    lines.push_back(a[i]);
    if (i < b.size()) lines.push_back("2026-12-07T12:00:00+00:00 h2 " + b[i]);  // a prefix
    if (i < c.size()) lines.push_back(c[i]);
  }
  const auto r = check(lines);
  EXPECT_TRUE(r.ok(true)) << testing::PrintToString(whats(r));
  EXPECT_EQ(r.records, 12u);
  EXPECT_EQ(r.sessions, 3u);
  EXPECT_EQ(r.hosts, 2u);
  EXPECT_EQ(r.complete_sessions, 3u);
  EXPECT_EQ(r.other_lines, 1u);
}

TEST(StreamVerifyTest, EachProblemIsNamed) {
  const auto s = session("h", "s", 6);
  auto forged = s[3];
  forged.replace(forged.find("chain=\"") + 7, 4, "ffff");
  auto altered = s[2];
  altered.replace(altered.rfind("\"seq\":2"), 7, "\"seq\":9");
  struct Case {
    const char* name;
    std::vector<std::string> lines;
    std::string what;
    bool ok_at_least_once;
  };
  const Case cases[] = {
      {"gap", {s[0], s[1], s[4], s[5]}, "gap", false},
      {"reordered", {s[0], s[2], s[1], s[3], s[4], s[5]}, "reordered", false},
      {"redelivered", {s[0], s[1], s[2], s[1], s[2], s[3], s[4], s[5]}, "duplicate", true},
      {"conflict", {s[0], s[1], s[2], s[3], forged, s[4], s[5]}, "conflict", false},
      {"chain", {s[0], s[1], s[2], forged, s[4], s[5]}, "chain", false},
      {"altered", {s[0], s[1], altered, s[3], s[4], s[5]}, "altered", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = check(c.lines);
    bool found = false;
    for (const auto& p : r.problems) found |= p.what == c.what;
    EXPECT_TRUE(found) << testing::PrintToString(whats(r));
    EXPECT_EQ(r.ok(false), c.ok_at_least_once);
    EXPECT_FALSE(r.ok(true));
  }
}

TEST(StreamVerifyTest, TheExportersMarksAreProblems) {
  ExportItem m;
  m.host = "h";
  m.session = "s";
  m.seq = 3;
  m.mark = ExportItem::Mark::kBroken;
  m.why = "record 3's prev does not match";
  auto s = session("h", "s", 4);
  s.push_back(syslog_message(m));
  const auto r = check(s);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].what, "broken");
  EXPECT_NE(render_stream_report(r, "f", false).find("NOT intact"), std::string::npos);
}

TEST(StreamVerifyTest, MalformedVigilLinesAreRefusedOthersIgnored) {
  for (const std::string& bad : std::vector<std::string>{
           "[vigil@32473 session=\"s\"]", "[vigil@32473 session=\"s\" seq=\"x\" chain=\"" +
                                           std::string(64, 'a') + "\"]",
        "[vigil@32473 session=\"s\" seq=\"1\" chain=\"zz\"]", "[vigil@32473 session=\"s",
        "[vigil@32473 a=\"1\" a=\"2\"]", "[vigil@32473 session=\"s\" seq=\"1\" mark=\"odd\"]"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_stream_line(bad).ok());
  }
  auto none = parse_stream_line("<13>1 - h app - - [other@1 a=\"b\"] text");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace vigil
