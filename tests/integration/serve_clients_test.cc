// `vigil serve` (JSON-RPC on stdio) through the shipped Python and Node clients, raw
// JSON-RPC lines for stdin/timeout/policy.update, and `vigil mcp` through a scripted MCP
// client (initialize -> tools/list -> tools/call). Real vigil, bwrap, python3, node.
#include <fcntl.h>
#include <array>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/session_log.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

std::string source_dir() { return std::string(VIGIL_TEST_DATA_DIR) + "/../.."; }

std::string find_on_path(const std::string& name) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    const std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Runs argv in cwd with `input` on stdin; its stdout, stderr and status.
Outcome run_with_input(const std::vector<std::string>& argv, const std::string& cwd,
                       const std::string& input) {
  // O_CLOEXEC: the child keeps only what dup2 gives it as 0, 1 and 2.
  auto make_pipe = [] {
    int p[2] = {-1, -1};
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    return std::array<vigil::UniqueFd, 2>{vigil::UniqueFd(p[0]), vigil::UniqueFd(p[1])};
  };
  auto in = make_pipe(), out = make_pipe(), err = make_pipe();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0].get(), 0);
    ::dup2(out[1].get(), 1);
    ::dup2(err[1].get(), 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(121);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(122);
  }
  in[0].reset();
  out[1].reset();
  err[1].reset();
  EXPECT_EQ(::write(in[1].get(), input.data(), input.size()), static_cast<ssize_t>(input.size()));
  in[1].reset();
  Outcome o;
  vigil::UniqueFd* ends[2] = {&out[0], &err[0]};
  pollfd fds[2] = {{out[0].get(), POLLIN, 0}, {err[0].get(), POLLIN, 0}};
  std::string* dest[2] = {&o.out, &o.err};
  int open = 2;
  while (open > 0 && ::poll(fds, 2, 60000) > 0) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        dest[i]->append(buf, static_cast<size_t>(n));
      } else {
        ends[i]->reset();
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

std::vector<json> lines_of(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) v.push_back(json::parse(line));
  return v;
}

json reply_to(const std::vector<json>& msgs, int id) {
  for (const auto& m : msgs) {
    if (m.contains("id") && m["id"] == id && !m.contains("method")) return m;
  }
  return json();
}

// The log holds the update and the command, and verifies.
void check_log(const std::string& log) {
  auto report = verify_log(log);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok && report->complete) << report->why;
  const std::string text = read_file(log);
  EXPECT_NE(text.find("\"kind\":\"policy.update\",\"add\":[\"example.test\"]"), std::string::npos);
  EXPECT_NE(text.find("\"kind\":\"command.start\""), std::string::npos);
}

void run_client(const std::vector<std::string>& launcher) {
  TempDir ws, outside, state;
  const std::string log = state / "client.jsonl";
  std::vector<std::string> args = launcher;
  for (const auto& a : std::vector<std::string>{
           "--vigil", vigil_bin(), "--log", log, "--allow", "example.test", "--", "sh", "-c",
           "echo hi; read x; echo got-$x; echo x > '" + (outside / "no") + "'; exit 5"}) {
    args.push_back(a);
  }
  auto o = run_with_input(args, ws.path(), "");
  EXPECT_EQ(o.exit_code, 5) << o.err;
  EXPECT_EQ(o.out, "hi\ngot-\n");
  EXPECT_NE(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(outside / "no"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(outside / "no"));
  check_log(log);
}

TEST(ServeClients, PythonClient) {
  const std::string py = find_on_path("python3");
  if (py.empty()) GTEST_SKIP() << "python3 is not installed (tools/bootstrap.sh installs it)";
  run_client({py, source_dir() + "/clients/python/vigil_client.py"});
}

TEST(ServeClients, NodeClient) {
  std::string node = find_on_path("node");
  if (node.empty()) node = find_on_path("nodejs");
  if (node.empty()) GTEST_SKIP() << "node is not installed (tools/bootstrap.sh installs nodejs)";
  run_client({node, source_dir() + "/clients/node/vigil_client.js"});
}

TEST(Serve, StdinTimeoutAndPolicyErrors) {
  TempDir ws, state;
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"run","params":{"argv":["cat"],"stdin":"fed\n"}})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"run","params":{"argv":["sleep","30"],"timeout":0.3}})"
      "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"policy.update","params":{"add":["*.com"]}})"
      "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"run","params":{"argv":[]}})"
      "\n"
      R"({"jsonrpc":"2.0","id":5,"method":"nope"})"
      "\n";
  auto o = run_with_input({vigil_bin(), "serve", "--log", state / "s.jsonl"}, ws.path(), input);
  ASSERT_EQ(o.exit_code, 0);
  const auto msgs = lines_of(o.out);
  const json r1 = reply_to(msgs, 1);
  ASSERT_TRUE(r1.contains("result")) << r1;
  EXPECT_EQ(r1["result"]["exit_code"], 0);
  std::string fed;
  for (const auto& m : msgs) {
    if (m.value("method", "") == "output" && m["params"]["request"] == 1)
      fed += m["params"]["data"].get<std::string>();
  }
  EXPECT_EQ(fed, "fed\n");
  const json r2 = reply_to(msgs, 2);
  EXPECT_EQ(r2["result"]["timed_out"], true) << r2;
  EXPECT_EQ(r2["result"]["exit_code"], 137) << r2;
  EXPECT_EQ(reply_to(msgs, 3)["error"]["code"], -32602);
  EXPECT_EQ(reply_to(msgs, 4)["error"]["code"], -32602);
  EXPECT_EQ(reply_to(msgs, 5)["error"]["code"], -32601);
  // Each command's events name it.
  const auto c1 = r1["result"]["command"];
  bool saw_exec = false;
  for (const auto& m : msgs) {
    if (m.value("method", "") == "event" && m["params"]["record"]["kind"] == "proc.exec" &&
        m["params"]["record"]["argv"][0] == "cat") {
      saw_exec = true;
      EXPECT_EQ(m["params"]["command"], c1);
    }
  }
  EXPECT_TRUE(saw_exec);
  auto report = verify_log(state / "s.jsonl");
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok && report->complete) << report->why;
}

