// run_session(): policy -> plan -> bwrap argv -> launch -> events, log, annotation.
#include "supervisor/session_runner.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "bwrap/argv_builder.h"
#include "observer/bridge.h"
#include "supervisor/annotation.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/init_locator.h"
#include "supervisor/sandbox_plan.h"
#include "supervisor/session_dir.h"
#include "supervisor/session_log.h"
#include "supervisor/session_proxy.h"

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
      return false;  // EPIPE (the reader is gone), EBADF, ...
    }
  }
  return true;
}

namespace {

events::NetProto to_event_proto(proxy::Proto p) {
  switch (p) {
    case proxy::Proto::kHttp:
      return events::NetProto::kHttp;
    case proxy::Proto::kConnect:
      return events::NetProto::kConnect;
    case proxy::Proto::kSocks5:
      return events::NetProto::kSocks5;
    case proxy::Proto::kSocks4:
      return events::NetProto::kSocks4;
  }
  return events::NetProto::kHttp;
}

events::NetDecision to_event(const proxy::NetDecision& d) {
  events::NetDecision e;
  e.proto = to_event_proto(d.proto);
  e.host = d.host;
  e.port = d.port;
  e.verdict = d.verdict == proxy::Verdict::kAllow ? events::NetVerdict::kAllowed
                                                  : events::NetVerdict::kDenied;
  e.rule = d.rule;
  e.reason = d.reason;
  e.refused_by = proxy::to_string(d.refused_by);
  e.address = d.address;
  e.guard_check = d.guard_check;
  return e;
}

events::NetUpstreamFailure to_event(const proxy::UpstreamFailure& f) {
  events::NetUpstreamFailure e;
  e.proto = to_event_proto(f.proto);
  e.host = f.host;
  e.port = f.port;
  e.address = f.address;
  e.what = f.what;
  return e;
}

// What the command's environment gains inside the sandbox.
std::vector<std::pair<std::string, std::string>> session_environment(const std::string& tmp) {
  // The bridges vigil-init binds inside the sandbox's network namespace.
  const std::string http = "http://127.0.0.1:" + std::to_string(init::kHttpProxyPort);
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(init::kSocksProxyPort);
  return {
      {"TMPDIR", tmp},
      {"HTTP_PROXY", http},
      {"HTTPS_PROXY", http},
      {"http_proxy", http},
      {"https_proxy", http},
      {"ALL_PROXY", socks},
      {"all_proxy", socks},
      // Empty on purpose: nothing bypasses the proxy (there is no other route anyway).
      {"NO_PROXY", ""},
      {"no_proxy", ""},
      // ssh (git over ssh) through SOCKS5 with OpenBSD netcat, where it is installed.
      {"GIT_SSH_COMMAND", "ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:" +
                              std::to_string(init::kSocksProxyPort) + " %h %p'"},
  };
}

}  // namespace

Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  if (request.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  auto session = SessionDir::create();
  if (!session) return std::move(session).error();

  auto cwd = request.cwd ? Result<std::string>(*request.cwd) : current_dir();
  if (!cwd) return std::move(cwd).error();
  PlanRequest req{request.settings, request.allow_writable_settings, session->tmp(), *cwd};
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
  // model is told about are collected from exactly what was logged.
  SessionOutcome outcome;
  outcome.session_id = new_session_id();
  Result<std::string> log_path =
      request.log_path ? Result<std::string>(*request.log_path)
                       : default_log_path(outcome.session_id, std::getenv("XDG_STATE_HOME"),
                                          std::getenv("HOME"));
  if (!log_path) return std::move(log_path).error();
  if (!request.log_path) {
    if (auto r = prepare_log_dir(*log_path); !r) return std::move(r).error();
  }
  auto log = SessionLog::create(*log_path, outcome.session_id);
  if (!log) return std::move(log).error();
  outcome.log_path = log->path();
  ViolationCollector collector;
  log->set_listener([&](const events::Event& e, const std::string&) {
    collector.add(e);
    if (callbacks.on_event) callbacks.on_event(e);
  });
  // Touched only on this thread (the proxy's thread appends through the log alone).
  std::map<std::string, std::uint64_t>& counters = outcome.counters;
  std::mutex append_failures_mu;
  std::uint64_t append_failures = 0;
  auto append = [&](events::Source src, events::Body body) {
    if (auto r = log->append(src, std::move(body)); !r) {
      std::lock_guard lock(append_failures_mu);
      ++append_failures;
    }
  };
  {
    events::SessionStart start;
    start.argv = request.command;
    start.backend = "bwrap";
    start.policy_digest = policy_digest(prepared->policy);
    start.versions.vigil = "0.1.0";
    start.log = log->path();
    start.cwd = *cwd;
    append(events::Source::kSupervisor, std::move(start));
  }

  auto status = make_status_pipe();
  if (!status) return std::move(status).error();
  auto events = make_event_pipe();
  if (!events) return std::move(events).error();
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = *cwd;
  // The only way out: every client that honours the usual variables goes through the
  // bridges to the session's proxy, which decides and explains (a host off the allow
  // list gets a 403 with the reason; with no allow list, every host does).
  auto proxy = SessionProxy::start(
      prepared->policy.net, session->proxy_socket(),
      [&](const proxy::NetDecision& d) { append(events::Source::kProxy, to_event(d)); },
      [&](const proxy::UpstreamFailure& f) { append(events::Source::kProxy, to_event(f)); });
  if (!proxy) return std::move(proxy).error();
  in.setenv = session_environment(session->tmp());
  in.late_ro_binds = {session->proxy_socket()};
  // A log the session could rewrite proves nothing: its directory is read-only inside.
  const std::string log_dir = log->path().substr(0, log->path().rfind('/'));
  if (decide(prepared->plan, resolve_symlinks(log_dir), Access::kWrite).verdict !=
      Verdict::kDenied) {
    in.late_ro_binds.push_back(resolve_symlinks(log_dir));
  }
  in.json_status_fd = status->write.get();
  in.command = request.command;
  in.init = *init;
  in.init_args = {"--events-fd", std::to_string(events->write.get()), "--proxy-socket",
                  session->proxy_socket()};
  if (prepared->policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop) {
    in.init_args.insert(in.init_args.end(), {"--overflow", "drop"});
  }
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  LaunchIo io;
  io.events = &*events;
  // Lines from the sandbox are untrusted: parsed against the schema, bounded, and a
  // malformed or forged one is counted and dropped, never logged as if it were true.
  io.on_event_line = [&](std::string_view line) {
    auto body = events::parse_untrusted_event_line(line);
    if (!body) {
      switch (events::fault_of(body.error())) {
        case events::LineFault::kMalformed:
          ++counters["lines.malformed"];
          break;
        case events::LineFault::kForged:
          ++counters["lines.forged"];
          break;
        case events::LineFault::kUnsupported:
          ++counters["lines.unsupported"];
          break;
      }
      return;
    }
    if (auto* w = std::get_if<events::FsWrite>(&*body))
      w->reason = fs_denial_reason(*w, prepared->plan);
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
    if (!open) ++counters[s == OutputStream::kStdout ? "io.stdout_closed" : "io.stderr_closed"];
    return open;
  };
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), io);
  (*proxy)->stop();
  remove_placeholders(placeholders);
  if (!launched) return std::move(launched).error();
  outcome.exit_code = launched->exit_code;

  // Tell the model what was stopped, after everything the command printed.
  const AnnotationOptions shown{kAnnotationMaxLines, log->path()};
  outcome.annotation = render_annotation(collector, shown);
  outcome.violations_json = render_violations_json(collector, shown, outcome.session_id) + "\n";
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
    append(events::Source::kSupervisor, events::Annotation{outcome.annotation, newline_before});
  }
  if (append_failures != 0) counters["log.append_failed"] = append_failures;
  events::SessionEnd end;
  if (launched->exit_code > 128 && launched->exit_code < 128 + 65) {
    end.signal = launched->exit_code - 128;
  } else {
    end.exit_code = launched->exit_code;
  }
  end.duration_ns = log->elapsed_ns();
  end.counters = counters;
  append(events::Source::kSupervisor, std::move(end));
  if (auto r = log->close(); !r)
    std::fprintf(stderr, "vigil: warning: %s\n", r.error().message.c_str());
  return outcome;
}

}  // namespace vigil
