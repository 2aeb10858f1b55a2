// run_sandboxed(): policy -> plan -> bwrap argv -> launch -> events, record, annotation.
// The builders it uses are command_args.h's, the streams command_streams.h's, the check
// after the command command_backstop.h's, and a spare's path spare_handoff.h's.
#include "supervisor/command/sandboxed_command.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "bwrap/argv_builder.h"
#include "observer/bridge.h"  // the bridges' ports
#include "observer/dns_stub.h"  // the DNS stub's port
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/wire/env_block.h"
#include "supervisor/launch/external_proxy.h"
#include "supervisor/launch/git_safe_env.h"
#include "supervisor/launch/init_locator.h"
#include "supervisor/launch/launch_gate.h"
#include "supervisor/launch/launch_trace.h"
#include "supervisor/launch/resource_caps.h"
#include "supervisor/launch/sandbox_netns.h"
#include "supervisor/launch/session_base.h"
#include "supervisor/log/log_key.h"
#include "supervisor/backstop/backstop.h"
#include "supervisor/command/block_delivery.h"
#include "supervisor/backstop/change_capture.h"
#include "supervisor/backstop/change_clock.h"
#include "supervisor/command/command_args.h"
#include "supervisor/command/command_backstop.h"
#include "supervisor/command/command_streams.h"
#include "supervisor/command/net_capture.h"
#include "supervisor/command/net_events.h"
#include "supervisor/command/session_dir.h"
#include "supervisor/command/session_proxy.h"
#include "supervisor/command/session_request.h"
#include "supervisor/command/spare_handoff.h"

