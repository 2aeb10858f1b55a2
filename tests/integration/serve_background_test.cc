// `vigil serve`'s background commands (issue 32): `run` with background:true answers at
// once with a handle; the command runs beside the next ones, its output read by offset,
// its status listed, waited for and killed; at most 8 run at once; what is still running
// ends with the client. Raw JSON-RPC lines over pipes; the host's /proc is scanned for the
// sandbox's processes by a marker in their argv.
#include <gtest/gtest.h>

#include <string>

#include "supervisor/agent/wire_json.h"
#include "tests/integration/serve_lines.h"

namespace vigil::test {
namespace {

json request(int id, const std::string& method, const json& params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

json background(int id, const std::string& command) {
  return request(id, "run", {{"argv", {"sh", "-c", command}}, {"background", true}});
}

std::string data_of(const json& result) {
  auto b = json_bytes_value(result["data"]);
  return b ? *b : "";
}

TEST(ServeBackground, ABackgroundCommandRunsBesideTheNextAndIsReadWaitedAndKilled) {
  TempDir ws, state, outside;
  const std::string log = state / "s.jsonl";
  const std::string m = unique_marker("serve-bg");
  std::uint64_t bg_command = 0;
  {
    Serve s(ws.path(), log);
    s.send(background(1, "echo ready-" + m + "; touch started; i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.1; done"));
    const json r1 = s.reply(1);
    ASSERT_TRUE(r1.contains("result")) << r1;
    EXPECT_EQ(r1["result"]["handle"], "bg-1") << r1;
    EXPECT_EQ(r1["result"]["running"], true) << r1;
    bg_command = r1["result"]["command"].get<std::uint64_t>();
    EXPECT_GT(bg_command, 0u);
    ASSERT_TRUE(wait_for([&] { return exists(ws / "started"); }, 30000));
    // A command in the foreground runs to its end while the background one goes on.
    s.send(run_request(2, "echo side"));
    const json r2 = s.reply(2);
    EXPECT_EQ(r2["result"]["exit_code"], 0) << r2;
    // Its output from the start, then only what came after.
    json out;
    int poll_id = 1000;  // a new id each time: replies are found by id
    ASSERT_TRUE(wait_for([&] {
      s.send(request(++poll_id, "output", {{"handle", "bg-1"}}));
      out = s.reply(poll_id);
      return data_of(out["result"]).find("tick 3") != std::string::npos;
    }, 20000)) << out;
    const std::string first = data_of(out["result"]);
    EXPECT_EQ(first.rfind("ready-" + m + "\n", 0), 0u) << first;
    EXPECT_EQ(out["result"]["offset"], 0);
    EXPECT_EQ(out["result"]["running"], true);
    const std::uint64_t next = out["result"]["next_offset"].get<std::uint64_t>();
    EXPECT_EQ(next, first.size());
    ::usleep(300 * 1000);
    s.send(request(4, "output", {{"handle", "bg-1"}, {"offset", next}}));
    const json o2 = s.reply(4);
    EXPECT_EQ(o2["result"]["offset"], next) << o2;
    EXPECT_EQ(data_of(o2["result"]).find("ready-"), std::string::npos) << o2;
    EXPECT_NE(data_of(o2["result"]).find("tick"), std::string::npos) << o2;
    s.send(request(5, "list", json::object()));
    const json l = s.reply(5);
    ASSERT_EQ(l["result"]["commands"].size(), 1u) << l;
    EXPECT_EQ(l["result"]["commands"][0]["handle"], "bg-1");
    EXPECT_EQ(l["result"]["commands"][0]["running"], true);
    // A wait that runs out says it still runs; a kill ends its whole sandbox.
    s.send(request(6, "wait", {{"handle", "bg-1"}, {"timeout", 200}}));
    EXPECT_EQ(s.reply(6)["result"]["running"], true);
    s.send(request(7, "kill", {{"handle", "bg-1"}}));
    EXPECT_EQ(s.reply(7)["result"]["killed"], true);
    s.send(request(8, "wait", {{"handle", "bg-1"}, {"timeout", 15000}}));
    const json w = s.reply(8, 20000);
    EXPECT_EQ(w["result"]["running"], false) << w;
    EXPECT_EQ(w["result"]["cancelled"], true) << w;
    EXPECT_EQ(w["result"]["cancelled_by"]["via"], "kill") << w;
    EXPECT_TRUE(wait_for([&] { return pids_with_marker(m).empty(); }, 10000));
    s.send(request(9, "kill", {{"handle", "bg-1"}}));
    EXPECT_EQ(s.reply(9)["result"]["killed"], false) << "it had ended";
    // What the sandbox stopped in a background command is in its status once it ended.
    s.send(background(10, "echo x > " + (outside / "bg-escape") + "; echo done"));
    const json r10 = s.reply(10);
    ASSERT_EQ(r10["result"]["handle"], "bg-2") << r10;
    s.send(request(11, "wait", {{"handle", "bg-2"}, {"timeout", 30000}}));
    const json w2 = s.reply(11, 35000);
    EXPECT_EQ(w2["result"]["running"], false) << w2;
    EXPECT_EQ(w2["result"]["exit_code"], 0) << w2;
    EXPECT_NE(w2["result"]["annotation"].get<std::string>().find(outside / "bg-escape"),
              std::string::npos) << w2;
    // Unknown handles and bad parameters are refused with a line that names the fix.
    s.send(request(12, "output", {{"handle", "bg-99"}}));
    const json e12 = s.reply(12);
    EXPECT_NE(e12["error"]["message"].get<std::string>().find("no background command"), std::string::npos) << e12;
    s.send(request(13, "output", {{"handle", "../bg-1"}}));
    EXPECT_TRUE(s.reply(13).contains("error"));
    s.send(request(14, "run", {{"argv", {"true"}}, {"background", "yes"}}));
    EXPECT_TRUE(s.reply(14).contains("error"));
  }
  EXPECT_FALSE(exists(outside / "bg-escape"));
  // Framed like any command in the one log, and the kill recorded.
  bool started = false, ended = false;
  for (const auto& r : kinds(log, "command.start")) started |= r["cmd"] == bg_command;
  for (const auto& r : kinds(log, "command.end")) ended |= r["cmd"] == bg_command;
  EXPECT_TRUE(started && ended);
  const auto cancels = kinds(log, "command.cancel");
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0]["via"], "kill");
  auto report = verify_log(log);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok && report->complete) << report->why;
}

