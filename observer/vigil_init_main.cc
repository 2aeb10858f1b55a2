// vigil-init: the program bwrap runs as PID 1 of the sandbox instead of the command.
//   vigil-init [OPTION]... -- CMD ARGS...
// Its options are one table shared with the supervisor that writes them
// (supervisor/core/wire/init_args.h; `vigil-init` with a bad option prints them all).
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
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
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
#include "supervisor/core/base/diagnostic_line.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/wire/env_block.h"
#include "supervisor/core/wire/init_args.h"

namespace {

// --rlimit's names (supervisor/core/wire/init_args.h) as the kernel's resources.
int rlimit_resource(const std::string& name) {
  if (name == "nproc") return RLIMIT_NPROC;
  if (name == "data") return RLIMIT_DATA;
  return RLIMIT_FSIZE;  // the wire accepts no name but these three
}

// The worker's resource limits (vigil.limits), as setrlimit() names them.
std::vector<vigil::init::WorkerSpec::Rlimit> rlimits_of(const vigil::wire::InitArgs& args) {
  std::vector<vigil::init::WorkerSpec::Rlimit> rlimits;
  for (const auto& r : args.rlimits)
    rlimits.push_back({rlimit_resource(r.name), static_cast<rlim_t>(r.value)});
  return rlimits;
}

// A command line that does not parse, through the one line writer (escaped, one line
// each): the message, then the usage.
void print_usage_error(const std::string& message) {
  vigil::write_diagnostic_line(vigil::LogLevel::kError, "vigil-init: " + message);
  const std::string usage = vigil::wire::usage();
  for (std::size_t at = 0; at < usage.size();) {
    const std::size_t nl = std::min(usage.find('\n', at), usage.size());
    if (nl > at) vigil::write_diagnostic_line(vigil::LogLevel::kError, usage.substr(at, nl - at));
    at = nl + 1;
  }
}

// Every descriptor named must be open: a pipe that did not arrive is a launch that went
// wrong, not an observer to run without. False (and said) when one is not.
bool descriptors_open(const vigil::wire::InitArgs& args) {
  for (const auto& [flag, fd] : {std::pair{"--events-fd", args.events_fd},
                                 std::pair{"--program-fd", args.program_fd},
                                 std::pair{"--capture-fd", args.capture_fd},
                                 std::pair{"--command-fd", args.command_fd},
                                 std::pair{"--env-fd", args.env_fd},
                                 std::pair{"--net-capture-fd", args.net_capture_fd}}) {
    if (fd != -1 && ::fcntl(fd, F_GETFD) == -1) {
      vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                   std::string("vigil-init: ") + flag + " " + std::to_string(fd) +
                                       " is not an open descriptor: " + std::strerror(errno));
      return false;
    }
  }
  return true;
}

// The observer's options, from the command line and the kernel.
vigil::init::ObserverOptions observer_options_of(const vigil::wire::InitArgs& args) {
  vigil::init::ObserverOptions observer_options;
  {
    utsname u{};
    observer_options.gatekeeper = ::uname(&u) == 0 && vigil::kernel_can_gatekeep(u.release);
  }
  if (args.overflow_drop) observer_options.overflow = vigil::init::Overflow::kDrop;
  observer_options.sync_wake_up = !args.no_sync_wake_up;
  observer_options.capture_fd = args.capture_fd;
  if (args.capture_caps) {
    observer_options.capture_caps = {args.capture_caps->file_bytes,
                                     args.capture_caps->session_bytes};
  }
  for (const auto& s : args.capture_skip) observer_options.capture_skip.push_back(s.path);
  for (const auto& r : args.refuse_create)
    observer_options.refused_names.push_back({r.path, r.origin});
  for (const auto& g : args.refuse_glob)
    observer_options.refused_globs.push_back({g.path, g.origin});
  // vigil.observer.reads: the read layout (observer/hidden_reads.h), hidden paths and
  // paths bound back in below them.
  for (const auto& h : args.reads) observer_options.hidden.push_back({h.path, h.origin, h.hides});
  // network.allowUnixSockets (observer/unix_broker.h); a listed socket implies the broker.
  observer_options.unix_sockets = args.unix_sockets;
  observer_options.unix_broker = args.unix_broker || !args.unix_sockets.empty();
  // vigil.network.capture (observer/inet_broker.h): the proxy's capture listener is an
  // O_PATH descriptor of ours, reached through our own /proc/self/fd (never a path the
  // command can see).
  if (args.net_capture_fd >= 0) {
    observer_options.capture_route = std::make_shared<vigil::init::CaptureRoute>(
        "/proc/self/fd/" + std::to_string(args.net_capture_fd));
    observer_options.fake_names = std::make_shared<vigil::init::FakeNames>();
  }
  return observer_options;
}

