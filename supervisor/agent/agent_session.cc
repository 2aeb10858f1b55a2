#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/agent_spare.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "proxy/domain_matcher.h"
#include "supervisor/agent/command_cwd.h"
#include "supervisor/report/annotation.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/launch/session_base.h"
#include "supervisor/log/log_key.h"
#include "supervisor/launch/resource_caps.h"
#include "supervisor/launch/sandbox_kill.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/command/command_spec.h"
#include "supervisor/command/sandboxed_command.h"
#include "supervisor/orchestrator/session_record.h"
#include "supervisor/orchestrator/session_runner.h"

namespace vigil {

// One command's share of the session log: its records carry its id, and its violations
// are collected from exactly those (the log's listener routes each record here).
class AgentSession::Command final : public CommandRecord, public CommandLogSink {
 public:
  Command(AgentSession& s, std::uint64_t id, const CommandRun& run)
      : s_(s), id_(id), run_(run), started_(std::chrono::steady_clock::now()) {}

  void append(events::Source src, events::Body body) override {
    if (auto r = s_.log_->append(src, std::move(body), id_); !r) count("log.append_failed", 1);
  }
  void hold_writes(bool on) override {
    if (on) {
      s_.log_->hold_writes();
    } else if (auto r = s_.log_->release_writes(); !r) {
      count("log.append_failed", 1);
    }
  }
  void count(const std::string& name, std::uint64_t n) override {
    std::lock_guard lock(mu_);
    counters_[name] += n;
  }
  std::string annotation() const override {
    std::lock_guard lock(mu_);
    return render_annotation(collector_, {kAnnotationMaxLines, s_.log_path_});
  }
  std::string note() const override {
    std::lock_guard lock(mu_);
    return annotation_note(collector_);
  }
  std::string violations_json() const override {
    std::lock_guard lock(mu_);
    return render_violations_json(collector_, {kAnnotationMaxLines, s_.log_path_}, s_.id_);
  }
  void log_annotation(const std::string& block, bool newline_before) override {
    append(events::Source::kSupervisor, events::Annotation{block, newline_before});
  }

  Result<std::string> log_path(const PreparedSandbox&) override { return s_.log_path_; }
  Result<void> create_now() override { return {}; }  // the session's log exists
  Result<CommandRecord*> open(const PreparedSandbox&) override {
    {
      std::lock_guard lock(s_.mu_);
      s_.running_[id_] = this;
    }
    opened_ = true;
    append(events::Source::kSupervisor, events::CommandStart{run_.argv, run_.cwd});
    return this;
  }

  // Under the log's lock, in log order.
  void take(const events::Event& e) {
    std::lock_guard lock(mu_);
    collector_.add(e);
  }

  bool opened() const { return opened_; }
  // command.end with the status, the duration and this command's counters.
  void end(int exit_code) {
    events::CommandEnd last;
    if (exit_code > 128 && exit_code < 128 + 65) {
      last.signal = exit_code - 128;
    } else {
      last.exit_code = exit_code;
    }
    last.duration_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                             started_)
            .count());
    {
      std::lock_guard lock(mu_);
      last.counters = counters_;
    }
    append(events::Source::kSupervisor, std::move(last));
  }

 private:
  AgentSession& s_;
  std::uint64_t id_;
  const CommandRun& run_;
  std::chrono::steady_clock::time_point started_;
  bool opened_ = false;
  mutable std::mutex mu_;  // collector_, counters_
  ViolationCollector collector_;
  std::map<std::string, std::uint64_t> counters_;
};


Result<AgentSessionOptions> session_options(const SessionArgs& args) {
  auto proxy_test = check_proxy_test_options(args.proxy_test);
  VIGIL_TRY(proxy_test);
  warn_proxy_test_mode(*proxy_test);
  auto cwd = current_dir();
  VIGIL_TRY(cwd);
  AgentSessionOptions opts;
  if (args.settings) {
    opts.settings = (*args.settings)[0] == '/' ? *args.settings : *cwd + "/" + *args.settings;
  }
  opts.allow_writable_settings = args.allow_writable_settings;
  opts.log_path = args.log;
  opts.cwd = *cwd;
  opts.argv = args.argv;
  opts.proxy_test = *proxy_test;
  return opts;
}

