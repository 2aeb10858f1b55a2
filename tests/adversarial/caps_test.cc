// Resource caps (vigil.limits) through a real `vigil run`, with the caps set low: a fork
// bomb, a memory hog and a file past the size cap each end the command, with a line in
// the <sandbox_violations> block and session.end's reason, and leave nothing running.
// Run as root (this host: cgroups) and as an unprivileged user (rlimits where no cgroup
// is delegated); `vigil probe --json` says which mechanism is in force, and the
// expectations follow it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// The settings live outside the workspace (a settings file the command could rewrite is
// refused); the workspace is writable.
struct CapsSession {
  TempDir ws;
  TempDir conf;
  std::string settings;
  explicit CapsSession(const std::string& limits) {
    settings = conf / "s.json";
    write_file(settings, R"({"filesystem":{"allowWrite":[")" + ws.path() +
                             R"("]},"vigil":{"limits":)" + limits + "}}");
  }
  Outcome run(const std::vector<std::string>& command) {
    std::vector<std::string> args = {"run", "--settings", settings, "--log", ws / "s.jsonl",
                                     "--timeout", "120", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return run_vigil(args, ws.path(), 180);
  }
  std::string end_record() {
    return run_vigil({"replay", "--json", "session.end", ws / "s.jsonl"}, ws.path()).out;
  }
};

std::string probe_mechanism(const char* cap) {
  TempDir d;
  auto o = run_vigil({"probe", "--json"}, d.path());
  auto j = nlohmann::json::parse(o.out, nullptr, false);
  if (j.is_discarded() || !j.contains("limits")) return "";
  return j["limits"].value(cap, "");
}

TEST(Caps, ProbeSaysWhichMechanismIsInForce) {
  const std::string procs = probe_mechanism("processes");
  EXPECT_TRUE(procs == "cgroup v2" || procs == "cgroup v1" || procs == "rlimit") << procs;
  EXPECT_EQ(probe_mechanism("file_size"), "rlimit");
}

TEST(Caps, AForkBombEndsAtThePidsCap) {
  CapsSession s(R"({"processes":64})");
  const std::string marker = unique_marker("forkbomb");
  const auto t0 = std::chrono::steady_clock::now();
  // Every copy is a shell with the marker on its command line.
  auto o = s.run({"sh", "-c", "f() { f & f & wait; }; f", marker});
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(o.exit_code, 137) << o.err;
  EXPECT_NE(o.err.find("limit: pids"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("<sandbox_violations>\nlimit pids: the sandbox reached its cap of 64"),
            std::string::npos)
      << o.err;
  // Ended by the cap, not by the 120 s timeout.
  EXPECT_LT(took, std::chrono::seconds(60));
  EXPECT_TRUE(pids_with_marker(marker).empty()) << "a process of the fork bomb outlived vigil";
  EXPECT_NE(s.end_record().find("\"reason\":\"limit: pids\""), std::string::npos);
  // The host still forks and runs a sandbox at once.
  auto after = run_vigil({"run", "--", "true"}, s.ws.path(), 30);
  EXPECT_EQ(after.exit_code, 0) << after.err;
}

TEST(Caps, AMemoryHogIsStoppedAtTheMemoryCap) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
  const std::string via = probe_mechanism("memory");
  CapsSession s(R"({"memoryBytes":134217728})");
  // 1 GiB in 32 MiB blocks, every page written; the cap is 128 MiB.
  auto o = s.run({"python3", "-c",
                  "b = []\n"
                  "for i in range(32): b.append(b'x' * (32 << 20))\n"
                  "print('survived')\n"});
  EXPECT_EQ(o.out.find("survived"), std::string::npos) << o.out;
  EXPECT_NE(o.exit_code, 0);
  if (via == "rlimit") {
    // RLIMIT_DATA: the allocation fails inside the command, which ends on its own.
    EXPECT_NE(o.err.find("MemoryError"), std::string::npos) << o.err;
  } else {
    EXPECT_EQ(o.exit_code, 137) << o.err;
    EXPECT_NE(o.err.find("limit memory: the sandbox reached its memory cap of 128.0 MiB"),
              std::string::npos)
        << o.err;
    EXPECT_NE(s.end_record().find("\"reason\":\"limit: memory\""), std::string::npos);
  }
}

TEST(Caps, AFilePastTheSizeCapEndsTheWriter) {
  CapsSession s(R"({"maxFileBytes":1048576})");
  auto o = s.run({"sh", "-c", "exec head -c 4194304 /dev/zero > big"});
  EXPECT_EQ(o.exit_code, 128 + SIGXFSZ) << o.err;
  struct stat st {};
  ASSERT_EQ(::stat((s.ws / "big").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 1048576);
  EXPECT_NE(o.err.find("limit file size: a process was killed (SIGXFSZ)"), std::string::npos)
      << o.err;
  EXPECT_NE(s.end_record().find("\"reason\":\"limit: file size\""), std::string::npos);
}

TEST(Caps, WithinItsCapsACommandIsUntouched) {
  CapsSession s(R"({"processes":64,"memoryBytes":268435456,"maxFileBytes":1048576})");
  auto o = s.run({"sh", "-c", "head -c 1000 /dev/zero > small && echo ok"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "ok\n");
  EXPECT_EQ(o.err.find("limit"), std::string::npos) << o.err;
  EXPECT_EQ(s.end_record().find("\"reason\""), std::string::npos);
}

// This process's cgroup v1 pids directory ("" when pids is not a v1 hierarchy here).
std::string own_v1_pids_dir() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream parts(line);
    std::string id, list, path;
    if (!std::getline(parts, id, ':') || !std::getline(parts, list, ':') ||
        !std::getline(parts, path)) {
      continue;
    }
    if (list == "pids") return "/sys/fs/cgroup/pids" + (path == "/" ? "" : path);
  }
  return "";
}

// A vigil that was killed leaves its command's cgroup (vigil-PID-N) behind; a later vigil
// given the same pid must still run (it used to refuse every command: "File exists").
TEST(Caps, ACgroupLeftByAKilledVigilWithThisPidIsTakenOver) {
  if (probe_mechanism("processes") != "cgroup v1") GTEST_SKIP() << "needs pids on cgroup v1";
  const std::string parent = own_v1_pids_dir();
  if (parent.empty() || ::access(parent.c_str(), W_OK) != 0) GTEST_SKIP() << "pids not writable";
  CapsSession s(R"({"processes":64})");
  int go_fds[2];
  ASSERT_EQ(::pipe(go_fds), 0);
  UniqueFd go_r(go_fds[0]), go_w(go_fds[1]);
  const std::string bin = vigil_bin();
  const std::string log = s.ws / "s.jsonl";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    go_w.reset();
    char b;
    if (::read(go_r.get(), &b, 1) != 1) ::_exit(99);
    if (::chdir(s.ws.path().c_str()) != 0) ::_exit(98);
    ::execl(bin.c_str(), bin.c_str(), "run", "--settings", s.settings.c_str(), "--log", log.c_str(),
            "--", "true", static_cast<char*>(nullptr));
    ::_exit(97);
  }
  go_r.reset();
  const std::string stale = parent + "/vigil-" + std::to_string(pid) + "-0";
  const bool made = ::mkdir(stale.c_str(), 0755) == 0;
  EXPECT_TRUE(made) << stale;
  EXPECT_EQ(::write(go_w.get(), "1", 1), 1);
  go_w.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  // The command's cgroup is removed at the end, the stale one with it.
  EXPECT_NE(::access(stale.c_str(), F_OK), 0);
  if (made) ::rmdir(stale.c_str());
}

}  // namespace
}  // namespace vigil::test
