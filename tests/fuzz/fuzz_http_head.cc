// libFuzzer target for the proxy's HTTP parsing: request and response heads, request
// targets, framing, the rewritten heads and the chunked-body scanner. Beyond "no crash,
// no UB", it checks the properties the proxy relies on:
//  - a head fed in pieces (with HeadScan resuming the search) parses exactly like the
//    whole head at once, so no read pattern changes where a message ends;
//  - a parsed head that the proxy forwards (upstream_request_head / client_response_head)
//    parses again to the same method/status and the same framing, and never carries a
//    hop-by-hop field: the server sees the message framed as the proxy framed it;
//  - the chunked scanner gives the same answer fed at once or byte by byte, and never
//    consumes past the end of the body.
// Built only with -DVIGIL_FUZZ=ON and clang (see proxy/CMakeLists.txt).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proxy/chunked.h"
#include "proxy/host_canon.h"
#include "proxy/http_head.h"
#include "tests/fuzz/fuzz_property.h"

namespace {

using namespace vigil::proxy;
using namespace vigil::proxy::http;

template <class Head>
bool same_parse(const HeadParse<Head>& a, const HeadParse<Head>& b) {
  if (a.state != b.state || a.size != b.size) return false;
  if (a.state == ParseState::kError)
    return a.error.status == b.error.status && a.error.message == b.error.message;
  if (a.head.headers.size() != b.head.headers.size()) return false;
  for (std::size_t i = 0; i < a.head.headers.size(); ++i) {
    if (a.head.headers[i].name != b.head.headers[i].name ||
        a.head.headers[i].value != b.head.headers[i].value) {
      return false;
    }
  }
  return true;
}

// Feeds `in` in pieces whose sizes come from `seed`, keeping one HeadScan, as the
// server does with a growing buffer.
template <class Head, class Parse>
HeadParse<Head> parse_in_pieces(std::string_view in, std::uint8_t seed, std::size_t max,
                                Parse parse) {
  HeadScan scan;
  std::size_t have = 0;
  HeadParse<Head> p;
  std::size_t step = 1 + (seed % 7);
  while (true) {
    have = std::min(in.size(), have + step);
    p = parse(in.substr(0, have), &scan, max);
    if (p.state != ParseState::kIncomplete || have == in.size()) return p;
    step = 1 + ((step * 5 + seed) % 13);
  }
}

bool has_hop_by_hop(const std::vector<Header>& headers) {
  for (const auto& h : headers) {
    for (const char* n :
         {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade"}) {
      if (iequals(h.name, n)) return true;
    }
  }
  return false;
}

void check_chunked(std::string_view body) {
  ChunkedScanner whole;
  const auto w = whole.feed(body);
  if (w.consumed > body.size()) fail();
  if (w.done && w.error) fail();
  ChunkedScanner bytes;
  std::size_t consumed = 0;
  bool done = false;
  bool error = false;
  for (std::size_t i = 0; i < body.size() && !done && !error; ++i) {
    const auto s = bytes.feed(body.substr(i, 1));
    consumed += s.consumed;
    done = s.done;
    error = s.error;
  }
  if (done != w.done || error != w.error) fail();
  if (!error && consumed != w.consumed) fail();
  if (w.done) {
    // Nothing after the end belongs to the body.
    if (whole.feed("x").consumed != 0) fail();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t seed = data[0];
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  // A small limit too, so that the 431 path is reached by small inputs.
  const std::size_t max = (seed & 0x80) != 0 ? 256 : kMaxHeadBytes;

  // --- request head ---
  const auto req = parse_request_head(in, nullptr, max);
  const auto req_pieces = parse_in_pieces<RequestHead>(
      in, seed, max,
      [](std::string_view b, HeadScan* s, std::size_t m) { return parse_request_head(b, s, m); });
  if (!same_parse(req, req_pieces)) fail();
  if (req.state == ParseState::kComplete) {
    if (req.size > in.size() || req.size > max) fail();
    if (req.head.minor_version != 0 && req.head.minor_version != 1) fail();
    const auto framing = request_framing(req.head);
    if (framing.ok && framing.framing.kind == BodyFraming::Kind::kChunked)
      check_chunked(in.substr(req.size));
    const auto target = iequals(req.head.method, "CONNECT") ? parse_authority_form(req.head.target)
                                                            : parse_absolute_form(req.head.target);
    if (target.ok) {
      if (target.target.port == 0 || target.target.host.empty()) fail();
      const auto host = canonicalize_host(target.target.host);
      // (The proxy adds Host and maybe Connection: a head already at the field limit
      // comes out over it, which is fine for the server but not for this re-parse.)
      if (host.ok() && !iequals(req.head.method, "CONNECT") &&
          req.head.headers.size() + 2 <= kMaxHeaderFields) {
        if (target.target.origin_form.empty() || target.target.origin_form.front() != '/') fail();
        const std::string up =
            upstream_request_head(req.head, target.target, *host, (seed & 1) != 0);
        const auto again = parse_request_head(up, nullptr, up.size() + 1024);
        if (again.state != ParseState::kComplete || again.size != up.size()) fail();
        if (again.head.method != req.head.method || again.head.target != target.target.origin_form)
          fail();
        if (has_hop_by_hop(again.head.headers) && (seed & 1) == 0) fail();
        const auto f2 = request_framing(again.head);
        if (framing.ok != f2.ok) fail();
        if (framing.ok && (framing.framing.kind != f2.framing.kind ||
                           framing.framing.length != f2.framing.length)) {
          fail();
        }
      }
    }
  } else if (req.state == ParseState::kError) {
    if (req.error.message.empty()) fail();
    if (req.error.status != 400 && req.error.status != 431 && req.error.status != 505) fail();
  }

  // --- response head ---
  const auto resp = parse_response_head(in, nullptr, max);
  const auto resp_pieces = parse_in_pieces<ResponseHead>(
      in, seed, max,
      [](std::string_view b, HeadScan* s, std::size_t m) { return parse_response_head(b, s, m); });
  if (!same_parse(resp, resp_pieces)) fail();
  if (resp.state == ParseState::kComplete) {
    if (resp.head.status < 100 || resp.head.status > 999) fail();
  }
  if (resp.state == ParseState::kComplete && resp.head.headers.size() + 1 <= kMaxHeaderFields) {
    const std::string method = (seed & 2) != 0 ? "HEAD" : "GET";
    const auto framing = response_framing(resp.head, method);
    const std::string out = client_response_head(resp.head, (seed & 4) != 0);
    const auto again = parse_response_head(out, nullptr, out.size() + 1024);
    if (again.state != ParseState::kComplete || again.head.status != resp.head.status) fail();
    if (has_hop_by_hop(again.head.headers) && (seed & 4) == 0) fail();
    const auto f2 = response_framing(again.head, method);
    if (framing.ok && f2.ok && framing.framing.kind != f2.framing.kind) fail();
    if (framing.ok && framing.framing.kind == BodyFraming::Kind::kChunked)
      check_chunked(in.substr(resp.size));
  }

  // --- the whole input as a target, and as a chunked body ---
  (void)parse_authority_form(in);
  (void)parse_absolute_form(in);
  check_chunked(in);
  (void)sanitize_phrase(in, seed);
  return 0;
}
