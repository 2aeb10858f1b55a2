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

#include "tests/integration/serve_lines.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

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