TEST(ServeBackground, AtMostEightRunAndWhatRunsEndsWithTheClient) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  const std::string m = unique_marker("serve-bg-cap");
  Serve s(ws.path(), log);
  for (int i = 1; i <= 8; ++i) {
    s.send(background(i, "sleep 1000; : " + m));
    const json r = s.reply(i);
    ASSERT_EQ(r["result"]["handle"], "bg-" + std::to_string(i)) << r;
  }
  s.send(background(9, "sleep 1000; : " + m));
  const json r9 = s.reply(9);
  ASSERT_TRUE(r9.contains("error")) << r9;
  EXPECT_NE(r9["error"]["message"].get<std::string>().find("8 background commands are running"),
            std::string::npos) << r9;
  ASSERT_TRUE(wait_for([&] { return pids_with_marker(m).size() >= 8; }, 30000));
  s.close_both();
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(m).empty(); }, 15000))
      << "a background command outlived its client";
  int st = 0;
  EXPECT_TRUE(wait_for([&] { return ::waitpid(s.pid(), &st, WNOHANG) == s.pid(); }, 15000));
  const auto cancels = kinds(log, "command.cancel");
  EXPECT_EQ(cancels.size(), 8u);
  for (const auto& c : cancels) EXPECT_EQ(c["by"], "disconnect");
}

// Issue 32's "a background server started by one call and queried by the next": every
// command of an agent session is in the session's one network namespace, so loopback is
// shared as in a developer's shell. Each command still has its own bridges (its own
// loopback address) to its own proxy listener: the proxy's records name the command that
// made the request, the background one's and the foreground one's apart.
TEST(ServeBackground, AServerStartedInTheBackgroundIsReachedByTheNextCommand) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  const std::string m = unique_marker("serve-bg-http");
  write_file(ws / "served.txt", "served-" + m + "\n");
  std::uint64_t bg_command = 0, fg_command = 0;
  {
    Serve s(ws.path(), log);
    s.send(background(1, "curl -s -o /dev/null http://bg-" + m +
                             ".invalid/; exec python3 -m http.server 8000 --bind 127.0.0.1"));
    const json r1 = s.reply(1);
    ASSERT_EQ(r1["result"]["handle"], "bg-1") << r1;
    bg_command = r1["result"]["command"].get<std::uint64_t>();
    s.send(run_request(2, "curl -s -o /dev/null http://fg-" + m +
                              ".invalid/; for i in $(seq 1 150); do curl -sf "
                              "http://127.0.0.1:8000/served.txt -o fetched.txt && exit 0; sleep 0.1; done; "
                              "exit 7"));
    const json r2 = s.reply(2, 60000);
    ASSERT_TRUE(r2.contains("result")) << r2;
    EXPECT_EQ(r2["result"]["exit_code"], 0) << r2;
    EXPECT_EQ(read_file(ws / "fetched.txt"), "served-" + m + "\n");
    fg_command = r2["result"]["command"].get<std::uint64_t>();
    // The server's own log line for that GET, in the background command's output.
    json out;
    int poll_id = 100;
    EXPECT_TRUE(wait_for([&] {
      s.send(request(++poll_id, "output", {{"handle", "bg-1"}}));
      out = s.reply(poll_id);
      return data_of(out["result"]).find("GET /served.txt") != std::string::npos;
    }, 10000)) << out;
    s.send(request(3, "kill", {{"handle", "bg-1"}}));
    EXPECT_EQ(s.reply(3)["result"]["killed"], true);
  }
  ASSERT_NE(bg_command, fg_command);
  int bg_seen = 0, fg_seen = 0;
  for (const auto& d : kinds(log, "net.decision")) {
    const std::string text = d.dump();
    if (text.find("bg-" + m) != std::string::npos) {
      EXPECT_EQ(d["cmd"], bg_command) << d;
      ++bg_seen;
    }
    if (text.find("fg-" + m) != std::string::npos) {
      EXPECT_EQ(d["cmd"], fg_command) << d;
      ++fg_seen;
    }
  }
  EXPECT_GT(bg_seen, 0) << read_file(log);
  EXPECT_GT(fg_seen, 0) << read_file(log);
  auto report = verify_log(log);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok && report->complete) << report->why;
}

}  // namespace
}  // namespace vigil::test
