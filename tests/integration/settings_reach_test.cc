// The settings file is opened once and the open file is what is parsed and checked: a
// path the sandbox could swap (a symlink or directory on the way that lies in a writable
// root) is refused, and a FIFO planted as settings or as a log cannot hang vigil.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

void expect_refused(const Outcome& o, const std::string& ran_marker) {
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--allow-writable-settings"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ran_marker)) << "the command must not run";
}

TEST(SettingsReach, ADirectoryInsideAWritableRootIsRefusedEvenWhenDenied) {
  // ws is writable; ws/trusted is denyWrite, so the file and its directory are not
  // writable -- but ws/trusted itself can be renamed away and replaced.
  TempDir ws;
  make_dirs(ws / "trusted");
  write_file(ws / "trusted/s.json",
             R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["trusted"]}})");
  auto o = run_vigil({"run", "--settings", "trusted/s.json", "--", "touch", "ran"}, ws.path());
  expect_refused(o, ws / "ran");
  EXPECT_NE(o.err.find("reachable through " + ws.path()), std::string::npos) << o.err;
  auto ok = run_vigil(
      {"run", "--settings", "trusted/s.json", "--allow-writable-settings", "--", "touch", "ran"},
      ws.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(SettingsReach, ASymlinkInsideAWritableRootIsRefused) {
  TempDir ws, cfg;
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  ASSERT_EQ(::symlink(cfg.path().c_str(), (ws / "link").c_str()), 0);
  auto o = run_vigil({"run", "--settings", ws / "link/s.json", "--", "touch", "ran"}, ws.path());
  expect_refused(o, ws / "ran");
  // The same file by its own path is fine, and so is a symlink the sandbox cannot write.
  auto direct = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(direct.exit_code, 0) << direct.err;
  TempDir links;
  ASSERT_EQ(::symlink(cfg.path().c_str(), (links / "cfg").c_str()), 0);
  auto safe_link = run_vigil({"run", "--settings", links / "cfg/s.json", "--", "true"}, ws.path());
  EXPECT_EQ(safe_link.exit_code, 0) << safe_link.err;
}

TEST(SettingsReach, AFileInAnotherAllowWriteRootOrBelowAWritableParentIsRefused) {
  TempDir ws, other;
  make_dirs(other / "deep/er");
  // In another writable root, in a directory that is itself denied.
  write_file(other / "deep/er/s.json", R"({"filesystem": {"allowWrite": [")" + other.path() +
                                           R"("], "denyWrite": [")" + other / "deep" + R"("]}})");
  auto o = run_vigil({"run", "--settings", other / "deep/er/s.json", "--", "touch", ws / "ran"},
                     ws.path());
  expect_refused(o, ws / "ran");
  EXPECT_NE(o.err.find("reachable through " + other.path()), std::string::npos) << o.err;
}

TEST(SettingsReach, AFifoAsSettingsOrAsALogFailsAtOnce) {
  TempDir ws, cfg;
  ASSERT_EQ(::mkfifo((cfg / "s.json").c_str(), 0600), 0);
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path(), 20);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("FIFO"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  auto e = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path(), 20);
  EXPECT_EQ(e.exit_code, 2) << e.err;
  auto r = run_vigil({"replay", cfg / "s.json"}, ws.path(), 20);
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("FIFO"), std::string::npos) << r.err;
  auto v = run_vigil({"replay", "--verify", cfg / "s.json"}, ws.path(), 20);
  EXPECT_NE(v.exit_code, 0) << v.err;
}

TEST(SettingsReach, FlippingASymlinkWhileLaunchingNeverRunsUnderTheCommandsFile) {
  // The attack of a concurrent session: ws/link flips between the trusted directory and
  // one the command wrote, whose settings make `victim` writable.
  TempDir ws, cfg, victim;
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  make_dirs(ws / "evil");
  write_file(ws / "evil/s.json",
             R"({"filesystem": {"allowWrite": [".", ")" + victim.path() + R"("]}})");
  const std::string link = ws / "link";
  const std::string tmp_link = ws / "link.tmp";
  ASSERT_EQ(::symlink(cfg.path().c_str(), link.c_str()), 0);
  // Stopped and joined on every way out of the test (std::jthread's stop token).
  std::jthread flipper([&](std::stop_token stop) {
    for (bool evil = true; !stop.stop_requested(); evil = !evil) {
      ::unlink(tmp_link.c_str());
      if (::symlink(evil ? (ws / "evil").c_str() : cfg.path().c_str(), tmp_link.c_str()) == 0)
        (void)::rename(tmp_link.c_str(), link.c_str());
    }
  });
  int ran = 0;
  for (int i = 0; i < 12; ++i) {
    auto o = run_vigil({"run", "--settings", link + "/s.json", "--", "sh", "-c",
                        "touch " + victim / "x" + " 2>/dev/null; echo ran"},
                       ws.path());
    if (o.exit_code == 0) ++ran;
    EXPECT_FALSE(exists(victim / "x")) << "launch " << i << " ran under the command's file";
  }
  flipper.request_stop();
  flipper.join();
  EXPECT_EQ(ran, 0) << "a settings path through a writable root must always be refused";
}

}  // namespace
}  // namespace vigil::test
