#include "supervisor/agent/command_stop.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "supervisor/launch/sandbox_kill.h"

namespace vigil {
namespace {

UniqueFd open_pidfd(pid_t pid) {
  return UniqueFd(pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)) : -1);
}

bool send_via_pidfd(const UniqueFd& fd, int sig) {
  return fd && ::syscall(SYS_pidfd_send_signal, fd.get(), sig, nullptr, 0) == 0;
}

}  // namespace

pid_t sandbox_init_of(pid_t bwrap) {
  const auto kids = children_of(bwrap);
  return kids.empty() ? -1 : kids.front();
}

void CommandStop::start(double timeout_s,
                        std::function<void(std::uint64_t, const CancelWhy&)> on_cancel) {
  std::lock_guard lock(mu_);
  on_cancel_ = std::move(on_cancel);
  if (timeout_s > 0) {
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(timeout_s));
  }
  thread_ = std::thread([this] { watch(); });
}

void CommandStop::identified(std::uint64_t command) {
  std::function<void(std::uint64_t, const CancelWhy&)> tell;
  CancelWhy why;
  {
    std::lock_guard lock(mu_);
    command_ = command;
    if (!cancel_ || logged_ || !on_cancel_) return;
    logged_ = true;
    tell = on_cancel_;
    why = *cancel_;
  }
  tell(command, why);
}

void CommandStop::spawned(pid_t bwrap) {
  std::lock_guard lock(mu_);
  bwrap_ = bwrap;
  bwrap_fd_ = open_pidfd(bwrap);
  if (timed_out_) signal_bwrap(SIGKILL);
  // Cancelled before it ran: stopped as soon as its PID 1 is there (the watch).
  if (cancel_ && !terminated_) terminated_ = terminate();
  cv_.notify_all();
}

void CommandStop::signal_bwrap(int sig) {
  // A kill ends bwrap's whole tree at whatever stage its start is in (sandbox_kill.h):
  // stopped through the pidfd first, so the pid is bwrap's own while the tree is killed.
  if (sig == SIGKILL && bwrap_ > 0 && !done_ && bwrap_fd_ && send_via_pidfd(bwrap_fd_, SIGSTOP)) {
    kill_sandbox_tree(bwrap_);
    return;
  }
  if (!send_via_pidfd(bwrap_fd_, sig) && !bwrap_fd_ && bwrap_ > 0 && !done_) ::kill(bwrap_, sig);
}

bool CommandStop::terminate() {
  const pid_t init = bwrap_ > 0 ? sandbox_init_of(bwrap_) : -1;
  UniqueFd init_fd = open_pidfd(init);
  // Opened, then checked to be bwrap's child still: the pidfd names that very process.
  const auto kids = init > 0 ? children_of(bwrap_) : std::vector<pid_t>{};
  const bool still = init_fd && !kids.empty() && kids.front() == init;
  return still && send_via_pidfd(init_fd, SIGTERM);
}

bool CommandStop::cancel(CancelWhy why) {
  std::function<void(std::uint64_t, const CancelWhy&)> tell;
  std::uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    if (done_ || cancel_) return false;
    cancel_ = why;
    kill_at_ = std::chrono::steady_clock::now() + grace_;
    if (command_ && on_cancel_) {
      logged_ = true;
      tell = on_cancel_;
      id = *command_;
    }
  }
  // Logged before the signal: the record comes before anything the stop makes happen.
  if (tell) tell(id, why);
  {
    std::lock_guard lock(mu_);
    if (!done_ && bwrap_ > 0) terminated_ = terminate();
  }
  cv_.notify_all();
  return true;
}

void CommandStop::watch() {
  std::unique_lock lock(mu_);
  while (!done_) {
    auto until = std::chrono::steady_clock::time_point::max();
    if (deadline_ && !timed_out_) until = std::min(until, *deadline_);
    if (kill_at_) until = std::min(until, *kill_at_);
    // Cancelled: SIGTERM again every 50 ms until the grace ends. PID 1 may not be there
    // yet, or not have its handlers yet (a PID namespace's init gets from outside only the
    // signals it handles), and a repeated SIGTERM is harmless to the command.
    if (cancel_ && bwrap_ > 0)
      until = std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(terminated_ ? 50 : 10));
    if (until == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, until);
    }
    if (done_) break;
    const auto now = std::chrono::steady_clock::now();
    if (cancel_ && bwrap_ > 0 && !(kill_at_ && now >= *kill_at_)) terminated_ = terminate();
    if (deadline_ && !timed_out_ && now >= *deadline_ && !cancel_) {
      timed_out_ = true;
      signal_bwrap(SIGKILL);
    }
    if (kill_at_ && now >= *kill_at_) {
      kill_at_.reset();
      signal_bwrap(SIGKILL);  // still there after the grace
    }
  }
}

void CommandStop::finished() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool CommandStop::timed_out() const {
  std::lock_guard lock(mu_);
  return timed_out_;
}

std::optional<CancelWhy> CommandStop::cancelled() const {
  std::lock_guard lock(mu_);
  return cancel_;
}

std::optional<std::uint64_t> CommandStop::command() const {
  std::lock_guard lock(mu_);
  return command_;
}

std::shared_ptr<CommandStop> RunningCommands::add(const std::string& id) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = by_request_.try_emplace(id, nullptr);
  if (!fresh) return nullptr;
  it->second = std::make_shared<CommandStop>();
  return it->second;
}

std::shared_ptr<CommandStop> RunningCommands::find(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = by_request_.find(id);
  return it == by_request_.end() ? nullptr : it->second;
}

void RunningCommands::remove(const std::string& id) {
  std::lock_guard lock(mu_);
  by_request_.erase(id);
}

bool RunningCommands::cancel_request(const std::string& id, const CancelWhy& why) {
  auto stop = find(id);
  return stop && stop->cancel(why);
}

bool RunningCommands::cancel_command(std::uint64_t command, const CancelWhy& why) {
  std::shared_ptr<CommandStop> hit;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, stop] : by_request_) {
      if (stop->command() == command) hit = stop;
    }
  }
  return hit && hit->cancel(why);
}

std::size_t RunningCommands::cancel_all(const CancelWhy& why) {
  std::vector<std::shared_ptr<CommandStop>> all;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, stop] : by_request_) all.push_back(stop);
  }
  std::size_t n = 0;
  for (const auto& s : all) n += s->cancel(why) ? 1 : 0;
  return n;
}

}  // namespace vigil
