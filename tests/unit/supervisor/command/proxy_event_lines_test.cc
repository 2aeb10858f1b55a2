// `vigil proxy`'s event lines are schema v1 records: the decisions the proxy makes (pure
// egress decisions, written through the sink `vigil proxy` uses) parse with the
// supervisor's own log reader, say allowed/denied as the schema does, chain through prev
// from the genesis value, and keep bytes a client chose from breaking a line.
#include "supervisor/command/proxy_event_lines.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "proxy/egress.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

std::vector<std::string> lines_of(int fd) {
  std::string all;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    all.append(buf, static_cast<std::size_t>(n));
  }
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) {
      out.push_back(all.substr(pos) + "<no newline>");
      break;
    }
    out.push_back(all.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

TEST(ProxyEventLines, AreSchemaV1RecordsInAChain) {
  NetworkPolicy net;
  net.allowed_domains = {"*.allowed.test"};
  net.denied_domains = {"bad.allowed.test"};
  net.denied_domain_reasons = {{"bad.allowed.test", "use good.allowed.test instead"}};
  const auto m = proxy::DomainMatcher::build(net);
  ASSERT_TRUE(m.ok());

  UniqueFd fd(::memfd_create("proxy-events", MFD_CLOEXEC));
  ASSERT_TRUE(fd);
  UniqueFd writer(::dup(fd.get()));
  const std::string session = new_session_id();
  ProxyEventLines sink(std::move(writer), session);

  proxy::TargetDecision denied =
      proxy::decide_target(*m, events::NetProto::kHttp, "bad.allowed.test", 80);
  sink.on_decision(denied.event);
  proxy::TargetDecision allowed =
      proxy::decide_target(*m, events::NetProto::kConnect, "a.allowed.test", 443);
  allowed.event.address = "192.0.2.7";
  sink.on_decision(allowed.event);
  // Bytes a client chose (not UTF-8, a newline, a quote) cannot break the line.
  sink.on_decision(
      proxy::decide_target(*m, events::NetProto::kSocks5, std::string("a\xff\n\"b", 5), 1).event);
  sink.on_upstream_failure(events::NetUpstreamFailure{
      events::NetProto::kConnect, "a.allowed.test", 443, "192.0.2.7", "connection refused"});

  const std::vector<std::string> lines = lines_of(fd.get());
  ASSERT_EQ(lines.size(), 4u);
  std::string prev(events::kGenesisPrev);
  std::vector<events::Event> read;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto e = events::parse_log_record(lines[i]);
    ASSERT_TRUE(e.ok()) << lines[i] << "\n" << e.error().message;
    EXPECT_EQ(e->seq, i);
    EXPECT_EQ(e->session, session);
    EXPECT_EQ(e->src, events::Source::kProxy);
    EXPECT_EQ(e->prev, prev) << "line " << i;
    prev = sha256_hex(lines[i]);
    read.push_back(std::move(*e));
  }
  EXPECT_LE(read[0].t, read[3].t);
  EXPECT_NE(lines[0].find(R"("src":"proxy","kind":"net.decision","proto":"http",)"
                          R"("host":"bad.allowed.test","port":80,"verdict":"denied",)"
                          R"("rule":"bad.allowed.test","reason":"use good.allowed.test instead",)"
                          R"("refused_by":"denied-domain","prev":")"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("verdict":"allowed","rule":"*.allowed.test")"), std::string::npos)
      << lines[1];
  // What was read back is what the proxy decided, field for field.
  EXPECT_EQ(std::get<events::NetDecision>(read[0].body), denied.event);
  EXPECT_EQ(std::get<events::NetDecision>(read[1].body), allowed.event);
  const auto& odd = std::get<events::NetDecision>(read[2].body);
  EXPECT_EQ(odd.host, std::string("a\xff\n\"b", 5));
  EXPECT_EQ(odd.refused_by, events::refused_by::kMalformedHost);
  EXPECT_EQ(std::get<events::NetUpstreamFailure>(read[3].body).what, "connection refused");
}

}  // namespace
}  // namespace vigil