Result<std::unique_ptr<AgentSession>> AgentSession::open(AgentSessionOptions options) {
  const char* home = std::getenv("HOME");
  LoadContext ctx{options.cwd, home != nullptr ? home : ""};
  auto policy = options.settings ? load_policy_file(*options.settings, ctx)
                                 : Result<Policy>(default_policy(ctx));
  VIGIL_TRY(policy);
  // The allowlist must compile now, not at the first command.
  VIGIL_TRY_VOID(proxy::DomainMatcher::build(policy->net));
  // The workspace is decided here, once: no request can name another (command_cwd.h).
  std::unique_ptr<char, decltype(&::free)> workspace(::realpath(options.cwd.c_str(), nullptr),
                                                     &::free);
  if (!workspace) return system_error("the session's workspace " + options.cwd);
  std::unique_ptr<AgentSession> s(new AgentSession());
  s->workspace_ = workspace.get();
  s->options_ = std::move(options);
  s->net_ = policy->net;
  s->id_ = new_session_id();
  s->host_limits_ = probe_host_limits();
  // One network namespace for the whole session: a server one command starts in the
  // background is reachable from the next (supervisor/launch/session_netns.h).
  // Where this user cannot make one (unprivileged user namespaces off, bwrap setuid), the
  // session still runs, each command in a namespace of its own, and says so.
  if (auto netns = SessionNetns::create()) {
    s->netns_ = std::move(netns).value();
  } else {
    print_warning(netns.error().message +
                  "; each command of this session gets a network namespace of its own (a "
                  "server started in the background is not reached by the next command)");
  }
  SessionRecord::Start start{s->options_.log_path, s->id_, "bwrap", &*policy, s->options_.argv,
                             s->options_.cwd, {}};
  auto path = SessionRecord::log_path_for(start);
  VIGIL_TRY(path);
  auto reserved = SessionRecord::reserve(start);
  VIGIL_TRY(reserved);
  // Sealed as `vigil run`'s log is (supervisor/log/log_key.h): session.end's mac under the
  // key every sandbox is denied, so `vigil replay --verify` can tell a replaced or forged
  // end. The key is loaded (or made) before the log exists.
  auto key_path = log_key_path();
  VIGIL_TRY(key_path);
  auto key = load_or_create_log_key(*key_path);
  VIGIL_TRY(key);
  auto log = SessionLog::create(std::move(reserved).value(), s->id_);
  VIGIL_TRY(log);
  log->set_key(*key);
  s->log_ = std::make_unique<SessionLog>(std::move(log).value());
  s->log_path_ = s->log_->path();
  // The log's directory is the user's own; the probe files are unnamed (O_TMPFILE).
  const std::string log_dir = s->log_path_.substr(0, s->log_path_.rfind('/') + 1);
  if (auto clock = ChangeClock::open(log_dir.empty() ? "." : log_dir); clock) {
    s->clock_ = std::make_unique<ChangeClock>(std::move(clock).value());
  } else {
    print_debug("backstop: " + clock.error().message + "; each command waits for the coarse clock");
  }
  s->ask_timeout_ = std::chrono::milliseconds(policy->vigil.network_ask_timeout_ms);
  s->ask_ = policy->vigil.network_ask && s->options_.ask_client;
  if (policy->vigil.network_ask && !s->options_.ask_client) {
    print_warning(
        "vigil.network.ask is on, but this session has nobody to ask (`vigil serve` asks its "
        "client; `vigil session start` asks with --ask-tty): hosts off the allow list are "
        "refused");
  }
  AgentSession* self = s.get();
  s->log_->set_listener([self](const events::Event& e, const std::string&) { self->dispatch(e); });
  events::SessionStart first;
  first.argv = s->options_.argv;
  first.backend = "bwrap";
  first.policy_digest = policy_digest(*policy);
  first.versions.vigil = "0.1.0";
  first.log = s->log_path_;
  first.cwd = s->options_.cwd;
  first.key_id = log_key_id(*key);
  first.scope = host_scope_of(*policy, session_base_dir());
  if (auto r = s->log_->append(events::Source::kSupervisor, std::move(first)); !r)
    return std::move(r).error();
  return s;
}

