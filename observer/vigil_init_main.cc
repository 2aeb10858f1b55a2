// vigil-init: the program bwrap runs as PID 1 of the sandbox instead of the command.
//   vigil-init [--proxy-socket PATH] [--http-socket PATH] [--socks-socket PATH]
//              [--events-fd N [--overflow drop] [--no-sync-wake-up]]
//              [--program-fd N] [--rlimit R=N]... [--refuse-create PATH ORIGIN]...
//              [--refuse-glob PATTERN ORIGIN]... [--hide PATH ORIGIN]... [--show PATH ORIGIN]...
//              [--unix-broker] [--unix-socket PATH]... [--command-fd N]
//              -- CMD ARGS...
// With --command-fd (a warm session's spare sandbox, observer/command_handoff.h) the
// command, its environment and its stdio come over N once everything else is set up, and
// CMD ARGS are only a placeholder.
// It reads the mount table (which the supervisor checked against the plan before bwrap
// let this program run: supervisor/launch/launch_check.h), takes the seccomp program (from the
// supervisor over --program-fd, or compiled here), makes itself non-dumpable, forks the worker
// (which installs the program and execs CMD) and supervises it (observer/pid1.h).
#include <fcntl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/kernel_seccomp.h"
#include "filters/sandbox_program.h"
#include "observer/command_handoff.h"
#include "observer/mount_table.h"
#include "observer/notify_loop.h"
#include "observer/pid1.h"
#include "observer/proc_dir.h"
#include "observer/worker.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"

