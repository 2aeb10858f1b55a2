// `vigil mcp` through the official MCP TypeScript SDK's client (issue 32, and issue 31's
// trust classes "through the real clients"): tests/clients/mcp-sdk/mcp_scenario.mjs runs a
// scenario with Client + StdioClientTransport and prints what happened; these tests read it
// and check the host (/proc, the files, the log). The SDK is installed by tools/bootstrap.sh
// (`npm ci` in tests/clients/mcp-sdk); the unprivileged pass of tools/test.sh stages it and
// names it in VIGIL_MCP_SDK. With VIGIL_REQUIRE_TOOLS=1 a missing SDK fails the test.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "supervisor/log/session_log.h"
#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

std::string source_dir() { return std::string(VIGIL_TEST_DATA_DIR) + "/../.."; }

std::string sdk_dir() {
  if (const char* d = std::getenv("VIGIL_MCP_SDK"); d != nullptr && *d != '\0') return d;
  return source_dir() + "/tests/clients/mcp-sdk";
}

std::string node_bin() {
  for (const char* n : {"/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"}) {
    if (::access(n, X_OK) == 0) return n;
  }
  return "";
}

// Why the SDK client cannot run here ("" when it can).
std::string sdk_missing() {
  if (node_bin().empty()) return "node is not installed (tools/bootstrap.sh installs nodejs)";
  const std::string pkg = sdk_dir() + "/node_modules/@modelcontextprotocol/sdk/package.json";
  if (::access(pkg.c_str(), R_OK) != 0) {
    return "the MCP SDK is not installed at " + sdk_dir() +
           " (tools/bootstrap.sh runs npm ci there; VIGIL_MCP_SDK names another copy)";
  }
  return "";
}

#define VIGIL_NEED_MCP_SDK()                                                          \
  do {                                                                                \
    const std::string why = sdk_missing();                                            \
    if (!why.empty()) {                                                               \
      const char* req = std::getenv("VIGIL_REQUIRE_TOOLS");                           \
      if (req != nullptr && std::string(req) == "1") FAIL() << why;                   \
      GTEST_SKIP() << why;                                                            \
    }                                                                                 \
  } while (0)

// One `vigil mcp` started in `ws` by the SDK client, the steps run, its log at log().
class SdkRun {
 public:
  explicit SdkRun(const std::string& ws) : ws_(ws) {}
  json run(const json& steps, int timeout_s = 120) {
    const std::string file = scratch_ / "steps.json";
    write_file(file, steps.dump());
    auto o = run_program({node_bin(), sdk_dir() + "/mcp_scenario.mjs", vigil_bin(), ws_, file,
                          "--log", log()},
                         scratch_.path(), timeout_s, {{"XDG_STATE_HOME", state_.path()}});
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    json out = json::parse(o.out, nullptr, false);
    EXPECT_FALSE(out.is_discarded()) << o.out << o.err;
    EXPECT_FALSE(out.contains("fatal")) << out.dump(1);
    return out.is_discarded() ? json::object() : out;
  }
  std::string log() const { return state_ / "mcp.jsonl"; }

 private:
  std::string ws_;
  TempDir scratch_, state_;
};

json call(const std::string& command, json extra = json::object()) {
  json args = {{"command", command}};
  for (auto it = extra.begin(); it != extra.end(); ++it) args[it.key()] = it.value();
  return {{"op", "call"}, {"arguments", args}};
}

const json kConnect = {{"op", "connect"}};

std::string text_of(const json& result) {
  if (!result.contains("content") || result["content"].empty()) return "";
  return result["content"][0].value("text", "");
}

// The log's records of a kind.
std::vector<json> log_records(const std::string& log, const std::string& kind) {
  std::vector<json> out;
  for (const auto& line : [&] {
         std::vector<std::string> v;
         std::string text = read_file(log), cur;
         for (char c : text) {
           if (c == '\n') {
             v.push_back(cur);
             cur.clear();
           } else {
             cur += c;
           }
         }
         return v;
       }()) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_discarded() && r.value("kind", "") == kind) out.push_back(r);
  }
  return out;
}

