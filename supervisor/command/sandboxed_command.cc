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
#include "supervisor/command/sandboxed_run.h"
#include "supervisor/command/command_streams.h"
#include "supervisor/command/credential_files.h"
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
  SandboxedRun run(cmd, sink, forward);
  VIGIL_TRY_VOID(run.plan());
  VIGIL_TRY_VOID(run.open_proxy());
  VIGIL_TRY_VOID(run.build_args());
  return run.launch_and_finish();
}

SandboxedRun::SandboxedRun(const SandboxedCommand& cmd, CommandLogSink& sink,
                       const CommandStreams::Forward& forward)
    : cmd_(cmd), sink_(sink), forward_(forward), spare_(cmd.spare != nullptr) {}

Result<void> SandboxedRun::plan() {
  auto session = SessionDir::create();
  VIGIL_TRY(session);
  session_.emplace(std::move(session).value());
  PlanRequest req = command_plan_request(cmd_, session_->tmp());
  req.before_scan = [this](const std::vector<std::string>& roots) {
    return session_->hold_roots(roots);
  };
  auto prepared = prepare_sandbox(req);
  VIGIL_TRY(prepared);
  prepared_.emplace(std::move(prepared).value());
  if (cmd_.net) prepared_->policy.net = *cmd_.net;
  // A spare's warnings are printed by the request that refreshes its plan (as each
  // command's are), not when it is built.
  if (!spare_) {
    for (const auto& w : prepared_->warnings) print_warning(w);
  }
  if (spare_) spare_built_ = *prepared_;
  // Resource caps (vigil.limits; --timeout wins over its timeoutSeconds): the cgroups are
  // made and their limits written now; bwrap is born in them (resource_caps.h).
  limits_ = prepared_->policy.vigil.limits;
  if (cmd_.timeout_s) limits_.timeout_s = cmd_.timeout_s;
  auto cap_plan = build_cap_plan(limits_, cmd_.host_limits ? *cmd_.host_limits : probe_host_limits());
  VIGIL_TRY(cap_plan);
  cap_plan_ = std::move(cap_plan).value();
  auto caps = CommandCaps::create(cap_plan_);
  VIGIL_TRY(caps);
  caps_ = std::move(caps).value();

  bwrap_ = find_bwrap(prepared_->policy.bwrap_path);
  if (bwrap_.empty()) {
    return make_error(
        Errc::kNotFound,
        prepared_->policy.bwrap_path
            ? "bwrapPath " + *prepared_->policy.bwrap_path + " is not an executable file"
            : "bubblewrap (bwrap) is not installed: run `apt-get install bubblewrap` (or pass "
              "--sandbox off to run unconfined, which vigil does not recommend)");
  }
  auto init = locate_vigil_init();
  VIGIL_TRY(init);
  init_ = std::move(init).value();
  VIGIL_TRY_VOID(check_not_writable(prepared_->plan, init_));

  // The log: every record hash-chained to the one before; the violations the model is
  // told about are collected from exactly what was logged. It is opened while bwrap
  // builds the sandbox, before the command can run; only a log the sandbox could
  // otherwise reach must exist first (build_args).
  auto log_path = sink_.log_path(*prepared_);
  VIGIL_TRY(log_path);
  log_path_ = std::move(log_path).value();
  if (debug_enabled()) print_debug("session log " + log_path_);
  // What the session itself adds to the plan; the policy (and its digest) stays the
  // settings' own. The key that seals logs is hidden from every sandbox
  // (supervisor/log/log_key.h).
  planned_ = prepared_->policy;
  auto key_path = log_key_path();
  VIGIL_TRY(key_path);
  planned_.fs.deny_read.push_back(session_rule(resolve_symlinks(*key_path), "session log key"));
  // The command's own, which a spare learns at hand-off. ignoreViolations (srt): a denial
  // it matches stays in the log, marked, out of the block.
  owner_.ignore_command = ignore_command_line(cmd_.command);
  owner_.stdio = cmd_.stdio;
  owner_.quarantine_id = cmd_.quarantine_id;
  // (A spare's proxy serves before its record is open: nothing can reach it then, and
  // nothing is logged if anything did.)
  streams_.emplace(*prepared_, record_, owner_.ignore_command, forward_, cmd_.merge_output);
  // Post-images only of what the sandbox could write on the host (host_scope.h).
  HostScope scope = host_scope_of(prepared_->policy, session_base_dir());
  scope.sandbox_own.push_back(session_->tmp());
  streams_->changed.set_scope(scope);
  scope_ = std::move(scope);
  auto status = make_status_pipe();
  VIGIL_TRY(status);
  status_.emplace(std::move(status).value());
  auto events = make_event_pipe();
  VIGIL_TRY(events);
  events_.emplace(std::move(events).value());
  in_.plan = &prepared_->plan;
  in_.cwd = cmd_.cwd;
  return {};
}

