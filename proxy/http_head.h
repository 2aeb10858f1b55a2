// HTTP/1.x message heads for the egress proxy, as pure functions: bytes in, a parsed
// head or an error out. No sockets, no allocation beyond the returned values, no
// globals; safe from any thread. The Asio shell (server_impl.cc, listener.cc, connection*.cc) only moves bytes.
//
// Strictness is deliberate. The proxy forwards bodies byte for byte, so it and the
// upstream server must agree on where every message ends; anything whose framing two
// parsers could read differently (Content-Length with Transfer-Encoding, obs-fold,
// whitespace before the colon, bare CR, a NUL) is refused rather than "repaired".
// Heads are re-serialised with CRLF before they go upstream, so the one leniency we
// allow — a bare LF ending a head line (RFC 9112 §2.2) — never reaches the server.
//
// Why this parser and not Boost.Beast's (which unfolds obs-fold and accepts a request
// Transfer-Encoding not ending in chunked): proxy/README.md, "Why a hand-written head
// parser".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/head_error.h"
#include "proxy/host_canon.h"

namespace vigil::proxy::http {

// Request heads larger than this are refused with 431 (issue 5: "request head ≤ 64 KiB").
inline constexpr std::size_t kMaxHeadBytes = 64 * 1024;
// More fields than any real client sends; bounds the work per head.
inline constexpr std::size_t kMaxHeaderFields = 128;

struct Header {
  std::string name;   // as sent; compare with iequals()
  std::string value;  // leading/trailing SP/HTAB removed
};

struct RequestHead {
  std::string method;
  std::string target;     // request-target as sent (absolute-form or authority-form)
  int minor_version = 1;  // HTTP/1.<minor>: 0 or 1
  std::vector<Header> headers;
};

struct ResponseHead {
  int minor_version = 1;
  int status = 0;
  std::string reason;
  std::vector<Header> headers;
};

enum class ParseState { kIncomplete, kComplete, kError };

template <class Head>
struct HeadParse {
  ParseState state = ParseState::kIncomplete;
  Head head;
  HeadError error;
  // kComplete: bytes the head occupied (leading empty lines included); the body or
  // the next message starts there.
  std::size_t size = 0;
};

// Resume point for parsing one head that arrives in pieces: the caller keeps it across
// calls on the same (growing) buffer so that each byte is scanned for the end of the
// head once, not once per read (a client dribbling a 64 KiB head byte by byte must not
// cost 64 KiB * 64 Ki compares). Reset it for the next message.
struct HeadScan {
  std::size_t searched = 0;
};

// Parses a request head at the start of `bytes`. kIncomplete until the blank line that
// ends the head has arrived (or 431 once more than `max_head` bytes have arrived without
// one). Empty lines before the request line are skipped (RFC 9112 §2.2).
HeadParse<RequestHead> parse_request_head(std::string_view bytes, HeadScan* scan = nullptr,
                                          std::size_t max_head = kMaxHeadBytes);

// Parses a response head from the upstream server (same grammar and limits; errors
// are the server's fault: the proxy answers 502).
HeadParse<ResponseHead> parse_response_head(std::string_view bytes, HeadScan* scan = nullptr,
                                            std::size_t max_head = kMaxHeadBytes);

// --- request targets ------------------------------------------------------------------

struct Target {
  // The host as the client wrote it, brackets removed from an IPv6 literal; not yet
  // canonicalised (that is the decision's first step, so a malformed host is reported
  // as a refusal with its reason, not as a parse error).
  std::string host;
  std::uint16_t port = 0;
  // Absolute-form only: the path and query to send upstream ("/" when empty).
  std::string origin_form;
};

struct TargetParse {
  bool ok = false;
  Target target;
  HeadError error;
};

// CONNECT's authority-form: host ":" port, IPv6 in brackets, port 1-65535 required.
TargetParse parse_authority_form(std::string_view target);

// A proxy request's absolute-form: "http://" authority [path-abempty] ["?" query].
// https:// (the client expects the proxy to speak TLS: it must use CONNECT), other
// schemes, userinfo ("http://allowed@evil"), fragments and origin-form are refused.
TargetParse parse_absolute_form(std::string_view target);

// --- framing ---------------------------------------------------------------------------

struct BodyFraming {
  enum class Kind {
    kNone,        // no body
    kLength,      // exactly `length` bytes
    kChunked,     // chunked transfer coding (see chunked.h)
    kUntilClose,  // responses only: the body ends when the server closes
  };
  Kind kind = Kind::kNone;
  std::uint64_t length = 0;
};

struct FramingResult {
  bool ok = false;
  BodyFraming framing;
  HeadError error;
};

// RFC 9112 §6.3 for requests: Transfer-Encoding whose last coding is chunked, else
// Content-Length (repeated values must agree), else no body. Transfer-Encoding together
// with Content-Length, on HTTP/1.0, or not ending in chunked is refused (400/501):
// those are the request-smuggling shapes.
FramingResult request_framing(const RequestHead& head);

// The same for a response to a request with `request_method`: HEAD, 1xx, 204 and 304
// have no body; Transfer-Encoding wins over Content-Length (which is then dropped when
// forwarding, as RFC 9112 §6.3 requires); otherwise the body runs until close.
FramingResult response_framing(const ResponseHead& head, std::string_view request_method);

// Whether the client wants its connection kept open after this exchange: HTTP/1.1
// without "close" in Connection / Proxy-Connection. HTTP/1.0 clients always get one
// exchange per connection (keeps the 1.0 keep-alive dialect out of the proxy).
bool client_wants_keep_alive(const RequestHead& head);

// Whether the upstream connection may carry another request after this response.
bool upstream_keeps_alive(const ResponseHead& head, const BodyFraming& framing);

// --- rewriting -------------------------------------------------------------------------

// The head to send upstream for an absolute-form request: origin-form target, Host
// rebuilt from the canonical host (a client's Host header never decides where a request
// goes, and one that disagrees is not forwarded), hop-by-hop fields removed (Connection,
// Keep-Alive, Proxy-*, TE, Upgrade and every field named in Connection), "Connection:
// close" when `close` is set. Content-Length and Transfer-Encoding always pass: the
// body is forwarded as received, so the server must frame it as we did.
std::string upstream_request_head(const RequestHead& head, const Target& target,
                                  const CanonicalHost& host, bool close);

// The response head to send to the client: hop-by-hop fields removed, Content-Length
// dropped when Transfer-Encoding is present, "Connection: close" added when the proxy
// will close the client connection after this response.
std::string client_response_head(const ResponseHead& head, bool close);

// --- proxy-generated responses ---------------------------------------------------------

// The refusal: 403, `X-Proxy-Error: blocked-by-allowlist`, the reason in the status
// phrase (so CONNECT clients, which never show a body, can report it) and in a short
// text body. `reason` is sanitised for a status line (control bytes dropped, length
// capped at a UTF-8 boundary).
std::string refusal_response(std::string_view reason);

// Any other proxy error (400 malformed request, 431, 502 upstream failure, 504 connect
// timeout, ...): `X-Proxy-Error: <kind>` and the message as body. Always closes.
std::string error_response(int status, std::string_view error_kind, std::string_view message);

// "HTTP/1.1 200 Connection Established" for a CONNECT that reached its server.
std::string_view connect_established();

// --- helpers shared with the tests and the server ---------------------------------------

bool iequals(std::string_view a, std::string_view b);
// The standard reason phrase for a status code the proxy itself produces.
std::string_view status_text(int status);
// `s` made safe for a status line or header value: printable ASCII and UTF-8 bytes
// kept, everything else replaced by a space, cut to at most `max` bytes without
// splitting a UTF-8 sequence.
std::string sanitize_phrase(std::string_view s, std::size_t max = 200);

}  // namespace vigil::proxy::http