void expect_log_verifies(const std::string& log) {
  auto report = verify_log(log);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok && report->complete) << report->why;
}

TEST(McpSdk, InitializeListAndCallWithStructuredResults) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws, outside;
  SdkRun sdk(ws.path());
  const json out = sdk.run({kConnect,
                            {{"op", "list"}},
                            call("echo hi; echo oops >&2; echo x > " + (outside / "m") + "; exit 3"),
                            call("echo fine")});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 4u) << out.dump(1);
  ASSERT_TRUE(s[0]["ok"]) << s[0];
  EXPECT_EQ(s[0]["initialize"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(s[0]["server"]["name"], "vigil");
  ASSERT_TRUE(s[1]["ok"]) << s[1];
  const json tools = s[1]["tools"];
  ASSERT_EQ(tools.size(), 5u);
  EXPECT_EQ(tools[0]["name"], "run_command");
  std::vector<std::string> names;
  for (const auto& t : tools) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"run_command", "start_command", "read_output",
                                             "stop_command", "list_commands"}));
  EXPECT_EQ(tools[0]["annotations"]["destructiveHint"], true) << tools[0];
  EXPECT_EQ(tools[0]["annotations"]["readOnlyHint"], false) << tools[0];
  EXPECT_EQ(tools[0]["outputSchema"]["type"], "object") << tools[0];
  // The SDK checked structuredContent against the outputSchema (a mismatch throws).
  ASSERT_TRUE(s[2]["ok"]) << s[2];
  const json failed = s[2]["result"];
  EXPECT_EQ(failed["isError"], true) << failed;
  const json sc = failed["structuredContent"];
  EXPECT_EQ(sc["exit_code"], 3) << sc;
  EXPECT_EQ(sc["stdout"], "hi\n") << sc;
  EXPECT_EQ(sc["stderr"].get<std::string>().rfind("oops\n", 0), 0u) << sc;
  // The block is not in stderr: one per result.
  EXPECT_EQ(sc["stderr"].get<std::string>().find("<sandbox_violations>"), std::string::npos) << sc;
  EXPECT_EQ(sc["stdout_truncated"], false);
  EXPECT_EQ(sc["cancelled"], false);
  EXPECT_EQ(sc["log"], sdk.log());
  ASSERT_TRUE(sc["violations"].is_array()) << sc;
  bool named = false;
  for (const auto& v : sc["violations"]) {
    EXPECT_EQ(v["status"], "denied") << v;
    if (v.value("target", "") == outside / "m") named = true;
  }
  EXPECT_TRUE(named) << sc["violations"];
  // One block: in the text the model reads once, and as the result's annotation field.
  const std::string text = text_of(failed);
  EXPECT_EQ(text.find("<sandbox_violations>"), text.rfind("<sandbox_violations>")) << text;
  EXPECT_NE(text.find("<sandbox_violations>"), std::string::npos) << text;
  EXPECT_NE(text.find("[exit code 3]"), std::string::npos) << text;
  EXPECT_NE(sc["annotation"].get<std::string>().find(outside / "m"), std::string::npos);
  ASSERT_TRUE(s[3]["ok"]) << s[3];
  EXPECT_EQ(s[3]["result"]["isError"], false) << s[3];
  EXPECT_EQ(s[3]["result"]["structuredContent"]["violations"], json::array());
  EXPECT_EQ(s[3]["result"]["structuredContent"]["stdout"], "fine\n");
  EXPECT_FALSE(exists(outside / "m"));
  expect_log_verifies(sdk.log());
}

// Streaming: with a progress token (the SDK's onprogress), each chunk of output comes as
// notifications/progress while the command runs; the result has the whole text.
TEST(McpSdk, OutputStreamsAsProgressWhileTheCommandRuns) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  // Two chunks apart in time: each its own notification, the first before the second
  // was written.
  json streamed = call("echo one; sleep 0.3; echo two");
  streamed["progress"] = true;
  const json out = sdk.run({kConnect, streamed});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 2u) << out.dump(1);
  ASSERT_TRUE(s[1]["ok"]) << s[1];
  EXPECT_EQ(s[1]["result"]["structuredContent"]["stdout"], "one\ntwo\n");
  std::string messages;
  std::uint64_t last = 0;
  for (const auto& p : out["progress"]) {
    EXPECT_GT(p["progress"].get<std::uint64_t>(), last) << p;
    last = p["progress"].get<std::uint64_t>();
    messages += p.value("message", "");
  }
  EXPECT_EQ(messages, "one\ntwo\n") << out["progress"];
  ASSERT_GE(out["progress"].size(), 2u) << out["progress"];
  EXPECT_EQ(out["progress"][0]["message"], "one\n") << out["progress"];
}

