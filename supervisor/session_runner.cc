// run_session(): policy -> plan -> bwrap argv -> launch -> events, log, annotation.
#include "supervisor/session_runner.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "bwrap/argv_builder.h"
#include "filters/sandbox_program.h"
#include "observer/bridge.h"  // the bridges' ports
#include "supervisor/annotation.h"
#include "supervisor/core/expected_mounts.h"
#include "supervisor/core/ignore_violations.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/core/write_all.h"
#include "supervisor/init_locator.h"
#include "supervisor/net_events.h"
#include "supervisor/sandbox_plan.h"
#include "supervisor/session_dir.h"
#include "supervisor/session_log.h"
#include "supervisor/session_proxy.h"
#include "supervisor/session_record.h"

namespace vigil {

std::string find_bwrap(const std::optional<std::string>& configured) {
  if (configured) return ::access(configured->c_str(), X_OK) == 0 ? *configured : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // a relative PATH entry could be planted
    const std::string candidate = dir + "/bwrap";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

bool write_all_to(int fd, std::string_view bytes) {
  // A reader that went away must cost an EPIPE here, never the process: an embedder may
  // keep SIGPIPE's default. SIGPIPE for a write is sent to the writing thread, so it is
  // blocked in this thread for the write, and one the write raised is taken back before
  // the old mask returns (unless one was already pending: that one is not ours).
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  bool ok = true;
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};  // a non-blocking stdout we inherited: wait for room
      (void)::poll(&p, 1, -1);
    } else {
      if (n < 0 && errno == EPIPE && !already_pending) {
        const timespec now{0, 0};
        while (::sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
        }
      }
      ok = false;  // EPIPE (the reader is gone), EBADF, ...
      break;
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

// The plan's writable mounts as they are on the host now, just before bwrap mounts them,
// for vigil-init to check (supervisor/core/expected_mounts.h). lstat: a path swapped for
// a symlink already is recorded as the link, which no mount can match.
Result<UniqueFd> expected_mounts_fd(const Plan& plan) {
  std::vector<ExpectedMount> expected;
  for (const auto& op : plan.ops) {
    if (op.kind != OpKind::kWritable && op.kind != OpKind::kPin) continue;
    struct stat st {};
    if (::lstat(op.path.c_str(), &st) != 0) return system_error("cannot stat " + op.path);
    expected.push_back(ExpectedMount{op.path, st.st_dev, st.st_ino});
  }
  return sealed_memfd(encode_expected_mounts(expected), "vigil planned mounts");
}

Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  if (request.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  auto session = SessionDir::create();
  if (!session) return std::move(session).error();

  auto cwd = request.cwd ? Result<std::string>(*request.cwd) : current_dir();
  if (!cwd) return std::move(cwd).error();
  PlanRequest req;
  req.settings_path = request.settings;
  req.allow_writable_settings = request.allow_writable_settings;
  req.session_tmp = session->tmp();
  req.cwd = *cwd;
  req.before_scan = [&](const std::vector<std::string>& roots) {
    return session->hold_roots(roots);
  };
  auto prepared = prepare_sandbox(req);
  if (!prepared) return std::move(prepared).error();
  for (const auto& w : prepared->warnings) std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());

  const std::string bwrap = find_bwrap(prepared->policy.bwrap_path);
  if (bwrap.empty()) {
    return make_error(
        Errc::kNotFound,
        prepared->policy.bwrap_path
            ? "bwrapPath " + *prepared->policy.bwrap_path + " is not an executable file"
            : "bubblewrap (bwrap) is not installed: run `apt-get install bubblewrap` (or pass "
              "--sandbox off to run unconfined, which vigil does not recommend)");
  }

  auto init = locate_vigil_init();
  if (!init) return std::move(init).error();
  if (auto r = check_not_writable(prepared->plan, *init); !r) return std::move(r).error();

  // The session log: every record hash-chained to the one before; the violations the
  // model is told about are collected from exactly what was logged. It is created and
  // opened, with session.start, while bwrap builds the sandbox, before the command can
  // run; only a log the sandbox could otherwise reach is created first (below).
  SessionOutcome outcome;
  outcome.session_id = new_session_id();
  SessionRecord::Start start{request.log_path,  outcome.session_id, "bwrap",
                             &prepared->policy, request.command,    *cwd,
                             callbacks.on_event};
  auto log_path = SessionRecord::log_path_for(start);
  if (!log_path) return std::move(log_path).error();
  outcome.log_path = *log_path;
  std::optional<SessionLog::Reserved> reserved;
  std::unique_ptr<SessionRecord> record;
  // A file we reserved but never opened (a failure in between) is removed: no empty log
  // is left behind, and never one that was there before (reserve() creates with O_EXCL).
  struct Unreserve {
    const std::optional<SessionLog::Reserved>& reserved;
    const std::unique_ptr<SessionRecord>& record;
    const std::string& path;
    ~Unreserve() {
      if (reserved && !record) ::unlink(path.c_str());
    }
  } unreserve{reserved, record, outcome.log_path};
  auto reserve = [&]() -> Result<void> {
    auto r = SessionRecord::reserve(start);
    if (!r) return std::move(r).error();
    reserved = std::move(r).value();
    return {};
  };
  auto append = [&record](events::Source src, events::Body body) {
    record->append(src, std::move(body));
  };

  const std::string ignore_command = ignore_command_line(request.command);
  auto status = make_status_pipe();
  if (!status) return std::move(status).error();
  auto events = make_event_pipe();
  if (!events) return std::move(events).error();
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = *cwd;
  // The only way out: every client that honours the usual variables goes through the
  // bridges to the session's proxy, which decides and explains (a host off the allow
  // list gets a 403 with the reason; with no allow list, every host does). Its socket is
  // bound now (the sandbox binds it in); it serves from when the log is open.
  auto proxy = SessionProxy::open(
      prepared->policy.net, session->proxy_socket(),
      [&](const proxy::NetDecision& d) {
        auto e = net_event(d);
        if (e.verdict == events::NetVerdict::kDenied) {
          e.ignored = ignored_by(prepared->policy.ignore_violations, ignore_command,
                                 e.host + ":" + std::to_string(e.port));
        }
        append(events::Source::kProxy, std::move(e));
      },
      [&](const proxy::UpstreamFailure& f) { append(events::Source::kProxy, net_event(f)); },
      request.proxy_test);
  if (!proxy) return std::move(proxy).error();
  // The bridges vigil-init binds inside the sandbox's network namespace.
  in.setenv = proxy_environment(session->tmp(), init::kHttpProxyPort, init::kSocksProxyPort);
  in.late_ro_binds = {session->proxy_socket()};
  // A log the session could rewrite proves nothing. Where the sandbox could write to it,
  // its directory is made read-only inside (so are earlier sessions' logs beside it),
  // unless that directory holds a writable root (a log in the workspace itself): then the
  // file alone, which as a mount point also cannot be unlinked or renamed away.
  // Then the log (and its directory) must exist before bwrap binds it.
  const std::string log_file = resolve_symlinks(outcome.log_path);
  const std::string log_dir = log_file.substr(0, log_file.rfind('/'));
  if (decide(prepared->plan, log_dir, Access::kWrite).verdict != Verdict::kDenied) {
    if (auto r = reserve(); !r) return std::move(r).error();
    bool holds_root = false;
    for (const auto& root : prepared->policy.fs.allow_write) {
      holds_root = holds_root || path_is_under(root.resolved, log_dir);
    }
    in.late_ro_binds.push_back(holds_root ? log_file : log_dir);
  }
  in.json_status_fd = status->write.get();
  in.command = request.command;
  in.init = *init;
  auto program_pipe = make_program_pipe();
  if (!program_pipe) return std::move(program_pipe).error();
  auto mounts = expected_mounts_fd(prepared->plan);
  if (!mounts) return std::move(mounts).error();
  in.init_args = {"--events-fd",    std::to_string(events->write.get()),
                  "--program-fd",   std::to_string(program_pipe->read.get()),
                  "--mounts-fd",    std::to_string(mounts->get()),
                  "--proxy-socket", session->proxy_socket()};
  if (prepared->policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop) {
    in.init_args.insert(in.init_args.end(), {"--overflow", "drop"});
  }
  if (!prepared->policy.vigil.observer_sync_wake_up) in.init_args.push_back("--no-sync-wake-up");
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  // Should this process be killed, the next session removes them (session_dir.h).
  if (auto r = session->record_placeholders(placeholders); !r) return std::move(r).error();
  if (auto r = create_content_placeholders(placeholders); !r) {
    session->finish(placeholders);  // those written before the failure
    return std::move(r).error();
  }
  LaunchIo io;
  io.events = &*events;
  io.pass_fds.push_back(program_pipe->read.get());
  io.pass_fds.push_back(mounts->get());
  // While bwrap builds the sandbox (~10 ms): the seccomp program, the log and the proxy.
  // The program goes last: its arrival starts the command (filters/sandbox_program.h).
  io.after_spawn = [&]() -> Result<void> {
    // Both ends closed on every way out: written, the program is vigil-init's go; closed
    // unwritten (any error below), vigil-init refuses to start the command.
    struct ClosePipe {
      ProgramPipe& pipe;
      ~ClosePipe() {
        pipe.write.reset();
        pipe.read.reset();
      }
    } close_pipe{*program_pipe};
    auto program = sandbox_program(/*observe=*/true);
    if (!program) return std::move(program).error();
    auto wire = encode_program(*program);
    if (!wire) return std::move(wire).error();
    if (!reserved) {
      if (auto r = reserve(); !r) return std::move(r).error();
    }
    auto opened = SessionRecord::open(std::move(*reserved), std::move(start));
    if (!opened) return std::move(opened).error();
    record = std::move(opened).value();
    (*proxy)->serve();
    // The pipe holds the whole program (far below its capacity): this never blocks.
    if (auto w = write_all(program_pipe->write.get(), *wire, "vigil-init's seccomp program"); !w)
      return std::move(w).error();
    return {};
  };
  // Lines from the sandbox are untrusted: parsed against the schema, bounded, and a
  // malformed or forged one is counted and dropped, never logged as if it were true.
  io.on_event_line = [&](std::string_view line) {
    auto body = events::parse_untrusted_event_line(line);
    if (!body) {
      switch (events::fault_of(body.error())) {
        case events::LineFault::kMalformed:
          record->count("lines.malformed");
          break;
        case events::LineFault::kForged:
          record->count("lines.forged");
          break;
        case events::LineFault::kUnsupported:
          record->count("lines.unsupported");
          break;
      }
      return;
    }
    if (auto* w = std::get_if<events::FsWrite>(&*body)) {
      w->reason = fs_denial_reason(*w, prepared->plan);
      w->unguarded = unguarded_protected_name(*w, prepared->policy.fs);
      w->ignored = w->verdict != Verdict::kDenied
                       ? std::string()
                       : ignored_by(prepared->policy.ignore_violations, ignore_command,
                                    w->resolved.empty() ? w->path : w->resolved);
    }
    append(events::Source::kObserver, std::move(body).value());
  };
  // The command's output: logged chunk by chunk (the exact bytes, for replay), then
  // passed on. Nothing in it is ever parsed: a command printing event JSON only prints.
  auto forward =
      callbacks.on_output ? callbacks.on_output : [](OutputStream s, std::string_view bytes) {
        return write_all_to(s == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, bytes);
      };
  const std::size_t max_chunk = events::Limits::log().max_data;
  bool stderr_ends_line = true;  // nothing written yet counts as the start of a line
  io.capture_output = request.capture_output;
  io.on_output = [&](OutputStream s, std::string_view bytes) {
    // A record holds at most the log's chunk size: split bigger reads.
    for (std::string_view rest = bytes; !rest.empty();) {
      const std::string_view chunk = rest.substr(0, max_chunk);
      rest.remove_prefix(chunk.size());
      if (s == OutputStream::kStdout)
        append(events::Source::kSupervisor, events::IoStdout{std::string(chunk)});
      else
        append(events::Source::kSupervisor, events::IoStderr{std::string(chunk)});
    }
    if (s == OutputStream::kStderr) stderr_ends_line = bytes.back() == '\n';
    const bool open = forward(s, bytes);
    if (!open) record->count(s == OutputStream::kStdout ? "io.stdout_closed" : "io.stderr_closed");
    return open;
  };
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), io);
  (*proxy)->stop();
  // Only those no other session may have capped as existing files (session_dir.h).
  session->finish(placeholders);
  if (!launched) return std::move(launched).error();
  outcome.exit_code = launched->exit_code;

  // Tell the model what was stopped, after everything the command printed.
  outcome.annotation = record->annotation();
  outcome.violations_json = record->violations_json();
  if (!outcome.annotation.empty() && request.annotate_stderr) {
    // Uncaptured stderr may end anywhere: then a newline always goes first.
    const bool newline_before = !request.capture_output || !stderr_ends_line;
    const std::string text = (newline_before ? "\n" : "") + outcome.annotation;
    if (request.capture_output) {
      forward(OutputStream::kStderr, text);
    } else {
      std::fflush(stdout);
      write_all_to(STDERR_FILENO, text);
    }
    record->log_annotation(outcome.annotation, newline_before);
  }
  auto counters = record->end(outcome.exit_code);
  if (!counters) {
    std::fprintf(stderr, "vigil: warning: %s\n", counters.error().message.c_str());
  } else {
    outcome.counters = std::move(counters).value();
  }
  return outcome;
}

}  // namespace vigil
