// Every exit status vigil itself produces. A sandboxed command's own status is passed
// through unchanged (0-125, or 128+N for signal N); vigil's own failures use the codes
// below, chosen to match the conventions of env(1)/timeout(1) where they overlap.
#pragma once

#include <sys/wait.h>

#include "supervisor/core/base/result.h"

namespace vigil {

enum class ExitCode : int {
  kOk = 0,
  kUsage = 2,           // bad command line or bad settings file: nothing was run
  kSandboxSetup = 125,  // vigil could not build the sandbox (bwrap missing, namespaces refused)
  kCannotExec = 126,    // the command was found but could not be executed
  kNotFound = 127,      // the command was not found
};

constexpr int to_int(ExitCode c) { return static_cast<int>(c); }

// 128+N for a command killed by signal N, as shells report it.
constexpr int exit_code_for_signal(int sig) { return 128 + sig; }

// A waitpid() status as a shell reports it: the exit status, 128+N for signal N; any
// other state (it cannot be one after a blocking waitpid) counts as a setup failure.
inline int exit_code_for_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return exit_code_for_signal(WTERMSIG(status));
  return to_int(ExitCode::kSandboxSetup);
}

// The exit status for a kind of error vigil reports itself: a bad policy or refused
// input is the caller's to fix (kUsage); anything else, such as a machine that cannot
// sandbox, is a setup failure (kSandboxSetup).
inline int exit_code_for(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidPolicy:
    case Errc::kRefused:
      return to_int(ExitCode::kUsage);
    default:
      return to_int(ExitCode::kSandboxSetup);
  }
}

}  // namespace vigil