// MCP's negotiation: a version the server speaks is echoed; any other gets the server's
// latest (the client then decides whether it can go on: the SDK can, with that one).
TEST(McpSdk, AnUnknownVersionGetsTheServersLatestAndAKnownOneIsEchoed) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun future(ws.path());
  const json f = future.run({{{"op", "connect"}, {"version", "1999-01-01"}}, call("echo hi")});
  ASSERT_TRUE(f["steps"][0]["ok"]) << f.dump(1);
  EXPECT_EQ(f["steps"][0]["sent_version"], "1999-01-01");
  EXPECT_EQ(f["steps"][0]["initialize"]["protocolVersion"], "2025-11-25");
  EXPECT_TRUE(f["steps"][1]["ok"]) << f["steps"][1];
  for (const std::string v : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    SdkRun known(ws.path());
    const json k = known.run({{{"op", "connect"}, {"version", v}}, {{"op", "list"}}, call("echo hi")});
    ASSERT_TRUE(k["steps"][0]["ok"]) << k.dump(1);
    EXPECT_EQ(k["steps"][0]["initialize"]["protocolVersion"], v);
    const json tool = k["steps"][1]["tools"][0];
    // What a version does not define is not sent to a client that negotiated it.
    EXPECT_EQ(tool.contains("outputSchema"), v >= "2025-06-18") << v << tool;
    EXPECT_EQ(tool.contains("annotations"), v >= "2025-03-26") << v << tool;
    EXPECT_EQ(k["steps"][2]["result"].contains("structuredContent"), v >= "2025-06-18") << v;
    EXPECT_EQ(k["steps"][2]["result"]["isError"], false) << v;
  }
}

// Nothing but ping before initialize; a second initialize is refused.
TEST(McpSdk, NothingButPingBeforeInitialize) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  auto raw = [](json msg, const json& id) { return json{{"op", "raw"}, {"message", msg}, {"wait_id", id}}; };
  const json call_msg = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
                         {"params", {{"name", "run_command"}, {"arguments", {{"command", "touch ran"}}}}}};
  const json init = {{"jsonrpc", "2.0"}, {"id", 4}, {"method", "initialize"},
                     {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                 {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
  json again = init;
  again["id"] = 6;
  const json out = sdk.run(
      {raw(call_msg, 1),
       raw({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}, 2),
       raw({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}}, 3),
       raw(init, 4),
       {{"op", "raw"}, {"message", {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}}},
       raw({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "tools/list"}}, 5),
       raw(again, 6)});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 7u) << out.dump(1);
  for (int i : {0, 1}) {
    EXPECT_EQ(s[i]["reply"]["error"]["code"], -32600) << s[i];
    EXPECT_NE(s[i]["reply"]["error"]["message"].get<std::string>().find("initialize first"),
              std::string::npos)
        << s[i];
  }
  EXPECT_EQ(s[2]["reply"]["result"], json::object()) << s[2];
  EXPECT_EQ(s[3]["reply"]["result"]["protocolVersion"], "2025-06-18") << s[3];
  EXPECT_EQ(s[5]["reply"]["result"]["tools"].size(), 5u) << s[5];
  EXPECT_EQ(s[6]["reply"]["error"]["code"], -32600) << s[6];
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_TRUE(log_records(sdk.log(), "command.start").empty());
}

