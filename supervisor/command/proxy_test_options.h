// The two test-only options that weaken the egress proxy, shared by `vigil proxy` and
// `vigil run` (same names, same gate, same warning):
//   --test-resolve NAME=IP[,IP...]  answer NAME from this table; with any of these, the
//                                   system resolver is not used at all (hermetic tests)
//   --test-allow-loopback           loopback addresses pass the address guard, so a test
//                                   server on 127.0.0.1 is reachable by an allowed name
//   --test-upstream-ca FILE         the TLS helper also trusts FILE's CA for upstream
//                                   servers (a test server's), besides the system store
// Both are refused unless VIGIL_TEST_MODE=1 is in the environment, so that no production
// configuration can weaken the address guard by accident, and using them prints a loud
// warning on stderr.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/address_guard.h"
#include "proxy/resolver.h"
#include "supervisor/core/base/result.h"

namespace CLI {
class App;
}

namespace vigil {

// As given on the command line (not yet checked).
struct ProxyTestOptions {
  bool allow_loopback = false;
  std::vector<std::string> resolve;  // NAME=IP[,IP...], one per --test-resolve
  std::string upstream_ca;           // --test-upstream-ca FILE
  bool any() const { return allow_loopback || !resolve.empty() || !upstream_ca.empty(); }
};

// Checked and parsed: what the proxy server is built with.
struct ProxyTestHooks {
  bool allow_loopback = false;
  // Set: names resolve from this table only (canonical name -> addresses).
  std::optional<std::map<std::string, std::vector<proxy::IpAddress>>> resolve_table;
  // A CA file the TLS helper trusts for upstream servers besides the system's: a test
  // server's. Only from this flag (never a settings key: a workspace must not be able to
  // make vigil trust a server of its choosing with the user's secrets).
  std::string upstream_ca;
};

// Registers --test-allow-loopback and --test-resolve on `cmd`, writing into `opts`
// (which must outlive the parse).
void add_proxy_test_options(CLI::App& cmd, ProxyTestOptions& opts);

// Errc::kRefused when any option is given without VIGIL_TEST_MODE=1; Errc::kInvalidPolicy
// for a malformed NAME=IP entry. Pure but for reading the environment variable.
Result<ProxyTestHooks> check_proxy_test_options(const ProxyTestOptions& opts);

// Prints one "vigil: warning: TEST MODE: ..." line on stderr per weakening in effect.
void warn_proxy_test_mode(const ProxyTestHooks& hooks);

// The static table when the hooks have one, else the system resolver on `ex`.
std::shared_ptr<proxy::Resolver> make_proxy_resolver(const ProxyTestHooks& hooks,
                                                     boost::asio::any_io_executor ex);

}  // namespace vigil
