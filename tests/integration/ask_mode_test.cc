// Ask mode (vigil.network.ask) through a real client: the shipped Python client drives
// `vigil serve`, answers its `ask` requests, and the commands reach a loopback HTTP server
// with curl through the sandbox's proxy. once / session / always / deny / timeout, the
// "always" entry written into the settings file (and the rest of it kept), and what is
// never asked (address-guard refusals, deniedDomains). Every ask and answer is a record
// of the session's log, which verifies.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/log/session_log.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

std::string source_dir() { return std::string(VIGIL_TEST_DATA_DIR) + "/../.."; }

// The client as a library: runs each command in one session, answering the asks from
// `answers` in order ("none": no answer), and prints what it saw as one JSON line.
constexpr const char* kDriver = R"PY(
import json, sys
sys.path.insert(0, sys.argv[1])
from vigil_client import VigilSession
vigil, settings, log, cwd = sys.argv[2:6]
answers, commands, extra = json.loads(sys.argv[6]), json.loads(sys.argv[7]), json.loads(sys.argv[8])
asks, results = [], []
def on_ask(params):
    asks.append(params)
    a = answers.pop(0) if answers else "deny"
    return None if a == "none" else a
with VigilSession(vigil, settings=settings, log=log, extra_args=extra, workspace=cwd) as s:
    s.on_ask = on_ask
    for c in commands:
        out = {"stdout": [], "stderr": []}
        r = s.run(["sh", "-c", c], cwd=cwd, on_output=lambda st, d: out[st].append(d.decode()))
        results.append({"exit_code": r["exit_code"], "out": "".join(out["stdout"]),
                        "err": "".join(out["stderr"]), "annotation": r["annotation"]})
print(json.dumps({"asks": asks, "results": results}))
)PY";

std::string settings_json(double timeout_s) {
  return R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {
    "allowedDomains": ["allowed.test"],
    "deniedDomains": ["blocked.test"],
    "deniedResolvedAddresses": ["10.0.0.0/8"]
  },
  "vigil": {"network": {"ask": true, "askTimeoutSeconds": )" +
         std::to_string(timeout_s) + R"(}}
}
)";
}

struct Seen {
  Outcome o;
  json asks = json::array();
  json results = json::array();
  std::string log;
};

class AskMode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
    TempDir* root = &tmp_;
    write_file(*root / "index.html", "hello\n");
    server_ = std::make_unique<FileServer>(tmp_, tmp_.path());
    ASSERT_NE(server_->port(), 0) << "the loopback file server did not start";
    settings_ = conf_ / "sandbox.json";
    write_file(settings_, settings_json(30));
  }

  // curl's HTTP status for host:port, through the sandbox's proxy.
  std::string curl(const std::string& host) const {
    return "curl -s -o /dev/null -w '%{http_code} ' http://" + host + ":" +
           std::to_string(server_->port()) + "/index.html";
  }

  Seen run(const std::vector<std::string>& answers, const std::vector<std::string>& commands) {
    const std::string driver = tmp_ / "driver.py";
    write_file(driver, kDriver);
    const std::string log = state_ / ("s" + std::to_string(++runs_) + ".jsonl");
    const json extra = {
        "--test-allow-loopback",     "--test-resolve", "asked.test=127.0.0.1",   "--test-resolve",
        "allowed.test=127.0.0.1",    "--test-resolve", "blocked.test=127.0.0.1", "--test-resolve",
        "meta.test=169.254.169.254", "--test-resolve", "private.test=10.0.0.7"};
    Seen s;
    s.o = run_program({python3(), driver, source_dir() + "/clients/python", vigil_bin(), settings_,
                       log, ws_.path(), json(answers).dump(), json(commands).dump(), extra.dump()},
                      ws_.path(), 120, env());
    const auto nl = s.o.out.find('\n');
    EXPECT_NE(nl, std::string::npos) << s.o.out << s.o.err;
    if (nl != std::string::npos) {
      const json j = json::parse(s.o.out.substr(0, nl));
      s.asks = j["asks"];
      s.results = j["results"];
    }
    s.log = read_file(log);
    auto report = verify_log(log);
    if (!report) {
      ADD_FAILURE() << report.error().message;
    } else {
      EXPECT_TRUE(report->ok && report->complete) << report->why;
    }
    return s;
  }

  // The session's key (log_key.h) lives under this test's own state directory.
  std::map<std::string, std::string> env() const {
    return {{"VIGIL_TEST_MODE", "1"}, {"XDG_STATE_HOME", state_.path()}};
  }

  std::string last_log() const { return state_ / ("s" + std::to_string(runs_) + ".jsonl"); }

  std::string entry() const { return "asked.test:" + std::to_string(server_->port()); }

  static std::size_t count(const std::string& text, const std::string& needle) {
    return count_lines_containing(text, needle);
  }

  TempDir tmp_, conf_, ws_, state_;
  std::unique_ptr<FileServer> server_;
  std::string settings_;
  int runs_ = 0;
};