// A command that starts two more processes and waits: the user's stop (the SDK's
// AbortController, notifications/cancelled) ends the whole sandbox while the session goes
// on; nothing with the marker in its command line is left on the host.
TEST(McpSdk, AbortEndsTheWholeSandboxAndTheSessionGoesOn) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  const std::string m = unique_marker("mcp-abort");
  const std::string cmd = "sh -c 'sleep 1000; : " + m + "-a' & sh -c 'sleep 1001; : " + m +
                          "-b' & touch started; wait";
  json abort = call(cmd);
  abort["abort_when_file"] = ws / "started";
  const json out = sdk.run({kConnect, abort, {{"op", "await_gone"}, {"marker", m}, {"timeout_ms", 10000}},
                            call("echo after")});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 4u) << out.dump(1);
  EXPECT_FALSE(s[1]["ok"]) << s[1];  // the SDK's call rejected: aborted
  EXPECT_EQ(s[2]["left"], json::array()) << "still running after the abort: " << s[2];
  ASSERT_TRUE(s[3]["ok"]) << s[3];
  EXPECT_EQ(s[3]["result"]["structuredContent"]["stdout"], "after\n") << s[3];
  EXPECT_TRUE(pids_with_marker(m).empty());
  // No reply to the cancelled request, the SDK's second (initialize is its first, id 0):
  // MCP's receiver of a cancel answers nothing, the client has stopped waiting.
  for (const auto& msg : out["received"]) EXPECT_NE(msg.value("id", json()), 1) << msg;
  const auto cancels = log_records(sdk.log(), "command.cancel");
  ASSERT_EQ(cancels.size(), 1u) << read_file(sdk.log());
  EXPECT_EQ(cancels[0]["by"], "client");
  EXPECT_EQ(cancels[0]["via"], "notifications/cancelled");
  EXPECT_EQ(cancels[0]["reason"], "the user pressed stop");
  EXPECT_EQ(cancels[0]["cmd"], 1);
  const auto ends = log_records(sdk.log(), "command.end");
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0]["cmd"], 1);
  EXPECT_GT(ends[0]["t"].get<std::uint64_t>(), cancels[0]["t"].get<std::uint64_t>());
  expect_log_verifies(sdk.log());
}

// A command that ignores SIGTERM: killed with its whole sandbox after the grace.
TEST(McpSdk, ACommandThatIgnoresSigtermIsKilledAfterTheGrace) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  const std::string m = unique_marker("mcp-grace");
  const std::string cmd = "trap '' TERM; sh -c \"trap '' TERM; sleep 1000; : " + m +
                          "\" & touch started; wait; wait; : " + m;
  json abort = call(cmd);
  abort["abort_when_file"] = ws / "started";
  const json out = sdk.run({kConnect, abort, {{"op", "await_gone"}, {"marker", m}, {"timeout_ms", 15000}}});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 3u) << out.dump(1);
  EXPECT_EQ(s[2]["left"], json::array()) << s[2];
  EXPECT_TRUE(pids_with_marker(m).empty());
  const auto cancels = log_records(sdk.log(), "command.cancel");
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0]["grace_ms"], 2000);
  const auto ends = log_records(sdk.log(), "command.end");
  ASSERT_EQ(ends.size(), 1u);
  // SIGKILL ended it, after the grace (2 s from the cancel).
  EXPECT_EQ(ends[0].value("signal", 0), 9) << ends[0];
  EXPECT_GE(ends[0]["t"].get<std::uint64_t>() - cancels[0]["t"].get<std::uint64_t>(), 1'900'000'000u);
}

// The client goes away (the SDK's close(): stdin ends) while a command runs: the command's
// sandbox ends, the log says the client disconnected, and the session ends cleanly.
TEST(McpSdk, ClosingTheClientEndsTheRunningCommand) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  const std::string m = unique_marker("mcp-close");
  json running = call("sh -c 'sleep 1000; : " + m + "' & touch started; wait");
  running["close_when_file"] = ws / "started";
  const json out = sdk.run({kConnect, running, {{"op", "await_gone"}, {"marker", m}, {"timeout_ms", 10000}}});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 3u) << out.dump(1);
  EXPECT_FALSE(s[1]["ok"]) << s[1];
  EXPECT_EQ(s[2]["left"], json::array()) << s[2];
  EXPECT_TRUE(pids_with_marker(m).empty());
  const auto cancels = log_records(sdk.log(), "command.cancel");
  ASSERT_EQ(cancels.size(), 1u) << read_file(sdk.log());
  EXPECT_EQ(cancels[0]["by"], "disconnect");
  EXPECT_EQ(cancels[0]["via"], "eof");
  EXPECT_EQ(log_records(sdk.log(), "session.end").size(), 1u);
  expect_log_verifies(sdk.log());
}

