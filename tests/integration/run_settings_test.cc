// Settings through the real CLI: malformed files are refused with one precise line and
// exit 2, and nothing runs; a settings file the sandbox could rewrite is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

struct BadSettings {
  const char* name;
  const char* json;
  const char* expect;  // a fragment of the one-line error
};

const BadSettings kBad[] = {
    {"bad_json", "{\"filesystem\": {\"allowWrite\": [\".\",]}}", "line 1, column 36"},
    {"unterminated", "{\"filesystem\": {\"allowWrite\": [\"abc]}}", "line 1"},
    {"unknown_key", "{\"filesystem\": {\"denyWrites\": []}}",
     "unknown key filesystem.denyWrites; did you mean denyWrite?"},
    {"unknown_top", "{\"netwrok\": {}}", "did you mean network?"},
    {"wrong_type", "{\"filesystem\": {\"allowWrite\": \"/tmp\"}}",
     "filesystem.allowWrite: expected an array of paths, got a string"},
    {"depth_type", "{\"mandatoryDenySearchDepth\": \"3\"}", "expected an integer, got a string"},
    {"depth_range", "{\"mandatoryDenySearchDepth\": 11}", "must be between 1 and 10"},
    {"glob_allow", "{\"filesystem\": {\"allowWrite\": [\"src/*\"]}}",
     "filesystem.allowWrite[0]: \"src/*\" is a glob pattern"},
    {"dotdot", "{\"filesystem\": {\"allowWrite\": [\"../..\"]}}",
     "climbs out of the working directory"},
    {"empty_path", "{\"filesystem\": {\"denyRead\": [\"\"]}}",
     "filesystem.denyRead[0]: path cannot be empty"},
    {"unsupported", "{\"network\": {\"stripResponseHeaders\": []}}",
     "network.stripResponseHeaders: not supported by vigil"},
    {"duplicate", "{\"filesystem\": {\"allowWrite\": [], \"allowWrite\": [\"/\"]}}",
     "duplicate key filesystem.allowWrite"},
    {"allow_star", "{\"network\": {\"allowedDomains\": [\"*\"]}}",
     "network.allowedDomains[0]: \"*\""},
    {"allow_tld", "{\"network\": {\"allowedDomains\": [\"ok.test\", \"*.com\"]}}",
     "network.allowedDomains[1]: \"*.com\""},
    {"allow_url", "{\"network\": {\"allowedDomains\": [\"https://x.test/\"]}}",
     "network.allowedDomains[0]"},
    {"reason_for_nothing",
     "{\"network\": {\"deniedDomains\": [\"a.test\"], \"deniedDomainReasons\": {\"b.test\": "
     "\"x\"}}}",
     "deniedDomainReasons"},
};

TEST(RunSettings, MalformedSettingsAreRefusedWithOneLineAndNothingRuns) {
  TempDir ws, cfg;
  for (const auto& b : kBad) {
    SCOPED_TRACE(b.name);
    const std::string file = cfg / (std::string(b.name) + ".json");
    write_file(file, b.json);
    auto o = run_vigil({"run", "--settings", file, "--", "touch", ws / "ran"}, ws.path());
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find(b.expect), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(file), std::string::npos) << "the error must name the file: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
    EXPECT_FALSE(exists(ws / "ran")) << "the command must not run";
    // explain loads the same policy the same way.
    auto e = run_vigil({"explain", "--settings", file}, ws.path());
    EXPECT_EQ(e.exit_code, 2) << e.out << e.err;
    EXPECT_NE(e.err.find(b.expect), std::string::npos) << e.err;
  }
}

