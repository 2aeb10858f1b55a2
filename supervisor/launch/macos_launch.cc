// `vigil run` on macOS: the policy's Seatbelt profile applied by /usr/bin/sandbox-exec,
// the session proxy on a loopback TCP port (there is no bridge inside the sandbox), and
// the kernel's own deny reports, read through `log stream`, as the session's witness.
//
// BUILT ONLY ON APPLE and NEVER COMPILED by the Linux CI: everything here that can be
// pure lives in tested files (seatbelt/sandbox_exec_argv.h, seatbelt/log_parser.h,
// supervisor/session/macos_session.h, the TCP mode of supervisor/session/session_proxy.h). What is left
// is the I/O: spawn, kqueue, wait.
//
// Order of a session:
//   1. plan and profile (no scan: the profile denies the mandatory names by regex at any
//      depth), proxy on tcp:127.0.0.1:0, its port allowed in the profile;
//   2. `log stream` started and its banner awaited, so that the command's first denial
//      is not missed (the banner is printed as the stream is opened: a report in the
//      first milliseconds may still be lost, and the log system itself may drop
//      messages under load: counted as seatbelt.log_loss when it says so);
//   3. sandbox-exec spawned in its own process group with only fds 0-2
//      (POSIX_SPAWN_CLOEXEC_DEFAULT), SIGINT/TERM/HUP/QUIT forwarded to it;
//   4. after it exits, its process group is killed (there is no PID namespace: a
//      process that left the group with setsid() survives, see README), `log stream` is
//      read until quiet (reports arrive asynchronously) and then stopped;
//   5. the same annotation, --violations-fd JSON and session.end as on Linux: the session's
//      steps around these (id, log, end) are session_orchestrator.h's, shared with Linux.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

#include "seatbelt/log_parser.h"
#include "seatbelt/profile_builder.h"
#include "seatbelt/sandbox_exec_argv.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/session/macos_session.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/session/session_dir.h"
#include "supervisor/log/session_log.h"
#include "supervisor/session/session_proxy.h"
#include "supervisor/session/block_delivery.h"
#include "supervisor/session/session_orchestrator.h"
#include "supervisor/session/session_record.h"

extern char** environ;

namespace vigil {

int report(const Error& e);  // run_command.cc

namespace {

using Clock = std::chrono::steady_clock;

// Signals forwarded to the command. They are ignored in vigil (kqueue still records
// them: EVFILT_SIGNAL sees even ignored signals) and reset to default in the children.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// environ with `extra` set (replacing any existing value of the same name).
std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string_view name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced = replaced || name == k;
    if (!replaced) out.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Spawned {
  pid_t pid = -1;
};

// posix_spawnp with only fds 0-2 and the `dups` ({from, to}), its own process group,
// the forwarded signals back to default and nothing blocked. `spawn_errno` gets the
// failure's errno (ENOENT: the command does not exist).
Result<Spawned> spawn(const std::vector<std::string>& argv, std::vector<std::string> env,
                      const std::vector<std::pair<int, int>>& dups, int* spawn_errno = nullptr) {
  std::vector<std::string> args = argv;
  auto cargv = c_array(args);
  auto cenv = c_array(env);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  for (const auto& [from, to] : dups) posix_spawn_file_actions_adddup2(&fa, from, to);
  for (int fd = 0; fd <= 2; ++fd) {
    bool redirected = false;
    for (const auto& d : dups) redirected = redirected || d.second == fd;
    if (!redirected) posix_spawn_file_actions_addinherit_np(&fa, fd);
  }
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (const int s : kForwarded) sigaddset(&defaults, s);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  // CLOEXEC_DEFAULT (Apple): every fd not named in the file actions is closed in the
  // child, so nothing of vigil's (the session log, proxy sockets) reaches the sandbox.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (spawn_errno != nullptr) *spawn_errno = rc;
  if (rc != 0) return system_error("cannot execute " + args[0], rc);
  return Spawned{pid};
}

int status_to_exit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return exit_code_for_signal(WTERMSIG(status));
  return to_int(ExitCode::kSandboxSetup);
}

// `log stream` for this session, its stdout+stderr on a pipe we read line by line.
class LogStream {
 public:
  static Result<LogStream> start(const std::string& tag) {
    auto argv = log_stream_argv(tag);
    VIGIL_TRY(argv);
    auto pipe = make_pipe();
    VIGIL_TRY(pipe);
    LogStream s;
    s.read_ = std::move(pipe->read);
    UniqueFd write = std::move(pipe->write);
    UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null) return system_error("open /dev/null");
    auto child =
        spawn(*argv, merged_environment({}), {{null.get(), 0}, {write.get(), 1}, {write.get(), 2}});
    VIGIL_TRY(child);
    s.pid_ = child->pid;
    ::fcntl(s.read_.get(), F_SETFL, O_NONBLOCK);
    return s;
  }
  LogStream() = default;
  LogStream(LogStream&& o) noexcept
      : read_(std::move(o.read_)), pid_(std::exchange(o.pid_, -1)), splitter_(o.splitter_) {}
  ~LogStream() { stop(); }

