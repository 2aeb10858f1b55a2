#include "supervisor/command/proxy_test_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cstdio>
#include <cstdlib>

#include "proxy/host_canon.h"
#include "supervisor/core/base/display_text.h"

namespace vigil {

namespace {

bool test_mode() {
  const char* v = std::getenv("VIGIL_TEST_MODE");
  return v != nullptr && std::string(v) == "1";
}

Result<std::map<std::string, std::vector<proxy::IpAddress>>> parse_test_resolve(
    const std::vector<std::string>& entries) {
  std::map<std::string, std::vector<proxy::IpAddress>> table;
  for (const auto& e : entries) {
    const std::size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) {
      return make_error(Errc::kInvalidPolicy, "--test-resolve " + e + ": write NAME=IP[,IP...]");
    }
    auto canon = proxy::canonicalize_host(e.substr(0, eq));
    if (!canon || canon->kind != proxy::CanonicalHost::Kind::kName) {
      return make_error(Errc::kInvalidPolicy,
                        "--test-resolve " + e + ": the name is not a host name");
    }
    const std::string rest = e.substr(eq + 1);
    auto& list = table[canon->text];
    std::size_t start = 0;
    while (start <= rest.size()) {
      const std::size_t comma = std::min(rest.find(',', start), rest.size());
      boost::system::error_code ec;
      const auto addr = boost::asio::ip::make_address(rest.substr(start, comma - start), ec);
      if (ec)
        return make_error(Errc::kInvalidPolicy, "--test-resolve " + e + ": not an IP address list");
      list.push_back(addr);
      start = comma + 1;
    }
  }
  return table;
}

}  // namespace

void add_proxy_test_options(CLI::App& cmd, ProxyTestOptions& opts) {
  cmd.add_flag("--test-allow-loopback", opts.allow_loopback,
               "TEST ONLY (needs VIGIL_TEST_MODE=1): loopback passes the address guard");
  cmd.add_option("--test-resolve", opts.resolve,
                 "TEST ONLY (needs VIGIL_TEST_MODE=1): NAME=IP[,IP...] replaces DNS");
  cmd.add_option("--test-upstream-ca", opts.upstream_ca,
                 "TEST ONLY (needs VIGIL_TEST_MODE=1): a CA file trusted for upstream TLS "
                 "servers besides the system store");
}

Result<ProxyTestHooks> check_proxy_test_options(const ProxyTestOptions& opts) {
  ProxyTestHooks hooks;
  if (!opts.any()) return hooks;
  if (!test_mode()) {
    return make_error(Errc::kRefused,
                      "--test-allow-loopback, --test-resolve and --test-upstream-ca weaken the "
                      "proxy for tests; they are refused unless VIGIL_TEST_MODE=1 is set");
  }
  hooks.allow_loopback = opts.allow_loopback;
  hooks.upstream_ca = opts.upstream_ca;
  if (!opts.resolve.empty()) {
    auto table = parse_test_resolve(opts.resolve);
    VIGIL_TRY(table);
    hooks.resolve_table = std::move(table).value();
  }
  return hooks;
}

void warn_proxy_test_mode(const ProxyTestHooks& hooks) {
  if (hooks.allow_loopback) {
    std::fprintf(stderr, "vigil: warning: TEST MODE: loopback addresses pass the address guard\n");
  }
  if (!hooks.upstream_ca.empty()) {
    std::fprintf(stderr,
                 "vigil: warning: TEST MODE: upstream TLS servers signed by %s are trusted\n",
                 escape_text(hooks.upstream_ca).c_str());
  }
  if (hooks.resolve_table) {
    std::fprintf(stderr,
                 "vigil: warning: TEST MODE: names resolve from --test-resolve only, not DNS\n");
  }
}

std::shared_ptr<proxy::Resolver> make_proxy_resolver(const ProxyTestHooks& hooks,
                                                     boost::asio::any_io_executor ex) {
  if (hooks.resolve_table) return proxy::make_static_resolver(*hooks.resolve_table);
  return proxy::make_system_resolver(std::move(ex));
}

}  // namespace vigil
