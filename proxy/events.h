// What the proxy tells the supervisor: one net.decision per request (allowed or not),
// and an upstream failure when an allowed connection could not be made. The proxy
// never writes to the sandboxed command's terminal; the supervisor turns these into
// session-log records and the <sandbox_violations> block.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "proxy/domain_matcher.h"
#include "supervisor/core/unique_fd.h"

namespace vigil::proxy {

enum class Proto { kHttp, kConnect, kSocks5, kSocks4 };
const char* to_string(Proto p);  // "http" | "connect" | "socks5" | "socks4"

// Which check refused (kNone when allowed).
enum class RefusedBy {
  kNone,
  kMalformedHost,        // the host could not be canonicalised
  kDeniedDomain,         // a network.deniedDomains entry matched
  kNotAllowed,           // no network.allowedDomains entry matched
  kAddressGuard,         // allowed, but every resolved address was refused
  kUnsupportedProtocol,  // SOCKS4: nothing was decided, the client was told to use SOCKS5
};
const char* to_string(RefusedBy r);  // "" | "malformed-host" | "denied-domain" | ...

// One net.decision event (DESIGN.md §7).
struct NetDecision {
  Proto proto = Proto::kHttp;
  // Canonical host; for a malformed host, the bytes the client sent (capped at 300).
  std::string host;
  std::uint16_t port = 0;
  Verdict verdict = Verdict::kDeny;
  std::string rule;    // the settings entry that decided, as written; "" = default deny
  std::string reason;  // model-facing, one line
  RefusedBy refused_by = RefusedBy::kNone;
  // Allowed: the address connected to (a later one when the first that passed the guard
  // refused the connect; the first one when none answered). Address-guard refusal: the
  // first address refused. Otherwise empty.
  std::string address;
  std::string guard_check;  // address-guard refusals: "loopback", "metadata", ...
};

// An allowed connection that failed upstream (DNS, connect refused, timeout). Not a
// policy decision: reported so a session log explains a 502.
struct UpstreamFailure {
  Proto proto = Proto::kHttp;
  std::string host;
  std::uint16_t port = 0;
  std::string address;  // "" when resolution failed
  std::string what;     // "could not resolve (no such host)", "connection refused", ...
};

// Where events go. Called on the proxy's io_context thread, once per event, in order;
// implementations must not block for long (they hold up every connection).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_decision(const NetDecision& d) = 0;
  virtual void on_upstream_failure(const UpstreamFailure&) {}
};

// The event's fields as one JSON object (no newline): {"kind":"net.decision","proto":
// ...}. The supervisor adds the envelope (v, seq, t, session, src).
std::string to_json(const NetDecision& d);
std::string to_json(const UpstreamFailure& f);

// For `vigil proxy` standalone: one JSON line per event, with v/seq/t/src added, to an
// fd (stderr or an --events file). Thread-safe (a mutex around each line).
class JsonLinesSink : public EventSink {
 public:
  explicit JsonLinesSink(UniqueFd fd);
  void on_decision(const NetDecision& d) override;
  void on_upstream_failure(const UpstreamFailure& f) override;

 private:
  void write_line(const std::string& json_object);

  std::mutex mu_;
  UniqueFd fd_;
  std::uint64_t seq_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace vigil::proxy
