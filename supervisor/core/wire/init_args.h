// vigil-init's command line: the one contract between the supervisor, which builds it
// (supervisor/command/sandboxed_command.cc and the launch builders that add their part),
// and vigil-init, which parses it (observer/vigil_init_main.cc). Pure: an options struct
// to argv and back, each flag named once in a table (init_args.cc) with the type of its
// value, so the two sides cannot drift apart.
//
//   vigil-init [OPTION]... -- CMD ARGS...
//
// Parsing is strict and fails closed: a number is decimal digits only (no sign, no
// space, no overflow), a descriptor is above 2 and not shared with another, a path that
// names something to refuse or hide is absolute, an unknown flag is an error. Every error
// names the flag, the bad value (escaped) and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::wire {

// --refuse-create PATH ORIGIN, --refuse-glob PATTERN ORIGIN: PATH is absolute and real;
// ORIGIN is the policy entry it came from ("filesystem.denyWrite[0]").
struct NamedPath {
  std::string path;
  std::string origin;
  bool operator==(const NamedPath&) const = default;
};

// --hide PATH ORIGIN / --show PATH ORIGIN, in order: the read layout
// (observer/hidden_reads.h) where a --show re-binds a path below a --hide.
struct ReadEntry {
  std::string path;
  std::string origin;
  bool hides = true;
  bool operator==(const ReadEntry&) const = default;
};

// --rlimit NAME=VALUE: NAME is one of rlimit_names().
struct Rlimit {
  std::string name;
  std::uint64_t value = 0;
  bool operator==(const Rlimit&) const = default;
};

// --capture-caps FILE:SESSION, in bytes (vigil.capture).
struct CaptureCaps {
  std::uint64_t file_bytes = 0;
  std::uint64_t session_bytes = 0;
  bool operator==(const CaptureCaps&) const = default;
};

struct InitArgs {
  std::string proxy_socket;  // --proxy-socket PATH: the bridges' target ("" none)
  std::string http_socket;   // --http-socket PATH: the HTTP bridge's own target (external proxy)
  std::string socks_socket;  // --socks-socket PATH: the SOCKS bridge's own target
  // --loopback ADDR: the 127/8 address the bridges and the DNS stub listen on (an agent
  // session's command: its own in the session's shared namespace); "": 127.0.0.1.
  std::string loopback;
  bool outer_proc = false;   // --outer-proc: /proc is the container's (enableWeakerNestedSandbox)
  int events_fd = -1;        // --events-fd N: the observer's event pipe (-1: no observer)
  int program_fd = -1;       // --program-fd N: the seccomp program arrives here (-1: compile it)
  int capture_fd = -1;       // --capture-fd N: the pre-image store directory (-1: no capture)
  int command_fd = -1;       // --command-fd N: a spare's command arrives here (observer/command_handoff.h)
  int env_fd = -1;           // --env-fd N: the command's environment (wire/env_block.h)
  int net_capture_fd = -1;   // --net-capture-fd N: the proxy's capture listener, O_PATH
                             // (vigil.network.capture: observer/inet_broker.h; -1: off)
  std::optional<CaptureCaps> capture_caps;  // --capture-caps FILE:SESSION
  std::vector<NamedPath> capture_skip;      // --capture-skip PATH ORIGIN, repeated
  bool overflow_drop = false;               // --overflow drop (default: block)
  bool no_sync_wake_up = false;             // --no-sync-wake-up
  std::vector<Rlimit> rlimits;              // --rlimit NAME=VALUE, repeated
  std::vector<NamedPath> refuse_create;     // --refuse-create PATH ORIGIN, repeated
  std::vector<NamedPath> refuse_glob;       // --refuse-glob PATTERN ORIGIN, repeated
  std::vector<ReadEntry> reads;             // --hide / --show PATH ORIGIN, repeated, in order
  bool unix_broker = false;                 // --unix-broker: the broker's filter is installed
  std::vector<std::string> unix_sockets;    // --unix-socket PATH|@NAME, repeated
  std::vector<std::string> command;         // after "--": the command and its arguments
  bool operator==(const InitArgs&) const = default;
};

// The options only (no "--", no command), in the table's order: what a builder adds to
// the command line for its part (a flag whose field is unset or default is left out).
std::vector<std::string> option_args(const InitArgs& args);

// The whole command line after argv[0]: option_args(), "--", the command.
std::vector<std::string> to_argv(const InitArgs& args);

// The inverse of to_argv(): `args` is argv without argv[0]. Errc::kInvalidPolicy with a
// message naming the flag on an unknown flag, a missing or malformed value, two options
// sharing one descriptor, or a missing command.
Result<InitArgs> parse(std::span<const char* const> args);

// "nproc", "data", "fsize": the names --rlimit accepts.
std::span<const std::string_view> rlimit_names();

// One line per flag, for vigil-init's usage message.
std::string usage();

}  // namespace vigil::wire
