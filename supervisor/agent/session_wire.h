// The session socket's wire format, between a thin client (`vigil run` in a session,
// `vigil session end`) and the session supervisor (supervisor/agent/session_server.h).
//
// A frame is a 4-byte big-endian length and that many bytes of one JSON object
// (at most kMaxFrame). A run request carries the client's stdin, stdout and stderr as
// SCM_RIGHTS on its frame. Byte strings (argv, env, cwd) need not be UTF-8: one that is
// not is {"b64": "..."}, as in the session log.
//
//   client -> server   {"op":"run","argv":[..],"cwd":"..","env":["K=V",..],"capture":true}
//                      {"op":"end"}
//   server -> client   {"exit_code":N,"violations":"<json line>"}   (run)
//                      {"error":"message","exit_code":N}            (nothing ran)
//                      {"ended":true}                                (end)
//
// Pure encoders/decoders (table-tested) plus two thin I/O calls.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::wire {

inline constexpr std::size_t kMaxFrame = 8u << 20;

struct RunRequest {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // "NAME=value"
  bool capture = true;
  bool operator==(const RunRequest&) const = default;
};

struct Reply {
  std::optional<std::string> error;  // nothing ran: the reason (and exit_code says how bad)
  int exit_code = 0;
  std::string violations;  // the violations JSON line ("" for an error)
  bool ended = false;      // the reply to "end"
  bool operator==(const Reply&) const = default;
};

enum class Op { kRun, kEnd };
struct Request {
  Op op = Op::kRun;
  RunRequest run;  // op == kRun
};

std::string encode(const Request& r);
std::string encode(const Reply& r);
Result<Request> decode_request(std::string_view json);
Result<Reply> decode_reply(std::string_view json);

// Sends one frame, with `fds` attached (none, or the run request's three).
Result<void> send_frame(int sock, const std::string& payload, const std::vector<int>& fds = {});
// Receives one frame and the fds that came with it (at most 3; any more are closed).
struct Frame {
  std::string payload;
  std::vector<UniqueFd> fds;
};
Result<Frame> recv_frame(int sock);

}  // namespace vigil::wire