TEST_F(AskMode, OnceAllowsOneRequestAndAsksAgain) {
  // Plain HTTP, a CONNECT tunnel (curl -p) and SOCKS5 (the sandbox's ALL_PROXY): each of
  // the proxy's decision points holds and asks.
  const std::string url = " http://asked.test:" + std::to_string(server_->port()) + "/index.html";
  const std::string tunnel = "curl -p -s -o /dev/null -w '%{http_code} '" + url;
  const std::string socks = "curl -x \"$ALL_PROXY\" -s -o /dev/null -w '%{http_code} '" + url;
  const Seen s =
      run({"once", "once", "once", "once"},
          {curl("asked.test") + "; " + curl("asked.test") + "; " + tunnel + "; " + socks});
  ASSERT_EQ(s.results.size(), 1u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "200 200 200 200 ") << s.o.err;
  ASSERT_EQ(s.asks.size(), 4u);
  EXPECT_EQ(s.asks[2]["proto"], "connect");
  EXPECT_EQ(s.asks[3]["proto"], "socks5");
  EXPECT_EQ(s.asks[0]["host"], "asked.test");
  EXPECT_EQ(s.asks[0]["port"], server_->port());
  EXPECT_EQ(s.asks[0]["entry"], entry());
  EXPECT_EQ(s.asks[0]["choices"], json({"once", "session", "always", "deny"}));
  EXPECT_EQ(count(s.log, "\"kind\":\"net.ask\","), 4u) << s.log;
  EXPECT_EQ(count(s.log, "\"kind\":\"net.ask.answer\",\"ask\":1,\"answer\":\"once\""), 1u);
  EXPECT_EQ(count(s.log, "\"rule\":\"ask:once\""), 4u) << s.log;
  EXPECT_EQ(read_file(settings_), settings_json(30));  // once writes nothing
}

TEST_F(AskMode, SessionAllowsTheHostForTheRestOfTheSession) {
  const Seen s =
      run({"session"}, {curl("asked.test") + "; " + curl("asked.test"), curl("asked.test")});
  ASSERT_EQ(s.results.size(), 2u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "200 200 ");
  EXPECT_EQ(s.results[1]["out"], "200 ");
  EXPECT_EQ(s.asks.size(), 1u);
  EXPECT_EQ(count(s.log, "\"answer\":\"session\",\"entry\":\"" + entry() + "\""), 1u) << s.log;
  // The running command: the session's answer; the next command: its allow list.
  EXPECT_EQ(count(s.log, "\"rule\":\"ask:session\""), 2u) << s.log;
  EXPECT_EQ(count(s.log, "\"rule\":\"" + entry() + "\""), 1u) << s.log;
  EXPECT_EQ(read_file(settings_), settings_json(30));
}

TEST_F(AskMode, AlwaysWritesTheEntryIntoTheSettingsFileOnly) {
  const std::string before = read_file(settings_);
  const Seen s = run({"always"}, {curl("asked.test")});
  ASSERT_EQ(s.results.size(), 1u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "200 ");
  EXPECT_EQ(count(s.log, "\"answer\":\"always\",\"entry\":\"" + entry() + "\",\"written\":\"" +
                             settings_ + "\""),
            1u)
      << s.log;
  const std::string after = read_file(settings_);
  // Only the entry was added: the rest of the file is byte for byte what it was.
  const std::string added = "\"" + entry() + "\", ";
  const auto at = after.find(added);
  ASSERT_NE(at, std::string::npos) << after;
  EXPECT_EQ(after.substr(0, at) + after.substr(at + added.size()), before);
  // A new session reads it: no question, allowed by the written entry.
  const Seen next = run({}, {curl("asked.test")});
  ASSERT_EQ(next.results.size(), 1u) << next.o.err;
  EXPECT_EQ(next.results[0]["out"], "200 ");
  EXPECT_EQ(next.asks.size(), 0u);
  EXPECT_EQ(count(next.log, "\"rule\":\"" + entry() + "\""), 1u) << next.log;
}