// Issue 31.1 through the SDK: a cwd outside the workspace, however spelled, is the tool's
// error (the model sees it) and nothing runs.
TEST(McpSdk, ACwdOutsideTheWorkspaceIsRefused) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws, home;
  ::mkdir((ws / "sub").c_str(), 0755);
  ASSERT_EQ(::symlink(home.path().c_str(), (ws / "to-home").c_str()), 0);
  const std::string base = home.path().substr(home.path().rfind('/') + 1);
  const std::vector<std::string> cwds = {home.path(), ws / "to-home", ws / ("../" + base),
                                         ws / ("sub/../../" + base), "/"};
  json steps = {kConnect};
  for (const auto& c : cwds) steps.push_back(call("echo key >> authorized_keys", {{"cwd", c}}));
  steps.push_back(call("pwd", {{"cwd", ws / "sub"}}));
  SdkRun sdk(ws.path());
  const json out = sdk.run(steps);
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), cwds.size() + 2) << out.dump(1);
  for (std::size_t i = 0; i < cwds.size(); ++i) {
    ASSERT_TRUE(s[i + 1]["ok"]) << s[i + 1];
    EXPECT_EQ(s[i + 1]["result"]["isError"], true) << cwds[i];
    EXPECT_NE(text_of(s[i + 1]["result"]).find("outside this session's workspace"), std::string::npos)
        << s[i + 1];
  }
  EXPECT_FALSE(exists(home / "authorized_keys"));
  EXPECT_EQ(s[cwds.size() + 1]["result"]["structuredContent"]["stdout"], ws / "sub" + "\n");
}

// Issue 31.2 through the SDK: a tool call's environment is the command's only. LD_PRELOAD
// of a library the workspace holds never loads into bwrap on the host; a PATH whose first
// directory holds a fake bwrap and vigil-init never starts them; VIGIL_* variables do not
// change vigil; and the policy is the same (a write outside the workspace is denied).
TEST(McpSdk, AToolCallsEnvironmentReachesOnlyTheCommand) {
  VIGIL_NEED_MCP_SDK();
  if (::access("/usr/bin/cc", X_OK) != 0) GTEST_SKIP() << "no C compiler (cc) to build the probe";
  TempDir ws, outside;
  const std::string marker = outside / "host-side-ran";
  write_file(ws / "probe.c", R"C(#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void probe(void) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  const char* base = strrchr(exe, '/');
  base = base ? base + 1 : exe;
  if (strcmp(base, "bwrap") != 0 && strcmp(base, "vigil-init") != 0 && strcmp(base, "vigil") != 0) return;
  int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) (void)!write(fd, "x", 1);
}
)C");
  auto built = run_program({"/usr/bin/cc", "-shared", "-fPIC", "-DMARKER=\"" + marker + "\"", "-o",
                            ws / "libprobe.so", ws / "probe.c"},
                           outside.path(), 60);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  make_dirs(ws / "bin");
  for (const std::string fake : {"bwrap", "vigil-init", "vigil"}) {
    write_file(ws / ("bin/" + fake), "#!/bin/sh\necho ran >> '" + marker + "'\nexit 0\n");
    ::chmod((ws / ("bin/" + fake)).c_str(), 0755);
  }
  const json env = {{"LD_PRELOAD", ws / "libprobe.so"},
                    {"LD_LIBRARY_PATH", ws.path()},
                    {"GCONV_PATH", ws.path()},
                    {"PATH", ws / "bin" + ":/usr/bin:/bin"},
                    {"VIGIL_TEST_MODE", "1"},
                    {"VIGIL_LOG", "trace"},
                    {"VIGIL_BIN", ws / "bin/vigil"},
                    {"PROBE_VAR", "a b=c"}};
  SdkRun sdk(ws.path());
  const json out = sdk.run(
      {kConnect,
       call("printf '%s|%s|%s' \"$LD_PRELOAD\" \"$VIGIL_TEST_MODE\" \"$PROBE_VAR\"; echo x > " +
                (outside / "w"),
            {{"env", env}}),
       call("echo second", {{"env", env}})});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 3u) << out.dump(1);
  ASSERT_TRUE(s[1]["ok"]) << s[1];
  const json sc = s[1]["result"]["structuredContent"];
  EXPECT_EQ(sc["stdout"], ws / "libprobe.so" + "|1|a b=c") << sc;
  EXPECT_FALSE(exists(outside / "w"));
  EXPECT_FALSE(sc["violations"].empty()) << sc;
  EXPECT_EQ(s[2]["result"]["structuredContent"]["stdout"], "second\n") << s[2];
  EXPECT_FALSE(exists(marker)) << "the tool call's environment reached a host-side process: "
                               << read_file(marker);
}

