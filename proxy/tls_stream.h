// The TLS helper's stream type and the few I/O steps its tunnels are made of (reading
// more, writing all, relaying one framed body). Used by proxy/tls_tunnel.cc and
// proxy/tls_request.cc, inside vigil-tls only.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/http_head.h"
#include "proxy/tls_wire.h"

namespace vigil::proxy::tls {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using Socket = asio::generic::stream_protocol::socket;
using Stream = ssl::stream<Socket>;
inline constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// Appends what one read brings; false at EOF or on an error.
asio::awaitable<bool> read_more(Stream& s, std::string& buf);
asio::awaitable<bool> write(Stream& s, std::string_view data);
// Copies one body framed as `f` from `from` (its first bytes already in `buf`, which
// keeps what follows it) to `to`, after `head` (written with the body's first bytes, in
// one record: a head and a body written apart are two records and two segments, and a
// client that reads them as they come pays a round trip between them). The body bytes
// copied, or -1 on a failure.
asio::awaitable<std::int64_t> relay_body(Stream& from, std::string& buf, Stream& to,
                                         http::BodyFraming f, std::string_view head = {});

class TunnelContext;
// One request and its response on a terminated tunnel (proxy/tls_request.cc); whether
// the tunnel carries on with another.
asio::awaitable<bool> serve_one(TunnelContext& ctx, Stream& client, Stream& up, std::string& in,
                                std::string& upin, const tlswire::Tunnel& t);

}  // namespace vigil::proxy::tls