namespace vigil {

PlanRequest command_plan_request(const SandboxedCommand& cmd, const std::string& session_tmp) {
  PlanRequest req;
  req.settings_path = cmd.settings;
  req.allow_writable_settings = cmd.allow_writable_settings;
  req.session_tmp = session_tmp;
  req.cwd = cmd.workspace.empty() ? cmd.cwd : cmd.workspace;
  // Placeholders stay on the best-effort witness only. Where vigil-init refuses protected
  // names at the call (the gatekeeper) they would only break everyday git; what git
  // itself writes inside a .git (hooks, config, commondir) is judged by the backstop below.
  req.placeholders = !gatekeeper_in_force();
  req.refuse_missing_at_call = gatekeeper_in_force();
  req.make_missing_roots = true;
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
  // The command's own, which a spare learns at hand-off. ignoreViolations (srt): a denial
  // it matches stays in the log, marked, out of the block.
  CommandOwner owner;
  owner.ignore_command = ignore_command_line(cmd.command);
  owner.stdio = cmd.stdio;
  owner.quarantine_id = cmd.quarantine_id;
  // (A spare's proxy serves before its record is open: nothing can reach it then, and
  // nothing is logged if anything did.)
  CommandStreams streams(*prepared, record, owner.ignore_command, forward, cmd.merge_output);
  // Post-images only of what the sandbox could write on the host (host_scope.h).
  HostScope scope = host_scope_of(prepared->policy, session_base_dir());
  scope.sandbox_own.push_back(session->tmp());
  streams.changed.set_scope(scope);
  auto append = [&streams](events::Source src, events::Body body) {
    streams.append(src, std::move(body));
  };
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
  // credentials.envVars (srt): denied ones leave the command's environment; masked ones
  // are sentinels there, their real values only in this proxy's TLS helper. A spare's
  // command brings its environment at hand-off (spare_mismatch refuses a spare then).
  auto masked = command_credentials(prepared->policy, cmd.env);
  VIGIL_TRY(masked);
  ProxyTls tls;
  tls.sentinels = masked->table;
  tls.aws_pairs = prepared->policy.credentials.aws_pairs;
  tls.sigv4 = prepared->policy.credentials.sigv4;
  tls.upstream_ca = cmd.proxy_test.upstream_ca;
  tls.on_request = [&](const events::NetRequest& r) { append(events::Source::kProxy, r); };
  ProxyAsk ask = cmd.ask;
  if (ask.timeout_from_settings)
    ask.timeout = std::chrono::milliseconds(prepared->policy.vigil.network_ask_timeout_ms);
  auto proxy = SessionProxy::open(
      prepared->policy.net, session->proxy_socket(),
      [&](const events::NetDecision& d) {
        append(events::Source::kProxy,
               recorded_decision(d, prepared->policy, owner.ignore_command));
      },
      [&](const events::NetUpstreamFailure& f) { append(events::Source::kProxy, f); },
      cmd.proxy_test, ask, &tls);
  VIGIL_TRY(proxy);
  for (const auto& w : masked->warnings) print_warning(w);
  // The bridges vigil-init binds inside the sandbox's network namespace: in an agent
  // session's shared one, on this command's own loopback address (session_netns.h).
  const std::string loopback = cmd.netns ? cmd.netns->next_loopback() : "127.0.0.1";
  in.session_net = cmd.netns != nullptr;
  in.setenv = proxy_environment(session->tmp(), init::kHttpProxyPort, init::kSocksProxyPort,
                                /*own_loopback=*/true, loopback);
  const std::size_t proxy_setenv_count = in.setenv.size();
  for (auto& kv : git_safe_directory_env(prepared->policy.git_safe_directories,
                                         env_value(cmd.env, "GIT_CONFIG_COUNT")))
    in.setenv.push_back(std::move(kv));
  in.late_ro_binds = {session->proxy_socket()};
  // The session CA the proxy's TLS helper signs with, in a bundle beside the system's
  // roots, read-only inside; the CA's key stays in the helper.
  if (!(*proxy)->ca_pem().empty()) {
    const std::string bundle = session->path() + "/tls-ca-bundle.pem";
    VIGIL_TRY_VOID(write_session_file(
        bundle, trust_bundle((*proxy)->ca_pem(),
                             prepared->policy.net.tls_terminate.extra_ca_cert_paths)));
    for (auto& kv : trust_environment(bundle)) in.setenv.push_back(std::move(kv));
    in.late_ro_binds.push_back(bundle);
  }
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
  // A spare's command comes over a socketpair (observer/command_handoff.h).
  std::optional<SpareHandoff> handoff;
  if (spare) {
    auto h = SpareHandoff::open();
    VIGIL_TRY(h);
    handoff = std::move(h).value();
  }
  // The command's environment goes in through vigil-init (wire/env_block.h), never
  // through bwrap's: bwrap runs on the host, where LD_PRELOAD, LD_LIBRARY_PATH or
  // GCONV_PATH of the caller's choosing would run code (a spare's comes at hand-off).
  std::optional<UniqueFd> env_block;
  if (!spare) {
    auto block = command_env_block(masked->env, in.setenv);
    VIGIL_TRY(block);
    env_block = std::move(block).value();
  }
  const bool gatekeeper = gatekeeper_in_force();
  // vigil.network.capture (observer/inet_broker.h): needs the gatekeeper's kernel (5.14:
  // it installs the socket at the caller's number with ADDFD, and traps connect() with the
  // broker's table); elsewhere the old behaviour, as `vigil doctor` says.
  std::optional<NetCaptureSetup> capture;
  if (prepared->policy.vigil.network_capture && gatekeeper) {
    auto c = prepare_net_capture(**proxy, session->path(), loopback);
    VIGIL_TRY(c);
    capture = std::move(c).value();
    if (capture) in.resolv_conf = capture->resolv_conf;
  }
  InitArgsInputs init_in;
  init_in.policy = &prepared->policy;
  init_in.plan = &prepared->plan;
  init_in.events_fd = events->write.get();
  init_in.program_fd = program_pipe->read.get();
  init_in.command_fd = handoff ? handoff->command_fd() : -1;
  init_in.env_fd = env_block ? env_block->get() : -1;
  init_in.capture_fd = store ? store->fd.get() : -1;
  const CaptureBudget budget = store ? capture_budget(*store, prepared->policy.vigil.capture_caps)
                                     : CaptureBudget{};
  init_in.capture_left = budget.left;
  init_in.capture_skip = capture_skip_trees(scope);
  init_in.proxy_socket = session->proxy_socket();
  if (cmd.netns) init_in.loopback = loopback;
  init_in.outer_proc = in.weaker_nested;
  init_in.gatekeeper = gatekeeper;
  init_in.external = external.init_args;
  init_in.caps = (*caps)->init_args();
  init_in.net_capture_fd = capture ? capture->listener.get() : -1;
  const InitOptions init_opts = vigil_init_options(init_in);
  in.init_args = init_opts.args;
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  // A spare's placeholders would stand in the workspace between commands.
  if (spare && !placeholders.empty())
    return make_error(Errc::kUnsupported,
                      "a spare sandbox is not kept where placeholders are made");
  // Should this process be killed, the next session removes them (session_dir.h).
  VIGIL_TRY_VOID(session->record_placeholders(placeholders));
  if (auto r = create_content_placeholders(placeholders); !r) {
    session->finish(placeholders);  // those written before the failure
    return std::move(r).error();
  }
  // Before anything runs: what the backstop must take as the host's own (a spare's is
  // taken again at hand-off).
  BackstopSnapshot snapshot = take_backstop_snapshot(scanned_git_configs(prepared->plan));
  // A floor stamp (change_clock.h) where the kernel has one: then nothing waits below. (A
  // spare's start is its request's, taken again at hand-off.)
  if (!spare) {
    if (auto clock = ChangeClock::open(session->path())) snapshot.start = change_start(&*clock);
  }
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
    // The DNS stub's port (supervisor/launch/sandbox_netns.h), before vigil-init runs.
    // Not lowered: vigil-init says names will not resolve, and connects are still captured.
    if (checked && capture) {
      if (auto low = lower_unprivileged_ports(sandbox, init::kDnsPort); !low)
        print_warning(low.error().message);
    }
    if (checked) {
      // The backstop's "during the session" starts before anything of the sandbox runs.
      // Without a floor stamp, waited for here, after the check, rather than before it:
      // the check takes about a clock tick itself, so the wait is mostly over.
      if (!spare) wait_for_coarse_clock(snapshot);
      return {};
    }
    // A sandbox vigil could not set up as planned (exit 125), like bwrap failing.
    return make_error(Errc::kUnsupported,
                      "refusing to run the command: " + checked.error().message);
  };
  if (store) io.pass_fds.push_back(store->fd.get());
  if (capture) io.pass_fds.push_back(capture->listener.get());
  // bwrap's own environment: vigil's minimal one, whatever the command's is.
  static const std::vector<std::string> host_env = wire::host_helper_environment();
  io.env = &host_env;
  if (env_block) io.pass_fds.push_back(env_block->get());
  io.stdio = cmd.stdio;
  if (cmd.netns) io.join = cmd.netns->join();
  pid_t bwrap_pid = -1;
  io.on_spawned = [&](pid_t pid) {
    bwrap_pid = pid;
    if (cmd.on_spawned) cmd.on_spawned(pid);
  };
  if (handoff) handoff->prepare(io);
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
    auto wire = compiled_program(unix_sockets_mode(prepared->policy.net, gatekeeper),
                                 init_opts.traps_reads, init_opts.captures);
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
  io.on_event_line = [&](std::string_view line) { streams.on_event_line(line); };
  io.capture_output = cmd.capture_output;
  io.interrupted_fd = cmd.interrupted_fd;
  io.merge_output = cmd.merge_output;
  io.on_output = [&](OutputStream s, std::string_view bytes) {
    return streams.on_output(s, bytes);
  };
  if (limits.timeout_s) io.timeout_ms = static_cast<int>(*limits.timeout_s * 1000.0);
  io.enter_caps = [&] { return (*caps)->enter(); };
  io.leave_caps = [&] { (*caps)->leave(); };
  io.check_limits = [&](pid_t init_pid) { return (*caps)->check(init_pid); };
  io.check_every_ms = (*caps)->check_every_ms();
  if (handoff) {
    io.before_wait = [&]() -> Result<void> {
      SpareHandoff::Launched l;
      l.wait = cmd.spare;
      l.built = std::move(*spare_built);
      l.session_tmp = session->tmp();
      l.bwrap = bwrap_pid;
      l.prepared = &*prepared;
      l.setenv = in.setenv;
      l.proxy_setenv = proxy_setenv_count;
      l.capture_output = cmd.capture_output;
      return handoff->take_command(std::move(l), store, snapshot, sink, record, owner);
    };
  }
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), io);
  // The output is over: the tail of a long one goes to the log now (vigil.log.maxOutputBytes).
  streams.finish();
  // A spare never handed a command leaves no store behind (nothing wrote to it).
  if (spare && owner.handed == nullptr && store) ::rmdir(store->dir.c_str());
  (*proxy)->stop();
  // Only those no other session may have capped as existing files (session_dir.h).
  session->finish(placeholders);
  // Every sandbox process is gone: nothing can race the check. (A launch error after the
  // command may have run is checked all the same.)
  if (record != nullptr) {
    const DebugPhase timed("backstop");
    run_backstop(prepared->policy, snapshot, std::move(streams.written), placeholders,
                 owner.quarantine_id, *record);
  }
  if (record != nullptr && store) {
    const DebugPhase timed("capture");
    CaptureCaps left = prepared->policy.vigil.capture_caps;
    left.max_session_bytes = budget.left;
    ContentStore post(store->fd.get(), left);
    post.count_used(streams.changed.pre_image_bytes());
    const std::size_t capped = streams.changed.take_post_images(
        post, [&](events::FsImage e) { append(events::Source::kSupervisor, std::move(e)); });
    // A cap that stopped capture is said in the log and in the block: what it left out
    // cannot be undone.
    if (capped + streams.changed.capped_pre_images() > 0) {
      append(events::Source::kSupervisor,
             capture_cap_record(budget, prepared->policy.vigil.capture_caps,
                                capped + streams.changed.capped_pre_images()));
    }
  }
  // A store nothing was kept in is not left behind (rmdir fails on one that holds files):
  // the caps' accounting walks every store at each launch.
  if (store) ::rmdir(store->dir.c_str());
  VIGIL_TRY(launched);

  // A cap vigil ended the command at goes in the block, first (cap_plan.h). A process
  // killed by SIGXFSZ is the file-size cap: no other sender is plausible in a sandbox.
  std::string limit = launched->limit;
  if (limit.empty() && cap_plan->max_file_bytes > 0 &&
      launched->exit_code == exit_code_for_signal(SIGXFSZ)) {
    limit = "file size";
  }
  if (!limit.empty()) {
    append(events::Source::kSupervisor,
           events::LimitReached{limit, limit_detail(limit, *cap_plan)});
  }
  // Tell the model what was stopped, after everything the command printed.
  SandboxedOutcome outcome;
  outcome.exit_code = launched->exit_code;
  outcome.annotation = record->annotation();
  if (cmd.violations_json) outcome.violations_json = record->violations_json();
  // Outside the block: a harness reading the block as "something was stopped" must not
  // see what was allowed (git init's own hooks).
  if (const std::string n = record->note(); !n.empty()) print_debug(n);
  if (cmd.annotate_stderr) {
    deliver_block(*record, outcome.annotation,
                  block_needs_newline(cmd.capture_output, streams.stderr_ends_line()),
                  [&](std::string_view text) {
                    if (cmd.capture_output) {
                      forward(OutputStream::kStderr, text);
                    } else {
                      std::fflush(stdout);
                      write_all_to(owner.stdio[2], text);
                    }
                  });
  } else if (!outcome.annotation.empty()) {
    // The block goes to the model in the caller's result (`serve`, `mcp`): the log records
    // it all the same, so that replay --annotate shows what the model was told, in every
    // mode.
    record->log_annotation(outcome.annotation, false);
  }
  if (!limit.empty()) {
    outcome.limit = "limit: " + limit;
    const std::string line = "vigil: the command was ended (" + outcome.limit + ": " +
                             limit_detail(limit, *cap_plan) + ")\n";
    if (cmd.capture_output) {
      forward(OutputStream::kStderr, line);
    } else {
      write_all_to(owner.stdio[2], line);
    }
  }
  return outcome;
}

}  // namespace vigil
