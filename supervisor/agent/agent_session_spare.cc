// A warm session's spare sandbox (supervisor/command/spare_sandbox.h): one kept ready, started
// when a command ends, taken by the next command whose refreshed plan is the spare's.
#include <signal.h>
#include <time.h>

#include <condition_variable>
#include <mutex>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/agent_spare.h"
#include "supervisor/command/command_spec.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/launch/launch_gate.h"
#include "supervisor/launch/sandbox_kill.h"
#include "supervisor/launch/sandbox_plan.h"

namespace vigil {

std::unique_ptr<AgentSession::Spare> AgentSession::take_spare(const std::string& cwd, bool capture) {
  std::lock_guard lock(mu_);
  if (!spare_) return nullptr;
  // One started from another directory or for other stdio cannot serve this command.
  if (spare_->cwd != cwd || spare_->capture != capture) {
    spare_->discard();
    retired_.push_back(std::move(spare_));
    ++counters_["spares.discarded"];
    return nullptr;
  }
  spare_->launch();  // when the command that made it has not yet
  return std::move(spare_);
}

void AgentSession::retire(std::unique_ptr<Spare> spare) {
  spare->discard();
  std::lock_guard lock(mu_);
  retired_.push_back(std::move(spare));
}

std::optional<Result<SandboxedOutcome>> AgentSession::run_in_spare(
    std::unique_ptr<Spare> spare, const SandboxedCommand& cmd, CommandLogSink& command,
    const std::function<bool(OutputStream, std::string_view)>& forward, std::uint64_t id,
    const ChangeStart& start) {
  if (!spare->await_ready()) {
    (void)spare->finish();  // it ended before it was ready: nothing of it is left
    std::lock_guard lock(mu_);
    ++spare_failures_;
    return std::nullopt;
  }
  // The plan refreshed as for any command, with the spare's TMPDIR: the spare serves only
  // if it is exactly the one it was built from (spare_mismatch says why not).
  std::string why = "the plan could not be made";
  auto fresh = prepare_sandbox(command_plan_request(cmd, spare->shape().session_tmp));
  if (fresh) {
    if (cmd.net) fresh->policy.net = *cmd.net;
    auto ids = host_identities(spare_identity_paths(fresh->plan));
    why = ids ? spare_mismatch(spare->shape(), *fresh, *ids) : "a mounted path is gone";
  }
  if (!why.empty()) {
    retire(std::move(spare));
    std::lock_guard lock(mu_);
    ++counters_["spares.discarded"];
    return std::nullopt;
  }
  for (const auto& w : fresh->warnings) print_warning(w);
  SpareCommand handed;
  handed.command = cmd.command;
  handed.env = cmd.env;
  handed.stdio = cmd.stdio;
  handed.quarantine_id = cmd.quarantine_id;
  handed.on_spawned = cmd.on_spawned;
  handed.backstop_start = start;
  if (spare->asker) spare->asker->set_command(id);
  spare->give(&handed, &command, forward);
  return spare->finish();
}

void AgentSession::start_spare(const std::string& cwd, bool capture, bool launch) {
  auto joined = std::make_shared<std::vector<std::unique_ptr<Spare>>>();
  SessionInputs session;
  CommandInputs one;
  std::unique_ptr<Spare> spare;
  {
    std::lock_guard lock(mu_);
    if (ending_ || spare_ || spare_failures_ >= 3) return;
    spare = std::make_unique<Spare>(cwd, capture, log_path_);
    session = session_inputs();
    one.quarantine_id = id_ + "-spare" + std::to_string(next_spare_++);
    joined->swap(retired_);  // the discarded ones end while this one starts
  }
  one.argv = {"vigil-spare"};  // a placeholder (in ps too): the command comes at hand-off
  one.cwd = cwd;
  one.workspace = workspace_;
  one.capture_output = capture;
  if (ask_) {
    spare->asker = std::make_shared<CommandAsker>(
        [this](std::uint64_t c, const std::shared_ptr<proxy::AskTicket>& t) { ask(c, t); }, 0);
    one.ask.asker = spare->asker;
    one.ask.timeout = ask_timeout_;
  }
  Spare* sp = spare.get();
  // A session ending while it was being set up: it does not start.
  one.on_spawned = [this](pid_t pid) {
    std::lock_guard lock(mu_);
    if (ending_) kill_sandbox_tree(pid);
  };
  SandboxedCommand cmd = sandboxed_command(session, std::move(one));
  sp->set_body([this, sp, cmd = std::move(cmd), joined] {
    for (auto& old : *joined) (void)old->finish();
    joined->clear();
    // Discarded before its thread started (made for a deferred start): nothing to set up.
    if (sp->discarded()) {
      sp->ended(make_error(Errc::kNotFound, "the spare was discarded before it started"));
      return;
    }
    SandboxedCommand run = cmd;
    run.spare = sp;
    auto r = run_sandboxed(run, *sp, [sp](OutputStream s, std::string_view b) {
      return sp->forward(s, b);
    });
    if (r) {
      std::lock_guard lock(mu_);
      spare_failures_ = 0;
    }
    sp->ended(std::move(r));
  });
  if (launch) sp->launch();
  std::lock_guard lock(mu_);
  // The session ending meanwhile, or commands ending together, each starting one: one
  // spare is kept, the others are discarded (their threads joined later, never dropped).
  if (ending_ || spare_) {
    spare->discard();
    retired_.push_back(std::move(spare));
    return;
  }
  spare_ = std::move(spare);
}

void AgentSession::start_next(const CommandRun&) {
  std::lock_guard lock(mu_);
  if (spare_) spare_->launch();
}

std::vector<std::unique_ptr<AgentSession::Spare>> AgentSession::take_all_spares() {
  std::vector<std::unique_ptr<Spare>> all;
  all.swap(retired_);
  if (spare_) all.push_back(std::move(spare_));
  // Each spare's own thread kills and reaps its bwrap once discarded (by pid, which only
  // that thread can have reaped: killed from here it might be another process's by then).
  for (auto& s : all) s->discard();
  return all;
}

}  // namespace vigil
