// run_sandboxed(): policy -> plan -> bwrap argv -> launch -> events, record, annotation.
#include "supervisor/session/sandboxed_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "bwrap/argv_builder.h"
#include "filters/sandbox_program.h"
#include "observer/bridge.h"  // the bridges' ports
#include "supervisor/session/backstop.h"
#include "supervisor/session/block_delivery.h"
#include "supervisor/session/change_capture.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/wire/init_args.h"
#include "supervisor/launch/external_proxy.h"
#include "supervisor/launch/git_safe_env.h"
#include "supervisor/launch/deny_at_call.h"
#include "supervisor/launch/init_locator.h"
#include "supervisor/launch/launch_gate.h"
#include "supervisor/launch/launch_trace.h"
#include "supervisor/session/log_guard.h"
#include "supervisor/log/log_key.h"
#include "supervisor/report/annotation.h"
#include "supervisor/replay/policy_judge.h"
#include "supervisor/session/quarantine.h"
#include "supervisor/launch/resource_caps.h"
#include "supervisor/session/session_dir.h"
#include "supervisor/session/session_proxy.h"
#include "supervisor/session/session_runner.h"
#include "observer/command_handoff.h"

namespace vigil {
namespace {

// The plan's writable mounts, whose identity the launch check compares (launch_gate.h).
std::vector<std::string> writable_mounts(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kWritable || op.kind == OpKind::kPin) out.push_back(op.path);
  }
  return out;
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

// Which of the log's names the sandbox gets read-only (log_guard.h, macOS's rule too).
std::optional<std::string> log_bind(const PreparedSandbox& prepared, const std::string& log_path) {
  auto guard = log_guard(prepared.plan, prepared.policy.fs.allow_write, resolve_symlinks(log_path));
  if (!guard) return std::nullopt;
  return guard->path;
}

// Which unix-socket table the policy asks for (filters/filter_specs.h). With an empty
// network.allowUnixSockets the broker still runs wherever the gatekeeper does: it refuses
// every unix socket, as the plain filter would, but with a `deny socket AF_UNIX` line, so
// the model hears of the refusal and of the key that lifts it (the plain filter's EPERM is
// silent). Kernels without the gatekeeper (< 5.14) keep the plain filter.
UnixSockets unix_sockets_mode(const NetworkPolicy& net) {
  if (net.allow_all_unix_sockets) return UnixSockets::kAll;
  if (!net.allow_unix_sockets.empty() || gatekeeper_in_force()) return UnixSockets::kBrokered;
  return UnixSockets::kBlocked;
}

// vigil-init's seccomp program, on the wire: the same for every command of one unix-socket
// mode and one read mode (it depends on nothing else but this build), so a session compiles
// each once. With `reads` (vigil.observer.reads), the program that traps read-only opens too.
Result<std::string> program_wire(UnixSockets unix, bool reads) {
  auto compile = [](UnixSockets mode, bool r) -> Result<std::string> {
    auto program = sandbox_program(/*observe=*/true, mode, r);
    VIGIL_TRY(program);
    return encode_program(*program);
  };
  static std::mutex mu;
  static std::map<std::pair<UnixSockets, bool>, Result<std::string>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(unix, reads);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, compile(unix, reads)).first;
  return it->second;
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

PlanRequest command_plan_request(const SandboxedCommand& cmd, const std::string& session_tmp) {
  PlanRequest req;
  req.settings_path = cmd.settings;
  req.allow_writable_settings = cmd.allow_writable_settings;
  req.session_tmp = session_tmp;
  req.cwd = cmd.cwd;
  // Placeholders stay on the best-effort witness only. Where vigil-init refuses protected
  // names at the call (the gatekeeper) they would only break everyday git; what git
  // itself writes inside a .git (hooks, config, commondir) is judged by the backstop below.
  req.placeholders = !gatekeeper_in_force();
  req.refuse_missing_at_call = gatekeeper_in_force();
  return req;
}

Result<SandboxedOutcome> run_sandboxed(
    const SandboxedCommand& cmd, CommandLogSink& sink,
    const std::function<bool(OutputStream, std::string_view)>& forward) {
  if (cmd.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  auto session = SessionDir::create();
  VIGIL_TRY(session);

  PlanRequest req = command_plan_request(cmd, session->tmp());
  req.before_scan = [&](const std::vector<std::string>& roots) {
    return session->hold_roots(roots);
  };
  auto prepared = prepare_sandbox(req);
  VIGIL_TRY(prepared);
  if (cmd.net) prepared->policy.net = *cmd.net;
  // A spare's warnings are printed by the request that refreshes its plan (as each
  // command's are), not when it is built.
  const bool spare = cmd.spare != nullptr;
  if (!spare) {
    for (const auto& w : prepared->warnings) print_warning(w);
  }
  // What a spare is compared with at hand-off: the plan before the session's additions.
  std::optional<PreparedSandbox> spare_built;
  if (spare) spare_built = *prepared;
  // Resource caps (vigil.limits; --timeout wins over its timeoutSeconds): the cgroups are
  // made and their limits written now; bwrap is born in them (resource_caps.h).
  LimitsOptions limits = prepared->policy.vigil.limits;
  if (cmd.timeout_s) limits.timeout_s = cmd.timeout_s;
  auto cap_plan = build_cap_plan(limits, cmd.host_limits ? *cmd.host_limits : probe_host_limits());
  VIGIL_TRY(cap_plan);
  auto caps = CommandCaps::create(*cap_plan);
  VIGIL_TRY(caps);

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
  VIGIL_TRY(init);
  VIGIL_TRY_VOID(check_not_writable(prepared->plan, *init));

  // The log: every record hash-chained to the one before; the violations the model is
  // told about are collected from exactly what was logged. It is opened while bwrap
  // builds the sandbox, before the command can run; only a log the sandbox could
  // otherwise reach must exist first (below).
  auto log_path = sink.log_path(*prepared);
  VIGIL_TRY(log_path);
  if (debug_enabled()) print_debug("session log " + *log_path);
  // What the session itself adds to the plan; the policy (and its digest) stays the
  // settings' own. The key that seals logs is hidden from every sandbox
  // (supervisor/log/log_key.h).
  Policy planned = prepared->policy;
  auto key_path = log_key_path();
  VIGIL_TRY(key_path);
  planned.fs.deny_read.push_back(session_rule(resolve_symlinks(*key_path), "session log key"));
  CommandRecord* record = nullptr;
  // (A spare's proxy serves before its record is open: nothing can reach it then, and
  // nothing is logged if anything did.)
  auto append = [&record](events::Source src, events::Body body) {
    if (record != nullptr) record->append(src, std::move(body));
  };
  // The command's own, which a spare learns at hand-off.
  const SpareCommand* handed = nullptr;
  std::array<int, 3> stdio = cmd.stdio;
  std::string quarantine_id = cmd.quarantine_id;

  // ignoreViolations (srt): a denial it matches stays in the log, marked, out of the block.
  std::string ignore_command = ignore_command_line(cmd.command);
  auto status = make_status_pipe();
  VIGIL_TRY(status);
  auto events = make_event_pipe();
  VIGIL_TRY(events);
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
      [&](const events::NetDecision& d) {
        events::NetDecision e = d;
        e.rule_id = record_rule_id(prepared->policy.net, e);
        if (e.verdict == events::NetVerdict::kDenied) {
          e.ignored = ignored_by(prepared->policy.ignore_violations, ignore_command,
                                 e.host + ":" + std::to_string(e.port));
        }
        append(events::Source::kProxy, std::move(e));
      },
      [&](const events::NetUpstreamFailure& f) { append(events::Source::kProxy, f); },
      cmd.proxy_test, cmd.ask);
  VIGIL_TRY(proxy);
  // The bridges vigil-init binds inside the sandbox's network namespace.
  in.setenv = proxy_environment(session->tmp(), init::kHttpProxyPort, init::kSocksProxyPort,
                                /*own_loopback=*/true);
  const std::size_t proxy_setenv_count = in.setenv.size();
  for (auto& kv : git_safe_directory_env(prepared->policy.git_safe_directories,
                                         env_value(cmd.env, "GIT_CONFIG_COUNT")))
    in.setenv.push_back(std::move(kv));
  in.late_ro_binds = {session->proxy_socket()};
  // network.httpProxyPort / socksProxyPort: that bridge leads to the user's own proxy.
  const ExternalBridges external = external_bridges(prepared->policy.net, session->proxy_socket());
  in.late_ro_binds.insert(in.late_ro_binds.end(), external.binds.begin(), external.binds.end());
  // A log the session could rewrite proves nothing: write-denied inside, so it must exist
  // before bwrap binds it. As for any denied path in a writable root, every directory
  // from the root down to it is pinned (a mount point cannot be renamed): `mv ~/.local
  // ~/.local.hidden` and a forged log in a new ~/.local/state/vigil/sessions/ fail.
  bool created = false;
  if (auto bind = log_bind(*prepared, *log_path)) {
    VIGIL_TRY_VOID(sink.create_now());
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
  trace_plan(prepared->plan);
  in.kernel_masks = present_kernel_masks();
  in.weaker_nested = prepared->policy.weaker_nested_sandbox;
  in.empty_file = session->empty_file();
  in.json_status_fd = status->write.get();
  in.command = cmd.command;
  in.init = *init;
  auto program_pipe = make_program_pipe();
  VIGIL_TRY(program_pipe);
  auto release = make_program_pipe();  // a pipe like it: bwrap's --block-fd
  VIGIL_TRY(release);
  in.block_fd = release->read.get();
  auto identities = host_identities(writable_mounts(prepared->plan));
  VIGIL_TRY(identities);
  // vigil-init's options, written by the table it parses them with (core/wire/init_args.h).
  wire::InitArgs init_opts;
  init_opts.events_fd = events->write.get();
  init_opts.program_fd = program_pipe->read.get();
  init_opts.proxy_socket = session->proxy_socket();
  init_opts.overflow_drop =
      prepared->policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop;
  init_opts.no_sync_wake_up = !prepared->policy.vigil.observer_sync_wake_up;
  init_opts.outer_proc = in.weaker_nested;
  if (store) {
    init_opts.capture_fd = store->fd.get();
    const auto& cc = prepared->policy.vigil.capture_caps;
    init_opts.capture_caps = wire::CaptureCaps{cc.max_file_bytes, cc.max_session_bytes};
  }
  // network.allowUnixSockets: brokered by vigil-init (observer/unix_broker.h). The mode
  // goes to vigil-init explicitly: it must handle the broker's traps whatever the list.
  init_opts.unix_broker = unix_sockets_mode(prepared->policy.net) == UnixSockets::kBrokered;
  if (!prepared->policy.net.allow_all_unix_sockets)
    init_opts.unix_sockets = prepared->policy.net.allow_unix_sockets;
  in.init_args = wire::option_args(init_opts);
  in.init_args.insert(in.init_args.end(), external.init_args.begin(), external.init_args.end());
  for (auto& a : (*caps)->init_args()) in.init_args.push_back(std::move(a));
  const auto refused = refuse_create_args(prepared->plan);
  in.init_args.insert(in.init_args.end(), refused.begin(), refused.end());
  if (gatekeeper_in_force()) {
    const auto globs = refuse_glob_args(prepared->policy.fs);
    in.init_args.insert(in.init_args.end(), globs.begin(), globs.end());
  }
  // Reads are trapped only when there is something hidden to tell of.
  const auto hidden = prepared->policy.vigil.observer_reads ? hidden_read_args(prepared->plan)
                                                            : std::vector<std::string>();
  in.init_args.insert(in.init_args.end(), hidden.begin(), hidden.end());
  // A spare's command comes over a socketpair (observer/command_handoff.h).
  UniqueFd handoff_ours, handoff_theirs;
  if (spare) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      return system_error("socketpair");
    handoff_ours.reset(sv[0]);
    handoff_theirs.reset(sv[1]);
    in.init_args.insert(in.init_args.end(), {"--command-fd", std::to_string(sv[1])});  // wire::InitArgs::command_fd
  }
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  // A spare's placeholders would stand in the workspace between commands.
  if (spare && !placeholders.empty())
    return make_error(Errc::kUnsupported, "a spare sandbox is not kept where placeholders are made");
  // Should this process be killed, the next session removes them (session_dir.h).
  VIGIL_TRY_VOID(session->record_placeholders(placeholders));
  if (auto r = create_content_placeholders(placeholders); !r) {
    session->finish(placeholders);  // those written before the failure
    return std::move(r).error();
  }
  // Before anything runs: what the backstop must take as the host's own (a spare's is
  // taken again at hand-off).
  BackstopSnapshot snapshot = take_backstop_snapshot(scanned_git_configs(prepared->plan));
  WrittenPaths written;
  LaunchIo io;
  io.events = &*events;
  io.pass_fds.push_back(program_pipe->read.get());
  io.pass_fds.push_back(release->read.get());
  // Nothing of the sandbox runs before its mount table is the plan's (launch_check.h).
  const std::vector<PlannedMount> planned_table = planned_mounts(bwrap_args);
  io.release = &release->write;
  io.before_release = [&](pid_t sandbox) -> Result<void> {
    release->read.reset();
    // Into the command's cgroup v2 while bwrap builds the mounts and they are checked.
    (*caps)->begin_adopt(sandbox);
    auto checked =
        check_sandbox_mounts(sandbox, planned_table, *identities, std::chrono::seconds(10));
    auto adopted = (*caps)->end_adopt();
    if (checked && !adopted) checked = std::move(adopted);
    if (checked) {
      // The backstop's "during the session" starts before anything of the sandbox runs.
      // Waited for here, after the check, rather than before it: the check takes about a
      // clock tick itself, so the wait is mostly over, where before it serialised up to a
      // tick (4 ms at HZ=250) of sleep with every command's start.
      if (!spare) wait_for_coarse_clock(snapshot);
      return {};
    }
    // A sandbox vigil could not set up as planned (exit 125), like bwrap failing.
    return make_error(Errc::kUnsupported, "refusing to run the command: " + checked.error().message);
  };
  if (store) io.pass_fds.push_back(store->fd.get());
  ChangedPaths changed;
  if (cmd.env) io.env = &*cmd.env;
  io.stdio = cmd.stdio;
  pid_t bwrap_pid = -1;
  io.on_spawned = [&](pid_t pid) {
    bwrap_pid = pid;
    if (cmd.on_spawned) cmd.on_spawned(pid);
  };
  // A spare holds nothing of the session's until it is handed a command: /dev/null as
  // its stdio, an environment of bwrap's --setenv alone.
  UniqueFd dev_null;
  const std::vector<std::string> no_env;
  if (spare) {
    dev_null.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!dev_null) return system_error("cannot open /dev/null");
    io.stdio = {dev_null.get(), dev_null.get(), dev_null.get()};
    io.env = &no_env;
    io.pass_fds.push_back(handoff_theirs.get());
  }
  // While bwrap builds the sandbox (~10 ms): the seccomp program, the log and the proxy.
  // The program goes last: its arrival starts the command (filters/sandbox_program.h).
  io.after_spawn = [&]() -> Result<void> {
    // Both ends closed on every way out: written, the program is vigil-init's go; closed
    // unwritten (any error below), vigil-init refuses to start the command.
    struct ClosePipe {
      Pipe& pipe;
      ~ClosePipe() {
        pipe.write.reset();
        pipe.read.reset();
      }
    } close_pipe{*program_pipe};
    auto wire = program_wire(unix_sockets_mode(prepared->policy.net), !hidden.empty());
    VIGIL_TRY(wire);
    if (!created) {
      VIGIL_TRY_VOID(sink.create_now());
    }
    if (!spare) {
      auto opened = sink.open(*prepared);
      VIGIL_TRY(opened);
      record = *opened;
    }
    (*proxy)->serve();
    // The pipe holds the whole program (far below its capacity): this never blocks.
    if (auto w = write_all(program_pipe->write.get(), *wire, "vigil-init's seccomp program"); !w)
      return std::move(w).error();
    return {};
  };
  io.hold_records = [&](bool on) {
    if (record != nullptr) record->hold_writes(on);
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
      w->rule_id = record_rule_id(prepared->policy, prepared->plan, *w);
      if (w->verdict == Verdict::kDenied) {
        w->ignored = ignored_by(prepared->policy.ignore_violations, ignore_command,
                                w->resolved.empty() ? w->path : w->resolved);
      }
    }
    if (auto* r = std::get_if<events::FsRead>(&*body)) {
      if (!confirm_hidden_read(r, prepared->plan)) {
        record->count("reads.unconfirmed");  // not a path this plan hides
        return;
      }
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
  if (limits.timeout_s) io.timeout_ms = static_cast<int>(*limits.timeout_s * 1000.0);
  io.enter_caps = [&] { return (*caps)->enter(); };
  io.leave_caps = [&] { (*caps)->leave(); };
  io.check_limits = [&](pid_t init_pid) { return (*caps)->check(init_pid); };
  io.check_every_ms = (*caps)->check_every_ms();
  if (spare) {
    io.before_wait = [&]() -> Result<void> {
      handoff_theirs.reset();  // the sandbox's alone: its end closing is our EOF
      SpareShape shape;
      shape.prepared = std::move(*spare_built);
      shape.session_tmp = session->tmp();
      auto ids = host_identities(spare_identity_paths(shape.prepared.plan));
      VIGIL_TRY(ids);
      shape.identities = std::move(ids).value();
      handed = cmd.spare->wait(std::move(shape));
      if (handed == nullptr) return make_error(Errc::kNotFound, "the spare sandbox was discarded");
      // Still there? One that died meanwhile is not the command's failure: the session
      // launches afresh (nothing was recorded yet).
      pollfd alive{handoff_ours.get(), POLLIN | POLLRDHUP, 0};
      if (::poll(&alive, 1, 0) != 0) return make_error(Errc::kNotFound, "the spare sandbox ended");
      ignore_command = ignore_command_line(handed->command);
      stdio = handed->stdio;
      quarantine_id = handed->quarantine_id;
      if (handed->on_spawned) handed->on_spawned(bwrap_pid);
      if (store) VIGIL_TRY_VOID(rename_capture_store(*store, quarantine_id));
      snapshot = take_backstop_snapshot(scanned_git_configs(prepared->plan));
      snapshot.start = handed->backstop_start;
      auto opened = sink.open(*prepared);
      VIGIL_TRY(opened);
      record = *opened;
      std::vector<std::string> inherited;
      if (!handed->env) {
        for (char** e = environ; *e != nullptr; ++e) inherited.emplace_back(*e);
      }
      auto set = in.setenv;
      set.resize(proxy_setenv_count);
      for (auto& kv : git_safe_directory_env(prepared->policy.git_safe_directories,
                                             env_value(handed->env, "GIT_CONFIG_COUNT")))
        set.push_back(std::move(kv));
      init::HandedCommand what{handed->command, handed_environment(handed->env, inherited, set)};
      std::array<int, 3> fds = stdio;
      if (cmd.capture_output) fds[1] = fds[2] = -1;  // ours: the pipes bwrap was given
      // Nothing of the command runs before this: the record is open, the clock past the
      // snapshot.
      wait_for_coarse_clock(snapshot);
      VIGIL_TRY_VOID(init::send_handed_command(handoff_ours.get(), what, fds));
      handoff_ours.reset();
      return {};
    };
  }
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), io);
  // A spare never handed a command leaves no store behind (nothing wrote to it).
  if (spare && handed == nullptr && store) ::rmdir(store->dir.c_str());
  (*proxy)->stop();
  // Only those no other session may have capped as existing files (session_dir.h).
  session->finish(placeholders);
  // Every sandbox process is gone: nothing can race the check. (A launch error after the
  // command may have run is checked all the same.)
  if (record != nullptr) {
    const DebugPhase timed("backstop");
    run_backstop(prepared->policy, snapshot, std::move(written), placeholders, quarantine_id,
                 *record);
  }
  if (record != nullptr && store) {
    const DebugPhase timed("capture");
    ContentStore post(store->fd.get(), prepared->policy.vigil.capture_caps);
    post.count_used(changed.pre_image_bytes());
    changed.take_post_images(post, [&](events::FsImage e) { append(events::Source::kSupervisor, std::move(e)); });
  }
  VIGIL_TRY(launched);

  // A cap vigil ended the command at goes in the block, first (cap_plan.h). A process
  // killed by SIGXFSZ is the file-size cap: no other sender is plausible in a sandbox.
  std::string limit = launched->limit;
  if (limit.empty() && cap_plan->max_file_bytes > 0 &&
      launched->exit_code == exit_code_for_signal(SIGXFSZ)) {
    limit = "file size";
  }
  if (!limit.empty()) {
    append(events::Source::kSupervisor, events::LimitReached{limit, limit_detail(limit, *cap_plan)});
  }
  // Tell the model what was stopped, after everything the command printed.
  SandboxedOutcome outcome;
  outcome.exit_code = launched->exit_code;
  outcome.annotation = record->annotation();
  if (cmd.violations_json) outcome.violations_json = record->violations_json();
  if (cmd.annotate_stderr) {
    deliver_block(*record, outcome.annotation,
                  block_needs_newline(cmd.capture_output, stderr_ends_line),
                  [&](std::string_view text) {
                    if (cmd.capture_output) {
                      forward(OutputStream::kStderr, text);
                    } else {
                      std::fflush(stdout);
                      write_all_to(stdio[2], text);
                    }
                  });
  }
  if (!limit.empty()) {
    outcome.limit = "limit: " + limit;
    const std::string line =
        "vigil: the command was ended (" + outcome.limit + ": " + limit_detail(limit, *cap_plan) + ")\n";
    if (cmd.capture_output) {
      forward(OutputStream::kStderr, line);
    } else {
      write_all_to(stdio[2], line);
    }
  }
  return outcome;
}

}  // namespace vigil