// A spare's command, handed over `command_fd` (observer/command_handoff.h): its stdio
// replaces ours, its argv and environment the worker's. False when there is none to run
// (said, unless it was discarded before use: nothing ran, nothing to say).
bool take_handed_command(int command_fd, vigil::init::WorkerSpec* spec,
                         std::vector<std::string>* handed_strings,
                         std::vector<char*>* handed_argv, std::vector<char*>* handed_env) {
  auto got = [&] {
    vigil::UniqueFd channel(command_fd);
    return vigil::init::receive_handed_command(channel.get());
  }();
  if (!got) {
    // Discarded before it was used: nothing ran, nothing to say.
    if (got.error().code == vigil::Errc::kNotFound) return false;
    vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                 "refusing to run the command: " + got.error().message);
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (got->stdio[i] && ::dup2(got->stdio[i].get(), i) != i) {
      vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                   "refusing to run the command: cannot take its stdio");
      return false;
    }
  }
  handed_env->clear();
  *handed_strings = std::move(got->cmd.argv);
  const std::size_t argc_handed = handed_strings->size();
  handed_strings->insert(handed_strings->end(), got->cmd.env.begin(), got->cmd.env.end());
  for (std::size_t i = 0; i < handed_strings->size(); ++i)
    (i < argc_handed ? handed_argv : handed_env)->push_back((*handed_strings)[i].data());
  handed_argv->push_back(nullptr);
  handed_env->push_back(nullptr);
  spec->argv = handed_argv->data();
  environ = handed_env->data();
  return true;
}

// The command's environment (wire/env_block.h), read from `env_fd` (closed here).
bool read_command_env(int env_fd_number, std::vector<std::string>* out) {
  vigil::UniqueFd env_fd(env_fd_number);
  auto block = vigil::read_fd_text(env_fd.get(), vigil::wire::kMaxEnvBlock, "--env-fd");
  auto env = block ? vigil::wire::decode_env_block(*block)
                   : vigil::Result<std::vector<std::string>>(std::move(block).error());
  if (!env) {
    vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                 "refusing to run the command: " + env.error().message);
    return false;
  }
  *out = std::move(env).value();
  return true;
}

// The proxy bridges (observer/bridge.h), each to its own socket or the shared one.
// An external proxy the user runs (network.httpProxyPort / socksProxyPort): that bridge
// goes to the supervisor's relay to it instead of to vigil's proxy.
bool listen_bridge(const vigil::wire::InitArgs& args,
                   std::shared_ptr<vigil::init::CaptureRoute> capture,
                   std::optional<vigil::init::Bridge>* bridge) {
  const std::string& proxy = args.proxy_socket;
  auto b = vigil::init::Bridge::listen(
      {{vigil::init::kHttpProxyPort, args.http_socket.empty() ? proxy : args.http_socket},
       {vigil::init::kSocksProxyPort, args.socks_socket.empty() ? proxy : args.socks_socket}},
      std::move(capture), args.loopback.empty() ? "127.0.0.1" : args.loopback);
  if (!b) {
    vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                 "cannot start the proxy bridge: " + b.error().message);
    return false;
  }
  bridge->emplace(std::move(b).value());
  return true;
}