namespace {

// "nproc=N", "data=N" or "fsize=N" (decimal).
bool parse_rlimit(const char* arg, std::vector<vigil::init::WorkerSpec::Rlimit>* out) {
  static constexpr struct {
    const char* name;
    int resource;
  } kNames[] = {{"nproc=", RLIMIT_NPROC}, {"data=", RLIMIT_DATA}, {"fsize=", RLIMIT_FSIZE}};
  for (const auto& n : kNames) {
    const std::size_t len = std::strlen(n.name);
    if (std::strncmp(arg, n.name, len) != 0) continue;
    const char* digits = arg + len;
    if (*digits < '0' || *digits > '9') return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(digits, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    out->push_back({n.resource, static_cast<rlim_t>(v)});
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* proxy_socket = nullptr;
  // An external proxy the user runs (network.httpProxyPort / socksProxyPort): that
  // bridge goes to the supervisor's relay to it instead of to vigil's proxy.
  const char* http_socket = nullptr;
  const char* socks_socket = nullptr;
  int events_fd = -1;
  int program_fd = -1;
  int command_fd = -1;
  std::vector<vigil::init::WorkerSpec::Rlimit> rlimits;
  vigil::init::ObserverOptions observer_options;
  {
    utsname u{};
    observer_options.gatekeeper = ::uname(&u) == 0 && vigil::kernel_can_gatekeep(u.release);
  }
  int cmd = 1;
  while (cmd < argc && std::strcmp(argv[cmd], "--") != 0) {
    if (std::strcmp(argv[cmd], "--proxy-socket") == 0 && cmd + 1 < argc) {
      proxy_socket = argv[cmd + 1];
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--http-socket") == 0 && cmd + 1 < argc) {
      http_socket = argv[cmd + 1];
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--socks-socket") == 0 && cmd + 1 < argc) {
      socks_socket = argv[cmd + 1];
      cmd += 2;
      continue;
    }
    // enableWeakerNestedSandbox: /proc is the container's, not this namespace's.
    if (std::strcmp(argv[cmd], "--outer-proc") == 0) {
      vigil::init::set_outer_proc(true);
      cmd += 1;
      continue;
    }
    if (std::strcmp(argv[cmd], "--events-fd") == 0 && cmd + 1 < argc) {
      events_fd = std::atoi(argv[cmd + 1]);
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--program-fd") == 0 && cmd + 1 < argc) {
      program_fd = std::atoi(argv[cmd + 1]);
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--command-fd") == 0 && cmd + 1 < argc) {
      command_fd = std::atoi(argv[cmd + 1]);
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--overflow") == 0 && cmd + 1 < argc &&
        std::strcmp(argv[cmd + 1], "drop") == 0) {
      observer_options.overflow = vigil::init::Overflow::kDrop;
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--capture-fd") == 0 && cmd + 1 < argc) {
      observer_options.capture_fd = std::atoi(argv[cmd + 1]);
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--capture-caps") == 0 && cmd + 1 < argc) {
      // FILE:SESSION in bytes (vigil.capture).
      unsigned long long file = 0, session = 0;
      if (std::sscanf(argv[cmd + 1], "%llu:%llu", &file, &session) != 2) {
        std::fprintf(stderr, "vigil-init: --capture-caps expects FILE:SESSION in bytes\n");
        return vigil::to_int(vigil::ExitCode::kSandboxSetup);
      }
      observer_options.capture_caps = {file, session};
      cmd += 2;
      continue;
    }
    // --rlimit nproc|data|fsize=N: a cap set on the command before its exec.
    if (std::strcmp(argv[cmd], "--rlimit") == 0 && cmd + 1 < argc) {
      if (!parse_rlimit(argv[cmd + 1], &rlimits)) {
        std::fprintf(stderr, "vigil-init: bad --rlimit %s\n",
                     vigil::escape_text(argv[cmd + 1]).c_str());
        return vigil::to_int(vigil::ExitCode::kSandboxSetup);
      }
      cmd += 2;
      continue;
    }
    if (std::strcmp(argv[cmd], "--refuse-create") == 0 && cmd + 2 < argc && argv[cmd + 1][0] == '/') {
      observer_options.refused_names.push_back({argv[cmd + 1], argv[cmd + 2]});
      cmd += 3;
      continue;
    }
    if (std::strcmp(argv[cmd], "--refuse-glob") == 0 && cmd + 2 < argc && argv[cmd + 1][0] == '/') {
      observer_options.refused_globs.push_back({argv[cmd + 1], argv[cmd + 2]});
      cmd += 3;
      continue;
    }
    // vigil.observer.reads: the read layout (observer/hidden_reads.h), hidden paths and
    // paths bound back in below them.
    if ((std::strcmp(argv[cmd], "--hide") == 0 || std::strcmp(argv[cmd], "--show") == 0) &&
        cmd + 2 < argc && argv[cmd + 1][0] == '/') {
      observer_options.hidden.push_back(
          {argv[cmd + 1], argv[cmd + 2], std::strcmp(argv[cmd], "--hide") == 0});
      cmd += 3;
      continue;
    }
    // --unix-socket PATH|@NAME: one entry of network.allowUnixSockets (observer/unix_broker.h).
    if (std::strcmp(argv[cmd], "--unix-socket") == 0 && cmd + 1 < argc && argv[cmd + 1][0] != '\0') {
      observer_options.unix_sockets.push_back(argv[cmd + 1]);
      observer_options.unix_broker = true;
      cmd += 2;
      continue;
    }
    // --unix-broker: the broker's filter is installed, with or without a listed path.
    if (std::strcmp(argv[cmd], "--unix-broker") == 0) {
      observer_options.unix_broker = true;
      cmd += 1;
      continue;
    }
    if (std::strcmp(argv[cmd], "--no-sync-wake-up") == 0) {
      observer_options.sync_wake_up = false;
      cmd += 1;
      continue;
    }
    std::fprintf(stderr, "vigil-init: unknown option %s\n", vigil::escape_text(argv[cmd]).c_str());
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  if (cmd >= argc - 1) {
    std::fprintf(stderr,
                 "usage: vigil-init [--proxy-socket PATH] [--events-fd N] [--program-fd N] -- "
                 "CMD ARGS...\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  if ((program_fd != -1 && program_fd < 3) || (program_fd >= 0 && program_fd == events_fd)) {
    std::fprintf(stderr, "vigil-init: --program-fd must be a descriptor of its own, above 2\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  // Whatever descriptors reached us through bwrap (anything vigil's own caller leaked)
  // stop here, but the supervisor's event and program pipes: the command gets stdin,
  // stdout, stderr and nothing else (the event pipe is close-on-exec from here on, the
  // program pipe is closed once read).
  const int capture_fd = observer_options.capture_fd;
  if (capture_fd != -1 && (capture_fd < 3 || capture_fd == events_fd || capture_fd == program_fd)) {
    std::fprintf(stderr, "vigil-init: --capture-fd must be a descriptor of its own, above 2\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  if (command_fd != -1 && (command_fd < 3 || command_fd == events_fd ||
                          command_fd == program_fd || command_fd == capture_fd)) {
    std::fprintf(stderr, "vigil-init: --command-fd must be a descriptor of its own, above 2\n");
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  const int kept[] = {events_fd, program_fd, capture_fd, command_fd};
  vigil::close_fds_from_except(3, kept);
  // The store of pre-images is vigil-init's alone: never inherited by the command.
  if (capture_fd >= 3) ::fcntl(capture_fd, F_SETFD, FD_CLOEXEC);
  // The observer judges writes by the table the kernel will apply.
  std::optional<std::vector<vigil::init::Mount>> mount_table;
  if (events_fd >= 0) {
    auto r = vigil::init::load_mount_table();
    if (!r) {
      vigil::print_error("refusing to run the command: " + r.error().message);
      return vigil::to_int(vigil::ExitCode::kSandboxSetup);
    }
    mount_table = std::move(r).value();
  }
  if (events_fd >= 3) ::fcntl(events_fd, F_SETFD, FD_CLOEXEC);
  // A supervisor that went away must cost us an EPIPE, not our life (we are PID 1).
  ::signal(SIGPIPE, SIG_IGN);
  // The bridges are listening before the worker exists: its first connect succeeds.
  std::optional<vigil::init::Bridge> bridge;
  if (proxy_socket != nullptr) {
    auto b = vigil::init::Bridge::listen(
        {{vigil::init::kHttpProxyPort, http_socket != nullptr ? http_socket : proxy_socket},
         {vigil::init::kSocksProxyPort, socks_socket != nullptr ? socks_socket : proxy_socket}});
    if (!b) {
      vigil::print_error("cannot start the proxy bridge: " + b.error().message);
      return vigil::to_int(vigil::ExitCode::kSandboxSetup);
    }
    bridge.emplace(std::move(b).value());
  }
  // One combined program (the worker's tables, plus the observer's when it is on): one
  // seccomp() call and one filter run per syscall. The tables name disjoint syscalls and
  // agree on defaults, which compile_combined checks, so the answers equal the stack's.
  // Under `vigil run` the supervisor compiled it while bwrap built the sandbox, and its
  // arrival is our go (filters/sandbox_program.h): nothing of the command runs before
  // the session log and proxy are ready, or at all if the supervisor gave up. Run alone,
  // vigil-init compiles it itself. Either way before the fork: the worker only installs.
  auto program = [&]() -> vigil::Result<std::vector<sock_filter>> {
    if (program_fd < 0)
      return vigil::sandbox_program(events_fd >= 0, !observer_options.unix_broker
                                                        ? vigil::UnixSockets::kBlocked
                                                        : vigil::UnixSockets::kBrokered,
                                    !observer_options.hidden.empty());
    vigil::UniqueFd from(program_fd);
    return vigil::read_program(from.get());
  }();
  if (!program) {
    vigil::print_error(std::string("cannot ") + (program_fd < 0 ? "build" : "receive") +
                       " the seccomp filters: " + program.error().message);
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  const sock_fprog fprog = vigil::as_fprog(*program);
  vigil::init::WorkerSpec spec;
  spec.argv = argv + cmd + 1;
  // A spare: everything above is ready; now the command (the channel then closes). Its
  // stdio replaces ours (what we print from here on goes where the command's does, as
  // when bwrap gave it to us), its environment replaces ours (what bwrap would have set).
  std::vector<std::string> handed_strings;
  std::vector<char*> handed_argv, handed_env;
  if (command_fd >= 0) {
    auto got = [&] {
      vigil::UniqueFd channel(command_fd);
      return vigil::init::receive_handed_command(channel.get());
    }();
    if (!got) {
      // Discarded before it was used: nothing ran, nothing to say.
      if (got.error().code == vigil::Errc::kNotFound) return vigil::to_int(vigil::ExitCode::kSandboxSetup);
      vigil::print_error("refusing to run the command: " + got.error().message);
      return vigil::to_int(vigil::ExitCode::kSandboxSetup);
    }
    for (int i = 0; i < 3; ++i) {
      if (got->stdio[i] && ::dup2(got->stdio[i].get(), i) != i) {
        vigil::print_error("refusing to run the command: cannot take its stdio");
        return vigil::to_int(vigil::ExitCode::kSandboxSetup);
      }
    }
    handed_strings = std::move(got->cmd.argv);
    const std::size_t argc_handed = handed_strings.size();
    handed_strings.insert(handed_strings.end(), got->cmd.env.begin(), got->cmd.env.end());
    for (std::size_t i = 0; i < handed_strings.size(); ++i)
      (i < argc_handed ? handed_argv : handed_env).push_back(handed_strings[i].data());
    handed_argv.push_back(nullptr);
    handed_env.push_back(nullptr);
    spec.argv = handed_argv.data();
    environ = handed_env.data();
  }
  spec.rlimits = rlimits;

  // The observer: its listener comes back from the install and is handed over a socketpair.
  vigil::UniqueFd channel_ours, channel_worker;
  vigil::init::ObserverSetup observer;
  if (events_fd >= 0) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      std::perror("vigil-init: socketpair");
      return vigil::to_int(vigil::ExitCode::kSandboxSetup);
    }
    channel_ours.reset(sv[0]);
    channel_worker.reset(sv[1]);
    spec.notify = &fprog;
    spec.notify_flags = SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    spec.listener_channel = channel_worker.get();
    observer.listener_channel = channel_ours.get();
    observer.events_fd = events_fd;
    observer.options = observer_options;
    observer.mounts = mount_table ? &*mount_table : nullptr;
  } else {
    spec.filters = std::span<const sock_fprog>(&fprog, 1);
  }
  return vigil::init::run_as_pid1([&] { return vigil::init::run_worker(spec); },
                                  bridge ? &*bridge : nullptr,
                                  events_fd >= 0 ? &observer : nullptr);
}
