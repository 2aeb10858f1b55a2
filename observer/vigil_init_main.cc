// vigil-init: the program bwrap runs as PID 1 of the sandbox instead of the command.
//   vigil-init -- CMD ARGS...
// It compiles the seccomp filters, makes itself non-dumpable, forks the worker (which
// installs the filters and execs CMD) and supervises it (observer/pid1.h).
#include <cstdio>
#include <cstring>
#include <vector>

#include "observer/pid1.h"
#include "observer/worker.h"
#include "supervisor/core/exit_codes.h"

int main(int argc, char** argv) {
  int cmd = 1;
  while (cmd < argc && std::strcmp(argv[cmd], "--") != 0) {
    std::fprintf(stderr, "vigil-init: unknown option %s\n", argv[cmd]);
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  if (cmd >= argc - 1) {
    std::fprintf(stderr, "usage: vigil-init -- CMD ARGS...\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  vigil::init::WorkerSpec spec;
  spec.argv = argv + cmd + 1;
  return vigil::init::run_as_pid1([&] { return vigil::init::run_worker(spec); });
}