TEST(Mcp, InitializeListCall) {
  TempDir ws, outside, state;
  const std::string cmd = "echo out; echo x > " + (outside / "m") + "; exit 3";
  const json call = {{"jsonrpc", "2.0"},
                     {"id", 3},
                     {"method", "tools/call"},
                     {"params", {{"name", "run_command"}, {"arguments", {{"command", cmd}}}}}};
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
      "\n" +
      call.dump() + "\n";
  auto o = run_with_input({vigil_bin(), "mcp", "--log", state / "m.jsonl"}, ws.path(), input);
  ASSERT_EQ(o.exit_code, 0);
  const auto msgs = lines_of(o.out);
  // Nothing but replies: MCP clients do not expect vigil's own notifications.
  for (const auto& m : msgs) EXPECT_FALSE(m.contains("method")) << m;
  EXPECT_EQ(reply_to(msgs, 1)["result"]["serverInfo"]["name"], "vigil");
  EXPECT_EQ(reply_to(msgs, 1)["result"]["protocolVersion"], "2024-11-05");
  const json tools = reply_to(msgs, 2)["result"]["tools"];
  ASSERT_EQ(tools.size(), 5u);  // run_command, then the four for background commands
  EXPECT_EQ(tools[0]["name"], "run_command");
  EXPECT_EQ(tools[0]["inputSchema"]["required"][0], "command");
  // stdin ended right after the call: MCP's stdio client has gone (that is how it ends a
  // session), so the call is cancelled and answered by nothing. The call's result is
  // McpSdk.InitializeListAndCallWithStructuredResults's, through the SDK client.
  EXPECT_TRUE(reply_to(msgs, 3).is_null()) << o.out;
  EXPECT_FALSE(exists(outside / "m"));
  const std::string log = read_file(state / "m.jsonl");
  EXPECT_NE(log.find(R"("kind":"command.cancel","by":"disconnect","via":"eof")"), std::string::npos) << log;
}

// The workspace is the one `vigil serve` / `vigil mcp` started in; a request's cwd only
// says where in it a command starts. Outside it (the user's home, a link in the workspace
// that leads out, `..`), the request is refused and nothing runs: a model cannot make its
// own writable root.
struct Outside {
  TempDir ws, home, state;
  Outside() {
    ::mkdir((ws / "sub").c_str(), 0755);
    EXPECT_EQ(::symlink(home.path().c_str(), (ws / "to-home").c_str()), 0);
  }
  // Every spelling of a directory outside the workspace.
  std::vector<std::string> cwds() const {
    const std::string base = home.path().substr(home.path().rfind('/') + 1);
    return {home.path(), ws / "to-home", ws / ("../" + base), ws / ("sub/../../" + base), "/"};
  }
  static std::string key_append() { return "echo key >> authorized_keys; pwd"; }
};

