// `vigil doctor` on this machine, and on the same machine made to refuse user namespaces:
// a throwaway user namespace whose user.max_user_namespaces is lowered, entered as a
// non-root user, where vigil's own unshare and bwrap's both fail. The finding must be a
// MISS with a fix, and vigil must say it cannot sandbox (exit 1), never run unconfined.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

TEST(Doctor, RefusedUserNamespacesAreAMissWithTheirFix) {
  TempDir ws;
  if (run_program({"unshare", "-U", "-r", "true"}, ws.path()).exit_code != 0)
    GTEST_SKIP() << "cannot make a throwaway user namespace here";
  // In namespace A (root mapped) the limit is 1; B, entered as uid 1000, uses it up.
  const std::string inner =
      "echo 1 > /proc/sys/user/max_user_namespaces && exec unshare -U --map-user=1000 "
      "--map-group=1000 \"$0\" doctor \"$@\"";
  for (const bool json : {false, true}) {
    SCOPED_TRACE(json ? "--json" : "text");
    std::vector<std::string> argv = {"unshare", "-U", "-r", "sh", "-c", inner, vigil_bin()};
    if (json) argv.push_back("--json");
    const Outcome o = run_program(argv, ws.path());
    if (o.out.find("unrecognized option") != std::string::npos ||
        o.err.find("unrecognized option") != std::string::npos)
      GTEST_SKIP() << "unshare has no --map-user (util-linux < 2.38)";
    EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
    if (json) {
      EXPECT_NE(o.out.find("{\"sandbox_available\":false,"), std::string::npos) << o.out;
      EXPECT_NE(o.out.find(R"({"id":"userns","level":"MISS","what":"user namespaces")"),
                std::string::npos)
          << o.out;
    } else {
      EXPECT_NE(o.out.find("MISS user namespaces"), std::string::npos) << o.out;
      EXPECT_NE(o.out.find("\n     fix: "), std::string::npos) << o.out;
      EXPECT_NE(o.out.find("vigil CANNOT sandbox commands here"), std::string::npos) << o.out;
    }
  }
  // And `vigil run` there refuses (125), it does not run the command unconfined. (Its
  // session directory is one the namespace's user owns.)
  ASSERT_EQ(::mkdir((ws / "run").c_str(), 0700), 0);
  const Outcome r = run_program(
      {"unshare", "-U", "-r", "sh", "-c",
       "cd \"$1\" && echo 1 > /proc/sys/user/max_user_namespaces && exec unshare "
       "-U --map-user=1000 --map-group=1000 \"$0\" run -- sh -c 'echo UNCONFINED'",
       vigil_bin(), ws.path()},
      ws.path(), 60,
      {{"XDG_STATE_HOME", ws / "state"}, {"HOME", ws.path()}, {"XDG_RUNTIME_DIR", ws / "run"}});
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_EQ(r.out.find("UNCONFINED"), std::string::npos) << r.out;
}

// Issue 38.6: doctor shows the state vigil keeps, with sizes and how to prune it.
TEST(Doctor, ShowsTheStateVigilKeepsWithSizesAndThePruneCommand) {
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  const Outcome r = run_vigil({"run", "--", "sh", "-c", "echo some output"}, ws.path(), 60, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Outcome o = run_vigil({"doctor"}, ws.path(), 60, env);
  EXPECT_NE(o.out.find("state: " + state.path() + "/vigil "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  sessions    1 logs, "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("prune: vigil logs prune --older-than 30d"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  log.key     32 B"), std::string::npos) << o.out;
  const Outcome j = run_vigil({"doctor", "--json"}, ws.path(), 60, env);
  EXPECT_NE(j.out.find("\"state\":{\"dir\":\"" + state.path() + "/vigil\""), std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find("{\"name\":\"sessions\",\"exists\":true,\"items\":1,"), std::string::npos)
      << j.out;
}

}  // namespace
}  // namespace vigil::test
