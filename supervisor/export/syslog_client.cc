#include "supervisor/export/syslog_client.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <charconv>
#include <optional>
#if VIGIL_HAVE_TLS
#include <boost/asio/ssl.hpp>
#endif

namespace vigil {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

Result<SyslogTarget> parse_syslog_url(std::string_view url) {
  SyslogTarget t;
  auto bad = [&](const std::string& why) -> Error {
    return make_error(Errc::kInvalidPolicy,
                      "--to " + std::string(url) + ": " + why +
                          " (expected syslog://HOST:PORT or syslog+tls://HOST:PORT)");
  };
  std::string_view rest;
  if (url.starts_with("syslog://")) {
    rest = url.substr(9);
  } else if (url.starts_with("syslog+tls://")) {
    rest = url.substr(13);
    t.tls = true;
  } else {
    return bad("not a syslog URL");
  }
  std::size_t colon;
  if (rest.starts_with("[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return bad("an IPv6 address needs [ADDR]:PORT");
    t.host = std::string(rest.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    t.host = std::string(rest.substr(0, colon));
  }
  const std::string_view port = rest.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
    return bad("the port is not a number from 1 to 65535");
  if (t.host.empty()) return bad("no host");
  for (const char c : t.host)
    if (c <= 0x20 || c == 0x7f || c == '/' || c == '@') return bad("the host holds a character no host name has");
  t.port = static_cast<std::uint16_t>(value);
  return t;
}

bool syslog_tls_built() { return VIGIL_HAVE_TLS != 0; }

struct SyslogClient::Impl {
  asio::io_context io;
  tcp::socket sock{io};
#if VIGIL_HAVE_TLS
  std::optional<asio::ssl::context> ctx;
  std::optional<asio::ssl::stream<tcp::socket>> tls;
#endif

  // The TCP socket under TLS, or the socket itself.
  tcp::socket& lowest() {
#if VIGIL_HAVE_TLS
    if (tls) return tls->next_layer();
#endif
    return sock;
  }
  // Runs the started operation until `done` or the timeout; on timeout the socket is shut.
  bool run(bool* done, std::chrono::milliseconds timeout) {
    io.restart();
    io.run_for(timeout);
    if (*done) return true;
    boost::system::error_code ignored;
    lowest().cancel(ignored);
    io.restart();
    io.run();
    return false;
  }
};

SyslogClient::SyslogClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SyslogClient::~SyslogClient() = default;

Result<std::unique_ptr<SyslogClient>> SyslogClient::connect(const SyslogTarget& target,
                                                            std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  const std::string where = target.host + ":" + std::to_string(target.port);
  boost::system::error_code ec;
  tcp::resolver resolver(impl->io);
  auto endpoints = resolver.resolve(target.host, std::to_string(target.port), ec);
  if (ec) return make_error(Errc::kSystem, "cannot resolve the collector " + where + ": " + ec.message());
  bool done = false;
  asio::async_connect(impl->sock, endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  if (!impl->run(&done, timeout)) return make_error(Errc::kSystem, "connecting to " + where + " timed out");
  if (ec) return make_error(Errc::kSystem, "cannot connect to the collector " + where + ": " + ec.message());
  if (!target.tls) return std::unique_ptr<SyslogClient>(new SyslogClient(std::move(impl)));
#if VIGIL_HAVE_TLS
  if (target.ca_file.empty()) {
    return make_error(Errc::kInvalidPolicy, "syslog over TLS needs the collector's CA: give --ca FILE "
                                            "or vigil.export.syslog.ca");
  }
  impl->ctx.emplace(asio::ssl::context::tls_client);
  impl->ctx->set_options(asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                         asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  impl->ctx->load_verify_file(target.ca_file, ec);
  if (ec) return make_error(Errc::kInvalidPolicy, "cannot read the CA file " + target.ca_file + ": " + ec.message());
  impl->ctx->set_verify_mode(asio::ssl::verify_peer);
  impl->tls.emplace(std::move(impl->sock), *impl->ctx);
  impl->tls->set_verify_callback(asio::ssl::host_name_verification(target.host));
  SSL_set_tlsext_host_name(impl->tls->native_handle(), target.host.c_str());
  done = false;
  impl->tls->async_handshake(asio::ssl::stream_base::client, [&](const boost::system::error_code& e) {
    ec = e;
    done = true;
  });
  if (!impl->run(&done, timeout)) return make_error(Errc::kSystem, "the TLS handshake with " + where + " timed out");
  if (ec) {
    return make_error(Errc::kSystem, "the TLS handshake with " + where + " failed (" + ec.message() +
                                         "): check that its certificate is signed by " +
                                         target.ca_file + " and names " + target.host);
  }
  return std::unique_ptr<SyslogClient>(new SyslogClient(std::move(impl)));
#else
  return make_error(Errc::kUnsupported, "this vigil was built without OpenSSL, so it cannot send "
                                        "syslog over TLS: install libssl-dev and rebuild vigil");
#endif
}

Result<void> SyslogClient::send(std::string_view bytes, std::chrono::milliseconds timeout) {
  boost::system::error_code ec;
  bool done = false;
  auto handler = [&](const boost::system::error_code& e, std::size_t) {
    ec = e;
    done = true;
  };
#if VIGIL_HAVE_TLS
  if (impl_->tls) {
    asio::async_write(*impl_->tls, asio::buffer(bytes.data(), bytes.size()), handler);
  } else {
    asio::async_write(impl_->sock, asio::buffer(bytes.data(), bytes.size()), handler);
  }
#else
  asio::async_write(impl_->sock, asio::buffer(bytes.data(), bytes.size()), handler);
#endif
  if (!impl_->run(&done, timeout)) return make_error(Errc::kSystem, "sending to the collector timed out");
  if (ec) return make_error(Errc::kSystem, "sending to the collector failed: " + ec.message());
  return {};
}

bool SyslogClient::alive() const {
  pollfd p{impl_->lowest().native_handle(), POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return false;
  return (p.revents & (POLLRDHUP | POLLERR | POLLHUP | POLLNVAL)) == 0;
}

std::uint64_t SyslogClient::unacked() const {
  int n = 0;
  if (::ioctl(impl_->lowest().native_handle(), SIOCOUTQ, &n) != 0) return 1;
  return static_cast<std::uint64_t>(n);
}

}  // namespace vigil
