// The settings loader: a full srt settings file parses to the expected Policy (written,
// literal and resolved spellings, origins, kinds), and a table of malformed settings files
// in tests/data/settings/bad_*.json each fails with one exact one-line error that names
// the file and the position.
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/core/base/unique_fd.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace vigil {
namespace {

namespace fs = std::filesystem;

const std::string kDataDir = std::string(VIGIL_TEST_DATA_DIR) + "/settings/";

// A context whose paths do not exist: rules come back as kMissing, no host dependence.
const LoadContext kNowhere{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};

// --- the full, valid file ---------------------------------------------------------------------

// root/real-proj is the project; root/proj -> real-proj is the cwd, so the literal and
// resolved spellings of a relative rule differ.
class PolicyLoaderFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "vigil-loader-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = fs::canonical(tmpl).string();
    fs::create_directories(root_ + "/real-proj/build");
    std::ofstream(root_ + "/real-proj/.env") << "SECRET=1";
    fs::create_directory_symlink(root_ + "/real-proj", root_ + "/proj");
    fs::create_directories(root_ + "/home/.ssh");
    fs::create_directories(root_ + "/home/.cache");
    std::ofstream(root_ + "/home/.ssh/known_hosts") << "host";
    ctx_ = LoadContext{root_ + "/proj", root_ + "/home"};
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string root_;
  LoadContext ctx_;
};

struct RuleRow {
  const PathRule* rule;
  std::string written;
  std::string literal;
  std::string resolved;
  std::string origin;
  PathKind kind;
  std::string first_missing;
};

TEST_F(PolicyLoaderFsTest, FullSrtSettingsFile) {
  const std::string file = kDataDir + "full.json";
  auto got = load_policy_file(file, ctx_);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const Policy& p = *got;
  const std::string P = root_ + "/proj", R = root_ + "/real-proj", H = root_ + "/home";

  EXPECT_EQ(p.source, file);
  EXPECT_EQ(p.cwd, P);
  EXPECT_EQ(p.home, H);
  // allowUnixSockets is honoured on both platforms (Linux: brokered by vigil-init): no warning.
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();

  // network
  EXPECT_EQ(p.net.allowed_domains,
            (std::vector<std::string>{"github.com", "*.github.com", "pypi.org"}));
  EXPECT_EQ(p.net.denied_domains,
            (std::vector<std::string>{"evil.example.com", "*.tracker.example"}));
  EXPECT_EQ(p.net.denied_domain_reasons,
            (std::map<std::string, std::string>{{"evil.example.com", "known exfiltration endpoint"},
                                                {"*.tracker.example", "telemetry"}}));
  EXPECT_EQ(p.net.denied_resolved_addresses,
            (std::vector<std::string>{"169.254.169.254", "10.0.0.0/8"}));
  EXPECT_TRUE(p.net.allow_local_binding);
  EXPECT_EQ(p.net.allow_unix_sockets, (std::vector<std::string>{"/var/run/docker.sock"}));
  EXPECT_TRUE(p.net.allow_mach_lookup.empty());

  // filesystem: every rule with all its spellings
  ASSERT_EQ(p.fs.deny_read.size(), 3u);
  ASSERT_EQ(p.fs.allow_read.size(), 1u);
  ASSERT_EQ(p.fs.allow_write.size(), 4u);  // the default writable cwd is gone
  ASSERT_EQ(p.fs.deny_write.size(), 2u);
  const std::vector<RuleRow> rows = {
      {&p.fs.deny_read[0], "~/.ssh", H + "/.ssh", H + "/.ssh", "filesystem.denyRead[0]",
       PathKind::kDir, ""},
      {&p.fs.deny_read[1], "~/.aws/credentials", H + "/.aws/credentials", H + "/.aws/credentials",
       "filesystem.denyRead[1]", PathKind::kMissing, H + "/.aws"},
      {&p.fs.deny_read[2], "secrets", P + "/secrets", R + "/secrets", "filesystem.denyRead[2]",
       PathKind::kMissing, R + "/secrets"},
      {&p.fs.allow_read[0], "~/.ssh/known_hosts", H + "/.ssh/known_hosts", H + "/.ssh/known_hosts",
       "filesystem.allowRead[0]", PathKind::kFile, ""},
      {&p.fs.allow_write[0], ".", P, R, "filesystem.allowWrite[0]", PathKind::kDir, ""},
      {&p.fs.allow_write[1], "./build", P + "/build", R + "/build", "filesystem.allowWrite[1]",
       PathKind::kDir, ""},
      {&p.fs.allow_write[2], "~/.cache/tool", H + "/.cache/tool", H + "/.cache/tool",
       "filesystem.allowWrite[2]", PathKind::kMissing, H + "/.cache/tool"},
      // {"path": ..., "literal": true}: glob characters are part of the name
      {&p.fs.allow_write[3], "out/[gen]*", P + "/out/[gen]*", R + "/out/[gen]*",
       "filesystem.allowWrite[3]", PathKind::kMissing, R + "/out"},
      {&p.fs.deny_write[0], "./.env", P + "/.env", R + "/.env", "filesystem.denyWrite[0]",
       PathKind::kFile, ""},
      {&p.fs.deny_write[1], "/nonexistent-vigil-test/a/../b", "/nonexistent-vigil-test/b",
       "/nonexistent-vigil-test/b", "filesystem.denyWrite[1]", PathKind::kMissing,
       "/nonexistent-vigil-test"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.origin);
    EXPECT_EQ(r.rule->written, r.written);
    EXPECT_EQ(r.rule->literal, r.literal);
    EXPECT_EQ(r.rule->resolved, r.resolved);
    EXPECT_EQ(r.rule->origin, r.origin);
    EXPECT_EQ(r.rule->kind, r.kind);
    EXPECT_EQ(r.rule->first_missing, r.first_missing);
    EXPECT_FALSE(r.rule->session_temp);
  }
  EXPECT_TRUE(p.fs.allow_git_config);
  EXPECT_EQ(p.fs.mandatory_deny_search_depth, 5);

  // top-level and vigil options
  ASSERT_TRUE(p.bwrap_path.has_value());
  EXPECT_EQ(*p.bwrap_path, "/usr/local/bin/bwrap");
  EXPECT_TRUE(p.macos.allow_pty);
  EXPECT_FALSE(p.macos.allow_apple_events);
  EXPECT_FALSE(p.macos.enable_weaker_network_isolation);
  EXPECT_EQ(p.vigil.observer_overflow, VigilOptions::Overflow::kDrop);
}

// --- the bad-input table ----------------------------------------------------------------------

struct BadRow {
  std::string file;      // under tests/data/settings/
  std::string position;  // "line L, column C", or "" when the error has none
  std::string what;      // the rest of the message after "<file>: <position>: "
  bool exact = true;     // false: `what` is a prefix (nlohmann's own wording follows)
};

const std::vector<BadRow>& bad_rows() {
  static const std::vector<BadRow> rows = {
      // JSON syntax
      {"bad_trailing_comma.json", "line 3, column 29",
       "syntax error while parsing value - unexpected ']'", false},
      {"bad_unterminated_string.json", "line 3, column 35",
       "syntax error while parsing value - invalid string: control character U+000A (LF) must be "
       "escaped",
       false},
      {"bad_duplicate_key.json", "line 5, column 16",
       "duplicate key filesystem.allowWrite (a second value would silently replace the first)"},
      // unknown keys, with and without a suggestion
      {"bad_unknown_top_key.json", "line 2, column 16",
       "filesystm: unknown key filesystm; did you mean filesystem?"},
      {"bad_typo_denyWrites.json", "line 4, column 19",
       "filesystem.denyWrites: unknown key filesystem.denyWrites; did you mean denyWrite?"},
      {"bad_unknown_nested_key.json", "line 4, column 21",
       "network.proxyPort: unknown key network.proxyPort"},
      {"bad_unknown_vigil_key.json", "line 2, column 42",
       "vigil.observer.overfow: unknown key vigil.observer.overfow; did you mean overflow?"},
      {"bad_path_object_extra_key.json", "line 3, column 66",
       "filesystem.denyWrite[0].recursive: unknown key; an entry object has only \"path\" and "
       "\"literal\""},
      // wrong types and ranges
      {"bad_root_array.json", "line 1, column 1", "(top level): expected an object, got an array"},
      {"bad_network_array.json", "line 1, column 13", "network: expected an object, got an array"},
      {"bad_allowWrite_string.json", "line 3, column 24",
       "filesystem.allowWrite: expected an array of paths, got a string"},
      {"bad_path_number.json", "line 3, column 19",
       "filesystem.denyRead[0]: expected a path string or {\"path\": ..., \"literal\": true}, got "
       "an integer"},
      {"bad_depth_string.json", "line 2, column 33",
       "mandatoryDenySearchDepth: expected an integer, got a string"},
      {"bad_depth_float.json", "line 1, column 32",
       "mandatoryDenySearchDepth: expected an integer, got a number"},
      {"bad_depth_zero.json", "line 2, column 31",
       "mandatoryDenySearchDepth: must be between 1 and 10, got 0"},
      {"bad_depth_eleven.json", "line 2, column 32",
       "mandatoryDenySearchDepth: must be between 1 and 10, got 11"},
      {"bad_depth_huge.json", "line 1, column 49",
       "mandatoryDenySearchDepth: must be between 1 and 10, got 18446744073709551615"},
      {"bad_allowAllUnixSockets_string.json", "line 3, column 31",
       "network.allowAllUnixSockets: expected a boolean, got a string"},
      {"bad_reason_empty.json", "line 4, column 43",
       "network.deniedDomainReasons[\"a.example\"]: reason cannot be empty"},
      {"bad_overflow_value.json", "line 1, column 49",
       "vigil.observer.overflow: expected \"block\" or \"drop\", got \"lossy\\nmode\""},
      {"bad_bwrapPath_relative.json", "line 1, column 21",
       "bwrapPath: must be an absolute path (a relative one could be hijacked)"},
      // paths
      {"bad_allowWrite_glob.json", "line 3, column 33",
       "filesystem.allowWrite[1]: \"build/*\" is a glob pattern; allowWrite takes directories, not "
       "patterns "
       "(list each one)"},
      {"bad_denyRead_glob_slash.json", "line 3, column 28",
       "filesystem.denyRead[0]: \"~/.ssh/*/\" ends in \"/\", so as a glob it matches nothing; "
       "drop the \"/\""},
      {"bad_relative_escape.json", "line 3, column 31",
       "filesystem.allowWrite[0]: relative path climbs out of the working directory with \"..\"; "
       "write the "
       "absolute path if that is meant"},
      {"bad_empty_path.json", "line 3, column 30", "filesystem.denyWrite[1]: path cannot be empty"},
      {"bad_tilde_user.json", "line 3, column 29",
       "filesystem.denyRead[0]: \"~user\" paths are not supported; write the absolute path"},
      {"bad_path_without_literal.json", "line 3, column 19",
       "filesystem.denyWrite[0]: expected {\"path\": \"<path>\", \"literal\": true}"},
      {"bad_path_literal_false.json", "line 3, column 19",
       "filesystem.denyWrite[0]: expected {\"path\": \"<path>\", \"literal\": true}"},
      // srt's credentials block, in a shape srt never had (keys by host): refused
      {"bad_credentials.json", "line 3, column 38",
       "credentials[\"api.example.com\"]: unknown key credentials[\"api.example.com\"]"},
      {"bad_allowUnixSockets_tilde_user.json", "line 3, column 58",
       "network.allowUnixSockets[1]: \"~user\" paths are not supported; write the absolute path "
       "(a socket's full path, or @name for an abstract one)"},
  };
  return rows;
}

TEST(PolicyLoaderTest, BadSettingsFiles) {
  ASSERT_GE(bad_rows().size(), 12u);
  for (const auto& r : bad_rows()) {
    SCOPED_TRACE(r.file);
    const std::string path = kDataDir + r.file;
    ASSERT_TRUE(fs::is_regular_file(path)) << "missing fixture";
    auto got = load_policy_file(path, kNowhere);
    ASSERT_FALSE(got.ok()) << "loaded a bad settings file";
    const std::string& msg = got.error().message;
    EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "more than one line: " << msg;
    const std::string head = path + ": " + (r.position.empty() ? "" : r.position + ": ");
    if (r.exact) {
      EXPECT_EQ(msg, head + r.what);
    } else {
      EXPECT_EQ(msg.substr(0, head.size() + r.what.size()), head + r.what) << msg;
    }
  }
}

// Every bad_*.json fixture on disk is in the table (a fixture nobody checks proves nothing).
TEST(PolicyLoaderTest, EveryBadFixtureIsInTheTable) {
  std::vector<std::string> listed;
  for (const auto& r : bad_rows()) listed.push_back(r.file);
  for (const auto& e : fs::directory_iterator(kDataDir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad_", 0) != 0) continue;
    SCOPED_TRACE(name);
    EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end());
  }
}

TEST(PolicyLoaderTest, ParseErrorsInline) {
  struct Row {
    std::string text;
    std::string message;  // exact, with source "s.json"
  };
  const std::vector<Row> rows = {
      {"{\"filesystem\": {\"banana\": 1}}",
       "s.json: line 1, column 27: filesystem.banana: unknown key filesystem.banana"},
      {"{\"filesystem\": {\"DenyRead\": []}}",
       "s.json: line 1, column 29: filesystem.DenyRead: unknown key filesystem.DenyRead; did you "
       "mean denyRead?"},
      {"{\"network\": {\"allowedDomain\": []}}",
       "s.json: line 1, column 31: network.allowedDomain: unknown key network.allowedDomain; did "
       "you mean "
       "allowedDomains?"},
      {"{\"a.b\": 1}", "s.json: line 1, column 9: [\"a.b\"]: unknown key [\"a.b\"]"},
      {"{\"network\": {\"allowedDomains\": [\"a\", 7]}}",
       "s.json: line 1, column 38: network.allowedDomains[1]: expected a string, got an integer"},
      {"{\"network\": {\"allowedDomains\": \"a\"}}",
       "s.json: line 1, column 34: network.allowedDomains: expected an array of strings, got a "
       "string"},
      {"{\"network\": {\"deniedDomainReasons\": [\"x\"]}}",
       "s.json: line 1, column 37: network.deniedDomainReasons: expected an object of strings, got "
       "an array"},
      {"{\"filesystem\": {\"allowGitConfig\": \"yes\"}}",
       "s.json: line 1, column 39: filesystem.allowGitConfig: expected a boolean, got a string"},
      {"{\"filesystem\": {\"disabled\": true}}",
       "s.json: line 1, column 32: filesystem.disabled: not supported by vigil (running without "
       "any filesystem policy); instead, run with --sandbox off, which says loudly that nothing "
       "is confined (false is accepted)"},
      {"{\"allowNestedUserNamespaces\": true}",
       "s.json: line 1, column 34: allowNestedUserNamespaces: not supported by vigil (nested user "
       "namespaces would let the command undo the write denies); instead, run a tool that needs "
       "its own namespaces (a browser sandbox, podman) outside vigil (false is accepted)"},
      {"{\"vigil\": 1}", "s.json: line 1, column 11: vigil: expected an object, got an integer"},
      {"{\"vigil\": {\"observer\": {\"overflow\": 1}}}",
       "s.json: line 1, column 37: vigil.observer.overflow: expected \"block\" or \"drop\", got an "
       "integer"},
      {"{\"vigil\": {\"observer\": {\"syncWakeUp\": \"off\"}}}",
       "s.json: line 1, column 43: vigil.observer.syncWakeUp: expected a boolean, got a string"},
      {"{\"filesystem\": {\"denyRead\": [null]}}",
       "s.json: line 1, column 33: filesystem.denyRead[0]: expected a path string or {\"path\": "
       "..., \"literal\": "
       "true}, got null"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.text);
    auto got = parse_policy(r.text, "s.json", kNowhere);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
    EXPECT_EQ(got.error().message, r.message);
  }
}

// Issue 38.3: a file with several problems is reported whole, every one in one error (in
// the order of the file's sections), not one key per attempt.
TEST(PolicyLoaderTest, EveryProblemOfAFileAtOnce) {
  auto got = parse_policy(
      "{\"filesystm\": {}, \"network\": {\"allowedDomain\": [], \"allowedDomains\": 3},\n"
      " \"filesystem\": {\"allowWrite\": [\"*.x\", 5, \"ok\"], \"denyWrites\": []},\n"
      " \"credentials\": {\"envVars\": [{\"name\": \"A\"}]}, \"vigil\": {\"log\": {\"maxOutputByte\": 1}}}",
      "s.json", kNowhere);
  ASSERT_FALSE(got);
  const std::string& m = got.error().message;
  EXPECT_TRUE(m.starts_with("s.json: 8 problems: (1) ")) << m;
  for (const char* part :
       {"filesystm: unknown key filesystm; did you mean filesystem?",
        "network.allowedDomain: unknown key network.allowedDomain",
        "network.allowedDomains: expected an array of strings, got an integer",
        "filesystem.denyWrites: unknown key filesystem.denyWrites; did you mean denyWrite?",
        "filesystem.allowWrite[0]: \"*.x\" is a glob pattern",
        "filesystem.allowWrite[1]: expected a path string",
        "credentials.envVars[0].mode: expected \"deny\"",
        "vigil.log.maxOutputByte: unknown key vigil.log.maxOutputByte"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << "\n" << m;
  }
  EXPECT_EQ(m.find("s.json: line", 1), std::string::npos) << "the source once: " << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
}

TEST(PolicyLoaderTest, LoadPolicyFileErrors) {
  auto missing = load_policy_file(kDataDir + "does-not-exist.json", kNowhere);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Errc::kInvalidPolicy);  // exit 2, as the README says
  EXPECT_NE(missing.error().message.find(kDataDir + "does-not-exist.json"), std::string::npos);

  auto dir = load_policy_file(kDataDir, kNowhere);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code, Errc::kInvalidPolicy);
  EXPECT_NE(dir.error().message.find("not a regular file"), std::string::npos)
      << dir.error().message;

  std::string tmpl = (fs::temp_directory_path() / "vigil-big-XXXXXX").string();
  ASSERT_TRUE(UniqueFd(::mkstemp(tmpl.data())).valid());
  {
    std::ofstream out(tmpl);
    out << "{}" << std::string((2u << 20), ' ');
  }
  auto big = load_policy_file(tmpl, kNowhere);
  fs::remove(tmpl);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, tmpl + ": larger than 1048576 bytes; not a settings file");
}