// Hostile arguments: each gets a clear error (the tool's, or the protocol's), never a
// crash, and the server goes on.
TEST(McpSdk, HostileArgumentsGetAClearErrorAndTheServerGoesOn) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  json nul = call(std::string("echo a") + '\0' + "b");
  json surrogate = {{"op", "call"}, {"arguments", {{"command", "echo"}}}, {"lone_surrogate", true}};
  json huge_arg = {{"op", "call"}, {"arguments", json::object()}, {"command_bytes", 300000}};
  json huge_line = {{"op", "call"}, {"arguments", json::object()}, {"command_bytes", 17 << 20}};
  const std::vector<std::pair<std::string, json>> cases = {
      {"NUL in the command", nul},
      {"command a number", {{"op", "call"}, {"arguments", {{"command", 5}}}}},
      {"command missing", {{"op", "call"}, {"arguments", {{"cmd", "x"}}}}},
      {"cwd an array", call("true", {{"cwd", json::array()}})},
      {"cwd with NUL", call("true", {{"cwd", ws.path() + std::string(1, '\0') + "/../.."}})},
      {"timeout a string", call("true", {{"timeout", "10"}})},
      {"timeout negative", call("true", {{"timeout", -1}})},
      {"timeout huge", call("true", {{"timeout", 1e300}})},
      {"env a string", call("true", {{"env", "A=B"}})},
      {"env value a number", call("true", {{"env", {{"A", 5}}}})},
      {"env name with =", call("true", {{"env", {{"A=B", "x"}}}})},
      {"env value with NUL", call("true", {{"env", {{"A", std::string("x") + '\0' + "y"}}}})},
      {"arguments a string", {{"op", "call"}, {"arguments", "echo hi"}}},
      {"unknown tool", {{"op", "call"}, {"name", "rm_rf"}, {"arguments", {{"command", "true"}}}}},
      {"a lone surrogate", surrogate},
      {"an argument past the kernel's limit", huge_arg},
      {"a line past 16 MiB", huge_line},
  };
  json steps = {kConnect};
  for (const auto& [name, step] : cases) steps.push_back(step);
  steps.push_back(call("echo alive"));
  SdkRun sdk(ws.path());
  const json out = sdk.run(steps, 240);
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), cases.size() + 2) << out.dump(1).substr(0, 4000);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& r = s[i + 1];
    SCOPED_TRACE(cases[i].first + ": " + r.dump().substr(0, 600));
    if (r["ok"] == true) {
      // The tool's error: the model reads why.
      EXPECT_EQ(r["result"]["isError"], true);
      EXPECT_FALSE(text_of(r["result"]).empty());
    } else {
      // The protocol's: a JSON-RPC error with a code and a reason, not a timeout.
      EXPECT_TRUE(r["code"].is_number()) << r;
      EXPECT_NE(r["code"], -32001) << "no answer (the SDK timed out)";
      EXPECT_FALSE(r["error"].get<std::string>().empty());
    }
  }
  EXPECT_NE(text_of(s[1]["result"]).find("NUL"), std::string::npos) << s[1];
  ASSERT_TRUE(s.back()["ok"]) << s.back();
  EXPECT_EQ(s.back()["result"]["structuredContent"]["stdout"], "alive\n");
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

