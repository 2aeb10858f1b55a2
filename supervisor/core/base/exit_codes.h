// Every exit status vigil itself produces. A sandboxed command's own status is passed
// through unchanged (0-125, or 128+N for signal N); vigil's own failures use the codes
// below, chosen to match the conventions of env(1)/timeout(1) where they overlap.
#pragma once

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

}  // namespace vigil
