// vigil-init: the program bwrap runs as PID 1 of the sandbox instead of the command.
//   vigil-init [--proxy-socket PATH] -- CMD ARGS...
// It compiles the seccomp filters, makes itself non-dumpable, forks the worker (which
// installs the filters and execs CMD) and supervises it (observer/pid1.h).
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "observer/pid1.h"
#include "observer/worker.h"
#include "supervisor/core/exit_codes.h"
#include "supervisor/core/unique_fd.h"

int main(int argc, char** argv) {
  // Whatever descriptors reached us through bwrap (anything vigil's own caller leaked)
  // stop here: the command gets stdin, stdout, stderr and nothing else.
  vigil::close_fds_from(3);
  const char* proxy_socket = nullptr;
  int cmd = 1;
  while (cmd < argc && std::strcmp(argv[cmd], "--") != 0) {
    if (std::strcmp(argv[cmd], "--proxy-socket") == 0 && cmd + 1 < argc) {
      proxy_socket = argv[cmd + 1];
      cmd += 2;
      continue;
    }
    std::fprintf(stderr, "vigil-init: unknown option %s\n", argv[cmd]);
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  if (cmd >= argc - 1) {
    std::fprintf(stderr, "usage: vigil-init [--proxy-socket PATH] -- CMD ARGS...\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  // The bridges are listening before the worker exists: its first connect succeeds.
  std::optional<vigil::init::Bridge> bridge;
  if (proxy_socket != nullptr) {
    auto b = vigil::init::Bridge::listen({vigil::init::kHttpProxyPort, vigil::init::kSocksProxyPort},
                                         proxy_socket);
    if (!b) {
      std::fprintf(stderr, "vigil: cannot start the proxy bridge: %s\n", b.error().message.c_str());
      return vigil::to_int(vigil::ExitCode::kSandboxSetup);
    }
    bridge.emplace(std::move(b).value());
  }
  vigil::init::WorkerSpec spec;
  spec.argv = argv + cmd + 1;
  return vigil::init::run_as_pid1([&] { return vigil::init::run_worker(spec); },
                                  bridge ? &*bridge : nullptr);
}
