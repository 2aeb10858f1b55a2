// srt users switching to vigil, through the real CLI and a real bwrap: srt's README
// example runs, ~/.srt-settings.json is picked up (and explain says so), ignoreViolations
// keeps matching lines out of the block but in the log, and deny globs hide what exists
// at launch.
#include <gtest/gtest.h>

#include <map>

#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// srt's README "Complete Configuration Example", as tests/data/settings/ has it.
constexpr const char* kSrtReadmeExample = R"JSON({
  "network": {
    "allowedDomains": [
      "github.com",
      "*.github.com",
      "lfs.github.com",
      "api.github.com",
      "npmjs.org",
      "*.npmjs.org"
    ],
    "deniedDomains": ["malicious.com"],
    "allowUnixSockets": ["/var/run/docker.sock"],
    "allowLocalBinding": false
  },
  "filesystem": {
    "denyRead": ["~/.ssh"],
    "allowRead": [],
    "allowWrite": [".", "src/", "test/", "/tmp"],
    "denyWrite": [".env", "config/production.json"]
  },
  "ignoreViolations": {
    "*": ["/usr/bin", "/System"],
    "git push": ["/usr/bin/nc"],
    "npm": ["/private/tmp"]
  },
  "enableWeakerNestedSandbox": false,
  "allowNestedUserNamespaces": false,
  "enableWeakerNetworkIsolation": false,
  "allowAppleEvents": false
}
)JSON";

TEST(SrtCompat, ReadmeExampleRuns) {
  TempDir ws, cfg, home;
  write_file(cfg / "srt.json", kSrtReadmeExample);
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  // It makes /tmp writable, where this test keeps the file: hence the flag.
  auto e = run_vigil({"explain", "--settings", cfg / "srt.json", "--allow-writable-settings"},
                     ws.path(), 60, env);
  EXPECT_EQ(e.exit_code, 0) << e.err;
  auto o = run_vigil({"run", "--settings", cfg / "srt.json", "--allow-writable-settings", "--",
                      "sh", "-c", "echo ran"},
                     ws.path(), 60, env);
  if (vigil_bin().rfind("/tmp/", 0) == 0) {
    // A vigil staged under /tmp (the unprivileged pass): the example's writable /tmp would
    // let a command replace vigil-init, which vigil refuses before running anything.
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_TRUE(has(o.err, "vigil-init is writable inside the sandbox")) << o.err;
    EXPECT_EQ(o.out, "");
  } else {
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out, "ran\n") << o.err;
  }
}

TEST(SrtCompat, HomeSettingsFileIsPickedUpAndNamed) {
  TempDir ws, home;
  // No --settings, no ~/.srt-settings.json: the embedded default (the cwd writable).
  auto d =
      run_vigil({"run", "--", "touch", ws / "by-default"}, ws.path(), 60, {{"HOME", home.path()}});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(exists(ws / "by-default"));
  auto de = run_vigil({"explain"}, ws.path(), 60, {{"HOME", home.path()}});
  EXPECT_TRUE(has(de.out, "# settings: vigil's embedded default")) << de.out;

  // With one: it applies (nothing writable), and explain names it.
  write_file(home / ".srt-settings.json", R"({"filesystem": {"allowWrite": []}})");
  auto o = run_vigil({"run", "--", "touch", ws / "with-home-file"}, ws.path(), 60,
                     {{"HOME", home.path()}});
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(ws / "with-home-file"));
  auto e = run_vigil({"explain"}, ws.path(), 60, {{"HOME", home.path()}});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(has(e.out, "# settings: ~/.srt-settings.json (no --settings given")) << e.out;

  // An invalid one is an error (exit 2), never the default.
  write_file(home / ".srt-settings.json", R"({"filesystem": {"allowWrite": "."}})");
  auto bad = run_vigil({"run", "--", "touch", ws / "bad"}, ws.path(), 60, {{"HOME", home.path()}});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(has(bad.err, ".srt-settings.json")) << bad.err;
  EXPECT_FALSE(exists(ws / "bad"));
}

TEST(SrtCompat, IgnoreViolationsLeaveTheBlockButStayInTheLog) {
  TempDir ws, cfg;
  const std::string settings = cfg / "s.json";
  write_file(settings, R"({"filesystem": {"allowWrite": ["."]},
                           "ignoreViolations": {"*": ["quiet-"], "touch": ["hushed-"]}})");
  const std::string log = cfg / "session.jsonl";
  auto o = run_vigil({"run", "--settings", settings, "--log", log, "--", "sh", "-c",
                      "touch " + cfg.path() + "/quiet-a " + cfg.path() + "/loud-b; touch " +
                          cfg.path() + "/hushed-c; true"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // The block (touch's own messages before it name every file).
  const auto at = o.err.find("<sandbox_violations>");
  ASSERT_NE(at, std::string::npos) << o.err;
  const std::string block = o.err.substr(at);
  EXPECT_TRUE(has(block, "loud-b")) << block;
  EXPECT_FALSE(has(block, "quiet-a")) << block;
  EXPECT_FALSE(has(block, "hushed-c")) << "the command line contains \"touch\": " << block;
  const std::string text = read_file(log);
  // Both ignored denials are in the log, each marked with the entry that matched.
  EXPECT_TRUE(has(text, R"("ignored":"ignoreViolations[\"*\"]: \"quiet-\"")")) << text;
  EXPECT_TRUE(has(text, R"("ignored":"ignoreViolations[\"touch\"]: \"hushed-\"")")) << text;
  auto r = run_vigil({"replay", "--annotate", log}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(SrtCompat, DenyGlobsHideWhatExistsAtLaunch) {
  TempDir ws, cfg;
  make_dirs(ws / "a/b");
  write_file(ws / ".env", "TOP=1\n");
  write_file(ws / "a/b/.env", "DEEP=1\n");
  write_file(ws / "a/b/keep.txt", "keep\n");
  write_file(ws / "a/key.pem", "PEM\n");
  const std::string settings = cfg / "s.json";
  write_file(settings, R"({"filesystem": {"allowWrite": ["."], "denyRead": ["**/.env"],
                                          "denyWrite": ["a/*.txt", "a/b/*.txt"]}})");
  auto o = run_vigil({"run", "--settings", settings, "--", "sh", "-c",
                      "cat .env a/b/.env 2>/dev/null; cat a/b/keep.txt a/key.pem; "
                      "echo changed > a/b/keep.txt || echo refused"},
                     ws.path());
  EXPECT_FALSE(has(o.out, "TOP=1")) << o.out;
  EXPECT_FALSE(has(o.out, "DEEP=1")) << o.out;
  EXPECT_TRUE(has(o.out, "keep\nPEM\n")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "refused")) << o.out << o.err;
  EXPECT_EQ(read_file(ws / "a/b/keep.txt"), "keep\n");
  auto e = run_vigil({"explain", "--settings", settings}, ws.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(has(e.out, "# glob filesystem.denyRead[0] \"" + ws.path() +
                             "/**/.env\": 2 existing matches hidden at launch"))
      << e.out;
  EXPECT_TRUE(has(e.out, kernel_has_gatekeeper() ? "is refused by vigil-init at the call"
                                                  : "a name created later is not covered"))
      << e.out;
}

}  // namespace
}  // namespace vigil::test