AgentSession::~AgentSession() {
  kill_all();
  if (log_) (void)end();
}

void AgentSession::dispatch(const events::Event& e) {
  if (e.cmd) {
    std::lock_guard lock(mu_);
    if (auto it = running_.find(*e.cmd); it != running_.end()) it->second->take(e);
  }
  if (options_.on_event) options_.on_event(e);
}

SessionInputs AgentSession::session_inputs() const {
  SessionInputs in;
  in.settings = options_.settings;
  in.allow_writable_settings = options_.allow_writable_settings;
  in.proxy_test = options_.proxy_test;
  in.host_limits = host_limits_;
  in.net = net_;
  in.netns = netns_;
  return in;
}

Result<CommandOutcome> AgentSession::run(const CommandRun& request) {
  // The backstop's start for a spare, as a launch takes it: before the plan is refreshed.
  const ChangeStart request_start = request.requested_at ? *request.requested_at : change_start();
  // Refused before anything of it is logged or counted: nothing ran.
  auto cwd = command_cwd_in(request.cwd, workspace_);
  VIGIL_TRY(cwd);
  CommandRun resolved = request;
  resolved.cwd = std::move(cwd).value();
  const CommandRun& run = resolved;
  CommandOutcome outcome;
  {
    std::lock_guard lock(mu_);
    if (ending_) return make_error(Errc::kRefused, "the session is ending: start a new one");
    outcome.id = next_id_++;
    ++active_;
    ++counters_["commands"];
  }
  if (run.on_id) run.on_id(outcome.id);
  CommandInputs one;
  one.argv = run.argv;
  one.cwd = run.cwd;
  one.workspace = workspace_;
  one.capture_output = run.capture_output;
  one.annotate_stderr = run.annotate_stderr;
  one.env = run.env;
  one.stdio = run.stdio;
  one.quarantine_id = id_ + "-" + std::to_string(outcome.id);
  if (ask_) {
    one.ask.asker = std::make_shared<CommandAsker>(
        [this](std::uint64_t c, const std::shared_ptr<proxy::AskTicket>& t) { ask(c, t); }, outcome.id);
    one.ask.timeout = ask_timeout_;
  }
  one.on_spawned = [this, &run, id = outcome.id](pid_t bwrap) {
    if (run.on_spawned) run.on_spawned(bwrap);
    std::lock_guard lock(mu_);
    bwraps_[id] = bwrap;
    // A session ending while this command was being set up: it does not start.
    if (ending_) kill_sandbox_tree(bwrap);
  };
  SessionInputs session;
  {
    std::lock_guard lock(mu_);
    session = session_inputs();
  }
  const SandboxedCommand cmd = sandboxed_command(session, std::move(one));
  Command command(*this, outcome.id, run);
  auto forward = run.on_output ? run.on_output : [&run](OutputStream s, std::string_view b) {
    return write_all_to(run.stdio[s == OutputStream::kStdout ? 1 : 2], b);
  };
  std::optional<Result<SandboxedOutcome>> warm;
  if (auto spare = take_spare(run.cwd, run.capture_output)) {
    warm = run_in_spare(std::move(spare), cmd, command, forward, outcome.id, request_start);
    // A spare that ended before it took the command (nothing recorded): launched afresh.
    if (warm && !*warm && !command.opened()) warm.reset();
  }
  const bool was_warm = warm.has_value();
  auto ran = warm ? std::move(*warm) : run_sandboxed(cmd, command, forward);
  if (command.opened()) {
    command.end(ran ? ran->exit_code : to_int(ExitCode::kSandboxSetup));
  }
  {
    std::lock_guard lock(mu_);
    running_.erase(outcome.id);
    bwraps_.erase(outcome.id);
    if (!ran) ++counters_["commands.failed"];
    if (was_warm) ++counters_["commands.warm"];
    --active_;
    idle_.notify_all();
  }
  // The next command's sandbox, started now (off this one's path: it was answered),
  // or once the caller has answered (CommandRun::defer_spare).
  start_spare(run.cwd, run.capture_output, !run.defer_spare);
  VIGIL_TRY(ran);
  outcome.exit_code = ran->exit_code;
  outcome.annotation = std::move(ran->annotation);
  outcome.violations_json = std::move(ran->violations_json);
  return outcome;
}