  int fd() const { return read_.get(); }

  // Reads what is there; each complete line goes to on_line. False at EOF.
  template <class F>
  bool pump(F&& on_line) {
    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::read(read_.get(), buf, sizeof buf);
      if (n > 0) {
        splitter_.feed(std::string_view(buf, static_cast<std::size_t>(n)), on_line);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0;  // EAGAIN: open, nothing more now; 0: EOF
    }
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  UniqueFd read_;
  pid_t pid_ = -1;
  events::LineSplitter splitter_{kMaxLogLineBytes};
};

// Waits up to `limit` for `log stream`'s first line (its banner, "Filtering the log data
// using ..."). Anything else first is its error message ("Must be admin ...").
Result<void> await_banner(LogStream& log, std::chrono::milliseconds limit,
                          const std::function<void(std::string_view)>& on_line) {
  const auto deadline = Clock::now() + limit;
  bool got = false;
  std::string first;
  auto take = [&](std::string_view line) {
    if (!got) {
      got = true;
      first = std::string(line.substr(0, 200));
      return;
    }
    on_line(line);
  };
  while (!got) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return make_error(Errc::kSystem, "`log stream` printed nothing");
    fd_set set;
    FD_ZERO(&set);
    FD_SET(log.fd(), &set);
    timeval tv{static_cast<time_t>(left.count() / 1000),
               static_cast<suseconds_t>((left.count() % 1000) * 1000)};
    const int rc = ::select(log.fd() + 1, &set, nullptr, nullptr, &tv);
    if (rc < 0 && errno != EINTR) return system_error("select");
    if (!log.pump(take) && !got) return make_error(Errc::kSystem, "`log stream` exited");
  }
  if (first.rfind("Filtering the log data", 0) != 0) {
    return make_error(Errc::kSystem, "`log stream` said: " + events::escape_for_terminal(first));
  }
  return {};
}

struct Waited {
  int status = 0;
};

