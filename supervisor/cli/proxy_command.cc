// `vigil proxy`: the egress proxy on its own (macOS uses it over TCP; on Linux it is the
// same server `vigil run` embeds, here runnable for tests and debugging).
//
//   vigil proxy --settings F --listen unix:PATH | tcp:127.0.0.1:PORT [--events FILE]
//
// Every decision is one schema v1 record on stderr (or appended to --events FILE; see
// supervisor/command/proxy_event_lines.h). Ready is
// announced on stderr as "vigil: proxy listening on <address>" (with the real port for
// tcp:...:0). SIGINT/SIGTERM: graceful shutdown; a second signal cuts everything.
//
// Test-only options (--test-resolve, --test-allow-loopback), refused unless
// VIGIL_TEST_MODE=1: supervisor/command/proxy_test_options.h, shared with `vigil run`.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proxy/resolver.h"
#include "proxy/server.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/command/proxy_event_lines.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/log/session_log.h"
#include "supervisor/launch/sandbox_plan.h"

namespace vigil {

namespace {

namespace asio = boost::asio;

struct ProxyArgs {
  std::string settings;
  std::string listen;
  std::string events;
  double idle_timeout_s = 300;
  double shutdown_grace_s = 5;
  std::size_t max_connections = 4096;
  ProxyTestOptions test;
};

// Each client connection can hold two descriptors (client, upstream): raise the soft
// limit to the hard one and keep the connection cap within it.
std::size_t fit_to_fd_limit(std::size_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return wanted;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &rl);
    (void)::getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur == RLIM_INFINITY) return wanted;
  const auto room = rl.rlim_cur > 64 ? static_cast<std::size_t>((rl.rlim_cur - 64) / 2) : 1;
  return std::max<std::size_t>(1, std::min(wanted, room));
}

std::chrono::milliseconds seconds_to_ms(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000.0));
}

int run_proxy(const ProxyArgs& a) {
  auto test = check_proxy_test_options(a.test);
  if (!test) return report(test.error());
  if (a.idle_timeout_s <= 0 || a.shutdown_grace_s < 0) {
    print_error("--idle-timeout must be > 0 and --shutdown-grace >= 0");
    return to_int(ExitCode::kUsage);
  }
  auto listen = proxy::parse_listen_address(a.listen);
  if (!listen) return report(listen.error());

  auto cwd = current_dir();
  if (!cwd) return report(cwd.error());
  const char* home = std::getenv("HOME");
  auto policy = load_policy_file(a.settings, LoadContext{*cwd, home != nullptr ? home : ""});
  if (!policy) {
    (void)report(policy.error());
    return to_int(ExitCode::kUsage);  // whatever the cause, nothing was started
  }
  for (const auto& w : policy->warnings) print_warning(w);
  // TLS termination, masked credentials and request rules live in `vigil run`'s proxy
  // (its TLS helper): `vigil proxy` alone would relay those tunnels unjudged.
  if (policy->net.tls_terminate.enabled || !policy->net.request_rules.empty() ||
      policy->net.refuse_opaque_tunnels || !policy->credentials.env_vars.empty()) {
    (void)report(make_error(Errc::kInvalidPolicy,
                            "vigil proxy does not terminate TLS: network.tlsTerminate, "
                            "refuseOpaqueTunnels, credentials and vigil.network.requestRules are "
                            "applied by `vigil run` only; remove them from these settings"));
    return to_int(ExitCode::kUsage);
  }

  UniqueFd events_fd;
  if (a.events.empty()) {
    events_fd = UniqueFd(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
  } else {
    events_fd = UniqueFd(::open(a.events.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  }
  if (!events_fd)
    return report(system_error("open " + (a.events.empty() ? std::string("stderr") : a.events)));

  // A client that vanishes must not kill the proxy with SIGPIPE (sockets use
  // MSG_NOSIGNAL; this covers the event stream on a closed pipe).
  ::signal(SIGPIPE, SIG_IGN);

  asio::io_context io(1);
  proxy::ServerOptions options;
  options.idle_timeout = seconds_to_ms(a.idle_timeout_s);
  options.shutdown_grace = seconds_to_ms(a.shutdown_grace_s);
  options.max_connections = fit_to_fd_limit(a.max_connections);
  options.test_allow_loopback = test->allow_loopback;
  auto resolver = make_proxy_resolver(*test, io.get_executor());
  auto sink = std::make_shared<ProxyEventLines>(std::move(events_fd), new_session_id());
  auto server = proxy::Server::create(io, policy->net, options, resolver, sink);
  if (!server) {
    (void)report(server.error());
    return to_int(ExitCode::kUsage);
  }
  if (auto r = (*server)->listen(*listen); !r) return report(r.error());

  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const boost::system::error_code&, int)> on_signal;
  on_signal = [&](const boost::system::error_code& ec, int) {
    if (ec) return;
    (*server)->shutdown();  // the second signal cuts (Server::shutdown's contract)
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);
  (*server)->on_stopped([&] {
    boost::system::error_code ec;
    signals.cancel(ec);
    io.stop();
  });
  (*server)->start();
  warn_proxy_test_mode(*test);
  print_notice("proxy listening on " + (*server)->local_address().text());
  io.run();
  return to_int(ExitCode::kOk);
}

}  // namespace

std::function<int()> add_proxy_command(CLI::App& app) {
  auto args = std::make_shared<ProxyArgs>();
  auto* cmd =
      app.add_subcommand("proxy", "run the egress proxy alone (HTTP + SOCKS5, domain allowlist)");
  cmd->add_option("--settings", args->settings, "settings file (srt format): network.* is used")
      ->required();
  cmd->add_option("--listen", args->listen,
                  "unix:/path/to/socket or tcp:127.0.0.1:PORT (loopback only)")
      ->required();
  cmd->add_option("--events", args->events,
                  "append net.decision JSON lines to FILE (default: stderr)");
  cmd->add_option("--idle-timeout", args->idle_timeout_s,
                  "seconds a tunnel or keep-alive connection may idle")
      ->capture_default_str();
  cmd->add_option("--shutdown-grace", args->shutdown_grace_s,
                  "seconds in-flight connections get after SIGINT/SIGTERM")
      ->capture_default_str();
  cmd->add_option("--max-connections", args->max_connections, "concurrent client connections")
      ->capture_default_str();
  add_proxy_test_options(*cmd, args->test);
  return [args] { return run_proxy(*args); };
}

}  // namespace vigil