TEST_F(AskMode, DenyRefusesAndSaysItWasAsked) {
  const Seen s = run({"deny"}, {curl("asked.test")});
  ASSERT_EQ(s.results.size(), 1u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "403 ");
  EXPECT_EQ(s.asks.size(), 1u);
  EXPECT_EQ(count(s.log, "\"kind\":\"net.ask.answer\",\"ask\":1,\"answer\":\"deny\""), 1u);
  EXPECT_EQ(count(s.log, "(asked: the answer was deny)\",\"refused_by\":\"not-allowed\""), 1u)
      << s.log;
  // The model reads it in the block (the result's, one per result: not also in stderr),
  // with the entry that would allow it.
  const std::string block = s.results[0]["annotation"];
  EXPECT_NE(block.find("<sandbox_violations>"), std::string::npos) << block;
  EXPECT_NE(block.find("(asked: the answer was deny)"), std::string::npos) << block;
  EXPECT_EQ(s.results[0]["err"].get<std::string>().find("<sandbox_violations>"), std::string::npos);
  EXPECT_EQ(read_file(settings_), settings_json(30));
}

TEST_F(AskMode, NoAnswerIsADenyAfterTheTimeout) {
  write_file(settings_, settings_json(0.5));
  const auto t0 = std::chrono::steady_clock::now();
  const Seen s = run({"none"}, {curl("asked.test")});
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(s.results.size(), 1u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "403 ");
  EXPECT_EQ(s.asks.size(), 1u);
  EXPECT_EQ(s.asks[0]["timeout"], 0.5);
  EXPECT_EQ(count(s.log, "\"timeout_ms\":500"), 1u) << s.log;
  EXPECT_EQ(count(s.log, "\"kind\":\"net.ask.answer\",\"ask\":1,\"answer\":\"timeout\""), 1u);
  EXPECT_LT(took, std::chrono::seconds(60));  // not the 60 s default
}

TEST_F(AskMode, GuardRefusalsAndDeniedDomainsAreNeverAsked) {
  const Seen s =
      run({"once", "once", "once"}, {curl("meta.test") + "; " + curl("private.test") + "; " +
                                     curl("blocked.test") + "; " + curl("allowed.test")});
  ASSERT_EQ(s.results.size(), 1u) << s.o.err;
  EXPECT_EQ(s.results[0]["out"], "403 403 403 200 ");
  EXPECT_EQ(s.asks.size(), 0u) << s.asks;
  EXPECT_EQ(count(s.log, "\"kind\":\"net.ask"), 0u) << s.log;
  EXPECT_EQ(count(s.log, "\"refused_by\":\"address-guard\""), 2u) << s.log;
  EXPECT_EQ(count(s.log, "\"refused_by\":\"denied-domain\""), 1u) << s.log;
}

// An agent session's log is sealed as `vigil run`'s is: replay --verify checks the seal
// with the user's key (it said UNKEYED before), and a forged end no longer passes.
TEST_F(AskMode, SessionLogIsSealed) {
  const Seen s = run({}, {"true", "true"});
  ASSERT_EQ(s.results.size(), 2u) << s.o.err;
  EXPECT_EQ(count(s.log, "\"key_id\":"), 1u) << s.log;
  auto v = run_program({vigil_bin(), "replay", "--verify", last_log()}, ws_.path(), 60, env());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("sealed: the seal matches"), std::string::npos) << v.out;
  // The end cut off and the chain re-ended without the key: not sealed any more.
  std::string text = read_file(last_log());
  const auto end = text.rfind(",\"mac\":\"");
  ASSERT_NE(end, std::string::npos) << text;
  text.erase(end, 73);  // ,"mac":"<64 hex>"
  const std::string forged = state_ / "forged.jsonl";
  write_file(forged, text);
  auto f = run_program({vigil_bin(), "replay", "--verify", forged}, ws_.path(), 60, env());
  EXPECT_NE(f.exit_code, 0) << f.out << f.err;
}