Result<void> SandboxedRun::open_proxy() {
  // The only way out: every client that honours the usual variables goes through the
  // bridges to this command's proxy listener, which decides and explains (a host off the
  // allow list gets a 403 with the reason; with no allow list, every host does). Its
  // socket is bound now (the sandbox binds it in); it serves from when the log is open.
  // One listener per command: its decisions are that command's, even among many.
  // credentials.envVars (srt): denied ones leave the command's environment; masked ones
  // are sentinels there, their real values only in this proxy's TLS helper. A spare's
  // command brings its environment at hand-off (spare_mismatch refuses a spare then).
  auto masked = command_credentials(prepared_->policy, cmd_.env);
  VIGIL_TRY(masked);
  masked_.emplace(std::move(masked).value());
  const Policy& policy = prepared_->policy;
  // credentials.files with mode mask: a copy with sentinels over each real file.
  auto masked_files =
      mask_credential_files(policy, prepared_->plan, session_->path(), &masked_->table);
  VIGIL_TRY(masked_files);
  in_.masked_files = masked_files->binds;
  for (const auto& r : masked_files->hide) planned_.fs.deny_read.push_back(r);
  for (const auto& w : masked_files->warnings) print_warning(w);
  tls_.sentinels = masked_->table;
  tls_.aws_pairs = policy.credentials.aws_pairs;
  tls_.sigv4 = policy.credentials.sigv4;
  tls_.upstream_ca = cmd_.proxy_test.upstream_ca;
  tls_.on_request = [this](const events::NetRequest& r) {
    streams_->append(events::Source::kProxy, r);
  };
  ask_ = cmd_.ask;
  if (ask_.timeout_from_settings)
    ask_.timeout = std::chrono::milliseconds(policy.vigil.network_ask_timeout_ms);
  auto proxy = SessionProxy::open(
      policy.net, session_->proxy_socket(),
      [this](const events::NetDecision& d) {
        streams_->append(events::Source::kProxy,
                         recorded_decision(d, prepared_->policy, owner_.ignore_command));
      },
      [this](const events::NetUpstreamFailure& f) { streams_->append(events::Source::kProxy, f); },
      cmd_.proxy_test, ask_, &tls_);
  VIGIL_TRY(proxy);
  proxy_ = std::move(proxy).value();
  for (const auto& w : masked_->warnings) print_warning(w);
  // The bridges vigil-init binds inside the sandbox's network namespace.
  in_.setenv = proxy_environment(session_->tmp(), init::kHttpProxyPort, init::kSocksProxyPort,
                                 /*own_loopback=*/true);
  proxy_setenv_count_ = in_.setenv.size();
  for (auto& kv : git_safe_directory_env(policy.git_safe_directories,
                                         env_value(cmd_.env, "GIT_CONFIG_COUNT")))
    in_.setenv.push_back(std::move(kv));
  in_.late_ro_binds = {session_->proxy_socket()};
  // The session CA the proxy's TLS helper signs with, in a bundle beside the system's
  // roots, read-only inside; the CA's key stays in the helper.
  if (!proxy_->ca_pem().empty()) {
    const std::string bundle = session_->path() + "/tls-ca-bundle.pem";
    VIGIL_TRY_VOID(write_session_file(
        bundle, trust_bundle(proxy_->ca_pem(), policy.net.tls_terminate.extra_ca_cert_paths)));
    for (auto& kv : trust_environment(bundle)) in_.setenv.push_back(std::move(kv));
    in_.late_ro_binds.push_back(bundle);
  }
  // network.httpProxyPort / socksProxyPort: that bridge leads to the user's own proxy.
  external_ = external_bridges(policy.net, session_->proxy_socket());
  in_.late_ro_binds.insert(in_.late_ro_binds.end(), external_.binds.begin(),
                           external_.binds.end());
  return {};
}

