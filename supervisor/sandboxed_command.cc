// run_sandboxed(): policy -> plan -> bwrap argv -> launch -> events, record, annotation.
#include "supervisor/sandboxed_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "bwrap/argv_builder.h"
#include "filters/sandbox_program.h"
#include "observer/bridge.h"  // the bridges' ports
#include "supervisor/backstop.h"
#include "supervisor/change_capture.h"
#include "supervisor/core/diagnostics.h"
#include "supervisor/core/expected_mounts.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/core/write_all.h"
#include "supervisor/init_locator.h"
#include "supervisor/log_key.h"
#include "supervisor/annotation.h"
#include "supervisor/net_events.h"
#include "supervisor/quarantine.h"
#include "supervisor/session_dir.h"
#include "supervisor/session_proxy.h"
#include "supervisor/session_runner.h"

namespace vigil {
namespace {

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

// A path the session adds to its plan (the log, the log key), as a settings entry would.
PathRule session_rule(const std::string& resolved, const std::string& origin) {
  PathRule r;
  r.written = r.literal = r.resolved = resolved;
  r.origin = origin;
  const PathState state = stat_path(resolved);
  r.kind = state.kind;
  r.first_missing = state.first_missing;
  r.first_missing_exists = state.blocked_by_existing;
  return r;
}

// Which of the log's names the sandbox gets read-only: none when it could not write
// there anyway; its directory (earlier logs beside it too); or the file alone when that
// directory holds a writable root (a log in the workspace itself), which as a mount
// point also cannot be unlinked or renamed away.
std::optional<std::string> log_bind(const PreparedSandbox& prepared, const std::string& log_path) {
  const std::string log_file = resolve_symlinks(log_path);
  const std::string log_dir = log_file.substr(0, log_file.rfind('/'));
  if (decide(prepared.plan, log_dir, Access::kWrite).verdict == Verdict::kDenied)
    return std::nullopt;
  bool holds_root = false;
  for (const auto& root : prepared.policy.fs.allow_write) {
    holds_root = holds_root || path_is_under(root.resolved, log_dir);
  }
  return holds_root ? log_file : log_dir;
}

// vigil-init's seccomp program, on the wire: the same for every command (it depends on
// nothing but this build), so a session of many commands compiles it once.
Result<std::string> program_wire() {
  static const Result<std::string> wire = []() -> Result<std::string> {
    auto program = sandbox_program(/*observe=*/true);
    if (!program) return std::move(program).error();
    return encode_program(*program);
  }();
  return wire;
}

// The configs of the repositories the mandatory scan found (each ".git" its rules capped),
// whose unsafe keys at launch the backstop must leave alone.
std::vector<std::string> scanned_git_configs(const Plan& plan) {
  std::set<std::string> configs;
  for (const auto& op : plan.ops) {
    if (!op.origin.starts_with("mandatory: .git/")) continue;
    const auto git = op.path.rfind("/.git/");
    if (git != std::string::npos) configs.insert(op.path.substr(0, git) + "/.git/config");
  }
  return {configs.begin(), configs.end()};
}

// What the session's records say it wrote, for the backstop. Bounded: past the cap the
// walk alone covers the rest.
struct WrittenPaths {
  static constexpr std::size_t kMax = 100'000;
  std::set<std::string> paths;
  std::set<std::string> renamed_into;
  void note(const events::FsWrite& w) {
    if (w.verdict != Verdict::kAllowed || w.resolved.empty() || w.resolved[0] != '/') return;
    if (paths.size() < kMax) paths.insert(w.resolved);
    if (w.syscall.starts_with("rename") && renamed_into.size() < kMax) {
      renamed_into.insert(w.resolved);
    }
  }
};

// After the sandbox is gone: finds what the command left that breaks the rules
// (backstop.h), moves it into the quarantine and logs each as fs.quarantine.
void run_backstop(const Policy& policy, const BackstopSnapshot& snap, WrittenPaths written,
                  const std::vector<std::string>& placeholders, const std::string& session_id,
                  CommandRecord& record) {
  BackstopInputs in;
  for (const auto& root : policy.fs.allow_write) {
    if (!root.session_temp) in.roots.push_back(root.resolved);
  }
  in.written.assign(written.paths.begin(), written.paths.end());
  in.renamed_into = std::move(written.renamed_into);
  in.skip.insert(placeholders.begin(), placeholders.end());
  const auto found = find_offenders(in, snap);
  if (!found.incomplete.empty()) {
    record.count("backstop.incomplete");
    print_warning("the post-run check of the writable roots " + found.incomplete);
  }
  if (found.offenders.empty()) return;
  auto dir = quarantine_dir_for(session_id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  const auto moved = quarantine(found.offenders, dir ? *dir : std::string("/nonexistent"));
  for (const auto& q : moved) {
    events::FsQuarantine e;
    e.path = q.offender.path;
    e.rule = q.offender.rule;
    e.reason = q.offender.reason + (q.error.empty() ? "" : " (" + q.error + ")");
    e.moved_to = q.moved_to;
    record.count(q.moved_to.empty() ? "backstop.not_moved" : "backstop.quarantined");
    record.append(events::Source::kSupervisor, std::move(e));
  }
}

}  // namespace

Result<SandboxedOutcome> run_sandboxed(
    const SandboxedCommand& cmd, CommandLogSink& sink,
    const std::function<bool(OutputStream, std::string_view)>& forward) {
  if (cmd.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  auto session = SessionDir::create();
  if (!session) return std::move(session).error();

  PlanRequest req;
  req.settings_path = cmd.settings;
  req.allow_writable_settings = cmd.allow_writable_settings;
  req.session_tmp = session->tmp();
  req.cwd = cmd.cwd;
  // Placeholders stay on the witness-only path. Where vigil-init refuses protected names
  // at the call (the gatekeeper: seccomp's ADDFD_SEND, which `vigil probe` reports) they
  // only break everyday git, and the backstop below catches what slips: pass false then.
  req.placeholders = true;
  req.before_scan = [&](const std::vector<std::string>& roots) {
    return session->hold_roots(roots);
  };
  auto prepared = prepare_sandbox(req);
  if (!prepared) return std::move(prepared).error();
  if (cmd.net) prepared->policy.net = *cmd.net;
  for (const auto& w : prepared->warnings) print_warning(w);

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

  // The log: every record hash-chained to the one before; the violations the model is
  // told about are collected from exactly what was logged. It is opened while bwrap
  // builds the sandbox, before the command can run; only a log the sandbox could
  // otherwise reach must exist first (below).
  auto log_path = sink.log_path(*prepared);
  if (!log_path) return std::move(log_path).error();
  // What the session itself adds to the plan; the policy (and its digest) stays the
  // settings' own. The key that seals logs is hidden from every sandbox
  // (supervisor/log_key.h).
  Policy planned = prepared->policy;
  auto key_path = log_key_path();
  if (!key_path) return std::move(key_path).error();
  planned.fs.deny_read.push_back(session_rule(resolve_symlinks(*key_path), "session log key"));
  CommandRecord* record = nullptr;
  auto append = [&record](events::Source src, events::Body body) {
    record->append(src, std::move(body));
  };

  auto status = make_status_pipe();
  if (!status) return std::move(status).error();
  auto events = make_event_pipe();
  if (!events) return std::move(events).error();
  BwrapInputs in;
  in.plan = &prepared->plan;
  in.cwd = cmd.cwd;
  // The only way out: every client that honours the usual variables goes through the
  // bridges to this command's proxy listener, which decides and explains (a host off the
  // allow list gets a 403 with the reason; with no allow list, every host does). Its
  // socket is bound now (the sandbox binds it in); it serves from when the log is open.
  // One listener per command: its decisions are that command's, even among many.
  auto proxy = SessionProxy::open(
      prepared->policy.net, session->proxy_socket(),
      [&](const proxy::NetDecision& d) { append(events::Source::kProxy, net_event(d)); },
      [&](const proxy::UpstreamFailure& f) { append(events::Source::kProxy, net_event(f)); },
      cmd.proxy_test);
  if (!proxy) return std::move(proxy).error();
  // The bridges vigil-init binds inside the sandbox's network namespace.
  in.setenv = proxy_environment(session->tmp(), init::kHttpProxyPort, init::kSocksProxyPort,
                                /*own_loopback=*/true);
  in.late_ro_binds = {session->proxy_socket()};
  // A log the session could rewrite proves nothing: write-denied inside, so it must exist
  // before bwrap binds it. As for any denied path in a writable root, every directory
  // from the root down to it is pinned (a mount point cannot be renamed): `mv ~/.local
  // ~/.local.hidden` and a forged log in a new ~/.local/state/vigil/sessions/ fail.
  bool created = false;
  if (auto bind = log_bind(*prepared, *log_path)) {
    if (auto r = sink.create_now(); !r) return std::move(r).error();
    created = true;
    planned.fs.deny_write.push_back(session_rule(*bind, "session log"));
  }
  // Pre-images go to the session's store, which no sandbox can see (change_capture.h).
  std::optional<CaptureStore> store;
  if (prepared->policy.vigil.capture_enabled && !cmd.quarantine_id.empty()) {
    auto s = open_capture_store(cmd.quarantine_id);
    if (!s) return std::move(s).error();
    planned.fs.deny_read.push_back(session_rule(s->root, "change captures"));
    store = std::move(s).value();
  }
  prepared->plan = build_plan(planned, prepared->protected_paths);
  in.kernel_masks = present_kernel_masks();
  in.empty_file = session->empty_file();
  in.json_status_fd = status->write.get();
  in.command = cmd.command;
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
  if (store) {
    in.init_args.insert(in.init_args.end(),
                        {"--capture-fd", std::to_string(store->fd.get()), "--capture-caps",
                         caps_argument(prepared->policy.vigil.capture_caps)});
  }
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  // Should this process be killed, the next session removes them (session_dir.h).
  if (auto r = session->record_placeholders(placeholders); !r) return std::move(r).error();
  if (auto r = create_content_placeholders(placeholders); !r) {
    session->finish(placeholders);  // those written before the failure
    return std::move(r).error();
  }
  // Before anything runs: what the backstop must take as the host's own.
  const BackstopSnapshot snapshot = take_backstop_snapshot(scanned_git_configs(prepared->plan));
  WrittenPaths written;
  LaunchIo io;
  io.events = &*events;
  io.pass_fds.push_back(program_pipe->read.get());
  io.pass_fds.push_back(mounts->get());
  if (store) io.pass_fds.push_back(store->fd.get());
  ChangedPaths changed;
  if (cmd.env) io.env = &*cmd.env;
  io.stdio = cmd.stdio;
  io.on_spawned = cmd.on_spawned;
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
    auto wire = program_wire();
    if (!wire) return std::move(wire).error();
    if (!created) {
      if (auto r = sink.create_now(); !r) return std::move(r).error();
    }
    auto opened = sink.open(*prepared);
    if (!opened) return std::move(opened).error();
    record = *opened;
    (*proxy)->serve();
    wait_for_coarse_clock(snapshot);  // the backstop's "during the session" starts here
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
      written.note(*w);
      w->reason = fs_denial_reason(*w, prepared->plan, &prepared->policy);
      w->unguarded = unguarded_protected_name(*w, prepared->policy.fs);
    }
    changed.note(*body);
    append(events::Source::kObserver, std::move(body).value());
  };
  // The command's output: logged chunk by chunk (the exact bytes, for replay), then
  // passed on. Nothing in it is ever parsed: a command printing event JSON only prints.
  const std::size_t max_chunk = events::Limits::log().max_data;
  // vigil.log.maxOutputBytes bounds the log, never the output: past it the command's
  // output still reaches its destination whole, only its copy in the log stops (once,
  // said by a log.truncated record; the bytes left out are counted).
  const std::uint64_t log_cap = prepared->policy.vigil.log_max_output_bytes;
  std::uint64_t logged_output = 0;
  bool output_cut = false;
  bool stderr_ends_line = true;  // nothing written yet counts as the start of a line
  io.capture_output = cmd.capture_output;
  io.interrupted_fd = cmd.interrupted_fd;
  io.merge_output = cmd.merge_output;
  io.on_output = [&](OutputStream s, std::string_view bytes) {
    const std::uint64_t room = log_cap - logged_output;
    const std::string_view kept =
        bytes.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, bytes.size())));
    logged_output += kept.size();
    // A record holds at most the log's chunk size: split bigger reads.
    for (std::string_view rest = kept; !rest.empty();) {
      const std::string_view chunk = rest.substr(0, max_chunk);
      rest.remove_prefix(chunk.size());
      if (s == OutputStream::kStdout)
        append(events::Source::kSupervisor, events::IoStdout{std::string(chunk)});
      else
        append(events::Source::kSupervisor, events::IoStderr{std::string(chunk)});
    }
    if (kept.size() < bytes.size()) {
      if (!output_cut) append(events::Source::kSupervisor, events::LogTruncated{log_cap});
      output_cut = true;
      record->count("io.unlogged_bytes", bytes.size() - kept.size());
    }
    if (s == OutputStream::kStderr || io.merge_output) stderr_ends_line = bytes.back() == '\n';
    const bool open = forward(s, bytes);
    if (!open) record->count(s == OutputStream::kStdout ? "io.stdout_closed" : "io.stderr_closed");
    return open;
  };
  if (cmd.timeout_s) io.timeout_ms = static_cast<int>(*cmd.timeout_s * 1000.0);
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), io);
  (*proxy)->stop();
  // Only those no other session may have capped as existing files (session_dir.h).
  session->finish(placeholders);
  // Every sandbox process is gone: nothing can race the check. (A launch error after the
  // command may have run is checked all the same.)
  if (record != nullptr) {
    run_backstop(prepared->policy, snapshot, std::move(written), placeholders, cmd.quarantine_id,
                 *record);
  }
  if (record != nullptr && store) {
    ContentStore post(store->fd.get(), prepared->policy.vigil.capture_caps);
    post.count_used(changed.pre_image_bytes());
    changed.take_post_images(post, [&](events::FsImage e) { append(events::Source::kSupervisor, std::move(e)); });
  }
  if (!launched) return std::move(launched).error();

  // Tell the model what was stopped, after everything the command printed.
  SandboxedOutcome outcome;
  outcome.exit_code = launched->exit_code;
  outcome.annotation = record->annotation();
  if (cmd.violations_json) outcome.violations_json = record->violations_json();
  if (!outcome.annotation.empty() && cmd.annotate_stderr) {
    // Uncaptured stderr may end anywhere: then a newline always goes first.
    const bool newline_before = !cmd.capture_output || !stderr_ends_line;
    const std::string text = (newline_before ? "\n" : "") + outcome.annotation;
    if (cmd.capture_output) {
      forward(OutputStream::kStderr, text);
    } else {
      std::fflush(stdout);
      write_all_to(cmd.stdio[2], text);
    }
    record->log_annotation(outcome.annotation, newline_before);
  }
  if (!launched->limit.empty()) {
    outcome.limit = "limit: " + launched->limit;
    const std::string line = "vigil: the command was killed (" + outcome.limit +
                             ": it ran longer than --timeout allows)\n";
    if (cmd.capture_output) {
      forward(OutputStream::kStderr, line);
    } else {
      write_all_to(cmd.stdio[2], line);
    }
  }
  return outcome;
}

}  // namespace vigil
