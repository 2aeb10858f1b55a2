// srt's agent channel, the I/O shell (supervisor/agent/agent_channel.h), over a real
// socketpair with the test as the harness: vigil's hello first, a question answered allow
// and deny, the fail-safe before the hello and after the close, and a hostile peer
// (unknown ids, duplicates, garbage, a line over the cap, a flood) that gets a bounded,
// clear treatment. The end-to-end run through bwrap is tests/integration/agent_channel_test.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "supervisor/agent/agent_channel.h"

namespace vigil {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using proxy::AskAnswer;

struct Pair {
  UniqueFd vigil, harness;
};

Pair socket_pair() {
  int sv[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

// The harness's side: lines with a deadline.
class Harness {
 public:
  explicit Harness(UniqueFd fd) : fd_(std::move(fd)) {}
  void send(const std::string& text) const {
    ASSERT_EQ(::send(fd_.get(), text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  // The next line from vigil ("" when none within 5 s).
  std::string line() {
    const auto until = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      if (std::chrono::steady_clock::now() >= until) return "";
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char b[4096];
      const ssize_t n = ::recv(fd_.get(), b, sizeof b, 0);
      if (n <= 0) return "";
      buf_.append(b, static_cast<std::size_t>(n));
    }
  }
  void send_ignoring_errors(const std::string& text) const {
    std::size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = ::send(fd_.get(), text.data() + off, text.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  json message() {
    const std::string l = line();
    return l.empty() ? json() : json::parse(l);
  }
  void close() { fd_.reset(); }

 private:
  UniqueFd fd_;
  std::string buf_;
};

std::shared_ptr<proxy::AskTicket> ticket(const std::string& host, std::uint16_t port = 80) {
  proxy::AskQuestion q;
  q.host = host;
  q.port = port;
  q.address = "127.0.0.1";
  q.timeout = 30s;
  return std::make_shared<proxy::AskTicket>(q, [] {});
}

std::optional<AskAnswer> result_within(const proxy::AskTicket& t, std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!t.result() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  return t.result();
}

TEST(AgentChannel, HelloThenQuestionsAnsweredAllowAndDeny) {
  Pair p = socket_pair();
  AgentChannel channel(std::move(p.vigil));
  Harness h(std::move(p.harness));
  EXPECT_EQ(h.message(), (json{{"type", "hello"}, {"protocol_version", 1}}));
  // Before the harness's hello: nothing is asked, the request is denied at once.
  auto early = ticket("early.test");
  channel.ask(early);
  EXPECT_EQ(early->result(), AskAnswer::kDeny);
  EXPECT_FALSE(channel.wait_ready(50ms));

  h.send(R"({"type":"hello","protocol_version":1})" "\n");
  ASSERT_TRUE(channel.wait_ready(5s));
  auto a = ticket("a.test", 8080);
  auto b = ticket("b.test");
  channel.ask(a);
  channel.ask(b);
  const json qa = h.message();
  const json qb = h.message();
  EXPECT_EQ(qa["type"], "permission_request");
  EXPECT_EQ(qa["resource"]["host"], "a.test");
  EXPECT_EQ(qa["resource"]["port"], 8080);
  EXPECT_EQ(qa["operation"], "connect");
  EXPECT_NE(qa["id"], qb["id"]);
  EXPECT_FALSE(a->result());
  // Answered out of order, by id.
  h.send(json{{"type", "permission_response"}, {"id", qb["id"]}, {"behavior", "deny"}}.dump() +
         "\n");
  h.send(json{{"type", "permission_response"}, {"id", qa["id"]}, {"behavior", "allow"}}.dump() +
         "\n");
  EXPECT_EQ(result_within(*a, 5s), AskAnswer::kOnce);
  EXPECT_EQ(result_within(*b, 5s), AskAnswer::kDeny);
}

TEST(AgentChannel, AHostilePeerIsIgnoredWithinBoundsThenClosed) {
  Pair p = socket_pair();
  AgentChannel channel(std::move(p.vigil));
  Harness h(std::move(p.harness));
  (void)h.line();
  // A response before any request, for an unknown id, garbage, an unknown type: none of
  // them allows anything, and the channel still works.
  h.send(R"({"type":"permission_response","id":"pr_1","behavior":"allow"})" "\n"
         R"({"type":"hello","protocol_version":1})" "\n"
         "garbage\n"
         R"({"type":"from_the_future"})" "\n");
  ASSERT_TRUE(channel.wait_ready(5s));
  auto t = ticket("asked.test");
  channel.ask(t);
  const json q = h.message();
  ASSERT_EQ(q["id"], "pr_1");
  EXPECT_FALSE(result_within(*t, 100ms)) << "the early response was not kept for later";
  h.send(R"({"type":"permission_response","id":"pr_1","behavior":"deny"})" "\n");
  EXPECT_EQ(result_within(*t, 5s), AskAnswer::kDeny);
  // A duplicate answer changes nothing (the first one won).
  h.send(R"({"type":"permission_response","id":"pr_1","behavior":"allow"})" "\n");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(t->result(), AskAnswer::kDeny);
  // A flood of lines that are not the protocol closes the channel: later asks deny.
  std::string flood;
  for (int i = 0; i < 200; ++i) flood += "{\"not\":\"the protocol\"}\n";
  h.send(flood);
  auto later = ticket("later.test");
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    later = ticket("later.test");
    channel.ask(later);
    if (later->result()) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(later->result(), AskAnswer::kDeny);
}

TEST(AgentChannel, AnOverLongLineOrACloseDeniesWhatIsOpen) {
  for (const bool close_it : {false, true}) {
    Pair p = socket_pair();
    AgentChannel channel(std::move(p.vigil));
    Harness h(std::move(p.harness));
    (void)h.line();
    h.send(R"({"type":"hello","protocol_version":1})" "\n");
    ASSERT_TRUE(channel.wait_ready(5s));
    auto open = ticket("open.test");
    channel.ask(open);
    ASSERT_EQ(h.message()["type"], "permission_request");
    if (close_it) {
      h.close();
    } else {
      // vigil shuts the socket down once the line is over the cap: this send ends then.
      h.send_ignoring_errors(std::string(agent_channel::kMaxLineBytes + 10, 'x'));
    }
    EXPECT_EQ(result_within(*open, 5s), AskAnswer::kDeny) << "close: " << close_it;
    auto after = ticket("after.test");
    channel.ask(after);
    EXPECT_EQ(after->result(), AskAnswer::kDeny);
  }
}

events::Event event_of(events::Body b) {
  static std::uint64_t seq = 0;
  events::Event e;
  e.seq = ++seq;
  e.session = "s";
  e.body = std::move(b);
  return e;
}

events::Event denied_write(const std::string& path) {
  events::FsWrite w;
  w.syscall = "openat";
  w.path = w.resolved = path;
  w.verdict = Verdict::kDenied;
  w.reason = "outside the writable roots";
  return event_of(w);
}

events::Event denied_host(const std::string& host, std::uint16_t port) {
  events::NetDecision d;
  d.host = host;
  d.port = port;
  d.verdict = events::NetVerdict::kDenied;
  d.reason = "host is not on the allow list";
  return event_of(d);
}

TEST(AgentChannel, EachNewEntryOfTheBlockIsOneBlockedNoticeHeldUntilTheHello) {
  Pair p = socket_pair();
  AgentChannel channel(std::move(p.vigil));
  Harness h(std::move(p.harness));
  EXPECT_EQ(h.message()["type"], "hello");
  // Before the hello: held, then sent in order once it comes.
  channel.on_event(denied_write("/etc/a"));
  channel.on_event(denied_write("/etc/a"));  // the same target: no second notice
  h.send(R"({"type":"hello","protocol_version":1})" "\n");
  ASSERT_TRUE(channel.wait_ready(5s));
  json a = h.message();
  EXPECT_EQ(a["type"], "blocked");
  EXPECT_EQ(a["resource"], (json{{"type", "file"}, {"path", "/etc/a"}}));
  // A host the harness itself denied is not echoed back; one nobody asked about is told.
  auto t = ticket("asked.test", 443);
  channel.ask(t);
  const json q = h.message();
  h.send(json{{"type", "permission_response"}, {"id", q["id"]}, {"behavior", "deny"}}.dump() +
         "\n");
  ASSERT_EQ(result_within(*t, 5s), AskAnswer::kDeny);
  channel.on_event(denied_host("asked.test", 443));
  channel.on_event(denied_host("other.test", 80));
  channel.on_event(denied_write("/etc/b"));
  const json n = h.message();
  EXPECT_EQ(n["resource"], (json{{"type", "network"}, {"host", "other.test"}, {"port", 80}}));
  EXPECT_EQ(n["operation"], "connect");
  EXPECT_EQ(h.message()["resource"]["path"], "/etc/b");
}

TEST(AgentChannel, FromTheEnvironmentTakesTheVariableAndClosesOnExec) {
  Pair p = socket_pair();
  const int raw = ::fcntl(p.vigil.get(), F_DUPFD, 10);  // inherited: no FD_CLOEXEC
  ASSERT_GE(raw, 10);
  ASSERT_EQ(::fcntl(raw, F_GETFD) & FD_CLOEXEC, 0);
  ::setenv("SANDBOX_AGENT_CHANNEL_FD", std::to_string(raw).c_str(), 1);
  auto channel = AgentChannel::from_environment();
  ASSERT_NE(channel, nullptr);
  EXPECT_EQ(std::getenv("SANDBOX_AGENT_CHANNEL_FD"), nullptr);
  EXPECT_NE(::fcntl(raw, F_GETFD) & FD_CLOEXEC, 0);
  Harness h(std::move(p.harness));
  EXPECT_EQ(h.message()["type"], "hello");
  channel.reset();

  // Nothing set: no channel. Set to what is not a usable socket: closed from the start.
  EXPECT_EQ(AgentChannel::from_environment(), nullptr);
  int pipefd[2];
  ASSERT_EQ(::pipe2(pipefd, O_CLOEXEC), 0);
  UniqueFd r(pipefd[0]), w(pipefd[1]);
  const std::string pipe_end = std::to_string(::fcntl(r.get(), F_DUPFD_CLOEXEC, 10));
  for (const std::string value : {"abc", "1", "-3", "", "3x", "999999", pipe_end.c_str()}) {
    ::setenv("SANDBOX_AGENT_CHANNEL_FD", value.c_str(), 1);
    auto broken = AgentChannel::from_environment();
    ASSERT_NE(broken, nullptr) << value;
    EXPECT_EQ(std::getenv("SANDBOX_AGENT_CHANNEL_FD"), nullptr) << value;
    EXPECT_FALSE(broken->wait_ready(10ms)) << value;
    auto t = ticket("x.test");
    broken->ask(t);
    EXPECT_EQ(t->result(), AskAnswer::kDeny) << value;
  }
}

}  // namespace
}  // namespace vigil