// Reads the pty's master side until `needle` shows up (or 30 s pass); all that was read.
std::string read_until(int master, const std::string& needle, std::string& seen) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (seen.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[1024];
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  return seen;
}

// `vigil session start --ask-tty`: the question comes up on the terminal the session was
// started from (a pty here), and the answer typed there decides a thin client's request.
TEST_F(AskMode, AskTtyAsksOnTheTerminal) {
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(master) << "no pty";
  ASSERT_EQ(::grantpt(master.get()), 0);
  ASSERT_EQ(::unlockpt(master.get()), 0);
  const std::string slave = ::ptsname(master.get());
  const std::string log = state_ / "tty.jsonl";
  // A shell leads the terminal's session, as a user's does: were `vigil session start`
  // the leader, its exit would hang the terminal up for the session it left behind.
  std::vector<std::string> argv = {"/bin/sh",
                                   "-c",
                                   "\"$0\" \"$@\"; exec sleep 300",
                                   vigil_bin(),
                                   "session",
                                   "start",
                                   "--settings",
                                   settings_,
                                   "--log",
                                   log,
                                   "--ask-tty",
                                   "--test-allow-loopback",
                                   "--test-resolve",
                                   "asked.test=127.0.0.1"};
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const auto vars = env();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    // A session leader opening a terminal makes it its controlling one: /dev/tty.
    UniqueFd tty(::open(slave.c_str(), O_RDWR));
    if (!tty) ::_exit(120);
    for (int fd = 0; fd < 3; ++fd) ::dup2(tty.get(), fd);
    for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
    if (::chdir(ws_.path().c_str()) != 0) ::_exit(121);
    ::execv(cargv[0], cargv.data());
    ::_exit(122);
  }
  struct Leader {
    pid_t pid;
    ~Leader() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } leader{pid};
  std::string seen;
  read_until(master.get(), "export VIGIL_SESSION_PID;", seen);
  const std::regex handle_re("VIGIL_SESSION='([^']+)'");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(seen, m, handle_re)) << seen;
  const std::string handle = m[1].str();
  auto client_env = vars;
  client_env["VIGIL_SESSION"] = handle;
  // From the workspace: the thin client passes its cwd, and "." is what is writable.
  Background client({"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", ws_.path(), vigil_bin(), "run",
                     "--", "sh", "-c", curl("asked.test")},
                    tmp_.path(), "tty-client", client_env);
  read_until(master.get(), "allow?", seen);
  ASSERT_NE(seen.find("wants " + entry()), std::string::npos)
      << seen << client.out() << client.err() << read_file(log);
  ASSERT_NE(seen.find("[a]lways"), std::string::npos) << seen;
  ASSERT_EQ(::write(master.get(), "s\n", 2), 2);
  EXPECT_EQ(client.signal_and_wait(0, 30s), 0) << client.err();
  EXPECT_EQ(client.out(), "200 ") << client.err();
  auto end = run_program({vigil_bin(), "session", "end", handle}, ws_.path(), 60, vars);
  EXPECT_EQ(end.exit_code, 0) << end.err;
  const std::string text = read_file(log);
  EXPECT_EQ(count(text, "\"kind\":\"net.ask.answer\",\"ask\":1,\"answer\":\"session\""), 1u)
      << text;
  EXPECT_EQ(count(text, "\"rule\":\"ask:session\""), 1u) << text;
}

// Waits (10 s at most) for a file the command makes.
bool wait_for_file(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!exists(path) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  return exists(path);
}

// Reads what the pty has now, without waiting.
void drain(int master, std::string& seen) {
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    char buf[1024];
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) return;
    seen.append(buf, static_cast<std::size_t>(n));
  }
}

