// How a command of `vigil serve` / `vigil mcp` is stopped before its own end: at its
// timeout (SIGKILL to the whole sandbox at once) or when it is cancelled (MCP's
// notifications/cancelled, JSON-RPC's cancel and $/cancelRequest, the client going away):
// SIGTERM to the sandbox's PID 1 (vigil-init, which passes it on to the command, as for a
// Ctrl-C of `vigil run`), then SIGKILL to the sandbox's bwrap when anything of it is still
// there after the grace. When PID 1 goes, the kernel takes every process of the sandbox's
// PID namespace with it; bwrap's end takes PID 1 (--die-with-parent).
//
// Signals go through pidfds opened when the sandbox was spawned: a pid reused after the
// sandbox was reaped is never signalled.
//
// The running commands of one server are kept by request id (RunningCommands), so that a
// cancel naming the request (or the command) finds it; a request is registered on the
// reading thread, before it is dispatched, so that a cancel right behind it is never lost.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Who cancelled, how, and in their words (the log's command.cancel).
struct CancelWhy {
  std::string by;      // "client" | "disconnect"
  std::string via;     // "notifications/cancelled", "$/cancelRequest", "cancel", "eof"
  std::string reason;  // the client's, bounded ("" = none given)
};

// The first child of `bwrap` in /proc (with --as-pid-1, the sandbox's PID 1: vigil-init);
// -1 when it has none yet.
pid_t sandbox_init_of(pid_t bwrap);

class CommandStop {
 public:
  static constexpr std::chrono::milliseconds kDefaultGrace{2000};
  explicit CommandStop(std::chrono::milliseconds grace = kDefaultGrace) : grace_(grace) {}
  ~CommandStop() { finished(); }
  CommandStop(const CommandStop&) = delete;
  CommandStop& operator=(const CommandStop&) = delete;

  // Starts the watch (timeout_s 0: none). `on_cancel` is told once, with the command's id,
  // when a cancel takes effect (it logs command.cancel).
  void start(double timeout_s,
             std::function<void(std::uint64_t command, const CancelWhy&)> on_cancel);
  void identified(std::uint64_t command);  // the session gave the command its id
  void spawned(pid_t bwrap);               // its sandbox is running
  // False when it was already cancelled or has ended.
  bool cancel(CancelWhy why);
  void finished();  // the command has ended: nothing more is signalled

  bool timed_out() const;
  std::optional<CancelWhy> cancelled() const;
  std::optional<std::uint64_t> command() const;
  std::chrono::milliseconds grace() const { return grace_; }

 private:
  void watch();
  void signal_bwrap(int sig);  // under mu_
  // Under mu_: SIGTERM to PID 1; false while there is none yet (bwrap still setting up:
  // a SIGKILL to bwrap then could leave its child behind, so the watch tries again, and
  // only SIGKILLs bwrap at the grace's end).
  bool terminate();

  const std::chrono::milliseconds grace_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<void(std::uint64_t, const CancelWhy&)> on_cancel_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::optional<std::uint64_t> command_;
  pid_t bwrap_ = -1;
  UniqueFd bwrap_fd_;
  bool timed_out_ = false, done_ = false, logged_ = false, terminated_ = false;
  std::optional<CancelWhy> cancel_;
  std::optional<std::chrono::steady_clock::time_point> kill_at_;
  std::thread thread_;
};

// A server's commands in flight, by request id (its JSON text).
class RunningCommands {
 public:
  // Unregisters request `id` when the handler that holds it returns, however it returns.
  class Held {
   public:
    Held(RunningCommands& r, std::string id) : r_(r), id_(std::move(id)) {}
    ~Held() { r_.remove(id_); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    RunningCommands& r_;
    std::string id_;
  };

  // Registers request `id`; null when a request with that id is already in flight.
  std::shared_ptr<CommandStop> add(const std::string& id);
  std::shared_ptr<CommandStop> find(const std::string& id);
  void remove(const std::string& id);
  // The request `id`'s command, or the command numbered `command`; false: none running.
  bool cancel_request(const std::string& id, const CancelWhy& why);
  bool cancel_command(std::uint64_t command, const CancelWhy& why);
  std::size_t cancel_all(const CancelWhy& why);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<CommandStop>> by_request_;
};

}  // namespace vigil
