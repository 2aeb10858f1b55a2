// `vigil serve`'s cancel (issue 32): `cancel` and LSP's `$/cancelRequest` end a running
// command's whole sandbox while the session goes on, and a client that goes away (stdin
// ends, nobody reads stdout) takes its commands with it. Raw JSON-RPC lines over pipes;
// the host's /proc is scanned for the sandbox's processes by a marker in their argv.
#include <fcntl.h>
#include <gtest/gtest.h>
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
namespace {

using json = nlohmann::json;

// `vigil serve` in `ws`, spoken to line by line.
class Serve {
 public:
  Serve(const std::string& ws, const std::string& log) {
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    UniqueFd child_in(in[0]), child_out(out[1]);
    to_ = UniqueFd(in[1]);
    from_ = UniqueFd(out[0]);
    const std::string bin = vigil_bin(), state = default_state_dir();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(child_in.get(), 0);
      ::dup2(child_out.get(), 1);
      if (::chdir(ws.c_str()) != 0) ::_exit(121);
      ::setenv("XDG_STATE_HOME", state.c_str(), 1);
      ::execl(bin.c_str(), bin.c_str(), "serve", "--log", log.c_str(), nullptr);
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

json run_request(int id, const std::string& command) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "run"}, {"params", {{"argv", {"sh", "-c", command}}}}};
}

std::vector<json> kinds(const std::string& log, const std::string& kind) {
  std::vector<json> out;
  for (const auto& e : records(log)) {
    if (std::string(events::to_string(e.kind())) != kind) continue;
    out.push_back(json::parse(events::serialize(e)));
  }
  return out;
}

TEST(ServeCancel, CancelAndCancelRequestEndTheWholeSandboxAndTheSessionGoesOn) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  const std::string m = unique_marker("serve-cancel");
  {
    Serve s(ws.path(), log);
    const std::string cmd = "sh -c 'sleep 1000; : " + m + "-a' & sh -c 'sleep 1001; : " + m +
                            "-b' & touch started1; wait";
    s.send(run_request(1, cmd));
    ASSERT_TRUE(wait_for([&] { return exists(ws / "started1"); }, 30000));
    s.send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "cancel"}, {"params", {{"request", 1}}}});
    const json c = s.reply(2);
    EXPECT_EQ(c["result"]["cancelled"], true) << c;
    const json r = s.reply(1);
    ASSERT_TRUE(r.contains("result")) << r;
    EXPECT_EQ(r["result"]["cancelled"], true) << r;
    EXPECT_EQ(r["result"]["cancelled_by"]["via"], "cancel") << r;
    EXPECT_TRUE(wait_for([&] { return pids_with_marker(m).empty(); }, 10000));
    // LSP's notification, for the next command.
    s.send(run_request(3, "sh -c 'sleep 1002; : " + m + "-c' & touch started3; wait"));
    ASSERT_TRUE(wait_for([&] { return exists(ws / "started3"); }, 30000));
    s.send({{"jsonrpc", "2.0"}, {"method", "$/cancelRequest"}, {"params", {{"id", 3}}}});
    const json r3 = s.reply(3);
    EXPECT_EQ(r3["result"]["cancelled"], true) << r3;
    EXPECT_EQ(r3["result"]["cancelled_by"]["via"], "$/cancelRequest") << r3;
    EXPECT_TRUE(wait_for([&] { return pids_with_marker(m).empty(); }, 10000));
    // Nothing running by that id now: false, and the session still runs commands.
    s.send({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "cancel"}, {"params", {{"request", 1}}}});
    EXPECT_EQ(s.reply(4)["result"]["cancelled"], false);
    s.send({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "run"}, {"params", {{"argv", {"true"}}}}});
    EXPECT_EQ(s.reply(5)["result"]["exit_code"], 0);
  }
  EXPECT_TRUE(pids_with_marker(m).empty());
  const auto cancels = kinds(log, "command.cancel");
  ASSERT_EQ(cancels.size(), 2u);
  EXPECT_EQ(cancels[0]["via"], "cancel");
  EXPECT_EQ(cancels[1]["via"], "$/cancelRequest");
  for (const auto& c : cancels) EXPECT_EQ(c["by"], "client");
  auto report = verify_log(log);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok && report->complete) << report->why;
}

TEST(ServeCancel, AClientThatGoesAwayTakesItsCommandsWithIt) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  const std::string m = unique_marker("serve-gone");
  Serve s(ws.path(), log);
  s.send(run_request(1, "sh -c 'sleep 1000; : " + m + "' & touch started; wait"));
  ASSERT_TRUE(wait_for([&] { return exists(ws / "started"); }, 30000));
  s.close_both();
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(m).empty(); }, 10000))
      << "the sandbox outlived its client";
  int st = 0;
  EXPECT_TRUE(wait_for([&] { return ::waitpid(s.pid(), &st, WNOHANG) == s.pid(); }, 15000));
  const auto cancels = kinds(log, "command.cancel");
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0]["by"], "disconnect");
}

}  // namespace
}  // namespace vigil::test