// Runs until `pid` exits: forwards the signals, feeds the log stream meanwhile. With
// `kill_group`, the command's process group is killed before the command is reaped:
// until then its pid (the group's id) cannot be reused, so the kill cannot reach a
// stranger's group.
Result<Waited> wait_forwarding(pid_t pid, LogStream* log,
                               const std::function<void(std::string_view)>& on_line,
                               bool kill_group) {
  UniqueFd kq(::kqueue());
  if (!kq) return system_error("kqueue");
  bool exited = false;
  struct kevent ev;
  EV_SET(&ev, static_cast<uintptr_t>(pid), EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  if (::kevent(kq.get(), &ev, 1, nullptr, 0, nullptr) < 0) {
    if (errno != ESRCH) return system_error("kevent(EVFILT_PROC)");
    exited = true;  // already a zombie
  }
  std::vector<struct kevent> changes;
  for (const int s : kForwarded) {
    EV_SET(&ev, static_cast<uintptr_t>(s), EVFILT_SIGNAL, EV_ADD, 0, 0, nullptr);
    changes.push_back(ev);
  }
  if (log != nullptr) {
    EV_SET(&ev, static_cast<uintptr_t>(log->fd()), EVFILT_READ, EV_ADD, 0, 0, nullptr);
    changes.push_back(ev);
  }
  if (::kevent(kq.get(), changes.data(), static_cast<int>(changes.size()), nullptr, 0, nullptr) <
      0) {
    return system_error("kevent");
  }
  while (!exited) {
    struct kevent got[8];
    const int n = ::kevent(kq.get(), nullptr, 0, got, 8, nullptr);
    if (n < 0 && errno != EINTR) return system_error("kevent");
    for (int i = 0; i < n; ++i) {
      if (got[i].filter == EVFILT_PROC) {
        exited = true;
      } else if (got[i].filter == EVFILT_SIGNAL) {
        ::kill(pid, static_cast<int>(got[i].ident));
      } else if (got[i].filter == EVFILT_READ && log != nullptr) {
        if (!log->pump(on_line)) {
          EV_SET(&ev, got[i].ident, EVFILT_READ, EV_DELETE, 0, 0, nullptr);
          ::kevent(kq.get(), &ev, 1, nullptr, 0, nullptr);
          log = nullptr;
        }
      }
    }
  }
  if (kill_group) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return system_error("waitpid");
  }
  return Waited{status};
}

// Reports reach `log stream` asynchronously: read until it has been quiet for `quiet`
// (or `limit` passed), then stop it and read what is left.
void drain(LogStream& log, std::chrono::milliseconds quiet, std::chrono::milliseconds limit,
           const std::function<void(std::string_view)>& on_line) {
  const auto end = Clock::now() + limit;
  bool open = true;
  while (open && Clock::now() < end) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(log.fd(), &set);
    timeval tv{0, static_cast<suseconds_t>(quiet.count() * 1000)};
    const int rc = ::select(log.fd() + 1, &set, nullptr, nullptr, &tv);
    if (rc == 0) break;  // quiet
    if (rc < 0 && errno != EINTR) break;
    open = log.pump(on_line);
  }
  log.stop();
  log.pump(on_line);  // what it wrote before exiting
}

void ignore_forwarded_signals(bool ignore) {
  for (const int s : kForwarded) ::signal(s, ignore ? SIG_IGN : SIG_DFL);
}

// macOS's part of a session (session_orchestrator.h): the steps 1-5 above.
class SeatbeltBackend final : public SessionBackend {
 public:
  std::string_view name() const override { return "seatbelt"; }
  Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                               const SessionCallbacks&) override;
};

