// srt's agent channel (docs/protocol.md, "srt's agent channel") spoken to `vigil run` by a
// harness written the way one is written for srt: a socketpair, one end handed to vigil as
// an inherited descriptor named by SANDBOX_AGENT_CHANNEL_FD, newline-delimited JSON on it.
// The harness (Python, below) greets, answers permission_request messages allow or deny,
// collects blocked notices, or closes the channel mid-run; the command reaches a loopback
// server with curl through the sandbox's proxy, and looks for the channel from inside.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

// argv: MODE CWD VIGIL ARGS... ; MODE is "answer" (allow asked.test, deny the rest), "close"
// (close the channel at the first question, without answering) or "hostile" (garbage, an
// answer to a question never asked, and a hello of another version; never a real hello). Prints one JSON line: the
// messages vigil sent, vigil's exit code, stdout, stderr, and the channel's socket inode.
constexpr const char* kHarness = R"PY(
import json, os, select, socket, subprocess, sys, time
mode, cwd, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
inode = os.fstat(theirs.fileno()).st_ino
env = dict(os.environ, SANDBOX_AGENT_CHANNEL_FD=str(theirs.fileno()))
proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), env=env, cwd=cwd,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
theirs.close()
msgs, buf, open_ = [], b"", True
def send(obj):
    ours.sendall((json.dumps(obj) + "\n").encode())
deadline = time.time() + 90
while open_ and time.time() < deadline:
    r, _, _ = select.select([ours], [], [], 0.5)
    if not r:
        continue
    data = ours.recv(65536)
    if not data:
        break  # vigil exited: its end (close-on-exec, nobody else's) is closed
    buf += data
    while b"\n" in buf and open_:
        line, buf = buf.split(b"\n", 1)
        m = json.loads(line)
        m["raw"] = line.decode()
        msgs.append(m)
        if m["type"] == "hello" and mode == "hostile":
            ours.sendall(b"garbage\n" + json.dumps({"type": "permission_response", "id": "pr_1",
                         "behavior": "allow"}).encode() + b"\n")
            send({"type": "hello", "protocol_version": 2})
        elif m["type"] == "hello":
            send({"type": "hello", "protocol_version": 1})
        elif m["type"] == "permission_request":
            if mode == "close":
                ours.close()
                open_ = False
            else:
                allow = m["resource"]["host"] == "asked.test"
                send({"type": "permission_response", "id": m["id"],
                      "behavior": "allow" if allow else "deny"})
out, err = proc.communicate(timeout=90)
print(json.dumps({"messages": msgs, "exit_code": proc.returncode, "stdout": out.decode(),
                  "stderr": err.decode(), "inode": inode}))
)PY";

class AgentChannelRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
    write_file(files_ / "index.html", "hello\n");
    server_ = std::make_unique<FileServer>(files_, files_.path());
    ASSERT_NE(server_->port(), 0) << "the loopback file server did not start";
    settings_ = conf_ / "sandbox.json";
    write_file(settings_, R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["allowed.test"]},
  "vigil": {"network": {"askTimeoutSeconds": 20}}
})");
  }

  std::string curl(const std::string& host, const std::string& tag) const {
    return "curl -s -o /dev/null -w '%{http_code} ' http://" + host + ":" +
           std::to_string(server_->port()) + "/index.html?" + tag + "; ";
  }

  json run(const std::string& mode, const std::string& command) {
    const std::string harness = files_ / "harness.py";
    write_file(harness, kHarness);
    std::vector<std::string> argv = {python3(), harness, mode, ws_.path(), vigil_bin(), "run", "--settings",
                                     settings_, "--test-allow-loopback", "--test-resolve",
                                     "asked.test=127.0.0.1", "--test-resolve",
                                     "refused.test=127.0.0.1", "--test-resolve",
                                     "later.test=127.0.0.1", "--", "sh", "-c", command};
    const Outcome o = run_program(argv, ws_.path(), 120,
                                  {{"VIGIL_TEST_MODE", "1"}, {"XDG_STATE_HOME", state_.path()}});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const auto nl = o.out.find('\n');
    if (nl == std::string::npos) {
      ADD_FAILURE() << "the harness printed nothing: " << o.out << o.err;
      return json::object();
    }
    return json::parse(o.out.substr(0, nl));
  }

  static std::vector<json> of_type(const json& r, const std::string& type) {
    std::vector<json> out;
    for (const auto& m : r["messages"])
      if (m["type"] == type) out.push_back(m);
    return out;
  }

  TempDir files_, conf_, ws_, state_;
  std::unique_ptr<FileServer> server_;
  std::string settings_;
};

