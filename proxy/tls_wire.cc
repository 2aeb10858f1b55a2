#include "proxy/tls_wire.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace vigil::proxy::tlswire {
namespace {

using nlohmann::json;

Result<json> parse(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::kInternal, "TLS helper wire: a message is not a JSON object");
  return j;
}

template <class T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

}  // namespace

std::string encode_config(const HelperConfig& c) {
  json j;
  j["sentinels"] = json::array();
  for (const auto& s : c.sentinels) {
    j["sentinels"].push_back(
        {{"name", s.name}, {"sentinel", s.sentinel}, {"real", s.real}, {"hosts", s.inject_hosts}});
  }
  j["rules"] = json::array();
  for (const auto& r : c.rules) {
    j["rules"].push_back(
        {{"host", r.host}, {"methods", r.methods}, {"paths", r.paths}, {"origin", r.origin}});
  }
  j["aws"] = json::array();
  for (const auto& a : c.aws_pairs) {
    j["aws"].push_back({{"id", a.access_key_id_var},
                        {"secret", a.secret_access_key_var},
                        {"token", a.session_token_var},
                        {"origin", a.origin}});
  }
  j["sigv4"] = {{"streaming", c.sigv4.streaming_passthrough},
                {"presigned", c.sigv4.presigned_passthrough},
                {"sigv4a", c.sigv4.sigv4a_passthrough}};
  j["require_host_match"] = c.require_host_match;
  j["handshake_timeout_ms"] = c.handshake_timeout_ms;
  j["upstream_ca_file"] = c.upstream_ca_file;
  return j.dump();
}

Result<HelperConfig> decode_config(std::string_view text) {
  auto j = parse(text);
  VIGIL_TRY(j);
  HelperConfig c;
  try {
    for (const auto& s : j->at("sentinels")) {
      c.sentinels.push_back({s.at("name").get<std::string>(), s.at("sentinel").get<std::string>(),
                             s.at("real").get<std::string>(),
                             s.at("hosts").get<std::vector<std::string>>()});
    }
    for (const auto& r : j->at("rules")) {
      c.rules.push_back({r.at("host").get<std::string>(),
                         r.at("methods").get<std::vector<std::string>>(),
                         r.at("paths").get<std::vector<std::string>>(),
                         r.at("origin").get<std::string>()});
    }
    for (const auto& a : j->at("aws")) {
      c.aws_pairs.push_back({a.at("id").get<std::string>(), a.at("secret").get<std::string>(),
                             a.at("token").get<std::string>(), a.at("origin").get<std::string>()});
    }
    const json& s = j->at("sigv4");
    c.sigv4 = {s.at("streaming").get<bool>(), s.at("presigned").get<bool>(),
               s.at("sigv4a").get<bool>()};
    c.require_host_match = j->at("require_host_match").get<bool>();
    c.handshake_timeout_ms = j->at("handshake_timeout_ms").get<std::uint32_t>();
    c.upstream_ca_file = j->at("upstream_ca_file").get<std::string>();
  } catch (const json::exception& e) {
    return make_error(Errc::kInternal, std::string("TLS helper wire: bad configuration: ") + e.what());
  }
  return c;
}

std::string encode_tunnel(const Tunnel& t) { return json{{"host", t.host}, {"port", t.port}}.dump(); }

Result<Tunnel> decode_tunnel(std::string_view text) {
  auto j = parse(text);
  VIGIL_TRY(j);
  Tunnel t;
  t.host = get_or<std::string>(*j, "host", "");
  t.port = get_or<std::uint16_t>(*j, "port", 0);
  if (t.host.empty() || t.host.size() > 300 || t.port == 0)
    return make_error(Errc::kInternal, "TLS helper wire: a tunnel without host or port");
  return t;
}

std::string encode_request(const events::NetRequest& r) {
  return json{{"kind", "net.request"},
              {"method", r.method},
              {"host", r.host},
              {"port", r.port},
              {"path", r.path},
              {"status", r.status},
              {"bytes_up", r.bytes_up},
              {"bytes_down", r.bytes_down},
              {"secret_injected", r.secret_injected},
              {"verdict", events::to_string(r.verdict)},
              {"rule", r.rule},
              {"reason", r.reason}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<events::NetRequest> decode_request(std::string_view text) {
  auto j = parse(text);
  VIGIL_TRY(j);
  if (get_or<std::string>(*j, "kind", "") != "net.request")
    return make_error(Errc::kInternal, "TLS helper wire: not a net.request");
  events::NetRequest r;
  auto capped = [&](const char* key) {
    std::string s = get_or<std::string>(*j, key, "");
    if (s.size() > 4096) s.resize(4096);
    return s;
  };
  r.method = capped("method");
  r.host = capped("host");
  r.port = get_or<std::uint16_t>(*j, "port", 0);
  r.path = capped("path");
  r.status = get_or<int>(*j, "status", 0);
  r.bytes_up = get_or<std::uint64_t>(*j, "bytes_up", 0);
  r.bytes_down = get_or<std::uint64_t>(*j, "bytes_down", 0);
  r.secret_injected = get_or<bool>(*j, "secret_injected", false);
  r.verdict = capped("verdict") == "denied" ? events::NetVerdict::kDenied
                                            : events::NetVerdict::kAllowed;
  r.rule = capped("rule");
  r.reason = capped("reason");
  return r;
}

Result<void> send_message(int sock, std::string_view msg, std::span<const int> fds) {
  if (msg.size() > kMaxMessage) return make_error(Errc::kInternal, "TLS helper wire: message too big");
  iovec iov{const_cast<char*>(msg.data()), msg.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  if (!fds.empty()) {
    mh.msg_control = control.data();
    mh.msg_controllen = control.size();
    cmsghdr* cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
  }
  while (true) {
    const ssize_t n = ::sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n >= 0) return {};
    if (errno == EINTR) continue;
    return system_error("TLS helper wire: send");
  }
}

Result<std::string> recv_message(int sock, std::vector<UniqueFd>* fds, std::size_t max) {
  std::string buf(max, '\0');
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return system_error("TLS helper wire: receive");
  for (cmsghdr* cm = CMSG_FIRSTHDR(&mh); cm != nullptr; cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
      UniqueFd owned(fd);
      if (fds != nullptr) fds->push_back(std::move(owned));
    }
  }
  if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0)
    return make_error(Errc::kInternal, "TLS helper wire: a message was cut");
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

}  // namespace vigil::proxy::tlswire