Result<void> SandboxedRun::build_args() {
  // A log the session could rewrite proves nothing: write-denied inside, so it must exist
  // before bwrap binds it. As for any denied path in a writable root, every directory
  // from the root down to it is pinned (a mount point cannot be renamed): `mv ~/.local
  // ~/.local.hidden` and a forged log in a new ~/.local/state/vigil/sessions/ fail.
  if (auto bind = log_bind(*prepared_, log_path_)) {
    VIGIL_TRY_VOID(sink_.create_now());
    log_created_ = true;
    planned_.fs.deny_write.push_back(session_rule(*bind, "session log"));
  }
  // Pre-images go to the session's store, which no sandbox can see (change_capture.h).
  if (prepared_->policy.vigil.capture_enabled && !cmd_.quarantine_id.empty()) {
    auto s = open_capture_store(cmd_.quarantine_id);
    if (!s) return std::move(s).error();
    planned_.fs.deny_read.push_back(session_rule(s->root, "change captures"));
    store_.emplace(std::move(s).value());
  }
  prepared_->plan = build_plan(planned_, prepared_->protected_paths);
  trace_plan(prepared_->plan);
  in_.kernel_masks = present_kernel_masks();
  in_.weaker_nested = prepared_->policy.weaker_nested_sandbox;
  in_.empty_file = session_->empty_file();
  in_.json_status_fd = status_->write.get();
  in_.command = cmd_.command;
  in_.init = init_;
  auto program_pipe = make_program_pipe();
  VIGIL_TRY(program_pipe);
  program_pipe_.emplace(std::move(program_pipe).value());
  auto release = make_program_pipe();  // a pipe like it: bwrap's --block-fd
  VIGIL_TRY(release);
  release_.emplace(std::move(release).value());
  in_.block_fd = release_->read.get();
  auto identities = host_identities(writable_mounts(prepared_->plan));
  VIGIL_TRY(identities);
  identities_ = std::move(identities).value();
  if (spare_) {
    auto h = SpareHandoff::open();
    VIGIL_TRY(h);
    handoff_.emplace(std::move(h).value());
  }
  // The command's environment goes in through vigil-init (wire/env_block.h), never
  // through bwrap's: bwrap runs on the host, where LD_PRELOAD, LD_LIBRARY_PATH or
  // GCONV_PATH of the caller's choosing would run code (a spare's comes at hand-off).
  if (!spare_) {
    auto block = command_env_block(masked_->env, in_.setenv);
    VIGIL_TRY(block);
    env_block_.emplace(std::move(block).value());
  }
  gatekeeper_ = gatekeeper_in_force();
  // vigil.network.capture (observer/inet_broker.h): needs the gatekeeper's kernel (5.14:
  // it installs the socket at the caller's number with ADDFD, and traps connect() with the
  // broker's table); elsewhere the old behaviour, as `vigil doctor` says.
  if (prepared_->policy.vigil.network_capture && gatekeeper_) {
    auto c = prepare_net_capture(*proxy_, session_->path());
    VIGIL_TRY(c);
    capture_ = std::move(c).value();
    if (capture_) in_.resolv_conf = capture_->resolv_conf;
  }
  InitArgsInputs init_in;
  init_in.policy = &prepared_->policy;
  init_in.plan = &prepared_->plan;
  init_in.events_fd = events_->write.get();
  init_in.program_fd = program_pipe_->read.get();
  init_in.command_fd = handoff_ ? handoff_->command_fd() : -1;
  init_in.env_fd = env_block_ ? env_block_->get() : -1;
  init_in.capture_fd = store_ ? store_->fd.get() : -1;
  budget_ = store_ ? capture_budget(*store_, prepared_->policy.vigil.capture_caps) : CaptureBudget{};
  init_in.capture_left = budget_.left;
  init_in.capture_skip = capture_skip_trees(scope_);
  init_in.proxy_socket = session_->proxy_socket();
  init_in.outer_proc = in_.weaker_nested;
  init_in.gatekeeper = gatekeeper_;
  init_in.external = external_.init_args;
  init_in.caps = caps_->init_args();
  init_in.net_capture_fd = capture_ ? capture_->listener.get() : -1;
  init_opts_ = vigil_init_options(init_in);
  in_.init_args = init_opts_.args;
  bwrap_args_ = build_bwrap_args(in_);
  return place_placeholders();
}

Result<void> SandboxedRun::place_placeholders() {
  placeholders_ = placeholder_paths(prepared_->plan);
  // A spare's placeholders would stand in the workspace between commands.
  if (spare_ && !placeholders_.empty())
    return make_error(Errc::kUnsupported,
                      "a spare sandbox is not kept where placeholders are made");
  // Should this process be killed, the next session removes them (session_dir.h).
  VIGIL_TRY_VOID(session_->record_placeholders(placeholders_));
  if (auto r = create_content_placeholders(placeholders_); !r) {
    session_->finish(placeholders_);  // those written before the failure
    return std::move(r).error();
  }
  // Before anything runs: what the backstop must take as the host's own (a spare's is
  // taken again at hand-off).
  snapshot_ = take_backstop_snapshot(scanned_git_configs(prepared_->plan));
  // A floor stamp (change_clock.h) where the kernel has one: then nothing waits below. (A
  // spare's start is its request's, taken again at hand-off.)
  if (!spare_) {
    if (auto clock = ChangeClock::open(session_->path())) snapshot_.start = change_start(&*clock);
  }
  return {};
}

}  // namespace vigil
