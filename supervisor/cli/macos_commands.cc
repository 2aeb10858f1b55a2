// The CLI's macOS-only parts: `vigil run --sandbox off` and `vigil probe` (Linux's are in
// run_command.cc and probe_command.cc). BUILT ONLY ON APPLE and never compiled by the
// Linux CI (tools/check_macos_syntax.sh parses it).
#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "seatbelt/sandbox_exec_argv.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/launch/macos_launch.h"

namespace vigil {

// `vigil run --sandbox off` on macOS (run_command.cc warns first).
int run_unconfined(const std::vector<std::string>& command) {
  macos::ignore_forwarded_signals(true);
  int err = 0;
  auto child = macos::spawn(command, macos::merged_environment({}), {}, &err);
  if (!child) {
    macos::ignore_forwarded_signals(false);
    print_error(child.error().message);
    return err == ENOENT ? to_int(ExitCode::kNotFound) : to_int(ExitCode::kCannotExec);
  }
  auto waited = macos::wait_forwarding(child->pid, nullptr, {}, false);
  macos::ignore_forwarded_signals(false);
  if (!waited) return report(waited.error());
  return exit_code_for_wait_status(waited->status);
}

// `vigil probe` on macOS: the two programs a session needs (probe_command.cc is Linux's).
int cmd_probe(bool json) {
  const bool sandbox_exec = ::access(kSandboxExecPath, X_OK) == 0;
  const bool log = ::access("/usr/bin/log", X_OK) == 0;
  if (json) {
    const nlohmann::json j = {{"platform", "macos"}, {"sandbox_exec", sandbox_exec}, {"log", log}};
    // display-safe: JSON dumped ensure_ascii: no byte outside printable ASCII
    std::printf("%s\n", j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    // display-safe: fixed strings
    std::printf("sandbox-exec: %s\n",
                sandbox_exec ? kSandboxExecPath : "MISSING (vigil run cannot work)");
    // display-safe: fixed strings
    std::printf("log:          %s\n",
                log ? "/usr/bin/log (violations are read with `log stream`; it may need an admin "
                      "user)"
                    : "MISSING (violations will not be reported)");
  }
  return sandbox_exec ? 0 : to_int(ExitCode::kSandboxSetup);
}

}  // namespace vigil