// --- not-applicable keys: accepted, said out loud
// -------------------------------------------------

TEST(PolicyLoaderTest, NotApplicableKeysWarn) {
  const std::string file = kDataDir + "not_applicable.json";
  auto got = load_policy_file(file, kNowhere);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const std::vector<std::string> want = {
      file + ": ripgrep has no effect: vigil scans for mandatory denies with its own walker",
      file + ": seccomp has no effect: vigil installs its own seccomp filters",
      file + ": socatPath has no effect: vigil bridges the proxy without socat",
      file +
          ": network.strictAllowlist=false has no effect: a host off the allow list is refused "
          "(to be asked instead, set vigil.network.ask and run an agent session)",
  };
  EXPECT_EQ(got->warnings, want);
  // The rest of the file still applies.
  ASSERT_EQ(got->fs.allow_write.size(), 1u);
  EXPECT_EQ(got->fs.allow_write[0].literal, "/nonexistent-vigil-test/w");
}

TEST(PolicyLoaderTest, FalseForUnsupportedIfOnIsAccepted) {
  auto got = parse_policy(
      "{\"enableWeakerNestedSandbox\": false, \"allowNestedUserNamespaces\": false, "
      "\"network\": {\"allowAllUnixSockets\": false}, \"filesystem\": {\"disabled\": false}, "
      "\"windows\": {}}",
      "s.json", kNowhere);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->warnings,
            (std::vector<std::string>{"s.json: windows has no effect: Windows-only settings"}));
}

