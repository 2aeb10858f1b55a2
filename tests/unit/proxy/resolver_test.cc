// The DNS seam: the system resolver (getaddrinfo on its own threads, bounded by a
// timeout, silent after shutdown()) and the static table the tests and --test-resolve use.
#include "proxy/resolver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

namespace vigil::proxy {
namespace {

using namespace std::chrono_literals;

Result<std::vector<IpAddress>> run(boost::asio::io_context& io, Resolver& r,
                                   const std::string& name, std::chrono::milliseconds timeout) {
  std::optional<Result<std::vector<IpAddress>>> out;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        auto res = co_await r.resolve(name, timeout);
        out.emplace(std::move(res));
      },
      [](std::exception_ptr) {});
  io.restart();
  io.run();
  return out ? std::move(*out)
             : Result<std::vector<IpAddress>>(make_error(Errc::kInternal, "no result"));
}

TEST(DnsResolver, SystemResolvesLocalhostFromHostsFile) {
  boost::asio::io_context io;
  auto r = make_system_resolver(io.get_executor());
  const auto a = run(io, *r, "localhost", 5000ms);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(
      std::any_of(a->begin(), a->end(), [](const IpAddress& x) { return x.is_loopback(); }));
}

TEST(DnsResolver, SystemReportsAMissingName) {
  boost::asio::io_context io;
  auto r = make_system_resolver(io.get_executor());
  // .invalid never resolves (RFC 6761); with no DNS at all this is a timeout instead.
  const auto a = run(io, *r, "nothing-here.invalid", 3000ms);
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(a.error().code == Errc::kNotFound || a.error().code == Errc::kSystem)
      << a.error().message;
}

TEST(DnsResolver, AfterShutdownLookupsEndAsTimeouts) {
  boost::asio::io_context io;
  auto r = make_system_resolver(io.get_executor());
  r->shutdown();
  const auto a = run(io, *r, "localhost", 200ms);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "DNS lookup timed out");
}

TEST(DnsResolver, StaticTable) {
  boost::asio::io_context io;
  auto r = make_static_resolver(
      {{"a.test", {boost::asio::ip::make_address("127.0.0.1")}}, {"empty.test", {}}});
  const auto a = run(io, *r, "a.test", 10ms);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->at(0).to_string(), "127.0.0.1");
  EXPECT_EQ(run(io, *r, "b.test", 10ms).error().code, Errc::kNotFound);
  EXPECT_EQ(run(io, *r, "empty.test", 10ms).error().code, Errc::kNotFound);
}

}  // namespace
}  // namespace vigil::proxy