TEST(Serve, ACwdOutsideTheWorkspaceIsRefusedHoweverItIsSpelled) {
  Outside t;
  std::string input;
  int id = 0;
  for (const auto& cwd : t.cwds()) {
    const json req = {{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "run"},
                      {"params", {{"argv", {"sh", "-c", Outside::key_append()}}, {"cwd", cwd}}}};
    input += req.dump() + "\n";
  }
  const int inside = ++id;
  input += json{{"jsonrpc", "2.0"}, {"id", inside}, {"method", "run"},
                {"params", {{"argv", {"sh", "-c", Outside::key_append()}}, {"cwd", t.ws / "sub"}}}}
               .dump() +
           "\n";
  auto o = run_with_input({vigil_bin(), "serve", "--log", t.state / "s.jsonl"}, t.ws.path(), input);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto msgs = lines_of(o.out);
  for (int i = 1; i < inside; ++i) {
    const json r = reply_to(msgs, i);
    ASSERT_TRUE(r.contains("error")) << t.cwds()[i - 1] << ": " << r;
    EXPECT_EQ(r["error"]["code"], -32602) << r;
    EXPECT_NE(r["error"]["message"].get<std::string>().find("outside this session's workspace"),
              std::string::npos)
        << r;
  }
  EXPECT_FALSE(exists(t.home / "authorized_keys"));
  const json ok = reply_to(msgs, inside);
  ASSERT_TRUE(ok.contains("result")) << ok;
  EXPECT_EQ(ok["result"]["exit_code"], 0) << ok;
  EXPECT_TRUE(exists(t.ws / "sub/authorized_keys"));
}

TEST(Mcp, ACwdOutsideTheWorkspaceIsAToolErrorTheModelSees) {
  Outside t;
  std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n";
  int id = 1;
  for (const auto& cwd : t.cwds()) {
    input += json{{"jsonrpc", "2.0"},
                  {"id", ++id},
                  {"method", "tools/call"},
                  {"params",
                   {{"name", "run_command"},
                    {"arguments", {{"command", Outside::key_append()}, {"cwd", cwd}}}}}}
                 .dump() +
             "\n";
  }
  auto o = run_with_input({vigil_bin(), "mcp", "--log", t.state / "m.jsonl"}, t.ws.path(), input);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto msgs = lines_of(o.out);
  for (int i = 2; i <= id; ++i) {
    const json r = reply_to(msgs, i);
    ASSERT_TRUE(r.contains("result")) << r;
    EXPECT_EQ(r["result"]["isError"], true) << r;
    const std::string text = r["result"]["content"][0]["text"];
    EXPECT_NE(text.find("outside this session's workspace"), std::string::npos) << text;
  }
  EXPECT_FALSE(exists(t.home / "authorized_keys"));
}

// A parameter of an unexpected JSON type is an invalid-params reply; the server goes on
// (an initialize refused so is no initialize: the one after it is answered).
TEST(Mcp, ParamsOfAnUnexpectedTypeAreAnErrorNotACrash) {
  TempDir ws, state;
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}})"
      "\n"
      R"({"jsonrpc":5,"id":2,"method":"ping"})"
      "\n"
      R"({"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
      "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}})"
      "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"ping"})"
      "\n";
  auto o = run_with_input({vigil_bin(), "mcp", "--log", state / "m.jsonl"}, ws.path(), input);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto msgs = lines_of(o.out);
  EXPECT_EQ(reply_to(msgs, 1)["error"]["code"], -32602) << o.out;
  EXPECT_EQ(reply_to(msgs, 2)["error"]["code"], -32600) << o.out;
  EXPECT_EQ(reply_to(msgs, 5)["result"]["protocolVersion"], "2025-06-18") << o.out;
  EXPECT_EQ(reply_to(msgs, 3)["error"]["code"], -32602) << o.out;
  EXPECT_TRUE(reply_to(msgs, 4).contains("result")) << o.out;
}

// The shipped clients: the refusal is the client's error (VigilError, a rejected promise).
constexpr const char* kPyCwd = R"PY(
import sys
sys.path.insert(0, sys.argv[1])
from vigil_client import VigilSession, VigilError
vigil, ws, home = sys.argv[2:5]
with VigilSession(vigil, workspace=ws) as s:
    try:
        s.run(["sh", "-c", "echo key >> authorized_keys"], cwd=home)
        print("ran")
    except VigilError as e:
        print("refused: " + str(e))
    out = []
    r = s.run(["pwd"], on_output=lambda st, d: out.append(d))
    print("pwd: " + b"".join(out).decode().strip() + " " + str(r["exit_code"]))
)PY";

constexpr const char* kNodeCwd = R"JS(
const [clients, vigil, ws, home] = process.argv.slice(1);
const { VigilSession } = require(clients + '/vigil_client.js');
(async () => {
  const s = new VigilSession({ vigil, workspace: ws });
  try {
    await s.run(['sh', '-c', 'echo key >> authorized_keys'], { cwd: home });
    console.log('ran');
  } catch (e) {
    console.log('refused: ' + e.message);
  }
  let out = '';
  const r = await s.run(['pwd'], { onOutput: (stream, buf) => { out += buf.toString(); } });
  console.log('pwd: ' + out.trim() + ' ' + r.exit_code);
  await s.close();
})();
)JS";