// --- the embedded default and what a settings file replaces --------------------------------

TEST(PolicyLoaderTest, DefaultPolicy) {
  const Policy p =
      default_policy(LoadContext{"/nonexistent-vigil/proj/", "/nonexistent-vigil/home"});
  EXPECT_EQ(p.source, "<embedded default>");
  EXPECT_EQ(p.home, "/nonexistent-vigil/home");
  ASSERT_EQ(p.fs.allow_write.size(), 1u);
  const PathRule& cwd = p.fs.allow_write[0];
  EXPECT_EQ(cwd.written, ".");
  EXPECT_EQ(cwd.literal, "/nonexistent-vigil/proj");
  EXPECT_EQ(cwd.resolved, "/nonexistent-vigil/proj");
  EXPECT_EQ(cwd.origin, "default: the working directory");
  EXPECT_EQ(cwd.kind, PathKind::kDir);
  EXPECT_FALSE(cwd.session_temp);
  EXPECT_TRUE(p.fs.deny_read.empty());
  EXPECT_TRUE(p.fs.allow_read.empty());
  EXPECT_TRUE(p.fs.deny_write.empty());
  EXPECT_FALSE(p.fs.allow_git_config);
  EXPECT_EQ(p.fs.mandatory_deny_search_depth, 3);
  EXPECT_TRUE(p.net.allowed_domains.empty());  // no network
  EXPECT_TRUE(p.net.denied_domains.empty());
  EXPECT_FALSE(p.bwrap_path.has_value());
  EXPECT_EQ(p.vigil.observer_overflow, VigilOptions::Overflow::kBlock);
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(PolicyLoaderFsTest, DefaultPolicyResolvesTheCwd) {
  const Policy p = default_policy(ctx_);
  ASSERT_EQ(p.fs.allow_write.size(), 1u);
  EXPECT_EQ(p.fs.allow_write[0].literal, root_ + "/proj");
  EXPECT_EQ(p.fs.allow_write[0].resolved, root_ + "/real-proj");
}

TEST(PolicyLoaderTest, SettingsFileReplacesTheDefaultWritableCwd) {
  struct Row {
    std::string text;
    std::vector<std::string> writable;  // literal spellings, in order
  };
  const std::vector<Row> rows = {
      {"{}", {}},
      {"{\"network\": {\"allowedDomains\": [\"x.com\"]}}", {}},
      {"{\"filesystem\": {}}", {}},
      {"{\"filesystem\": {\"allowWrite\": []}}", {}},
      {"{\"filesystem\": {\"allowWrite\": [\"/w\"]}}", {"/w"}},
      {"{\"filesystem\": {\"allowWrite\": [\".\", \"/w\"]}}", {"/nonexistent-vigil/proj", "/w"}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.text);
    auto got = parse_policy(r.text, "s.json", kNowhere);
    ASSERT_TRUE(got.ok()) << got.error().message;
    std::vector<std::string> literal;
    for (const auto& w : got->fs.allow_write) {
      literal.push_back(w.literal);
      EXPECT_NE(w.origin, "default: the working directory");
    }
    EXPECT_EQ(literal, r.writable);
    EXPECT_EQ(got->source, "s.json");
    EXPECT_EQ(got->cwd, kNowhere.cwd);
  }
}

TEST(PolicyLoaderTest, OverflowAndStrictAllowlistValues) {
  auto block = parse_policy(
      "{\"vigil\": {\"observer\": {\"overflow\": \"block\"}}, "
      "\"network\": {\"strictAllowlist\": true}}",
      "s.json", kNowhere);
  ASSERT_TRUE(block.ok()) << block.error().message;
  EXPECT_EQ(block->vigil.observer_overflow, VigilOptions::Overflow::kBlock);
  EXPECT_TRUE(block->warnings.empty());
  auto drop =
      parse_policy("{\"vigil\": {\"observer\": {\"overflow\": \"drop\"}}}", "s.json", kNowhere);
  ASSERT_TRUE(drop.ok());
  EXPECT_EQ(drop->vigil.observer_overflow, VigilOptions::Overflow::kDrop);
  EXPECT_TRUE(drop->vigil.observer_sync_wake_up);  // on unless turned off
  auto no_sync =
      parse_policy("{\"vigil\": {\"observer\": {\"syncWakeUp\": false}}}", "s.json", kNowhere);
  ASSERT_TRUE(no_sync.ok()) << no_sync.error().message;
  EXPECT_FALSE(no_sync->vigil.observer_sync_wake_up);
  EXPECT_EQ(no_sync->vigil.observer_overflow, VigilOptions::Overflow::kBlock);
  for (const int depth : {1, 10}) {
    auto d = parse_policy("{\"mandatoryDenySearchDepth\": " + std::to_string(depth) + "}", "s.json",
                          kNowhere);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->fs.mandatory_deny_search_depth, depth);
  }
}

