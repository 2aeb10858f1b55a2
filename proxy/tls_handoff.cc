#include "proxy/tls_handoff.h"

#include "proxy/tls_wire.h"

namespace vigil::proxy {
namespace {

Result<void> compile(const std::vector<std::string>& list, const std::string& where,
                     std::vector<DomainPattern>* out) {
  for (const auto& e : list) {
    auto p = parse_domain_pattern(e, PatternList::kAllowed);
    if (!p) return make_error(Errc::kInvalidPolicy, where + ": " + p.error().message);
    out->push_back(std::move(p).value());
  }
  return {};
}

}  // namespace

TlsHandoff::TlsHandoff(boost::asio::io_context& io, UniqueFd control)
    : control_(io, control.release()) {}

Result<std::shared_ptr<TlsHandoff>> TlsHandoff::create(boost::asio::io_context& io,
                                                       UniqueFd control, const NetworkPolicy& net,
                                                       const SentinelTable& sentinels,
                                                       OnRequest on_request) {
  std::shared_ptr<TlsHandoff> h(new TlsHandoff(io, std::move(control)));
  h->all_ = net.tls_terminate.enabled;
  h->max_tunnels_ = net.tls_terminate.max_tunnels;
  VIGIL_TRY_VOID(compile(net.tls_terminate.exclude_domains, "network.tlsTerminate.excludeDomains",
                         &h->exclude_));
  for (const auto& r : net.request_rules) VIGIL_TRY_VOID(compile({r.host}, r.origin, &h->wanted_));
  for (const auto& s : sentinels.entries())
    VIGIL_TRY_VOID(compile(s.inject_hosts, "injectHosts of " + s.name, &h->wanted_));
  h->on_request_ = std::move(on_request);
  return h;
}

bool TlsHandoff::terminates(const CanonicalHost& host, std::uint16_t port) const {
  for (const auto& p : exclude_) {
    if (pattern_matches(p, PatternList::kAllowed, host, port)) return false;
  }
  if (all_) return true;
  for (const auto& p : wanted_) {
    if (pattern_matches(p, PatternList::kAllowed, host, port)) return true;
  }
  return false;
}

Result<void> TlsHandoff::hand(UniqueFd client, UniqueFd upstream, const std::string& host,
                              std::uint16_t port) {
  const int fds[2] = {client.get(), upstream.get()};
  auto sent = tlswire::send_message(control_.native_handle(), tlswire::encode_tunnel({host, port}),
                                    fds);
  if (sent) ++active_;
  return sent;
}

void TlsHandoff::start() { read_next(); }

void TlsHandoff::stop() {
  boost::system::error_code ec;
  control_.close(ec);
}

void TlsHandoff::read_next() {
  control_.async_wait(boost::asio::posix::descriptor_base::wait_read,
                      [self = shared_from_this()](boost::system::error_code ec) {
                        if (ec || !self->control_.is_open()) return;
                        auto msg = tlswire::recv_message(self->control_.native_handle(), nullptr,
                                                                    64 * 1024);
                        if (!msg || msg->empty()) return;  // the helper ended
                        if (*msg == tlswire::kTunnelEnded) {
                          if (self->active_ > 0) --self->active_;
                        } else if (auto r = tlswire::decode_request(*msg);
                                   r && self->on_request_) {
                          self->on_request_(*r);
                        }
                        self->read_next();
                      });
}

}  // namespace vigil::proxy