// The DNS stub (observer/dns_stub.h). One that cannot bind is said (the supervisor said
// why already) and the command runs on: its connects are still captured, only names do
// not resolve, as without capture.
bool start_dns(std::shared_ptr<vigil::init::FakeNames> names,
               std::shared_ptr<vigil::init::CaptureRoute> route, const std::string& address,
               std::optional<vigil::init::DnsStub>* dns) {
  auto stub = vigil::init::DnsStub::bind(std::move(names), std::move(route),
                                         address.empty() ? "127.0.0.1" : address);
  if (!stub) {
    vigil::write_diagnostic_line(vigil::LogLevel::kWarning,
                                 "vigil-init: no DNS stub: " + stub.error().message);
    return true;
  }
  dns->emplace(std::move(stub).value());
  return true;
}

// The combined seccomp program: received on `program_fd` (the supervisor's go), or built
// here when vigil-init runs alone. Said when it cannot be had.
std::optional<std::vector<sock_filter>> seccomp_program(
    int program_fd, bool observed, const vigil::init::ObserverOptions& observer_options) {
  auto program = [&]() -> vigil::Result<std::vector<sock_filter>> {
    if (program_fd < 0)
      return vigil::sandbox_program(observed, !observer_options.unix_broker
                                                  ? vigil::UnixSockets::kBlocked
                                                  : vigil::UnixSockets::kBrokered,
                                    !observer_options.hidden.empty(),
                                    observer_options.capture_route != nullptr);
    vigil::UniqueFd from(program_fd);
    return vigil::read_program(from.get());
  }();
  if (!program) {
    vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                 std::string("cannot ") + (program_fd < 0 ? "build" : "receive") +
                                     " the seccomp filters: " + program.error().message);
    return std::nullopt;
  }
  return std::move(program).value();
}

// The sandbox's mount table (observer/mount_table.h), which the observer judges by.
bool load_mounts(std::optional<std::vector<vigil::init::Mount>>* mount_table) {
  auto r = vigil::init::load_mount_table();
  if (!r) {
    vigil::write_diagnostic_line(vigil::LogLevel::kError,
                                 "refusing to run the command: " + r.error().message);
    return false;
  }
  *mount_table = std::move(r).value();
  return true;
}

