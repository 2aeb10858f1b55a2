// `vigil run` on macOS: the policy's Seatbelt profile applied by /usr/bin/sandbox-exec,
// the session proxy on a loopback TCP port (there is no bridge inside the sandbox), and
// the kernel's own deny reports, read through `log stream`, as the session's witness.
// macOS's backend of the session orchestrator (session_orchestrator.h); Linux's is
// bwrap_backend.cc.
//
// BUILT ONLY ON APPLE and NEVER COMPILED by the Linux CI: everything here that can be
// pure lives in tested files (seatbelt/sandbox_exec_argv.h, seatbelt/log_parser.h,
// supervisor/orchestrator/macos_session.h, the TCP mode of supervisor/command/session_proxy.h,
// the decisions' record in net_events.h). What is left is the order of the steps; the
// spawn, the kqueue wait and `log stream` are supervisor/launch/macos_launch.h's.
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
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "seatbelt/log_parser.h"
#include "seatbelt/profile_builder.h"
#include "seatbelt/sandbox_exec_argv.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/launch/macos_launch.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/command/block_delivery.h"
#include "supervisor/orchestrator/macos_session.h"
#include "supervisor/command/net_events.h"
#include "supervisor/command/session_dir.h"
#include "supervisor/orchestrator/session_orchestrator.h"
#include "supervisor/command/session_proxy.h"
#include "supervisor/orchestrator/session_record.h"

namespace vigil {
namespace {

using macos::LogStream;

// macOS's part of a session (session_orchestrator.h): the steps 1-5 above.
class SeatbeltBackend final : public SessionBackend {
 public:
  std::string_view name() const override { return "seatbelt"; }
  Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                               const SessionCallbacks&) override;
};

SandboxedOutcome seatbelt_outcome(CommandRecord& rec, const SandboxedCommand& cmd, int status);

// The command's proxy on a loopback port (no network namespace on macOS: the profile lets
// the sandbox reach only this port); its decisions go to the record.
Result<std::unique_ptr<SessionProxy>> start_loopback_proxy(const NetworkPolicy& net,
                                                           const Policy& policy,
                                                           const std::string& ignore_command,
                                                           CommandRecord& rec) {
  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kTcp;
  where.host = "127.0.0.1";
  where.port = 0;
  return SessionProxy::start(
      net, where,
      [&rec, &policy, ignore_command](const events::NetDecision& d) {
        rec.append(events::Source::kProxy, recorded_decision(d, policy, ignore_command));
      },
      [&rec](const events::NetUpstreamFailure& f) { rec.append(events::Source::kProxy, f); });
}

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
  // ignoreViolations (srt): a denial it matches stays in the log, marked, out of the block.
  const std::string ignore_command = ignore_command_line(cmd.command);

  auto proxy = start_loopback_proxy(planned.net, prepared->policy, ignore_command, rec);
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

  macos::ignore_forwarded_signals(true);
  // Never silent: without the log, the command still runs confined, but the model and
  // the session log are told nothing was read.
  auto stream = LogStream::start(tag);
  Result<void> listening =
      stream ? macos::await_banner(*stream, std::chrono::milliseconds(5000), on_line)
             : Result<void>(stream.error());
  if (!listening) {
    print_warning("cannot read the sandbox's reports (" + listening.error().message +
                  "): this session's violations will not be reported");
    if (stream) stream->stop();
  }
  LogStream* live = listening ? &*stream : nullptr;

  auto child = macos::spawn(
      *argv, macos::merged_environment(proxy_environment(session->tmp(), port, port)), {});
  if (!child) {
    macos::ignore_forwarded_signals(false);
    (*proxy)->stop();
    return std::move(child).error();
  }
  // No PID namespace: whatever the command left in its process group goes with it.
  auto waited = macos::wait_forwarding(child->pid, live, on_line, true);
  macos::ignore_forwarded_signals(false);
  if (live != nullptr) {
    macos::drain(*live, std::chrono::milliseconds(300), std::chrono::milliseconds(2000), on_line);
  }
  for (auto& body : feed.finish()) append(events::Source::kObserver, std::move(body));
  (*proxy)->stop();
  VIGIL_TRY(waited);

  for (const auto& [k, v] : feed.counters()) rec.count(k, v);
  if (!listening) rec.count("seatbelt.log_unavailable");
  return seatbelt_outcome(rec, cmd, waited->status);
}

// What the command's end gives the caller: its exit code, the block (on stderr for `vigil
// run`, in the result otherwise; logged either way).
SandboxedOutcome seatbelt_outcome(CommandRecord& rec, const SandboxedCommand& cmd, int status) {
  SandboxedOutcome out;
  out.exit_code = exit_code_for_wait_status(status);
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
  } else if (!out.annotation.empty()) {
    rec.log_annotation(out.annotation, false);  // the caller's result carries it: logged all the same
  }
  return out;
}

}  // namespace

// The embedder API and `vigil run` on macOS: the same orchestrator as Linux's.
Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  SeatbeltBackend backend;
  return orchestrate_session(request, callbacks, backend);
}

}  // namespace vigil
