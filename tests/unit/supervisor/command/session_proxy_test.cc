// The session proxy's TCP mode (what `vigil run` uses on macOS, where there is no bridge):
// a real listener on 127.0.0.1 with a kernel-chosen port, real HTTP and SOCKS5 clients on
// that one port, and the decisions reaching the session's callback. Loopback only: every
// target is refused by the allowlist before any lookup, so nothing leaves the machine.
#include "supervisor/command/session_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/unit/common/kernel_tcp.h"

namespace vigil {
namespace {

struct Decisions {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<events::NetDecision> seen;

  void add(const events::NetDecision& d) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(d);
    cv.notify_all();
  }
  bool wait_for(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() >= n; });
  }
};

UniqueFd connect_loopback(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  if (!fd) return fd;
  timeval tv{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return UniqueFd();
  return fd;
}

bool send_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads until `want` bytes arrived, the peer closed, or the timeout hit.
std::string read_some(int fd, std::size_t want) {
  std::string out;
  char buf[4096];
  while (out.size() < want) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// tcp:127.0.0.1:0: the kernel picks the port.
proxy::ListenAddress loopback_any_port() {
  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kTcp;
  where.host = "127.0.0.1";
  where.port = 0;
  return where;
}

TEST(SessionProxy, TcpListenerOnAKernelChosenLoopbackPort) {
  Decisions decisions;
  NetworkPolicy net;  // no allowed domains: every host is refused, with the reason
  const proxy::ListenAddress where = loopback_any_port();
  auto p = SessionProxy::start(
      net, where, [&](const events::NetDecision& d) { decisions.add(d); },
      [](const events::NetUpstreamFailure&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const proxy::ListenAddress bound = (*p)->local_address();
  EXPECT_EQ(bound.kind, proxy::ListenAddress::Kind::kTcp);
  EXPECT_EQ(bound.host, "127.0.0.1");
  ASSERT_NE(bound.port, 0);

  // HTTP CONNECT on the port.
  {
    UniqueFd c = connect_loopback(bound.port);
    ASSERT_TRUE(c.valid());
    ASSERT_TRUE(
        send_all(c.get(), "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"));
    const std::string reply = read_some(c.get(), 1 << 16);
    EXPECT_EQ(reply.rfind("HTTP/1.1 403", 0), 0u) << reply;
    EXPECT_NE(reply.find("X-Proxy-Error: blocked-by-allowlist"), std::string::npos) << reply;
  }
  ASSERT_TRUE(decisions.wait_for(1));

  // SOCKS5 on the same port (routed by the first byte): greeting, then CONNECT by name.
  {
    UniqueFd c = connect_loopback(bound.port);
    ASSERT_TRUE(c.valid());
    ASSERT_TRUE(send_all(c.get(), std::string("\x05\x01\x00", 3)));
    EXPECT_EQ(read_some(c.get(), 2), std::string("\x05\x00", 2));
    std::string req("\x05\x01\x00\x03", 4);
    const std::string host = "denied.example.org";
    req += static_cast<char>(host.size());
    req += host;
    req += std::string("\x00\x50", 2);  // port 80
    ASSERT_TRUE(send_all(c.get(), req));
    const std::string reply = read_some(c.get(), 10);
    ASSERT_GE(reply.size(), 2u);
    EXPECT_EQ(reply[0], '\x05');
    EXPECT_EQ(reply[1], '\x02');  // connection not allowed by ruleset
  }
  ASSERT_TRUE(decisions.wait_for(2));

  (*p)->stop();
  {
    std::lock_guard<std::mutex> lock(decisions.mu);
    ASSERT_EQ(decisions.seen.size(), 2u);
    EXPECT_EQ(decisions.seen[0].host, "example.com");
    EXPECT_EQ(decisions.seen[0].port, 443);
    EXPECT_EQ(decisions.seen[0].verdict, events::NetVerdict::kDenied);
    EXPECT_EQ(decisions.seen[1].host, "denied.example.org");
    EXPECT_EQ(decisions.seen[1].proto, events::NetProto::kSocks5);
    EXPECT_EQ(decisions.seen[1].verdict, events::NetVerdict::kDenied);
  }
  // Stopped: the port no longer accepts.
  EXPECT_FALSE(connect_loopback(bound.port).valid());
}

TEST(SessionProxy, RefusesANonLoopbackTcpAddress) {
  NetworkPolicy net;
  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kTcp;
  where.host = "0.0.0.0";
  auto p = SessionProxy::start(
      net, where, [](const events::NetDecision&) {}, [](const events::NetUpstreamFailure&) {});
  EXPECT_FALSE(p.ok());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// `vigil run` binds the proxy before the sandbox exists and serves once its log is open:
// a client that connects in between waits in the backlog and is answered, and nothing is
// decided (so nothing reaches the log) before serve().
TEST(SessionProxy, OpenBindsServeAnswersWhatWaited) {
  Decisions decisions;
  NetworkPolicy net;
  const proxy::ListenAddress where = loopback_any_port();
  auto p = SessionProxy::open(
      net, where, [&](const events::NetDecision& d) { decisions.add(d); },
      [](const events::NetUpstreamFailure&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  UniqueFd c = connect_loopback((*p)->local_address().port);
  ASSERT_TRUE(c.valid()) << "the bound socket must accept into its backlog before serve()";
  ASSERT_TRUE(send_all(c.get(), "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n"));
  // The request is queued on a connection the proxy has not accepted: the listener's
  // accept queue holds it (and stays so: nothing accepts before serve()).
  const std::uint16_t port = (*p)->local_address().port;
  ASSERT_TRUE(test::eventually([&] { return test::accept_queue_length(port) == 1; }))
      << "the connection never sat in the proxy's accept queue";
  {
    std::lock_guard<std::mutex> lock(decisions.mu);
    EXPECT_TRUE(decisions.seen.empty()) << "a decision before serve()";
  }
  (*p)->serve();
  const std::string reply = read_some(c.get(), 1 << 16);
  EXPECT_EQ(reply.rfind("HTTP/1.1 403", 0), 0u) << reply;
  ASSERT_TRUE(decisions.wait_for(1));
  (*p)->stop();
}

// The sandbox exits while an allowed CONNECT is still connecting: stop() aborts the
// proxy and stops its io_context at once, so the connect never settles. The decision
// (emitted when a connect settles, to name the address connected to) must still reach
// the session. The connect is held by a listener whose one-slot accept queue is full:
// the kernel drops the proxy's SYN. Loopback only (test hooks map a.test to 127.0.0.1).
TEST(SessionProxy, StopMidConnectStillDeliversTheDecision) {
  UniqueFd jam(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(jam.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(jam.get(), 0), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(::getsockname(jam.get(), reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const std::uint16_t jam_port = ntohs(sa.sin_port);
  UniqueFd filler = connect_loopback(jam_port);  // fills the accept queue; nobody accepts
  ASSERT_TRUE(filler.valid());

  Decisions decisions;
  NetworkPolicy net;
  net.allowed_domains = {"a.test"};
  ProxyTestHooks hooks;
  hooks.allow_loopback = true;
  hooks.resolve_table = std::map<std::string, std::vector<proxy::IpAddress>>{
      {"a.test", {boost::asio::ip::make_address("127.0.0.1")}}};
  auto p = SessionProxy::start(
      net, loopback_any_port(), [&](const events::NetDecision& d) { decisions.add(d); },
      [](const events::NetUpstreamFailure&) {}, hooks);
  ASSERT_TRUE(p.ok()) << p.error().message;
  UniqueFd c = connect_loopback((*p)->local_address().port);
  ASSERT_TRUE(c.valid());
  ASSERT_TRUE(
      send_all(c.get(), "CONNECT a.test:" + std::to_string(jam_port) + " HTTP/1.1\r\n\r\n"));
  // The proxy's connect is held: a socket of ours in SYN_SENT towards the jammed port.
  ASSERT_TRUE(test::eventually([&] {
    for (const test::TcpRow& r : test::tcp_rows())
      if (r.remote_port == jam_port && r.state == test::kTcpSynSent) return true;
    return false;
  })) << "the proxy never tried to connect to the jammed port";
  {
    std::lock_guard<std::mutex> lock(decisions.mu);
    EXPECT_TRUE(decisions.seen.empty()) << "the connect settled: the jam did not hold";
  }
  (*p)->stop();
  std::lock_guard<std::mutex> lock(decisions.mu);
  ASSERT_EQ(decisions.seen.size(), 1u);
  EXPECT_EQ(decisions.seen[0].verdict, events::NetVerdict::kAllowed);
  EXPECT_EQ(decisions.seen[0].host, "a.test");
  EXPECT_EQ(decisions.seen[0].address, "127.0.0.1");
}

// Opened and never served (the launch failed in between): stopping and destroying it is
// clean, and the port is released.
TEST(SessionProxy, OpenedButNeverServedStopsCleanly) {
  NetworkPolicy net;
  const proxy::ListenAddress where = loopback_any_port();
  auto p = SessionProxy::open(
      net, where, [](const events::NetDecision&) {}, [](const events::NetUpstreamFailure&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::uint16_t port = (*p)->local_address().port;
  (*p)->stop();
  (*p)->serve();  // after stop: nothing
  EXPECT_FALSE(connect_loopback(port).valid());
  p->reset();
}

}  // namespace
}  // namespace vigil
