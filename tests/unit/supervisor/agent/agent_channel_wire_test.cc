// srt's agent channel, the pure half (supervisor/agent/agent_channel_wire.h): the line
// splitter's cap and framing, every kind of line a peer may send (table), random bytes
// that must never throw, and the exact lines vigil sends.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "supervisor/agent/agent_channel_wire.h"

namespace vigil::agent_channel {
namespace {

using json = nlohmann::json;

TEST(AgentChannelWire, SplitsLinesAcrossChunksAndDropsBlankOnes) {
  LineSplitter s;
  std::vector<std::string> lines;
  ASSERT_TRUE(s.feed("{\"a\":1}\n{\"b\"", lines));
  ASSERT_TRUE(s.feed(":2}\r\n\n   \n\t\r\n{\"c\":3}", lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(s.buffered(), 7U);
  ASSERT_TRUE(s.feed("\n", lines));
  EXPECT_EQ(lines.back(), "{\"c\":3}");
  EXPECT_EQ(s.buffered(), 0U);
}

TEST(AgentChannelWire, ALineOverTheCapIsRefusedEvenInPieces) {
  LineSplitter s;
  std::vector<std::string> lines;
  const std::string chunk(64 * 1024, 'x');
  bool ok = true;
  for (std::size_t fed = 0; ok && fed <= kMaxLineBytes + chunk.size(); fed += chunk.size())
    ok = s.feed(chunk, lines);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(lines.empty());
  // Exactly the cap, then its newline: one line.
  LineSplitter t;
  EXPECT_TRUE(t.feed(std::string(kMaxLineBytes, 'y'), lines));
  EXPECT_TRUE(t.feed("\n", lines));
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0].size(), kMaxLineBytes);
  LineSplitter u;
  EXPECT_FALSE(u.feed(std::string(kMaxLineBytes + 1, 'z') + "\n", lines));
}

TEST(AgentChannelWire, EveryKindOfPeerLine) {
  struct Row {
    const char* line;
    PeerKind kind;
    std::optional<std::int64_t> version;
    const char* id;
    bool allow;
  } rows[] = {
      {R"({"type":"hello","protocol_version":1})", PeerKind::kHello, 1, "", false},
      {R"({"type":"hello","protocol_version":2})", PeerKind::kHello, 2, "", false},
      {R"({"type":"hello","protocol_version":"1"})", PeerKind::kHello, std::nullopt, "", false},
      {R"({"type":"hello"})", PeerKind::kHello, std::nullopt, "", false},
      {R"({"type":"hello","protocol_version":1.5})", PeerKind::kHello, std::nullopt, "", false},
      {R"({"type":"permission_response","id":"pr_1","behavior":"allow"})",
       PeerKind::kPermissionResponse, std::nullopt, "pr_1", true},
      {R"({"type":"permission_response","id":"pr_2","behavior":"deny"})",
       PeerKind::kPermissionResponse, std::nullopt, "pr_2", false},
      // Anything but an exact "allow" is a deny.
      {R"({"type":"permission_response","id":"pr_3","behavior":"ALLOW"})",
       PeerKind::kPermissionResponse, std::nullopt, "pr_3", false},
      {R"({"type":"permission_response","id":"pr_4","behavior":true})",
       PeerKind::kPermissionResponse, std::nullopt, "pr_4", false},
      {R"({"type":"permission_response","id":"pr_5"})", PeerKind::kPermissionResponse,
       std::nullopt, "pr_5", false},
      {R"({"type":"permission_response","id":7,"behavior":"allow"})", PeerKind::kInvalid,
       std::nullopt, "", false},
      {R"({"type":"permission_response","behavior":"allow"})", PeerKind::kInvalid, std::nullopt,
       "", false},
      // Duplicate keys: which one wins is not left to chance.
      {R"({"type":"permission_response","id":"pr_6","behavior":"deny","behavior":"allow"})",
       PeerKind::kInvalid, std::nullopt, "", false},
      {R"({"type":"future_thing","x":1})", PeerKind::kIgnored, std::nullopt, "", false},
      {R"({"type":7})", PeerKind::kInvalid, std::nullopt, "", false},
      {R"({"protocol_version":1})", PeerKind::kInvalid, std::nullopt, "", false},
      {R"([1,2,3])", PeerKind::kInvalid, std::nullopt, "", false},
      {R"("hello")", PeerKind::kInvalid, std::nullopt, "", false},
      {R"({"type":"hello")", PeerKind::kInvalid, std::nullopt, "", false},
      {"not json at all", PeerKind::kInvalid, std::nullopt, "", false},
      {"{\"type\":\"hello\",\"protocol_version\":1}\x01", PeerKind::kInvalid, std::nullopt, "",
       false},
      {R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":1}}}}}}}}},"type":"hello"})",
       PeerKind::kInvalid, std::nullopt, "", false},
  };
  for (const auto& r : rows) {
    const PeerMessage m = parse_peer_line(r.line);
    EXPECT_EQ(m.kind, r.kind) << r.line;
    EXPECT_EQ(m.version, r.version) << r.line;
    EXPECT_EQ(m.id, r.id) << r.line;
    EXPECT_EQ(m.allow, r.allow) << r.line;
    if (m.kind == PeerKind::kInvalid) {
      EXPECT_FALSE(m.why.empty()) << r.line;
    }
  }
}

TEST(AgentChannelWire, RandomBytesNeverThrowAndNeverAllow) {
  std::mt19937 rng(32);
  const std::string seeds[] = {R"({"type":"permission_response","id":"pr_1","behavior":"allow"})",
                               R"({"type":"hello","protocol_version":1})"};
  for (int i = 0; i < 20000; ++i) {
    std::string line = seeds[i % 2];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % line.size();
      line[at] = static_cast<char>(rng() % 256);
    }
    PeerMessage m;
    ASSERT_NO_THROW(m = parse_peer_line(line)) << line;
    if (m.allow) {
      // Only a well-formed response whose behavior is exactly "allow" allows.
      const json j = json::parse(line);
      EXPECT_EQ(j.at("behavior"), "allow");
      EXPECT_EQ(j.at("type"), "permission_response");
    }
  }
}

TEST(AgentChannelWire, TheLinesVigilSends) {
  EXPECT_EQ(hello_line(), "{\"type\":\"hello\",\"protocol_version\":1}\n");
  const std::string request = permission_request_line("pr_3", "::1", 443, "[::1]:443", "https");
  // srt's key order: the message's "type" is the first on the line, before the resource's
  // (a harness reading it with a regex, as srt's reference agent does, gets it right).
  EXPECT_EQ(request.rfind("{\"type\":\"permission_request\",\"id\":\"pr_3\",\"resource\":{\"type\"", 0),
            0U)
      << request;
  const json r = json::parse(request);
  EXPECT_EQ(r["type"], "permission_request");
  EXPECT_EQ(r["id"], "pr_3");
  EXPECT_EQ(r["operation"], "connect");
  EXPECT_EQ(r["resource"], (json{{"type", "network"}, {"host", "::1"}, {"port", 443},
                                  {"protocol", "https"}}));
  EXPECT_NE(r["description"].get<std::string>().find("[::1]:443"), std::string::npos);

  Violation fs;
  fs.kind = Violation::Kind::kFs;
  fs.target = std::string("/etc/\xff\n") + std::string(5000, 'p');
  fs.reason = "outside the writable roots";
  const std::string line = blocked_line(fs);
  EXPECT_EQ(line.rfind("{\"type\":\"blocked\",\"resource\":{\"type\":\"file\"", 0), 0U) << line;
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line, whatever the path holds";
  const json b = json::parse(line);
  EXPECT_EQ(b["type"], "blocked");
  EXPECT_EQ(b["operation"], "write");
  EXPECT_EQ(b["resource"]["type"], "file");
  EXPECT_LT(b["resource"]["path"].get<std::string>().size(), kMaxDescriptionBytes + 64);
  EXPECT_NE(b["description"].get<std::string>().find("outside the writable roots"),
            std::string::npos);

  Violation net;
  net.kind = Violation::Kind::kNet;
  net.target = "example.test:80";
  net.host = "example.test";
  net.port = 80;
  const json n = json::parse(blocked_line(net));
  EXPECT_EQ(n["resource"], (json{{"type", "network"}, {"host", "example.test"}, {"port", 80}}));
  EXPECT_EQ(n["operation"], "connect");
}

TEST(AgentChannelWire, RequestNumbers) {
  EXPECT_EQ(request_number("pr_1"), 1U);
  EXPECT_EQ(request_number("pr_123"), 123U);
  EXPECT_EQ(request_number("pr_"), std::nullopt);
  EXPECT_EQ(request_number("pr_1x"), std::nullopt);
  EXPECT_EQ(request_number("xx_1"), std::nullopt);
  EXPECT_EQ(request_number("pr_-1"), std::nullopt);
  EXPECT_EQ(request_number("pr_99999999999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace vigil::agent_channel
