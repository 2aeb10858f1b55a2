// A pre-started sandbox's command (the warm sessions' spare, supervisor/command/spare_sandbox.h):
// vigil-init is started with --command-fd N (one end of a unix socketpair), sets up
// everything it sets up for a command (the mount table, the bridges, the seccomp program)
// and then waits on N for the command itself: its argv, its whole environment and the
// descriptors it gets as 0, 1 and 2. Only the supervisor holds the other end (a
// socketpair has no name to connect to), so nothing else can hand a spare a command.
//
// On the wire: a header (magic, which of 0/1/2 come as SCM_RIGHTS, the payload's length)
// carrying the descriptors, then the payload: the argument count in decimal, the
// arguments and the environment entries, each NUL-terminated.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

struct HandedCommand {
  std::vector<std::string> argv;  // non-empty
  std::vector<std::string> env;   // "NAME=value", the command's whole environment
};

// At most this many payload bytes (far above any argv + environment execve takes).
inline constexpr std::size_t kMaxHandoffPayload = std::size_t{16} << 20;

// Pure: the payload and back. decode refuses an empty argv, a count that does not match,
// an entry without its NUL and an environment entry without '='.
std::string encode_handoff_payload(const HandedCommand& cmd);
Result<HandedCommand> decode_handoff_payload(std::string_view payload);

// The supervisor's side: sends the command with the descriptors in `stdio` that are >= 0
// (as the command's 0, 1, 2; a -1 keeps what vigil-init has there).
Result<void> send_handed_command(int channel, const HandedCommand& cmd,
                                 const std::array<int, 3>& stdio);

// vigil-init's side: blocks for the command. Errc::kNotFound when the channel closed with
// nothing sent (the spare was discarded).
struct ReceivedCommand {
  HandedCommand cmd;
  std::array<UniqueFd, 3> stdio;  // empty where none came
};
Result<ReceivedCommand> receive_handed_command(int channel);

}  // namespace vigil::init
