// `vigil serve` spoken to in raw JSON-RPC lines over pipes, for the serve tests
// (serve_cancel_test.cc, serve_background_test.cc).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/session_log.h"
#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"

namespace vigil::test {

using json = nlohmann::json;

// `vigil serve` in `ws`, spoken to line by line.
class Serve {
 public:
  // `extra`: more options of `vigil serve` (e.g. --settings FILE).
  Serve(const std::string& ws, const std::string& log, const std::vector<std::string>& extra = {}) {
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    UniqueFd child_in(in[0]), child_out(out[1]);
    to_ = UniqueFd(in[1]);
    from_ = UniqueFd(out[0]);
    const std::string bin = vigil_bin(), state = default_state_dir();
    std::vector<const char*> argv = {bin.c_str(), "serve", "--log", log.c_str()};
    for (const auto& e : extra) argv.push_back(e.c_str());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(child_in.get(), 0);
      ::dup2(child_out.get(), 1);
      if (::chdir(ws.c_str()) != 0) ::_exit(121);
      ::setenv("XDG_STATE_HOME", state.c_str(), 1);
      ::execv(bin.c_str(), const_cast<char* const*>(argv.data()));
      ::_exit(122);
    }
  }
  ~Serve() {
    to_.reset();
    from_.reset();
    if (pid_ > 0) {
      int st = 0;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (::waitpid(pid_, &st, WNOHANG) == 0 && std::chrono::steady_clock::now() < until)
        ::usleep(10000);
      if (::waitpid(pid_, &st, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
      }
    }
  }
  void send(const json& m) {
    const std::string line = m.dump() + "\n";
    ASSERT_EQ(::write(to_.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  // Reads until the reply to `id`; every message read is kept.
  json reply(const json& id, int timeout_ms = 30000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      for (const auto& m : seen_) {
        if (m.contains("id") && m["id"] == id && !m.contains("method")) return m;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            until - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return json();
      pollfd p{from_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return json();
      char buf[65536];
      const ssize_t n = ::read(from_.get(), buf, sizeof buf);
      if (n <= 0) return json();
      pending_.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        seen_.push_back(json::parse(pending_.substr(0, nl), nullptr, false));
        pending_.erase(0, nl + 1);
      }
    }
  }
  void close_both() {
    to_.reset();
    from_.reset();
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  UniqueFd to_, from_;
  std::string pending_;
  std::vector<json> seen_;
};

inline json run_request(int id, const std::string& command) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "run"}, {"params", {{"argv", {"sh", "-c", command}}}}};
}

inline std::vector<json> kinds(const std::string& log, const std::string& kind) {
  std::vector<json> out;
  for (const auto& e : records(log)) {
    if (std::string(events::to_string(e.kind())) != kind) continue;
    out.push_back(json::parse(events::serialize(e)));
  }
  return out;
}

}  // namespace vigil::test