// The observer: its listener comes back from the install and is handed over a socketpair
// (without an events pipe, the program is installed as a plain filter).
bool wire_observer(const vigil::wire::InitArgs& args,
                   const vigil::init::ObserverOptions& options,
                   const std::optional<std::vector<vigil::init::Mount>>& mount_table,
                   const sock_fprog& fprog, vigil::init::WorkerSpec* spec,
                   vigil::init::ObserverSetup* observer, vigil::UniqueFd* ours,
                   vigil::UniqueFd* worker) {
  if (args.events_fd < 0) {
    spec->filters = std::span<const sock_fprog>(&fprog, 1);
    return true;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("vigil-init: socketpair");
    return false;
  }
  ours->reset(sv[0]);
  worker->reset(sv[1]);
  spec->notify = &fprog;
  spec->notify_flags = SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  spec->listener_channel = worker->get();
  observer->listener_channel = ours->get();
  observer->events_fd = args.events_fd;
  observer->options = options;
  observer->mounts = mount_table ? &*mount_table : nullptr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // The supervisor wrote this command line with the same table (wire::to_argv): a value
  // that does not parse is a bug or a caller other than vigil, and either way nothing runs.
  auto parsed = vigil::wire::parse(
      std::span<const char* const>(argv + (argc > 0 ? 1 : 0), argc > 0 ? argc - 1 : 0));
  if (!parsed) {
    print_usage_error(parsed.error().message);
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  }
  const vigil::wire::InitArgs& args = *parsed;
  if (!descriptors_open(args)) return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  // The command's environment (wire/env_block.h): ours is vigil's own minimal one, the
  // command's is read now and becomes the worker's just before its exec.
  std::vector<std::string> command_env_strings;
  const bool have_command_env = args.env_fd >= 0;
  if (have_command_env && !read_command_env(args.env_fd, &command_env_strings))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  const int events_fd = args.events_fd;
  const int program_fd = args.program_fd;
  // enableWeakerNestedSandbox: /proc is the container's, not this namespace's.
  if (args.outer_proc) vigil::init::set_outer_proc(true);
  const std::vector<vigil::init::WorkerSpec::Rlimit> rlimits = rlimits_of(args);
  const vigil::init::ObserverOptions observer_options = observer_options_of(args);
  // Whatever descriptors reached us through bwrap (anything vigil's own caller leaked)
  // stop here, but the supervisor's event and program pipes: the command gets stdin,
  // stdout, stderr and nothing else (the event pipe is close-on-exec from here on, the
  // program pipe is closed once read).
  const int capture_fd = observer_options.capture_fd;
  const int kept[] = {events_fd, program_fd, capture_fd, args.command_fd,
                      args.net_capture_fd};  // --env-fd: read
  vigil::close_fds_from_except(3, kept);
  if (args.net_capture_fd >= 3) ::fcntl(args.net_capture_fd, F_SETFD, FD_CLOEXEC);
  // The store of pre-images is vigil-init's alone: never inherited by the command.
  if (capture_fd >= 3) ::fcntl(capture_fd, F_SETFD, FD_CLOEXEC);
  // The observer judges writes by the table the kernel will apply.
  std::optional<std::vector<vigil::init::Mount>> mount_table;
  if (events_fd >= 0 && !load_mounts(&mount_table))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  if (events_fd >= 3) ::fcntl(events_fd, F_SETFD, FD_CLOEXEC);
  // A supervisor that went away must cost us an EPIPE, not our life (we are PID 1).
  ::signal(SIGPIPE, SIG_IGN);
  // The bridges (and the DNS stub) listen before the worker exists: its first use works.
  std::optional<vigil::init::Bridge> bridge;
  if (!args.proxy_socket.empty() && !listen_bridge(args, observer_options.capture_route, &bridge))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  std::optional<vigil::init::DnsStub> dns;
  if (observer_options.fake_names &&
      !start_dns(observer_options.fake_names, observer_options.capture_route, args.loopback, &dns))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  // One combined program (the worker's tables, plus the observer's when it is on): one
  // seccomp() call and one filter run per syscall. The tables name disjoint syscalls and
  // agree on defaults, which compile_combined checks, so the answers equal the stack's.
  // Under `vigil run` the supervisor compiled it while bwrap built the sandbox, and its
  // arrival is our go (filters/sandbox_program.h): nothing of the command runs before
  // the session log and proxy are ready, or at all if the supervisor gave up. Run alone,
  // vigil-init compiles it itself. Either way before the fork: the worker only installs.
  auto program = seccomp_program(program_fd, events_fd >= 0, observer_options);
  if (!program) return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  const sock_fprog fprog = vigil::as_fprog(*program);
  vigil::init::WorkerSpec spec;
  spec.argv = argv + (argc - static_cast<int>(args.command.size()));  // the words after "--"
  spec.rlimits = rlimits;
  // A spare: everything above is ready; now the command (the channel then closes). Its
  // stdio replaces ours (what we print from here on goes where the command's does, as
  // when bwrap gave it to us), its environment replaces ours (what bwrap would have set).
  std::vector<std::string> handed_strings;
  std::vector<char*> handed_argv, handed_env;
  if (have_command_env) {
    for (auto& e : command_env_strings) handed_env.push_back(e.data());
    handed_env.push_back(nullptr);
    environ = handed_env.data();
  }
  if (args.command_fd >= 0 &&
      !take_handed_command(args.command_fd, &spec, &handed_strings, &handed_argv, &handed_env))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);

  vigil::UniqueFd channel_ours, channel_worker;
  vigil::init::ObserverSetup observer;
  if (!wire_observer(args, observer_options, mount_table, fprog, &spec, &observer, &channel_ours,
                     &channel_worker))
    return vigil::to_int(vigil::ExitCode::kSandboxSetup);
  return vigil::init::run_as_pid1([&] { return vigil::init::run_worker(spec); },
                                  bridge ? &*bridge : nullptr,
                                  events_fd >= 0 ? &observer : nullptr, dns ? &*dns : nullptr);
}
