// Linux's backend of the session orchestrator (session_orchestrator.h): bwrap, vigil-init
// and the observer, by run_sandboxed(); run_session() over it. macOS's is
// seatbelt_backend.cc.
#include "supervisor/orchestrator/session_runner.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <optional>

#include "supervisor/command/sandboxed_command.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/orchestrator/session_orchestrator.h"

namespace vigil {

namespace {

// Linux's part of a session (session_orchestrator.h): bwrap, vigil-init and the
// observer, by run_sandboxed(), with the output captured or inherited as asked.
class BwrapBackend final : public SessionBackend {
 public:
  std::string_view name() const override { return "bwrap"; }
  Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                               const SessionCallbacks& callbacks) override {
    // Forwarded signals wake a default writer that waits for a reader (SignalRelay,
    // launch/signal_relay.h): vigil ends with the command even when nobody reads its output.
    UniqueFd interrupted(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!interrupted) return system_error("eventfd");
    cmd.interrupted_fd = interrupted.get();
    const int stop_fd = interrupted.get();
    // 2>&1 into vigil: the command gets one pipe for both, so the order is its own.
    cmd.merge_output = !callbacks.on_output && same_open_file(STDOUT_FILENO, STDERR_FILENO);
    // Our own non-blocking descriptions of stdout and stderr (write_all.h): whole chunks,
    // not 4 KiB slices, when they are pipes, terminals or devices.
    const UniqueFd out_twin = callbacks.on_output ? UniqueFd() : nonblocking_twin(STDOUT_FILENO);
    const UniqueFd err_twin = callbacks.on_output ? UniqueFd() : nonblocking_twin(STDERR_FILENO);
    const int out_fd = out_twin ? out_twin.get() : STDOUT_FILENO;
    const int err_fd = err_twin ? err_twin.get() : STDERR_FILENO;
    auto forward = callbacks.on_output
                       ? callbacks.on_output
                       : [stop_fd, out_fd, err_fd](OutputStream s, std::string_view bytes) {
                           return write_all_to(s == OutputStream::kStdout ? out_fd : err_fd,
                                               bytes, stop_fd);
                         };
    return run_sandboxed(cmd, sink, forward);
  }
};

}  // namespace

Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  BwrapBackend backend;
  return orchestrate_session(request, callbacks, backend);
}

}  // namespace vigil