TEST_F(AgentChannelRun, HelloQuestionsAnsweredAllowAndDenyAndABlockedWrite) {
  const json r = run("answer", curl("asked.test", "asked-" + std::to_string(::getpid())) +
                                   curl("refused.test", "refused") +
                                   "touch /etc/vigil-agent-channel-probe 2>/dev/null; "
                                   "echo \"var=[$SANDBOX_AGENT_CHANNEL_FD]\"; "
                                   "ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c socket: ; "
                                   "ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep 'socket:' ; true");
  ASSERT_TRUE(r.contains("messages")) << r.dump();
  const std::string out = r["stdout"];
  const std::string err = r["stderr"];
  // vigil spoke first: its hello, protocol version 1.
  ASSERT_FALSE(r["messages"].empty()) << err;
  EXPECT_EQ(r["messages"][0]["raw"], R"({"type":"hello","protocol_version":1})");
  // Every message's own "type" is the first on its line (srt's order), so a harness that
  // reads it with a regex, as srt's reference agent does, is not misled by the resource's.
  for (const auto& m : r["messages"]) {
    const std::string raw = m["raw"];
    EXPECT_EQ(raw.rfind("{\"type\":\"" + m["type"].get<std::string>() + "\"", 0), 0U) << raw;
  }
  // Two questions, one per host off the allow list, in srt's shape.
  const auto asks = of_type(r, "permission_request");
  ASSERT_EQ(asks.size(), 2U) << r.dump(1);
  EXPECT_EQ(asks[0]["resource"]["type"], "network");
  EXPECT_EQ(asks[0]["resource"]["host"], "asked.test");
  EXPECT_EQ(asks[0]["resource"]["port"], server_->port());
  EXPECT_EQ(asks[0]["operation"], "connect");
  EXPECT_TRUE(asks[0]["id"].is_string() && asks[0]["description"].is_string());
  EXPECT_EQ(asks[1]["resource"]["host"], "refused.test");
  // allow: the request reached the loopback server; deny: the proxy refused it.
  EXPECT_EQ(out.substr(0, 8), "200 403 ") << out << err;
  EXPECT_NE(server_->log().find("asked-" + std::to_string(::getpid())), std::string::npos)
      << server_->log();
  EXPECT_EQ(server_->log().find("refused"), std::string::npos) << server_->log();
  // The refused write is a blocked notice; the harness's own deny is not echoed back.
  const auto blocked = of_type(r, "blocked");
  bool write_seen = false;
  for (const auto& b : blocked) {
    EXPECT_NE(b["resource"].value("host", ""), "refused.test") << b.dump();
    if (b["resource"]["type"] == "file" &&
        b["resource"]["path"] == "/etc/vigil-agent-channel-probe") {
      write_seen = true;
      EXPECT_EQ(b["operation"], "write");
    }
  }
  EXPECT_TRUE(write_seen) << r.dump(1);
  EXPECT_NE(err.find("<sandbox_violations>"), std::string::npos) << err;
  // The channel is the harness's: the command sees neither the variable nor the socket.
  EXPECT_NE(out.find("var=[]"), std::string::npos) << out;
  const std::string inode = "socket:[" + std::to_string(r["inode"].get<long>()) + "]";
  EXPECT_EQ(out.find(inode), std::string::npos) << out;
}

TEST_F(AgentChannelRun, AClosedChannelDeniesWhatIsOpenAndWhatComesLater) {
  const json r = run("close", curl("asked.test", "first") + curl("later.test", "later") +
                                  "echo finished");
  ASSERT_TRUE(r.contains("messages")) << r.dump();
  const std::string out = r["stdout"];
  const std::string err = r["stderr"];
  ASSERT_EQ(of_type(r, "permission_request").size(), 1U) << r.dump(1);
  // The pending request and the later one are denied at once (no wait for the deadline),
  // the command still finishes, and stderr says why.
  EXPECT_EQ(out, "403 403 finished\n") << err;
  EXPECT_NE(err.find("agent channel: the harness closed it"), std::string::npos) << err;
  EXPECT_EQ(server_->log().find("first"), std::string::npos) << server_->log();
  EXPECT_EQ(server_->log().find("later"), std::string::npos) << server_->log();
}

TEST_F(AgentChannelRun, AHarnessThatNeverGreetsIsNeverAskedAndTheRunGoesOn) {
  const json r = run("hostile", curl("asked.test", "hostile") + "echo finished");
  ASSERT_TRUE(r.contains("messages")) << r.dump();
  const std::string err = r["stderr"];
  EXPECT_TRUE(of_type(r, "permission_request").empty()) << r.dump(1);
  // The early "allow" for pr_1 was not kept for the question that never came.
  EXPECT_EQ(r["stdout"], "403 finished\n") << err;
  EXPECT_EQ(server_->log().find("hostile"), std::string::npos) << server_->log();
  EXPECT_NE(err.find("is not protocol_version 1"), std::string::npos) << err;
  EXPECT_NE(err.find("ignored a line from the harness"), std::string::npos) << err;
  EXPECT_NE(err.find("no hello (protocol_version 1) from the harness within 2 s"),
            std::string::npos)
      << err;
}

// The channel is a standalone `vigil run`'s. A thin client sends its environment to the
// session, which would hand it to the command: the variable is dropped there too.
TEST(AgentChannelSession, AThinClientNeverHandsTheVariableToTheCommand) {
  TempDir ws;
  Session session(ws.path());
  auto env = session.env();
  env["SANDBOX_AGENT_CHANNEL_FD"] = "9";
  const Outcome o = run_vigil({"run", "--", "sh", "-c", "echo \"var=[$SANDBOX_AGENT_CHANNEL_FD]\""},
                              ws.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "var=[]\n") << o.err;
  EXPECT_NE(o.err.find("SANDBOX_AGENT_CHANNEL_FD: "), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
