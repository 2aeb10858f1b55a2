// vigil-tls: the TLS helper of one command's proxy (proxy/tls_wire.h says what it hears
// and says). A binary of its own so that OpenSSL is loaded only by a session that
// terminates TLS, never by `vigil run` itself; and so that the session CA's key and the
// masked secrets live in a process the sandbox never shares anything with. It reads its
// configuration from descriptor 3 (a SOCK_SEQPACKET socketpair with the proxy), answers
// with the CA certificate, then serves each tunnel handed to it until the proxy closes
// its end (or dies: PR_SET_PDEATHSIG).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "proxy/tls_tunnel.h"
#include "proxy/tls_wire.h"

namespace {

namespace asio = boost::asio;
using namespace vigil;
using namespace vigil::proxy;

constexpr int kControl = 3;

asio::awaitable<void> accept_tunnels(asio::posix::stream_descriptor& ctl, tls::TunnelContext& ctx,
                                     asio::io_context& io) {
  while (true) {
    auto [ec] = co_await ctl.async_wait(asio::posix::descriptor_base::wait_read,
                                        asio::as_tuple(asio::use_awaitable));
    if (ec) break;
    std::vector<UniqueFd> fds;
    auto msg = tlswire::recv_message(kControl, &fds);
    if (!msg || msg->empty()) break;  // the proxy is gone: so are its tunnels
    auto t = tlswire::decode_tunnel(*msg);
    if (!t || fds.size() != 2) continue;
    asio::co_spawn(io, ctx.serve(std::move(fds[0]), std::move(fds[1]), std::move(t).value()),
                   asio::detached);
  }
  io.stop();
}

int fail(const std::string& message) {
  (void)tlswire::send_message(kControl, nlohmann::json{{"error", message}}.dump());
  return 1;
}

}  // namespace

int main() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;  // the proxy died before the line above
  ::signal(SIGPIPE, SIG_IGN);
  auto text = tlswire::recv_message(kControl);
  if (!text || text->empty()) return 1;
  auto config = tlswire::decode_config(*text);
  if (!config) return fail(config.error().message);
  asio::io_context io;
  auto ctx = tls::TunnelContext::create(std::move(config).value(), [](std::string record) {
    (void)tlswire::send_message(kControl, record);
  });
  if (!ctx) return fail(ctx.error().message);
  auto sent = tlswire::send_message(kControl, nlohmann::json{{"ca", (*ctx)->ca_pem()}}.dump());
  if (!sent) return 1;
  asio::posix::stream_descriptor ctl(io, ::dup(kControl));
  asio::co_spawn(io, accept_tunnels(ctl, **ctx, io), asio::detached);
  io.run();
  return 0;
}