TEST(RunSettings, MissingSettingsFileIsAnErrorNotTheDefault) {
  TempDir ws;
  auto o = run_vigil({"run", "--settings", ws / "nope.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;  // the README: a bad settings file exits 2
  EXPECT_NE(o.err.find("nope.json"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
}

TEST(RunSettings, SettingsInsideAWritableRootAreRefusedUnlessAllowed) {
  TempDir ws;
  write_file(ws / "s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  auto o = run_vigil({"run", "--settings", ws / "s.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--allow-writable-settings"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  auto ok = run_vigil(
      {"run", "--settings", ws / "s.json", "--allow-writable-settings", "--", "touch", "ran"},
      ws.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(exists(ws / "ran"));
}

// The same refusal wherever the sandbox could reach the settings file: below the working
// directory, through a symlink into a writable root, and in another allowWrite root.
TEST(RunSettings, SettingsReachableFromAnyWritableRootAreRefused) {
  TempDir ws, cfg, other;
  struct Variant {
    std::string name, settings_path;
  };
  std::vector<Variant> variants;
  // A subdirectory of the working directory.
  make_dirs(ws / "conf");
  write_file(ws / "conf/s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  variants.push_back({"subdirectory", ws / "conf/s.json"});
  // A symlink outside every root, to a file inside one.
  write_file(ws / "real.json", R"({"filesystem": {"allowWrite": ["."]}})");
  ASSERT_EQ(::symlink((ws / "real.json").c_str(), (cfg / "link.json").c_str()), 0);
  variants.push_back({"symlink to a file in a writable root", cfg / "link.json"});
  // Another allowWrite root than the working directory.
  write_file(other / "s.json",
             R"({"filesystem": {"allowWrite": [".", ")" + other.path() + R"("]}})");
  variants.push_back({"another allowWrite root", other / "s.json"});
  // A writable parent: the file and its own directory are denied (not writable), but
  // their parent is in a root, so the sandbox can rename b/ away and put its own s.json
  // in its place.
  make_dirs(other / "a/b");
  write_file(other / "a/b/s.json", R"({"filesystem": {"allowWrite": [".", ")" + other.path() +
                                       R"("], "denyWrite": [")" + other / "a/b" + R"("]}})");
  variants.push_back({"two levels below a writable parent", other / "a/b/s.json"});
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    auto o = run_vigil({"run", "--settings", v.settings_path, "--", "touch", "ran"}, ws.path());
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("--allow-writable-settings"), std::string::npos) << o.err;
    EXPECT_FALSE(exists(ws / "ran"));
    std::remove((ws / "ran").c_str());
  }
}

// Issue 38.3: the refusal names the writable root the file lies in and the entry that
// made it one, even when the directory that decided is a pin beside a protected name
// (it said "under mandatory: .bashrc").
TEST(RunSettings, ASettingsFileInAWritableRootIsRefusedNamingThatRoot) {
  TempDir ws;
  make_dirs(ws / "conf");
  write_file(ws / "conf/.bashrc", "# the user's\n");
  write_file(ws / "conf/s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  auto o = run_vigil({"run", "--settings", ws / "conf/s.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_NE(o.err.find("inside the writable root " + ws.path() + " (filesystem.allowWrite[0])"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("mandatory"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--allow-writable-settings"), std::string::npos) << o.err;
}

// Issue 38.3: every problem of a settings file in one error, not one per attempt.
TEST(RunSettings, EveryProblemOfTheFileIsReportedAtOnce) {
  TempDir ws, cfg;
  write_file(cfg / "s.json",
             R"({"filesystm": {}, "network": {"allowedDomain": []},
                 "filesystem": {"denyWrites": [], "allowWrite": ["*.x"]}})");
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_NE(o.err.find("4 problems"), std::string::npos) << o.err;
  for (const char* key : {"filesystm", "network.allowedDomain", "filesystem.denyWrites",
                          "filesystem.allowWrite[0]"}) {
    EXPECT_NE(o.err.find(key), std::string::npos) << key << "\n" << o.err;
  }
}

// Issue 38.3: a missing allowWrite directory vigil does not make (outside the home) is
// said once, with the fix, and the post-run check has no second word about it.
TEST(RunSettings, AMissingAllowWriteDirectoryOutsideTheHomeIsSaidOnceWithTheFix) {
  TempDir ws, cfg, home, other;
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": [".", ")" + other / "cache" +
                                 R"("]}})");
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path(), 60,
                     {{"HOME", home.path()}});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(other / "cache")) << "made outside the home";
  std::size_t lines = 0, at = 0;
  while ((at = o.err.find(other / "cache", at)) != std::string::npos) {
    ++lines;
    at += 1;
  }
  EXPECT_EQ(lines, 1u) << o.err;
  EXPECT_NE(o.err.find("create them first"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("post-run check"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("cannot open"), std::string::npos) << o.err;
}

TEST(RunSettings, DuplicateRootsAreFoldedBeforeScanning) {
  // 1 MB of "." entries is one root: scanned and mounted once (it took 34-55 s before).
  TempDir ws, cfg;
  std::string json = R"({"filesystem": {"allowWrite": [)";
  while (json.size() < 1000000) json += "\".\", ";
  json += R"("."]}})";
  write_file(cfg / "s.json", json);
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path(), 20);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(exists(ws / "ran"));
}

