// One request on a terminated tunnel (tls_stream.h's serve_one): judged, its sentinels
// swapped where the host may receive them, relayed, answered, recorded.
#include <algorithm>

#include "proxy/aws_sigv4.h"
#include "proxy/tls_stream.h"
#include "proxy/tls_tunnel.h"

namespace vigil::proxy::tls {
namespace {

// Bodies up to this size are read whole when the host may receive a secret, so a
// sentinel in them is swapped too (and Content-Length set to the new size).
constexpr std::uint64_t kMaxSubstitutedBody = 1 << 20;

std::string head_text(const http::RequestHead& h) {
  std::string out =
      h.method + " " + h.target + " HTTP/1." + std::to_string(h.minor_version) + "\r\n";
  for (const auto& f : h.headers) out += f.name + ": " + f.value + "\r\n";
  return out + "\r\n";
}

bool host_header_names(const http::RequestHead& h, const std::string& host, std::uint16_t port) {
  for (const auto& f : h.headers) {
    if (!http::iequals(f.name, "host")) continue;
    std::string v = f.value;
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v == host || v == host + ":" + std::to_string(port);
  }
  return false;
}

// A refusal inside the tunnel: the status, the reason in the phrase and the body, and
// the tunnel closed after it.
std::string refusal(int status, std::string_view kind, const std::string& reason) {
  return http::error_response(status, kind, reason);
}

http::Header* find_header(http::RequestHead& h, std::string_view name) {
  for (auto& f : h.headers) {
    if (http::iequals(f.name, name)) return &f;
  }
  return nullptr;
}

// Re-signs a request signed (AWS SigV4) with a masked pair's sentinel key id, with the
// real key, over the request as it will be forwarded (its other sentinels already
// swapped). "" when done or not needed; else why it cannot be (a 403). `body` is the
// whole body when `whole`.
std::string resign_sigv4(const TunnelContext& ctx, http::RequestHead& head, std::string& body,
                         bool whole, bool has_body, const tlswire::Tunnel& t) {
  const SentinelTable& table = ctx.sentinels();
  const auto& shapes = ctx.config().sigv4;
  for (const auto& pair : ctx.config().aws_pairs) {
    const SentinelEntry* id = table.by_name(pair.access_key_id_var);
    const SentinelEntry* secret = table.by_name(pair.secret_access_key_var);
    if (id == nullptr || secret == nullptr) continue;
    if (head.target.find("X-Amz-Signature=") != std::string::npos &&
        head.target.find(id->sentinel) != std::string::npos) {
      if (!shapes.presigned_passthrough)
        return "a presigned URL signed with a masked AWS key cannot be re-signed "
               "(credentials.sigv4.presigned: \"passthrough\" forwards it as it is)";
      continue;
    }
    http::Header* auth = find_header(head, "authorization");
    if (auth == nullptr || auth->value.find(id->sentinel) == std::string::npos) continue;
    if (auth->value.starts_with("AWS4-ECDSA-P256-SHA256")) {
      if (!shapes.sigv4a_passthrough)
        return "a SigV4A signature cannot be re-signed (credentials.sigv4.sigv4a)";
      continue;
    }
    auto a = sigv4::parse_authorization(auth->value);
    if (!a || a->access_key_id != id->sentinel) continue;
    // The key id's injectHosts gate the re-signing (srt's rule).
    if (!table.entry_injects_at(pair.access_key_id_var, t.host, t.port)) continue;
    http::Header* hash = find_header(head, "x-amz-content-sha256");
    std::string payload;
    if (hash != nullptr && hash->value.starts_with("STREAMING-")) {
      if (!shapes.streaming_passthrough)
        return "an aws-chunked streaming upload cannot be re-signed (credentials.sigv4."
               "streaming)";
      continue;
    }
    if (hash != nullptr && hash->value == "UNSIGNED-PAYLOAD") {
      payload = hash->value;
    } else if (whole || !has_body) {
      payload = sigv4::sha256_hex(whole ? body : "");
      if (hash != nullptr) hash->value = payload;
    } else {
      return "the request body is too large (over 1 MiB) or chunked, so its signature "
             "cannot be made again with the real AWS key";
    }
    const http::Header* date = find_header(head, "x-amz-date");
    if (date == nullptr) return "a SigV4 request without x-amz-date cannot be re-signed";
    if (!pair.session_token_var.empty()) {
      if (const SentinelEntry* token = table.by_name(pair.session_token_var)) {
        if (find_header(head, "x-amz-security-token") == nullptr) {
          head.headers.push_back({"X-Amz-Security-Token", token->real});
          a->signed_headers.push_back("x-amz-security-token");
          std::sort(a->signed_headers.begin(), a->signed_headers.end());
        }
      }
    }
    sigv4::Request r{head.method, head.target, {}, payload};
    for (const auto& f : head.headers) r.headers.emplace_back(f.name, f.value);
    const std::string amz_date = date->value;
    auth = find_header(head, "authorization");
    auth->value = sigv4::authorization_value(*a, id->real,
                                             sigv4::signature(r, *a, secret->real, amz_date));
    return "";
  }
  return "";
}

// Sentinels in the target and each header value but a SigV4 Authorization (re-signed
// instead): the head is rebuilt from its fields, so a value swapped in can never split
// or join headers. A presigned URL's target is left to resign_sigv4's policy.
// A real value with a line break or NUL (a multi-line credential file) is never put into
// the head: it would split it. The sentinel stays there.
std::size_t swap_in_head(const TunnelContext& ctx, std::string& value, const tlswire::Tunnel& t) {
  std::string swapped = value;
  const std::size_t n = ctx.sentinels().substitute(swapped, t.host, t.port);
  if (n == 0 || swapped.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
    return 0;
  value = std::move(swapped);
  return n;
}

std::size_t swap_head(const TunnelContext& ctx, http::RequestHead& head, const tlswire::Tunnel& t) {
  std::size_t swapped = 0;
  for (auto& f : head.headers) {
    if (http::iequals(f.name, "authorization") && f.value.starts_with("AWS4-")) continue;
    swapped += swap_in_head(ctx, f.value, t);
  }
  if (head.target.find("X-Amz-Signature=") == std::string::npos)
    swapped += swap_in_head(ctx, head.target, t);
  return swapped;
}

// After resign_sigv4: a SigV4 Authorization it did not re-sign is swapped as any header;
// one it re-signed counts as an injection.
std::size_t swap_authorization(const TunnelContext& ctx, http::RequestHead& head,
                               const std::string& before, const tlswire::Tunnel& t) {
  for (auto& f : head.headers) {
    if (!http::iequals(f.name, "authorization") || !f.value.starts_with("AWS4-")) continue;
    if (f.value != before) return 1;
    return swap_in_head(ctx, f.value, t);
  }
  return 0;
}

std::string header_value(const http::RequestHead& h, std::string_view name) {
  for (const auto& f : h.headers) {
    if (http::iequals(f.name, name)) return f.value;
  }
  return "";
}

// 1xx heads pass through; then the final response and its body. Records `rec` once the
// response is relayed; whether the tunnel carries on.
asio::awaitable<bool> relay_response(TunnelContext& ctx, Stream& client, Stream& up,
                                     std::string& upin, const http::RequestHead& head,
                                     events::NetRequest& rec) {
  while (true) {
    http::HeadScan rscan;
    http::HeadParse<http::ResponseHead> r;
    while ((r = http::parse_response_head(upin, &rscan)).state ==
           http::ParseState::kIncomplete) {
      if (!(co_await read_more(up, upin))) {
        co_await write(client, http::error_response(502, "upstream-unreachable",
                                                    "the upstream server closed without a "
                                                    "response"));
        co_return false;
      }
    }
    if (r.state == http::ParseState::kError) {
      co_await write(client, http::error_response(502, "bad-upstream-response", r.error.message));
      co_return false;
    }
    const std::string raw = upin.substr(0, r.size);
    upin.erase(0, r.size);
    rec.status = r.head.status;
    const bool interim = r.head.status >= 100 && r.head.status < 200 && r.head.status != 101;
    const http::FramingResult rf = http::response_framing(r.head, head.method);
    if (interim || !rf.ok || r.head.status == 101) {
      if (!(co_await write(client, raw))) co_return false;
      if (interim) continue;
      ctx.emit(rec);
      co_return false;
    }
    // The head goes with the body's first bytes (relay_body).
    const std::int64_t n = co_await relay_body(up, upin, client, rf.framing, raw);
    if (n < 0) co_return false;
    rec.bytes_down = static_cast<std::uint64_t>(n);
    ctx.emit(rec);
    co_return http::client_wants_keep_alive(head) &&
              http::upstream_keeps_alive(r.head, rf.framing);
  }
}

}  // namespace

asio::awaitable<bool> serve_one(TunnelContext& ctx, Stream& client, Stream& up, std::string& in,
                                std::string& upin, const tlswire::Tunnel& t) {
  http::HeadScan scan;
  http::HeadParse<http::RequestHead> p;
  while ((p = http::parse_request_head(in, &scan)).state == http::ParseState::kIncomplete) {
    if (!(co_await read_more(client, in))) co_return false;
  }
  if (p.state == http::ParseState::kError) {
    co_await write(client, refusal(p.error.status, "bad-request", p.error.message));
    co_return false;
  }
  in.erase(0, p.size);
  http::RequestHead head = std::move(p.head);
  events::NetRequest rec;
  rec.method = head.method;
  rec.host = t.host;
  rec.port = t.port;
  rec.path = redact_query(head.target);
  const http::FramingResult framing = http::request_framing(head);
  auto refuse = [&](int status, std::string_view kind, std::string reason,
                    std::string rule) -> asio::awaitable<bool> {
    rec.status = status;
    rec.verdict = events::NetVerdict::kDenied;
    rec.rule = std::move(rule);
    rec.reason = reason;
    ctx.emit(rec);
    co_await write(client, refusal(status, kind, reason));
    co_return false;
  };
  if (!framing.ok) co_return co_await refuse(framing.error.status, "bad-request",
                                             framing.error.message, "");
  if (ctx.config().require_host_match && !host_header_names(head, t.host, t.port)) {
    co_return co_await refuse(421, "host-mismatch",
                              "the Host header does not name " + t.host +
                                  ", the host this tunnel was opened to "
                                  "(network.requireHostMatch)",
                              "network.requireHostMatch");
  }
  const RequestVerdict v = judge_request(ctx.rules(), t.host, t.port, head.method, head.target);
  if (!v.allowed) {
    co_return co_await refuse(403, "blocked-by-request-rule", v.reason + "; " + v.fix, v.rule);
  }
  rec.rule = v.rule;
  // The body is read whole (and its sentinels swapped) only where a secret may go.
  std::string body;
  bool whole_body = false;
  const bool injects = ctx.sentinels().injects_at(t.host, t.port);
  if (injects && framing.framing.kind == http::BodyFraming::Kind::kLength &&
      framing.framing.length <= kMaxSubstitutedBody) {
    const auto length = static_cast<std::size_t>(framing.framing.length);
    while (in.size() < length) {
      if (!(co_await read_more(client, in))) co_return false;
    }
    body = in.substr(0, length);
    in.erase(0, length);
    whole_body = true;
    if (ctx.sentinels().substitute(body, t.host, t.port) > 0) {
      rec.secret_injected = true;
      for (auto& f : head.headers) {
        if (http::iequals(f.name, "content-length")) f.value = std::to_string(body.size());
      }
    }
  }
  // Sentinels in the target and each header value (a header can never be split or
  // joined by a value that is swapped in: the head is rebuilt from the fields).
  const bool has_body = framing.framing.kind != http::BodyFraming::Kind::kNone &&
                        !(framing.framing.kind == http::BodyFraming::Kind::kLength &&
                          framing.framing.length == 0);
  const std::string auth_before = header_value(head, "authorization");
  std::size_t swapped = swap_head(ctx, head, t);
  const std::string why = resign_sigv4(ctx, head, body, whole_body, has_body, t);
  if (!why.empty()) co_return co_await refuse(403, "sigv4-not-resignable", why, "credentials.sigv4");
  swapped += swap_authorization(ctx, head, auth_before, t);
  if (swapped > 0) rec.secret_injected = true;
  const std::string out = head_text(head);
  if (whole_body) {
    // One write, one record: the head and the body it was read with.
    if (!(co_await write(up, out + body))) co_return false;
    rec.bytes_up = body.size();
  } else {
    const std::int64_t n = co_await relay_body(client, in, up, framing.framing, out);
    if (n < 0) co_return false;
    rec.bytes_up = static_cast<std::uint64_t>(n);
  }
  co_return co_await relay_response(ctx, client, up, upin, head, rec);
}

}  // namespace vigil::proxy::tls
