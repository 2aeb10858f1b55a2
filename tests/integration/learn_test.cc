// `vigil learn` on real sessions of npm, git and cargo work that get denials: the settings
// it writes let the same commands run again with zero denials, and it proposes nothing
// protected (a protected name, a directory holding a denyRead path, the settings file's own
// directory) -- those it lists as left denied, with the reason.
//
// Each tool runs with a home of its own (a TempDir), so its caches (~/.npm, ~/.cargo) are
// outside the writable roots. Network: git clones over HTTP from a loopback file server
// (127.0.0.1 only); npm installs a local tarball with --offline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

bool on_path(const std::string& tool) {
  return run_program({"sh", "-c", "command -v " + tool}, "/tmp", 10).exit_code == 0;
}

// A tool this test drives is missing: a skipped part, or a failure where the run must
// test everything (tools/test.sh sets VIGIL_REQUIRE_TOOLS=1; tools/bootstrap.sh installs them).
void missing_tool(const std::string& why) {
  const char* required = std::getenv("VIGIL_REQUIRE_TOOLS");
  if (required != nullptr && std::string(required) == "1") {
    ADD_FAILURE() << why << " (VIGIL_REQUIRE_TOOLS=1: tools/bootstrap.sh installs it)";
  } else {
    std::printf("[ SKIPPED part ] %s\n", why.c_str());
  }
}

std::size_t denials_in(const std::string& log) {
  const std::string text = read_file(log);
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find("\"verdict\":\"denied\"", at)) != std::string::npos; ++at) ++n;
  return n;
}

class LearnTest : public ::testing::Test {
 protected:
  // Runs `script` under `settings` ("" = the embedded default) in the workspace with the
  // test's home; returns the log's path.
  std::string session(const std::string& name, const std::string& script,
                      const std::string& settings = "") {
    const std::string log = conf / (name + ".jsonl");
    std::vector<std::string> args = {"run", "--log", log};
    if (!settings.empty()) {
      args.push_back("--settings");
      args.push_back(settings);
    }
    args.insert(args.end(), {"--", "sh", "-c", script});
    const Outcome o = run_vigil(args, ws.path(), 180, env());
    EXPECT_TRUE(exists(log)) << o.err;
    last_err = o.err;
    return log;
  }
  std::map<std::string, std::string> env() const {
    std::map<std::string, std::string> e = {{"HOME", home.path()},
                                            {"npm_config_update_notifier", "false"}};
    if (const char* r = std::getenv("RUSTUP_HOME")) e["RUSTUP_HOME"] = r;
    return e;
  }
  // The directories learn said to create (allowWrite takes existing ones), as a user
  // following its output would.
  void make_what_learn_says(const std::string& out) {
    std::size_t at = 0;
    while ((at = out.find("(mkdir -p ", at)) != std::string::npos) {
      at += 10;
      std::string dir = out.substr(at, out.find(')', at) - at);
      if (dir.starts_with("~")) dir = home.path() + dir.substr(1);
      make_dirs(dir);
    }
  }

  TempDir ws, home, conf, srv;
  std::string last_err;
};