void check_client_refusal(const Outcome& o, const Outside& t) {
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("refused: cwd " + t.home.path() + " is outside this session's workspace"),
            std::string::npos)
      << o.out << o.err;
  EXPECT_NE(o.out.find("pwd: " + t.ws.path() + " 0"), std::string::npos) << o.out << o.err;
  EXPECT_FALSE(exists(t.home / "authorized_keys"));
}

TEST(ServeClients, PythonClientIsRefusedACwdOutsideTheWorkspace) {
  const std::string py = find_on_path("python3");
  if (py.empty()) GTEST_SKIP() << "python3 is not installed (tools/bootstrap.sh installs it)";
  Outside t;
  check_client_refusal(run_with_input({py, "-c", kPyCwd, source_dir() + "/clients/python",
                                       vigil_bin(), t.ws.path(), t.home.path()},
                                      t.state.path(), ""),
                       t);
}

TEST(ServeClients, NodeClientIsRefusedACwdOutsideTheWorkspace) {
  std::string node = find_on_path("node");
  if (node.empty()) node = find_on_path("nodejs");
  if (node.empty()) GTEST_SKIP() << "node is not installed (tools/bootstrap.sh installs nodejs)";
  Outside t;
  check_client_refusal(run_with_input({node, "-e", kNodeCwd, source_dir() + "/clients/node",
                                       vigil_bin(), t.ws.path(), t.home.path()},
                                      t.state.path(), ""),
                       t);
}

// Issue 32's "a background server started by one call and queried by the next", through
// each client: the session's commands share its loopback (supervisor/launch/session_netns.h).
constexpr const char* kFetchLoop =
    "for i in $(seq 1 150); do curl -sf http://127.0.0.1:8000/served.txt && exit 0; "
    "sleep 0.1; done; exit 7";

constexpr const char* kPyServer = R"PY(
import sys
sys.path.insert(0, sys.argv[1])
from vigil_client import VigilSession
vigil, ws, fetch = sys.argv[2:5]
with VigilSession(vigil, workspace=ws) as s:
    bg = s.start(["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"])
    out = []
    r = s.run(["sh", "-c", fetch], on_output=lambda st, d: out.append(d) if st == "stdout" else None)
    print("%s|%d|%s" % (bg["handle"], r["exit_code"], b"".join(out).decode().strip()))
    print("killed: %s" % s.kill(bg["handle"]))
)PY";

constexpr const char* kNodeServer = R"JS(
const [clients, vigil, ws, fetch] = process.argv.slice(1);
const { VigilSession } = require(clients + '/vigil_client.js');
(async () => {
  const s = new VigilSession({ vigil, workspace: ws });
  const bg = await s.start(['python3', '-m', 'http.server', '8000', '--bind', '127.0.0.1']);
  let out = '';
  const r = await s.run(['sh', '-c', fetch], {
    onOutput: (stream, buf) => { if (stream === 'stdout') out += buf.toString(); } });
  console.log(`${bg.handle}|${r.exit_code}|${out.trim()}`);
  console.log(`killed: ${await s.kill(bg.handle)}`);
  await s.close();
})();
)JS";

TEST(ServeClients, PythonClientQueriesABackgroundServerFromTheNextCall) {
  const std::string py = find_on_path("python3");
  if (py.empty()) GTEST_SKIP() << "python3 is not installed (tools/bootstrap.sh installs it)";
  TempDir ws, state;
  const std::string m = unique_marker("py-bg-http");
  write_file(ws / "served.txt", "served-" + m + "\n");
  const Outcome o = run_with_input({py, "-c", kPyServer, source_dir() + "/clients/python",
                                    vigil_bin(), ws.path(), kFetchLoop},
                                   state.path(), "");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("bg-1|0|served-" + m + "\n"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("killed: True"), std::string::npos) << o.out;
}

TEST(ServeClients, NodeClientQueriesABackgroundServerFromTheNextCall) {
  std::string node = find_on_path("node");
  if (node.empty()) node = find_on_path("nodejs");
  if (node.empty()) GTEST_SKIP() << "node is not installed (tools/bootstrap.sh installs nodejs)";
  TempDir ws, state;
  const std::string m = unique_marker("node-bg-http");
  write_file(ws / "served.txt", "served-" + m + "\n");
  const Outcome o = run_with_input({node, "-e", kNodeServer, source_dir() + "/clients/node",
                                    vigil_bin(), ws.path(), kFetchLoop},
                                   state.path(), "");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("bg-1|0|served-" + m + "\n"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("killed: true"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace vigil::test