json tool_call(const std::string& name, const json& args, json extra = json::object()) {
  json step = {{"op", "call"}, {"name", name}, {"arguments", args}};
  for (auto it = extra.begin(); it != extra.end(); ++it) step[it.key()] = it.value();
  return step;
}

// Background commands (issue 32): a server started by one call keeps running while the
// next calls run, its output read as it comes, listed, and stopped with its whole sandbox;
// what still runs when the client goes ends with the session.
TEST(McpSdk, ABackgroundCommandRunsAcrossCallsAndEndsWithTheSession) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  SdkRun sdk(ws.path());
  const std::string m = unique_marker("mcp-bg");
  const std::string m2 = unique_marker("mcp-bg-left");
  const json out = sdk.run(
      {kConnect,
       tool_call("start_command",
                 {{"command", "echo ready-" + m + "; touch started; while :; do echo tick; sleep 0.1; done"}}),
       call("while [ ! -e started ]; do sleep 0.05; done; echo side"),
       tool_call("read_output", {{"handle", "bg-1"}}, {{"until_text", "tick"}}),
       tool_call("list_commands", json::object()),
       tool_call("stop_command", {{"handle", "bg-1"}}),
       {{"op", "await_gone"}, {"marker", m}, {"timeout_ms", 10000}},
       tool_call("read_output", {{"handle", "bg-9"}}),
       tool_call("start_command", {{"command", "sleep 1000; : " + m2}}),
       {{"op", "close"}}});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 10u) << out.dump(1);
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_TRUE(s[i]["ok"]) << i << ": " << s[i];
  // Checked by the SDK against each tool's outputSchema.
  const json started = s[1]["result"]["structuredContent"];
  EXPECT_EQ(started["handle"], "bg-1") << started;
  EXPECT_EQ(started["running"], true);
  EXPECT_EQ(s[2]["result"]["structuredContent"]["stdout"], "side\n") << s[2];
  const json read = s[3]["result"];
  EXPECT_NE(text_of(read).find("ready-" + m), std::string::npos) << read;
  EXPECT_EQ(read["structuredContent"]["running"], true) << read;
  EXPECT_GT(read["structuredContent"]["next_offset"].get<std::uint64_t>(), 0u);
  EXPECT_NE(text_of(s[4]["result"]).find("bg-1"), std::string::npos) << s[4];
  EXPECT_EQ(s[4]["result"]["structuredContent"]["commands"][0]["running"], true) << s[4];
  const json stopped = s[5]["result"]["structuredContent"];
  EXPECT_EQ(stopped["running"], false) << s[5];
  EXPECT_EQ(stopped["cancelled"], true) << s[5];
  EXPECT_EQ(s[6]["left"], json::array()) << "the stopped command's sandbox is gone: " << s[6];
  EXPECT_EQ(s[7]["result"]["isError"], true) << s[7];
  EXPECT_EQ(s[8]["result"]["structuredContent"]["handle"], "bg-2") << s[8];
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(m2).empty(); }, 15000))
      << "a background command outlived its client";
  const auto cancels = log_records(sdk.log(), "command.cancel");
  ASSERT_EQ(cancels.size(), 2u);
  EXPECT_EQ(cancels[0]["by"], "client");
  EXPECT_EQ(cancels[1]["by"], "disconnect");
  expect_log_verifies(sdk.log());
}

