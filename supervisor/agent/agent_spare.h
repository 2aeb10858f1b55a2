// The parts of an agent session's command that agent_session.cc and agent_session_spare.cc
// share: how a command's proxy asks (CommandAsker) and the warm spare sandbox waiting for a
// command (AgentSpare). Neither knows AgentSession (agent_session.h holds them by pointer),
// so this header is below it and nothing here includes it back.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "proxy/ask.h"
#include "supervisor/command/sandboxed_command.h"

namespace vigil {

// Ask mode: the proxy of one command asks through the session, which knows the command.
class CommandAsker final : public proxy::Asker {
 public:
  // `ask` is the session's: it knows the command by its number.
  using AskFn = std::function<void(std::uint64_t, const std::shared_ptr<proxy::AskTicket>&)>;
  CommandAsker(AskFn ask, std::uint64_t command) : ask_(std::move(ask)), command_(command) {}
  void ask(const std::shared_ptr<proxy::AskTicket>& ticket) override { ask_(command_, ticket); }
  // A spare's proxy asks as the command it is handed (set before that command runs).
  void set_command(std::uint64_t id) { command_ = id; }

 private:
  const AskFn ask_;
  std::atomic<std::uint64_t> command_;
};

// Between the spare's own thread (which runs run_sandboxed up to the hand-off and, once
// handed a command, to its end) and the session. It is also the spare's log sink and
// output: both lead to the command it is handed.
class AgentSpare final : public SpareWait, public CommandLogSink {
 public:
  AgentSpare(std::string cwd_in, bool capture_in, std::string log_path)
      : cwd(std::move(cwd_in)), capture(capture_in), log_path_(std::move(log_path)) {}

  const std::string cwd;
  const bool capture;
  std::shared_ptr<CommandAsker> asker;  // its proxy asks as the command it is handed
  std::thread thread;

  // Its thread (the body start_spare() gave) starts here: at once, or, when the command
  // that made it defers it (CommandRun::defer_spare), once that command is answered, or
  // first by whoever needs it sooner (a command taking it, the session ending: finish()).
  // Idempotent.
  void set_body(std::function<void()> body) { body_ = std::move(body); }
  void launch() {
    std::call_once(launched_, [&] { thread = std::thread(std::move(body_)); });
  }

  // The spare's thread.
  const SpareCommand* wait(SpareShape s) override {
    std::unique_lock lock(mu_);
    if (state_ == State::kStarting) {
      shape_ = std::move(s);
      state_ = State::kReady;
      cv_.notify_all();
    }
    cv_.wait(lock, [&] { return state_ == State::kGiven || state_ == State::kDiscarded; });
    return state_ == State::kGiven ? given_ : nullptr;
  }
  void ended(Result<SandboxedOutcome> r) {
    std::lock_guard lock(mu_);
    result_.emplace(std::move(r));
    state_ = State::kEnded;
    cv_.notify_all();
  }
  Result<std::string> log_path(const PreparedSandbox&) override { return log_path_; }
  Result<void> create_now() override { return {}; }  // the session's log exists
  Result<CommandRecord*> open(const PreparedSandbox& prepared) override {
    return sink_->open(prepared);
  }
  bool forward(OutputStream s, std::string_view bytes) { return forward_(s, bytes); }

  // The session's side. True once it waits for a command; false when it ended first.
  bool await_ready() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return state_ != State::kStarting; });
    return state_ == State::kReady || state_ == State::kGiven;
  }
  const SpareShape& shape() const { return shape_; }  // after await_ready()
  void give(const SpareCommand* c, CommandLogSink* sink,
            std::function<bool(OutputStream, std::string_view)> forward) {
    std::lock_guard lock(mu_);
    sink_ = sink;
    forward_ = std::move(forward);
    given_ = c;
    state_ = State::kGiven;
    cv_.notify_all();
  }
  bool discarded() {
    std::lock_guard lock(mu_);
    return state_ == State::kDiscarded;
  }
  void discard() {
    std::lock_guard lock(mu_);
    if (state_ == State::kStarting || state_ == State::kReady) state_ = State::kDiscarded;
    cv_.notify_all();
  }
  // Waits for run_sandboxed to return, and for the thread.
  Result<SandboxedOutcome> finish() {
    launch();
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return state_ == State::kEnded; });
    }
    if (thread.joinable()) thread.join();
    return std::move(*result_);
  }

 private:
  enum class State { kStarting, kReady, kGiven, kDiscarded, kEnded };
  const std::string log_path_;
  std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::kStarting;
  SpareShape shape_;
  const SpareCommand* given_ = nullptr;
  CommandLogSink* sink_ = nullptr;
  std::function<bool(OutputStream, std::string_view)> forward_;
  std::optional<Result<SandboxedOutcome>> result_;
  std::function<void()> body_;
  std::once_flag launched_;
};

}  // namespace vigil
