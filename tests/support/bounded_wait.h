// Bounded waits for tests: a child or a pipe that never finishes fails the test instead
// of hanging the whole binary (which CI would only see as a timeout with no name).
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace vigil::test {

// waitpid with a deadline: the raw status, or nullopt when `pid` did not end in time (it
// is then killed with SIGKILL and reaped, so nothing is left running).
inline std::optional<int> wait_child_status(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return std::nullopt;  // not our child, or already reaped
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);  // bounded: SIGKILL cannot be ignored
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// As a shell reports it: the exit code, 128+N for a signal, -1 when it timed out.
inline int wait_child(pid_t pid, std::chrono::milliseconds timeout) {
  const auto st = wait_child_status(pid, timeout);
  if (!st) return -1;
  return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
}

// Reads `fd` to end of file, giving up at the deadline (`*timed_out` says so).
inline std::string read_until_eof(int fd, std::chrono::milliseconds timeout, bool* timed_out) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string out;
  *timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
      *timed_out = true;
      return out;
    }
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace vigil::test