void AgentSession::log_cancel(std::uint64_t id, const std::string& by, const std::string& via,
                              const std::string& reason, std::uint64_t grace_ms) {
  // Not under mu_: the log's listener takes mu_ under the log's lock. The log lives until
  // end(), which waits for the running commands (this one among them).
  if (!log_) return;
  (void)log_->append(events::Source::kSupervisor, events::CommandCancel{by, via, reason, grace_ms}, id);
}

Result<void> AgentSession::update_allowed_domains(const std::vector<std::string>& add,
                                                  const std::vector<std::string>& remove) {
  // Not appended under mu_: the log's listener takes mu_ under the log's lock (a command's
  // record), so holding mu_ into append() could deadlock with it. Checked, logged, then
  // applied: no command runs under an update the log does not hold yet.
  std::lock_guard update(update_mu_);
  const auto apply = [&](std::vector<std::string>& allowed) {
    for (const auto& r : remove) allowed.erase(std::remove(allowed.begin(), allowed.end(), r), allowed.end());
    for (const auto& a : add) {
      if (std::find(allowed.begin(), allowed.end(), a) == allowed.end()) allowed.push_back(a);
    }
  };
  NetworkPolicy next;
  {
    std::lock_guard lock(mu_);
    next = net_;
  }
  apply(next.allowed_domains);
  VIGIL_TRY_VOID(proxy::DomainMatcher::build(next));
  if (auto r = log_->append(events::Source::kSupervisor, events::PolicyUpdate{add, remove}); !r)
    return std::move(r).error();
  // The same edits on what is there now (an ask answered meanwhile may have added one).
  std::lock_guard lock(mu_);
  apply(net_.allowed_domains);
  return {};
}

std::vector<std::string> AgentSession::allowed_domains() {
  std::lock_guard lock(mu_);
  return net_.allowed_domains;
}

void AgentSession::kill_all() {
  std::vector<std::unique_ptr<Spare>> spares;
  {
    std::lock_guard lock(mu_);
    ending_ = true;
    for (const auto& [id, pid] : bwraps_) kill_sandbox_tree(pid);
    spares = take_all_spares();
  }
  for (auto& s : spares) (void)s->finish();
}

Result<void> AgentSession::end(int exit_code) {
  std::unique_lock lock(mu_);
  ending_ = true;
  idle_.wait(lock, [&] { return active_ == 0; });
  // The spares go first: none is handed a command any more, and none outlives us.
  auto spares = take_all_spares();
  lock.unlock();
  for (auto& s : spares) (void)s->finish();
  lock.lock();
  // Every sandbox has ended: nothing is left in the namespace, and nothing holds it.
  netns_.reset();
  if (!log_) return {};
  events::SessionEnd last;
  last.exit_code = exit_code;
  last.duration_ns = log_->elapsed_ns();
  last.counters = counters_;
  lock.unlock();
  auto r = log_->append(events::Source::kSupervisor, std::move(last));
  auto closed = log_->close();
  lock.lock();
  log_.reset();
  VIGIL_TRY(r);
  return closed;
}

}  // namespace vigil
