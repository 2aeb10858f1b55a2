// What a launch gives back and what flows out of the sandbox while it runs: the types that
// the launch (sandbox_launch.h) and its wait (launch_wait.h) share, in a header of their
// own so that neither includes the other.
#pragma once

#include <sys/types.h>

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/launch/session_netns.h"

namespace vigil {

struct LaunchResult {
  int exit_code;  // the command's status: 0-255, 128+N for signal N
  // The cap vigil ended the command at: "timeout" (its deadline), or what `check_limits`
  // said ("pids", "memory"); "" when the command ended on its own.
  std::string limit;
};

enum class OutputStream { kStdout, kStderr };

// What flows back out of the sandbox while the command runs, besides its exit status.
struct LaunchIo {
  // The observer's event lines. When set, its write end is passed into the sandbox (for
  // vigil-init's --events-fd); every line read from it goes to `on_event_line`, until
  // the pipe closes.
  Pipe* events = nullptr;
  std::function<void(std::string_view)> on_event_line;
  // Called with true before the lines and output chunks one wake read are passed on, and
  // with false after: what they log can go to the log in one write (SessionLog's held
  // writes) rather than one per record.
  std::function<void(bool)> hold_records;
  // Capture: the command's stdout and stderr are pipes that the supervisor reads, and
  // every chunk goes to `on_output` as it arrives (which forwards and logs it). It
  // returns false when its destination is gone (a closed stdout): that pipe is then
  // closed, so the command sees EPIPE/SIGPIPE exactly as it would without vigil.
  // Without capture the command inherits the supervisor's stdout and stderr.
  bool capture_output = false;
  std::function<bool(OutputStream, std::string_view)> on_output;
  // Optional (an eventfd the caller owns): written each time a signal is forwarded to the
  // command. An on_output that waits for room in its destination watches it and gives up
  // (write_all_to's stop_fd), so that vigil ends with the command even when nobody reads
  // its output.
  int interrupted_fd = -1;
  // With capture: one pipe for both of the command's stdout and stderr (every chunk then
  // comes as kStdout), so that their interleaving is exactly the program's. For when both
  // go to the same open file anyway (2>&1): two pipes would reorder them.
  bool merge_output = false;
  // Descriptors handed into the sandbox as they are (their numbers are in the argv, e.g.
  // vigil-init's --program-fd). The caller owns them and closes its copies when it wants:
  // the program pipe's read end stays open here until the program is written, so that a
  // sandbox that died early still takes the write (no EPIPE, no SIGPIPE an embedder may
  // not ignore) and the launch reports bwrap's own failure.
  std::vector<int> pass_fds;
  // Runs once bwrap has started, while it builds the sandbox, before the wait: the
  // session's set-up that the argv does not depend on (the log, the proxy, the seccomp
  // program, whose arrival lets vigil-init start the command). On an error it must have
  // closed the program pipe unwritten: vigil-init then never starts the command, the
  // sandbox ends on its own, and once bwrap has exited the error is returned.
  std::function<Result<void>()> after_spawn;
  // A session's command (supervisor/agent/session_server.h): bwrap's environment (null: this
  // process's), the fds it gets as 0, 1 and 2 (1 and 2 only without capture), and a
  // call with bwrap's pid once it runs (to end it with the session).
  const std::vector<std::string>* env = nullptr;
  std::array<int, 3> stdio = {0, 1, 2};
  std::function<void(pid_t)> on_spawned;
  // The launch check (supervisor/launch/launch_gate.h): bwrap got --block-fd with the read end
  // of a pipe whose write end is `release`. Once bwrap has said which pid the sandbox is,
  // `before_release` runs with it: on success one byte to `release` lets bwrap go on to
  // exec vigil-init; on an error the sandbox is killed, nothing in it having run.
  UniqueFd* release = nullptr;
  std::function<Result<void>(pid_t)> before_release;
  // A spare sandbox (supervisor/command/spare_sandbox.h): runs once the sandbox is released, before
  // the wait (whose clock, timeout_ms's included, starts after it): blocks until the
  // command is handed over. On an error bwrap is killed and reaped, and that is returned.
  std::function<Result<void>()> before_wait;
  // Wall-clock limit from the spawn (< 0: none): at it the sandbox's PID 1 is killed,
  // which ends every process in its PID namespace, and the result says "timeout".
  int timeout_ms = -1;
  // Resource caps (supervisor/launch/resource_caps.h): called on the launching thread just before
  // and just after bwrap is spawned (the spawn is born in the command's cgroup v1
  // hierarchies), and every `check_every_ms`
  // while it runs and once at its end with the sandbox's PID 1 (<= 0 before it is known):
  // a non-empty answer names the cap that was hit, and the sandbox is killed.
  std::function<Result<void>()> enter_caps;
  std::function<void()> leave_caps;
  std::function<std::string(pid_t)> check_limits;
  int check_every_ms = -1;
  // An agent session's command: bwrap is spawned inside the session's network namespace
  // (supervisor/launch/session_netns.h) and given --share-net; none (net_fd -1): bwrap
  // makes the sandbox's own.
  NetnsJoin join;
};

}  // namespace vigil
