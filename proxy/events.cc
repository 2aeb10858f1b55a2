#include "proxy/events.h"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

namespace vigil::proxy {
namespace {

// ordered: "kind" first, as a person reading the log expects.
using json = nlohmann::ordered_json;

// Hosts and reasons can carry bytes a client chose (a malformed host): invalid UTF-8 is
// replaced rather than allowed to throw or corrupt the log.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

const char* to_string(Proto p) {
  switch (p) {
    case Proto::kHttp:
      return "http";
    case Proto::kConnect:
      return "connect";
    case Proto::kSocks5:
      return "socks5";
    case Proto::kSocks4:
      return "socks4";
  }
  return "unknown";
}

const char* to_string(RefusedBy r) {
  switch (r) {
    case RefusedBy::kNone:
      return "";
    case RefusedBy::kMalformedHost:
      return "malformed-host";
    case RefusedBy::kDeniedDomain:
      return "denied-domain";
    case RefusedBy::kNotAllowed:
      return "not-allowed";
    case RefusedBy::kAddressGuard:
      return "address-guard";
    case RefusedBy::kUnsupportedProtocol:
      return "unsupported-protocol";
  }
  return "unknown";
}

std::string to_json(const NetDecision& d) {
  json j = {{"kind", "net.decision"},
            {"proto", to_string(d.proto)},
            {"host", d.host},
            {"port", d.port},
            {"verdict", d.verdict == Verdict::kAllow ? "allow" : "deny"},
            {"rule", d.rule},
            {"reason", d.reason}};
  if (d.refused_by != RefusedBy::kNone) j["refused_by"] = to_string(d.refused_by);
  if (!d.address.empty()) j["address"] = d.address;
  if (!d.guard_check.empty()) j["guard_check"] = d.guard_check;
  return dump(j);
}

std::string to_json(const UpstreamFailure& f) {
  json j = {{"kind", "net.upstream_failure"},
            {"proto", to_string(f.proto)},
            {"host", f.host},
            {"port", f.port},
            {"what", f.what}};
  if (!f.address.empty()) j["address"] = f.address;
  return dump(j);
}

JsonLinesSink::JsonLinesSink(UniqueFd fd) : fd_(std::move(fd)) {}

void JsonLinesSink::on_decision(const NetDecision& d) { write_line(to_json(d)); }
void JsonLinesSink::on_upstream_failure(const UpstreamFailure& f) { write_line(to_json(f)); }

void JsonLinesSink::write_line(const std::string& object) {
  std::lock_guard lock(mu_);
  const auto t = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start_);
  // The envelope first, then the event's own fields (object starts with '{').
  std::string line = R"({"v":1,"seq":)" + std::to_string(++seq_) + R"(,"t":)" +
                     std::to_string(t.count()) + R"(,"src":"proxy",)" + object.substr(1) + "\n";
  std::size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(fd_.get(), line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk must not stop the proxy; the line is lost
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace vigil::proxy