TEST(RunSettings, LogPathMessagesNameTheFix) {
  TempDir ws, logs;
  write_file(logs / "taken.jsonl", "mine\n");
  auto o = run_vigil({"run", "--log", logs / "taken.jsonl", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("choose a new path"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(logs / "taken.jsonl"), "mine\n");
  EXPECT_FALSE(exists(ws / "ran"));
  // No usable home and no XDG_STATE_HOME: the message names the log dir and the ways out.
  // (A home below a regular file cannot be made, even by root.)
  write_file(logs / "file", "");
  auto h = run_vigil({"run", "--", "true"}, ws.path(), 60,
                     {{"HOME", logs / "file/home"}, {"XDG_STATE_HOME", ""}});
  EXPECT_EQ(h.exit_code, 2) << h.err;
  EXPECT_NE(h.err.find("session log directory"), std::string::npos) << h.err;
  EXPECT_NE(h.err.find("--log"), std::string::npos) << h.err;
  EXPECT_NE(h.err.find("XDG_STATE_HOME"), std::string::npos) << h.err;
}

TEST(RunSettings, NestingIsRefusedSayingWhy) {
  TempDir ws;
  auto o = run_vigil({"run", "--", vigil_bin(), "run", "--", "touch", "ran"}, ws.path());
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("inside a vigil sandbox is not supported"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("already confined"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
}

TEST(RunSettings, SettingsListExactlyWhatIsWritable) {
  TempDir ws, cfg, other;
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": [")" + other.path() + R"("]}})");
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c",
                      "(touch in-cwd) 2>/dev/null || echo cwd-readonly; touch " + other / "x" +
                          " && echo other-ok"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "cwd-readonly\nother-ok\n");
  EXPECT_TRUE(exists(other / "x"));
}

TEST(RunSettings, MissingBwrapIsALoudErrorNamingTheFix) {
  TempDir ws, cfg;
  write_file(cfg / "s.json",
             R"({"bwrapPath": "/nonexistent/bwrap", "filesystem": {"allowWrite": ["."]}})");
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/bwrap"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  auto path_only = run_vigil({"run", "--", "/bin/true"}, ws.path(), 30, {{"PATH", "/nonexistent"}});
  EXPECT_EQ(path_only.exit_code, 125) << path_only.err;
  EXPECT_NE(path_only.err.find("apt-get install bubblewrap"), std::string::npos) << path_only.err;
}

TEST(RunSettings, SandboxOffRunsUnconfinedAndSaysSo) {
  TempDir ws, outside;
  auto o = run_vigil({"run", "--sandbox", "off", "--", "touch", outside / "x"}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("UNCONFINED"), std::string::npos) << o.err;
  EXPECT_TRUE(exists(outside / "x"));
}

TEST(Explain, PrintsOneMountPerLineWithItsRuleAndPathVerdicts) {
  TempDir ws;
  make_dirs(ws / ".git/hooks");
  write_file(ws / ".git/config", "[core]\n");
  auto o = run_vigil({"explain"}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("--ro-bind / /"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--bind " + ws.path() + " " + ws.path()), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--ro-bind " + ws / ".git/hooks " + ws / ".git/hooks"), std::string::npos)
      << o.out;
  auto p = run_vigil({"explain", "--path", ".git/hooks/pre-commit"}, ws.path());
  EXPECT_NE(p.out.find("write: denied (mandatory: .git/hooks"), std::string::npos) << p.out;
  auto q = run_vigil({"explain", "--path", "/etc/passwd"}, ws.path());
  // The block's hint for the path, as run would give it (issue 38.1).
  EXPECT_NE(q.out.find("write: denied (default: a system directory, outside the writable roots"),
            std::string::npos)
      << q.out;
}

TEST(Probe, ReportsBwrapAndKernelFeatures) {
  TempDir ws;
  for (const char* name : {"doctor", "probe"}) {  // probe: the alias it grew from
    SCOPED_TRACE(name);
    auto o = run_vigil({name, "--json"}, ws.path());
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("{\"sandbox_available\":true,"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(R"({"id":"seccomp_user_notif","level":"ok")"), std::string::npos)
        << o.out;
    EXPECT_NE(o.out.find(R"({"id":"userns","level":"ok")"), std::string::npos) << o.out;
  }
}

}  // namespace
}  // namespace vigil::test