Result<SandboxedOutcome> SeatbeltBackend::run(SandboxedCommand& cmd, CommandLogSink& sink,
                                              const SessionCallbacks&) {
  auto session = SessionDir::create();
  VIGIL_TRY(session);
  PlanRequest req;
  req.settings_path = cmd.settings;
  req.allow_writable_settings = cmd.allow_writable_settings;
  req.session_tmp = session->tmp();
  req.cwd = cmd.cwd;
  auto prepared = prepare_sandbox(req);
  VIGIL_TRY(prepared);
  for (const auto& w : prepared->warnings) print_warning(w);

  // As on Linux, the session cannot rewrite its own log (log_guard.h). The policy the
  // log records (and its digest) stays the settings' own: the rule goes to a copy.
  auto log_path = sink.log_path(*prepared);
  VIGIL_TRY(log_path);
  std::string log_abs = *log_path;
  if (log_abs.empty() || log_abs[0] != '/') log_abs = cmd.cwd + "/" + log_abs;
  VIGIL_TRY_VOID(sink.create_now());
  auto opened = sink.open(*prepared);
  VIGIL_TRY(opened);
  CommandRecord& rec = **opened;
  Policy planned = prepared->policy;
  Plan plan = prepared->plan;
  protect_log(planned, plan, prepared->protected_paths, resolve_symlinks(log_abs));
  auto append = [&rec](events::Source src, events::Body body) { rec.append(src, std::move(body)); };

  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kTcp;
  where.host = "127.0.0.1";
  where.port = 0;
  auto proxy = SessionProxy::start(
      planned.net, where, [&](const events::NetDecision& d) { append(events::Source::kProxy, d); },
      [&](const events::NetUpstreamFailure& f) { append(events::Source::kProxy, f); });
  VIGIL_TRY(proxy);
  const std::uint16_t port = (*proxy)->local_address().port;

  const std::string tag = seatbelt_log_tag(cmd.quarantine_id);
  auto profile =
      build_seatbelt_profile(SeatbeltInputs{&planned, &plan, SeatbeltSession{tag, {port}}});
  VIGIL_TRY(profile);
  for (const auto& w : profile->warnings) print_warning(w);
  auto argv = sandbox_exec_argv(*profile, cmd.command);
  VIGIL_TRY(argv);

  SeatbeltEventFeed feed(tag, &plan);
  auto on_line = [&](std::string_view line) {
    for (auto& body : feed.feed(line)) append(events::Source::kObserver, std::move(body));
  };

  ignore_forwarded_signals(true);
  // Never silent: without the log, the command still runs confined, but the model and
  // the session log are told nothing was read.
  auto stream = LogStream::start(tag);
  Result<void> listening = stream ? await_banner(*stream, std::chrono::milliseconds(5000), on_line)
                                  : Result<void>(stream.error());
  if (!listening) {
    print_warning("cannot read the sandbox's reports (" + listening.error().message +
                  "): this session's violations will not be reported");
    if (stream) stream->stop();
  }
  LogStream* live = listening ? &*stream : nullptr;

  auto child = spawn(*argv, merged_environment(proxy_environment(session->tmp(), port, port)), {});
  if (!child) {
    ignore_forwarded_signals(false);
    (*proxy)->stop();
    return std::move(child).error();
  }
  // No PID namespace: whatever the command left in its process group goes with it.
  auto waited = wait_forwarding(child->pid, live, on_line, true);
  ignore_forwarded_signals(false);
  if (live != nullptr) {
    drain(*live, std::chrono::milliseconds(300), std::chrono::milliseconds(2000), on_line);
  }
  for (auto& body : feed.finish()) append(events::Source::kObserver, std::move(body));
  (*proxy)->stop();
  VIGIL_TRY(waited);

  for (const auto& [k, v] : feed.counters()) rec.count(k, v);
  if (!listening) rec.count("seatbelt.log_unavailable");
  SandboxedOutcome out;
  out.exit_code = status_to_exit(waited->status);
  out.annotation = rec.annotation();
  if (cmd.violations_json) out.violations_json = rec.violations_json();
  // The command wrote to the terminal itself: the block goes after a newline.
  if (cmd.annotate_stderr) {
    deliver_block(rec, out.annotation, block_needs_newline(/*captured=*/false, false),
                  [](std::string_view text) {
                    std::fflush(stdout);
                    // display-safe: render_annotation() escapes every variable part
                    std::fwrite(text.data(), 1, text.size(), stderr);
                    std::fflush(stderr);
                  });
  }
  return out;
}

}  // namespace

// `vigil run --sandbox off` on macOS (run_command.cc warns first).
int run_unconfined(const std::vector<std::string>& command) {
  ignore_forwarded_signals(true);
  int err = 0;
  auto child = spawn(command, merged_environment({}), {}, &err);
  if (!child) {
    ignore_forwarded_signals(false);
    print_error(child.error().message);
    return err == ENOENT ? to_int(ExitCode::kNotFound) : to_int(ExitCode::kCannotExec);
  }
  auto waited = wait_forwarding(child->pid, nullptr, {}, false);
  ignore_forwarded_signals(false);
  if (!waited) return report(waited.error());
  return status_to_exit(waited->status);
}

// The embedder API and `vigil run` on macOS: the same orchestrator as Linux's.
Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  SeatbeltBackend backend;
  return orchestrate_session(request, callbacks, backend);
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