// "A background server started by one call and queried by the next" (issue 32): the
// session's commands share its network namespace (supervisor/launch/session_netns.h), so
// the next call's curl reaches 127.0.0.1:8000, where the first call's server listens.
TEST(McpSdk, ABackgroundServerStartedByOneCallIsQueriedByTheNext) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws;
  const std::string m = unique_marker("mcp-bg-http");
  write_file(ws / "served.txt", "served-" + m + "\n");
  SdkRun sdk(ws.path());
  const json out = sdk.run(
      {kConnect,
       tool_call("start_command", {{"command", "exec python3 -m http.server 8000 --bind 127.0.0.1"}}),
       call("for i in $(seq 1 150); do curl -sf http://127.0.0.1:8000/served.txt && exit 0; "
            "sleep 0.1; done; exit 7"),
       tool_call("read_output", {{"handle", "bg-1"}}, {{"until_text", "GET /served.txt"}}),
       tool_call("stop_command", {{"handle", "bg-1"}}),
       {{"op", "close"}}});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 6u) << out.dump(1);
  for (std::size_t i = 0; i < s.size(); ++i) ASSERT_TRUE(s[i]["ok"]) << i << ": " << s[i];
  EXPECT_EQ(s[1]["result"]["structuredContent"]["handle"], "bg-1") << s[1];
  EXPECT_EQ(s[2]["result"]["structuredContent"]["exit_code"], 0) << s[2];
  EXPECT_EQ(s[2]["result"]["structuredContent"]["stdout"], "served-" + m + "\n") << s[2];
  EXPECT_NE(text_of(s[3]["result"]).find("GET /served.txt"), std::string::npos) << s[3];
  EXPECT_EQ(s[4]["result"]["structuredContent"]["cancelled"], true) << s[4];
  expect_log_verifies(sdk.log());
}

// The session's log and its replay views are resources (issue 32): listed, with a template
// per command, and read through the SDK; each view is `vigil replay`'s own; a URI that names
// none is MCP's -32002.
TEST(McpSdk, TheLogAndItsViewsAreResourcesAClientReads) {
  VIGIL_NEED_MCP_SDK();
  TempDir ws, outside;
  SdkRun sdk(ws.path());
  const json out = sdk.run({kConnect,
                            call("echo hello > made.txt; echo x > " + (outside / "m")),
                            call("echo again >> made.txt"),
                            {{"op", "resources"}},
                            {{"op", "read"}, {"uri", "vigil://session/log"}},
                            {{"op", "read"}, {"uri", "vigil://session/changes"}},
                            {{"op", "read"}, {"uri", "vigil://session/commands/1/violations"}},
                            {{"op", "read"}, {"uri", "vigil://session/commands/2/diff"}},
                            {{"op", "read"}, {"uri", "vigil://session/nope"}},
                            {{"op", "read"}, {"uri", "vigil://session/commands/01/changes"}},
                            {{"op", "read"}, {"uri", "vigil://session/commands/1;rm/changes"}}});
  const auto& s = out["steps"];
  ASSERT_EQ(s.size(), 11u) << out.dump(1);
  for (std::size_t i = 0; i < 8; ++i) ASSERT_TRUE(s[i]["ok"]) << i << ": " << s[i];
  std::vector<std::string> uris;
  for (const auto& r : s[3]["resources"]) uris.push_back(r["uri"]);
  for (const char* u : {"vigil://session/log", "vigil://session/timeline", "vigil://session/violations",
                        "vigil://session/changes", "vigil://session/diff", "vigil://session/network"})
    EXPECT_NE(std::find(uris.begin(), uris.end(), u), uris.end()) << u;
  EXPECT_FALSE(s[3]["templates"].empty());
  EXPECT_EQ(s[3]["templates"][0]["uriTemplate"].get<std::string>().rfind("vigil://session/commands/{command}/", 0), 0u);
  const std::string log_text = s[4]["contents"][0]["text"];
  EXPECT_EQ(log_text, read_file(sdk.log()).substr(0, log_text.size())) << "the log itself";
  EXPECT_NE(log_text.find("\"kind\":\"command.end\""), std::string::npos);
  const std::string changes = s[5]["contents"][0]["text"];
  EXPECT_NE(changes.find(ws / "made.txt"), std::string::npos) << changes;
  const std::string violations = s[6]["contents"][0]["text"];
  EXPECT_NE(violations.find(outside / "m"), std::string::npos) << violations;
  const std::string diff = s[7]["contents"][0]["text"];
  EXPECT_NE(diff.find("+again"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("+hello"), std::string::npos) << "command 2's diff only: " << diff;
  for (std::size_t i : {8u, 9u, 10u}) {
    EXPECT_FALSE(s[i]["ok"]) << s[i];
    EXPECT_EQ(s[i]["code"], -32002) << s[i];
  }
}

}  // namespace
}  // namespace vigil::test
