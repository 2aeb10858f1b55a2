#include "supervisor/agent/session_wire.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "supervisor/core/base/bounded_json.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/agent/wire_json.h"

namespace vigil::wire {
namespace {

using json = nlohmann::json;

Result<std::vector<std::string>> byte_strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_array()) return make_error(Errc::kInvalidPolicy, std::string(key) + ": not an array");
  for (const auto& v : *it) {
    auto s = json_bytes_value(v);
    if (!s) return make_error(Errc::kInvalidPolicy, std::string(key) + ": " + s.error().message);
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace

std::string encode(const Request& r) {
  json j;
  if (r.op == Op::kEnd) {
    j["op"] = "end";
    return j.dump();
  }
  j["op"] = "run";
  j["argv"] = json::array();
  for (const auto& a : r.run.argv) j["argv"].push_back(json_bytes(a));
  j["cwd"] = json_bytes(r.run.cwd);
  j["env"] = json::array();
  for (const auto& e : r.run.env) j["env"].push_back(json_bytes(e));
  j["capture"] = r.run.capture;
  return j.dump();
}

std::string encode(const Reply& r) {
  json j;
  if (r.ended) {
    j["ended"] = true;
  } else if (r.error) {
    j["error"] = *r.error;
    j["exit_code"] = r.exit_code;
  } else {
    j["exit_code"] = r.exit_code;
    j["violations"] = r.violations;
  }
  return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

Result<Request> decode_request(std::string_view text) {
  auto parsed = parse_json_object(text);
  VIGIL_TRY(parsed);
  const json& j = *parsed;
  auto op = j.find("op");
  if (op == j.end() || !op->is_string())
    return make_error(Errc::kInvalidPolicy, "request without an op");
  Request r;
  if (*op == "end") {
    r.op = Op::kEnd;
    return r;
  }
  if (*op != "run") return make_error(Errc::kInvalidPolicy, "unknown op");
  auto argv = byte_strings(j, "argv");
  VIGIL_TRY(argv);
  if (argv->empty()) return make_error(Errc::kInvalidPolicy, "run: empty argv");
  auto env = byte_strings(j, "env");
  VIGIL_TRY(env);
  auto cwd = j.find("cwd");
  if (cwd == j.end()) return make_error(Errc::kInvalidPolicy, "run: no cwd");
  auto cwd_bytes = json_bytes_value(*cwd);
  if (!cwd_bytes || cwd_bytes->empty() || (*cwd_bytes)[0] != '/')
    return make_error(Errc::kInvalidPolicy, "run: cwd must be an absolute path");
  r.run.argv = std::move(*argv);
  r.run.env = std::move(*env);
  r.run.cwd = std::move(*cwd_bytes);
  auto capture = j.find("capture");
  r.run.capture = capture == j.end() || !capture->is_boolean() || capture->get<bool>();
  return r;
}

Result<Reply> decode_reply(std::string_view text) {
  auto parsed = parse_json_object(text);
  VIGIL_TRY(parsed);
  const json& j = *parsed;
  Reply r;
  if (auto e = j.find("ended"); e != j.end() && e->is_boolean()) r.ended = e->get<bool>();
  if (auto e = j.find("error"); e != j.end() && e->is_string()) r.error = e->get<std::string>();
  if (auto e = j.find("exit_code"); e != j.end() && e->is_number_integer()) {
    const int code = e->get<int>();
    if (code < 0 || code > 255) return make_error(Errc::kInvalidPolicy, "exit_code out of range");
    r.exit_code = code;
  } else if (!r.ended) {
    return make_error(Errc::kInvalidPolicy, "reply without an exit_code");
  }
  if (auto v = j.find("violations"); v != j.end() && v->is_string())
    r.violations = v->get<std::string>();
  return r;
}

Result<void> send_frame(int sock, const std::string& payload, const std::vector<int>& fds) {
  if (payload.size() > kMaxFrame) return make_error(Errc::kInvalidPolicy, "frame too large");
  std::string frame(4, '\0');
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  frame += payload;
  std::size_t sent = 0;
  bool fds_sent = fds.empty();
  while (sent < frame.size()) {
    iovec iov{frame.data() + sent, frame.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)] = {};
    if (!fds_sent) {
      if (fds.size() > 3) return make_error(Errc::kInternal, "at most 3 fds per frame");
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t w = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return system_error("cannot write to the session socket");
    }
    fds_sent = true;
    sent += static_cast<std::size_t>(w);
  }
  return {};
}

Result<Frame> recv_frame(int sock) {
  Frame f;
  std::string buf;
  std::size_t want = 4;
  bool have_header = false;
  while (buf.size() < want) {
    char chunk[65536];
    const std::size_t room = std::min(sizeof chunk, want - buf.size());
    iovec iov{chunk, room};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("cannot read from the session socket");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        UniqueFd owned(fd);  // closed here unless kept: never leaked
        if (f.fds.size() < 3) f.fds.push_back(std::move(owned));
      }
    }
    if (n == 0) return make_error(Errc::kSystem, "the session socket closed mid-frame");
    buf.append(chunk, static_cast<std::size_t>(n));
    if (!have_header && buf.size() >= 4) {
      std::uint32_t len = 0;
      for (int i = 0; i < 4; ++i) len = (len << 8) | static_cast<unsigned char>(buf[i]);
      if (len > kMaxFrame) return make_error(Errc::kInvalidPolicy, "frame too large");
      want = 4 + len;
      have_header = true;
    }
  }
  f.payload = buf.substr(4);
  return f;
}

}  // namespace vigil::wire
