// An agent session's one network namespace (issue 32; supervisor/launch/session_netns.h):
// every command of a session joins it (loopback shared across them), two sessions have
// one each, `vigil run` keeps a namespace of its own per command, nothing in it reaches
// the host, and it ends with the session (the host's /proc scanned for anything left in it).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/serve_lines.h"

namespace vigil::test {
namespace {

json request(int id, const std::string& method, const json& params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

json background(int id, const std::string& command) {
  return request(id, "run", {{"argv", {"sh", "-c", command}}, {"background", true}});
}

std::string ns_of(const std::string& proc_pid) {
  char buf[64] = {};
  const ssize_t n = ::readlink(("/proc/" + proc_pid + "/ns/net").c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// Host pids whose network namespace is `ns` ("net:[N]").
std::vector<int> pids_in_netns(const std::string& ns) {
  std::vector<int> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ns_of(name) == ns) out.push_back(std::stoi(name));
  }
  ::closedir(d);
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Polls until the command's file holds something (it wrote it in the sandbox).
std::string await_file(const std::string& path, int timeout_ms = 30000) {
  std::string got;
  wait_for([&] { return exists(path) && !(got = read_file(path)).empty() && got.back() == '\n'; },
           timeout_ms);
  return got;
}

const char kFetch[] =
    "for i in $(seq 1 150); do curl -sf http://127.0.0.1:8000/served.txt -o fetched.txt && "
    "exit 0; sleep 0.1; done; exit 7";

TEST(SessionNetns, TwoSessionsAtOnceAreIsolatedAndVigilRunIsInNeither) {
  TempDir ws_a, ws_b, state, scratch;
  const std::string m = unique_marker("netns-two");
  write_file(ws_a / "served.txt", "A-" + m + "\n");
  write_file(ws_b / "served.txt", "B-" + m + "\n");
  Serve a(ws_a.path(), state / "a.jsonl");
  Serve b(ws_b.path(), state / "b.jsonl");
  // The same port in both: each session's server is in its own namespace.
  const std::string server = "exec python3 -m http.server 8000 --bind 127.0.0.1";
  a.send(background(1, server));
  b.send(background(1, server));
  ASSERT_EQ(a.reply(1)["result"]["handle"], "bg-1");
  ASSERT_EQ(b.reply(1)["result"]["handle"], "bg-1");
  a.send(run_request(2, kFetch));
  b.send(run_request(2, kFetch));
  EXPECT_EQ(a.reply(2, 60000)["result"]["exit_code"], 0);
  EXPECT_EQ(b.reply(2, 60000)["result"]["exit_code"], 0);
  EXPECT_EQ(read_file(ws_a / "fetched.txt"), "A-" + m + "\n");
  EXPECT_EQ(read_file(ws_b / "fetched.txt"), "B-" + m + "\n");
  // The two namespaces differ, and a `vigil run` beside them is in neither: nothing
  // listens on its 127.0.0.1:8000.
  a.send(run_request(3, "readlink /proc/self/ns/net > ns.txt"));
  b.send(run_request(3, "readlink /proc/self/ns/net > ns.txt"));
  EXPECT_EQ(a.reply(3)["result"]["exit_code"], 0);
  EXPECT_EQ(b.reply(3)["result"]["exit_code"], 0);
  const std::string ns_a = trimmed(read_file(ws_a / "ns.txt"));
  const std::string ns_b = trimmed(read_file(ws_b / "ns.txt"));
  EXPECT_EQ(ns_a.rfind("net:[", 0), 0u) << ns_a;
  EXPECT_NE(ns_a, ns_b);
  auto run = run_vigil({"run", "--", "sh", "-c",
                        "readlink /proc/self/ns/net; curl -s --noproxy '*' --max-time 5 "
                        "http://127.0.0.1:8000/served.txt; echo rc=$?"},
                       scratch.path());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find(m), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rc=7"), std::string::npos) << "connection refused: " << run.out;
  EXPECT_EQ(run.out.find(ns_a), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find(ns_b), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("net:["), std::string::npos) << run.out;
}

TEST(SessionNetns, OnlyLoopbackNoHostAndItEndsWithTheSession) {
  TempDir ws, state;
  const std::string m = unique_marker("netns-end");
  // A server on the host's loopback: no command of the session may reach it.
  UniqueFd host(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(host);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(host.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(host.get(), 8), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(host.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  std::string ns;
  {
    Serve s(ws.path(), state / "s.jsonl");
    s.send(background(1, "readlink /proc/self/ns/net > ns1.txt; exec sleep 1000; : " + m));
    ASSERT_EQ(s.reply(1)["result"]["handle"], "bg-1");
    ns = trimmed(await_file(ws / "ns1.txt"));
    s.send(run_request(2, "readlink /proc/self/ns/net > ns2.txt; grep ':' /proc/net/dev | "
                          "cut -d: -f1 | tr -d ' ' > links.txt; curl -s --noproxy '*' "
                          "--max-time 3 http://127.0.0.1:" + port + "/; echo $? > host.txt"));
    EXPECT_EQ(s.reply(2, 60000)["result"]["exit_code"], 0);
    EXPECT_EQ(trimmed(read_file(ws / "ns2.txt")), ns) << "both commands in one namespace";
    EXPECT_NE(ns, ns_of("self")) << "not the host's";
    EXPECT_EQ(read_file(ws / "links.txt"), "lo\n");
    EXPECT_EQ(trimmed(read_file(ws / "host.txt")), "7") << "the host's loopback is not reached";
    pollfd p{host.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 0), 0) << "a connection reached the host's listener";
    // The scan sees the background command's processes while the session runs.
    EXPECT_FALSE(pids_in_netns(ns).empty()) << ns;
    s.close_both();
  }
  // The session has ended (its process reaped): nothing is left in its namespace.
  EXPECT_TRUE(pids_in_netns(ns).empty()) << ns;
  EXPECT_TRUE(pids_with_marker(m).empty());
}

// vigil.network.capture in a session: each command's DNS stub listens on its own loopback
// address (its resolv.conf names it), so two commands at once each resolve through their
// own stub and fake-name table, and neither fails to bind.
TEST(SessionNetns, TwoCommandsAtOnceEachHaveTheirOwnDnsStub) {
  if (!kernel_has_gatekeeper()) GTEST_SKIP() << "vigil.network.capture needs Linux 5.14";
  TempDir ws, state, cfg;
  write_file(cfg / "settings.json",
             R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"network": {"capture": true}}})");
  Serve s(ws.path(), state / "s.jsonl", {"--settings", cfg / "settings.json"});
  s.send(background(1, "cat /etc/resolv.conf > bg-resolv.txt; getent hosts bg-name.invalid "
                       "> bg-hosts.txt; touch bg-done; exec sleep 1000"));
  ASSERT_EQ(s.reply(1)["result"]["handle"], "bg-1");
  ASSERT_TRUE(wait_for([&] { return exists(ws / "bg-done"); }, 30000));
  s.send(run_request(2, "cat /etc/resolv.conf > fg-resolv.txt; getent hosts fg-name.invalid "
                        "> fg-hosts.txt"));
  EXPECT_EQ(s.reply(2, 60000)["result"]["exit_code"], 0);
  const std::string bg = read_file(ws / "bg-resolv.txt"), fg = read_file(ws / "fg-resolv.txt");
  EXPECT_EQ(bg.rfind("nameserver 127.86.", 0), 0u) << bg;
  EXPECT_EQ(fg.rfind("nameserver 127.86.", 0), 0u) << fg;
  EXPECT_NE(bg, fg) << "each command's stub on its own address";
  EXPECT_NE(read_file(ws / "bg-hosts.txt").find("bg-name.invalid"), std::string::npos);
  EXPECT_NE(read_file(ws / "fg-hosts.txt").find("fg-name.invalid"), std::string::npos)
      << "the second stub bound beside the first, which still runs";
  s.send(request(3, "kill", {{"handle", "bg-1"}}));
  EXPECT_EQ(s.reply(3)["result"]["killed"], true);
}

}  // namespace
}  // namespace vigil::test