// --- nearest_key ------------------------------------------------------------------------------

TEST(PolicyLoaderTest, NearestKeyTable) {
  const std::vector<std::string_view> fs_keys = {"denyRead",  "allowRead",      "allowWrite",
                                                 "denyWrite", "allowGitConfig", "disabled"};
  const std::vector<std::string_view> top = {"network", "filesystem", "mandatoryDenySearchDepth",
                                             "vigil"};
  struct Row {
    std::string key;
    const std::vector<std::string_view>* candidates;
    std::string want;
  };
  const std::vector<std::string_view> none;
  const std::vector<std::string_view> tie = {"abd", "abe"};
  const std::vector<Row> rows = {
      {"denyWrites", &fs_keys, "denyWrite"},
      {"denyWrite", &fs_keys, "denyWrite"},  // exact
      {"DENYREAD", &fs_keys, "denyRead"},    // case-insensitive
      {"allow_write", &fs_keys, "allowWrite"},
      {"alowWrite", &fs_keys, "allowWrite"},
      {"allowGitconfig", &fs_keys, "allowGitConfig"},
      {"banana", &fs_keys, ""},  // nothing close
      {"", &fs_keys, ""},
      {"netwrk", &top, "network"},
      {"filesystm", &top, "filesystem"},
      {"mandatoryDenySearchDepht", &top, "mandatoryDenySearchDepth"},  // transposition = 2
      {"mandatoryDenyDepth", &top, "mandatoryDenySearchDepth"},        // 6 <= 18/3
      {"vigl", &top, "vigil"},
      {"vi", &top, ""},  // distance 3 > limit 2
      {"x", &top, ""},
      {"network", &none, ""},
      {"abc", &tie, "abd"},  // a tie goes to the first
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.key);
    EXPECT_EQ(nearest_key(r.key, *r.candidates), r.want);
  }
}

}  // namespace
}  // namespace vigil
