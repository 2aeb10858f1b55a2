// `vigil run`: policy -> plan -> bwrap argv -> launch -> exit status.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "bwrap/argv_builder.h"
#include "supervisor/annotation.h"
#include "supervisor/commands.h"
#include "supervisor/core/exit_codes.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/event_schema.h"
#include "supervisor/init_locator.h"
#include "supervisor/sandbox_launch.h"
#include "supervisor/sandbox_plan.h"
#include "supervisor/session_dir.h"
#include "supervisor/session_log.h"
#include "supervisor/session_proxy.h"

namespace vigil {

int exit_code_for(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidPolicy:
    case Errc::kRefused:
      return to_int(ExitCode::kUsage);
    default:
      return to_int(ExitCode::kSandboxSetup);
  }
}

int report(const Error& e) {
  std::fprintf(stderr, "vigil: %s\n", e.message.c_str());
  return exit_code_for(e);
}

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
  const std::string http = "http://127.0.0.1:3128";
  const std::string socks = "socks5h://127.0.0.1:1080";
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
      {"GIT_SSH_COMMAND", "ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:1080 %h %p'"},
  };
}

}  // namespace

int cmd_run(const RunArgs& args) {
  if (!args.sandbox) {
    std::fprintf(stderr,
                 "vigil: WARNING: --sandbox off: running the command UNCONFINED, with no "
                 "filesystem or network restrictions\n");
    auto r = launch_unconfined(args.command);
    if (!r) return report(r.error());
    return r->exit_code;
  }
  auto session = SessionDir::create();
  if (!session) return report(session.error());

  PlanRequest req{args.settings, args.allow_writable_settings, session->tmp()};
  auto prepared = prepare_sandbox(req);
  if (!prepared) return report(prepared.error());
  for (const auto& w : prepared->warnings) std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());

  const std::string bwrap = find_bwrap(prepared->policy.bwrap_path);
  if (bwrap.empty()) {
    return report(make_error(
        Errc::kNotFound,
        prepared->policy.bwrap_path
            ? "bwrapPath " + *prepared->policy.bwrap_path + " is not an executable file"
            : "bubblewrap (bwrap) is not installed: run `apt-get install bubblewrap` (or pass "
              "--sandbox off to run unconfined, which vigil does not recommend)"));
  }

  auto init = locate_vigil_init();
  if (!init) return report(init.error());
  if (auto r = check_not_writable(prepared->plan, *init); !r) return report(r.error());

  // The session log: every record hash-chained to the one before; the violations the
  // model is told about are collected from exactly what was logged.
  const std::string id = new_session_id();
  Result<std::string> log_path =
      args.log ? Result<std::string>(*args.log)
               : default_log_path(id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!log_path) return report(log_path.error());
  if (!args.log) {
    if (auto r = prepare_log_dir(*log_path); !r) return report(r.error());
  }
  auto log = SessionLog::create(*log_path, id);
  if (!log) return report(log.error());
  ViolationCollector collector;
  log->set_listener([&](const events::Event& e, const std::string&) { collector.add(e); });
  std::map<std::string, std::uint64_t> counters;
  auto append = [&](events::Source src, events::Body body) {
    if (auto r = log->append(src, std::move(body)); !r) ++counters["log.append_failed"];
  };
  {
    events::SessionStart start;
    start.argv = args.command;
    start.backend = "bwrap";
    start.policy_digest = policy_digest(prepared->policy);
    start.versions.vigil = "0.1.0";
    start.log = log->path();
    auto here = current_dir();
    start.cwd = here ? *here : "";
    append(events::Source::kSupervisor, std::move(start));
  }

  auto status = make_status_pipe();
  if (!status) return report(status.error());
  auto events = make_event_pipe();
  if (!events) return report(events.error());
  BwrapInputs in;
  in.plan = &prepared->plan;
  auto cwd = current_dir();
  if (!cwd) return report(cwd.error());
  in.cwd = *cwd;
  // The only way out: every client that honours the usual variables goes through the
  // bridges to the session's proxy, which decides and explains (a host off the allow
  // list gets a 403 with the reason; with no allow list, every host does).
  auto proxy = SessionProxy::start(
      prepared->policy.net, session->proxy_socket(),
      [&](const proxy::NetDecision& d) { append(events::Source::kProxy, to_event(d)); },
      [&](const proxy::UpstreamFailure& f) { append(events::Source::kProxy, to_event(f)); });
  if (!proxy) return report(proxy.error());
  in.setenv = session_environment(session->tmp());
  in.late_ro_binds = {session->proxy_socket()};
  // A log the session could rewrite proves nothing: its directory is read-only inside.
  const std::string log_dir = log->path().substr(0, log->path().rfind('/'));
  if (decide(prepared->plan, resolve_symlinks(log_dir), Access::kWrite).verdict !=
      Verdict::kDenied) {
    in.late_ro_binds.push_back(resolve_symlinks(log_dir));
  }
  in.json_status_fd = status->write.get();
  in.command = args.command;
  in.init = *init;
  in.init_args = {"--events-fd", std::to_string(events->write.get()), "--proxy-socket",
                  session->proxy_socket()};
  if (prepared->policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop) {
    in.init_args.insert(in.init_args.end(), {"--overflow", "drop"});
  }
  if (!prepared->policy.vigil.observer_sync_wake_up) in.init_args.push_back("--no-sync-wake-up");
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  // Lines from the sandbox are untrusted: parsed against the schema, bounded, and a
  // malformed or forged one is counted and dropped, never logged as if it were true.
  auto on_line = [&](std::string_view line) {
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
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), &*events, on_line);
  (*proxy)->stop();
  remove_placeholders(placeholders);
  if (!launched) return report(launched.error());

  // Tell the model what was stopped, after everything the command printed.
  const std::string block = render_annotation(collector, {kAnnotationMaxLines, log->path()});
  if (!block.empty()) {
    std::fflush(stdout);
    std::fputs("\n", stderr);
    std::fputs(block.c_str(), stderr);
    std::fflush(stderr);
    append(events::Source::kSupervisor, events::Annotation{block, true});
  }
  if (args.violations_fd) {
    const std::string json =
        render_violations_json(collector, {kAnnotationMaxLines, log->path()}, id) + "\n";
    (void)!::write(*args.violations_fd, json.data(), json.size());
  }
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
  return launched->exit_code;
}

}  // namespace vigil