TEST_F(LearnTest, NpmGitAndCargoWorkRunWithZeroDenialsUnderTheLearnedSettings) {
  std::vector<std::string> logs;
  std::vector<std::string> scripts;
  // git: clone over HTTP from a loopback server (the proxy refuses 127.0.0.1:PORT until an
  // entry names it), then commit in the workspace.
  ASSERT_EQ(run_program({"sh", "-c",
                         "cd " + srv.path() + " && git init -q --bare repo.git && git init -q src && cd src && "
                         "echo hi > f && git add f && git -c user.name=t -c user.email=t@t "
                         "commit -qm one && git push -q ../repo.git HEAD:refs/heads/main && "
                         "cd ../repo.git && git symbolic-ref HEAD refs/heads/main && "
                         "git update-server-info"},
                        srv.path())
                .exit_code,
            0);
  FileServer server(conf, srv.path());
  ASSERT_NE(server.port(), 0) << "the loopback file server did not start";
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/repo.git";
  // (vigil sets NO_PROXY for loopback, so that a server inside the sandbox is reached
  // directly: unset here, git goes through the proxy, which decides on 127.0.0.1:PORT.)
  scripts.push_back("rm -rf clone && env -u no_proxy -u NO_PROXY git clone -q " + url +
                    " clone && cd clone && echo two >> f && git -c user.name=t -c "
                    "user.email=t@t commit -qam two");
  // npm: install a local tarball; its cache and logs go to ~/.npm.
  if (on_path("npm")) {
    make_dirs(srv / "dep");
    write_file(srv / "dep/package.json", R"({"name": "dep", "version": "1.0.0"})");
    write_file(srv / "dep/index.js", "module.exports = 1;\n");
    ASSERT_EQ(run_program({"sh", "-c", "cd " + (srv / "dep") + " && npm pack --silent >/dev/null"},
                          srv.path(), 120,
                          env())
                  .exit_code,
              0);
    write_file(ws / "package.json", R"({"name": "ws", "version": "1.0.0"})");
    scripts.push_back("npm install --offline --no-audit --no-fund " + (srv / "dep/dep-1.0.0.tgz") +
                      " >/dev/null 2>&1; true");
  } else {
    missing_tool("npm is not installed: no npm session");
  }
  // cargo: a crate with no dependencies, built in the workspace; cargo locks and writes
  // under $CARGO_HOME (~/.cargo).
  if (on_path("cargo") && run_program({"cargo", "--version"}, "/tmp", 60, env()).exit_code == 0) {
    make_dirs(ws / "crate/src");
    write_file(ws / "crate/Cargo.toml",
               "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write_file(ws / "crate/src/main.rs", "fn main() {}\n");
    scripts.push_back("cd crate && cargo build --offline -q; true");
  } else {
    missing_tool("cargo is not usable here (not on PATH, or no toolchain for this user): no "
                 "cargo session");
  }
  std::size_t denied_before = 0;
  for (std::size_t i = 0; i < scripts.size(); ++i) {
    logs.push_back(session("s" + std::to_string(i), scripts[i]));
    denied_before += denials_in(logs.back());
  }
  ASSERT_GT(denied_before, 0U) << "the sessions must have been denied something to learn from";

  std::vector<std::string> args = {"learn"};
  args.insert(args.end(), logs.begin(), logs.end());
  args.insert(args.end(), {"--output", conf / "learned.json"});
  const Outcome learned = run_vigil(args, ws.path(), 60, env());
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_NE(learned.out.find("\"127.0.0.1:" + std::to_string(server.port()) + "\""),
            std::string::npos)
      << learned.out;
  if (on_path("npm")) {
    EXPECT_NE(learned.out.find("+ \"~/.npm\""), std::string::npos) << learned.out;
  }
  make_what_learn_says(learned.out);

  for (std::size_t i = 0; i < scripts.size(); ++i) {
    const std::string log = session("again" + std::to_string(i), scripts[i], conf / "learned.json");
    EXPECT_EQ(denials_in(log), 0U) << scripts[i] << "\n" << last_err << "\nlearned:\n" << learned.out;
  }
  EXPECT_TRUE(exists(ws / "clone/f"));
}

TEST_F(LearnTest, ProposesNothingProtected) {
  make_dirs(home / "cfg/secret");
  make_dirs(home / "settings");
  const std::string current = home / "settings/current.json";
  write_file(current, R"({"filesystem": {"allowWrite": ["."], "denyRead": ["~/cfg/secret"]},
  "network": {"deniedDomains": ["127.0.0.9"]}})");
  const std::string log = session(
      "bad",
      "echo x > .bashrc; mkdir -p a/.vscode; echo x > a/.vscode/tasks.json; echo k > " +
          (home / "cfg/x") + "; echo x > " + (home / ".profile") + "; echo x > /etc/vigil-x; " +
          "mkdir -p " + (home / "tool/cache") + "; echo x > " + (home / "tool/cache/f") +
          "; echo x > " + (home / "settings/near") +
          "; curl -s --noproxy '' -o /dev/null http://127.0.0.9:1/; true",
      current);
  const Outcome o = run_vigil({"learn", log, "--settings", current}, ws.path(), 60, env());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string proposals;  // the + lines
  for (std::size_t at = 0; (at = o.out.find("\n+ ", at)) != std::string::npos; ++at)
    proposals += o.out.substr(at, o.out.find('\n', at + 1) - at);
  for (const std::string& never : {std::string(".bashrc"), std::string(".vscode"),
                                   std::string("cfg"), std::string(".profile"),
                                   std::string("/etc"), std::string("127.0.0.9"),
                                   std::string("\"~\""), std::string("settings")}) {
    EXPECT_EQ(proposals.find(never), std::string::npos) << never << "\n" << o.out;
  }
  EXPECT_NE(proposals.find("+ \"~/tool\""), std::string::npos) << o.out;
  const std::string left = o.out.substr(o.out.find("left denied, and why:"));
  for (const std::string& why :
       {std::string("mandatory deny .bashrc"), std::string("mandatory deny .vscode"),
        std::string("filesystem.denyRead[0] \"~/cfg/secret\" covers ~/cfg"), std::string("a system directory"),
        std::string("network.deniedDomains[0] \"127.0.0.9\""),
        std::string("holds the settings file")}) {
    EXPECT_NE(left.find(why), std::string::npos) << why << "\n" << o.out;
  }
}

}  // namespace
}  // namespace vigil::test