// --ask-tty when the command prints on the same terminal (a thin client run from it):
// the command waits until vigil's question is on screen, then prints a look-alike that
// names a harmless host. Nothing it prints shows between the question and the answer (it
// comes after), `always` echoes the exact host and needs a confirmation, and the log
// says the answer came from the terminal.
TEST_F(AskMode, AskTtyQuestionsCannotBeCoveredOrImitatedByTheCommand) {
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(master) << "no pty";
  ASSERT_EQ(::grantpt(master.get()), 0);
  ASSERT_EQ(::unlockpt(master.get()), 0);
  const std::string slave = ::ptsname(master.get());
  const std::string log = state_ / "spoof.jsonl";
  std::vector<std::string> argv = {"/bin/sh", "-c", "\"$0\" \"$@\"; exec sleep 300", vigil_bin(),
                                   "session", "start", "--settings", settings_, "--log", log,
                                   "--ask-tty", "--test-allow-loopback", "--test-resolve",
                                   "asked.test=127.0.0.1"};
  const auto vars = env();
  const auto start = [&](const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& extra, bool leader) {
    std::vector<char*> cargv;
    std::vector<std::string> copy = args;
    for (auto& a : copy) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (leader) ::setsid();
      // The leader makes the pty its controlling terminal; the client only writes on it.
      UniqueFd tty(::open(slave.c_str(), leader ? O_RDWR : O_RDWR | O_NOCTTY));
      if (!tty) ::_exit(120);
      for (int fd = 0; fd < 3; ++fd) ::dup2(tty.get(), fd);
      for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
      for (const auto& [k, v] : extra) ::setenv(k.c_str(), v.c_str(), 1);
      if (::chdir(ws_.path().c_str()) != 0) ::_exit(121);
      ::execv(cargv[0], cargv.data());
      ::_exit(122);
    }
    return pid;
  };
  struct Reaped {
    pid_t pid;
    ~Reaped() {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } leader{start(argv, {}, true)};
  std::string seen;
  read_until(master.get(), "export VIGIL_SESSION_PID;", seen);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(seen, m, std::regex("VIGIL_SESSION='([^']+)'"))) << seen;
  const std::string handle = m[1].str();
  const std::string fake =
      "\\033[2K\\rvigil: command 1 wants harmless.test:443 (http, 127.0.0.1), not on the allow "
      "list.\\nvigil: allow? [o]nce, [s]ession, [a]lways, [d]eny: ";
  const std::string script = curl("asked.test") + " > curl.out & while [ ! -e go ]; do sleep 0.05; " +
                             "done; printf '" + fake + "'; touch fake-written; wait";
  Reaped client{start({vigil_bin(), "run", "--", "sh", "-c", script}, {{"VIGIL_SESSION", handle}},
                      false)};
  seen.clear();
  read_until(master.get(), "allow?", seen);
  ASSERT_NE(seen.find("wants " + entry()), std::string::npos) << seen << read_file(log);
  // The question is on screen: now the command prints its look-alike.
  write_file(ws_ / "go", "");
  ASSERT_TRUE(wait_for_file(ws_ / "fake-written")) << seen;
  drain(master.get(), seen);
  EXPECT_EQ(seen.find("harmless.test"), std::string::npos)
      << "the command's look-alike reached the terminal while vigil's question was on it:\n"
      << seen;
  // `always` echoes the exact host and asks again; not confirmed, nothing is written.
  ASSERT_EQ(::write(master.get(), "a\n", 2), 2);
  std::string confirm;
  read_until(master.get(), "[y/N]", confirm);
  ASSERT_NE(confirm.find("always allow exactly " + entry()), std::string::npos) << confirm;
  ASSERT_EQ(::write(master.get(), "n\n", 2), 2);
  std::string again;
  read_until(master.get(), "allow?", again);
  EXPECT_NE(again.find("not confirmed"), std::string::npos) << again;
  ASSERT_EQ(::write(master.get(), "d\n", 2), 2);
  // Held, not lost: the command's output comes once the question is answered.
  std::string after;
  read_until(master.get(), "harmless.test", after);
  EXPECT_NE(after.find("harmless.test"), std::string::npos) << after;
  int status = 0;
  ASSERT_EQ(::waitpid(client.pid, &status, 0), client.pid);
  client.pid = -1;
  EXPECT_EQ(read_file(ws_ / "curl.out"), "403 ");
  EXPECT_EQ(read_file(settings_).find("asked.test"), std::string::npos) << read_file(settings_);
  auto end = run_program({vigil_bin(), "session", "end", handle}, ws_.path(), 60, vars);
  EXPECT_EQ(end.exit_code, 0) << end.err;
  const std::string text = read_file(log);
  EXPECT_EQ(count(text, "\"kind\":\"net.ask.answer\",\"ask\":1,\"answer\":\"deny\",\"via\":\"tty\""),
            1u)
      << text;
}

}  // namespace
}  // namespace vigil::test
