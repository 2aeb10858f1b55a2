// srt 0.0.83's full settings key list (tests/data/srt_0.0.83_keys.txt, written from its
// schema) against vigil's key table: every srt key is in the table, or under an object
// the table refuses or ignores as a whole; every key of the table (but vigil's own) is
// srt's; and each key does what its row says when a file sets it: honoured keys load,
// refused keys fail with a message saying what to do instead, ignored keys warn.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/policy/policy_loader.h"

namespace vigil {
namespace {

const std::string kData = std::string(VIGIL_TEST_DATA_DIR);
const LoadContext kNowhere{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};

struct SrtKey {
  std::string path;
  std::string sample;  // JSON text
};

std::vector<SrtKey> srt_keys() {
  std::ifstream in(kData + "/srt_0.0.83_keys.txt");
  std::vector<SrtKey> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.find(' ');
    out.push_back({line.substr(0, sp), sp == std::string::npos ? "" : line.substr(sp + 1)});
  }
  return out;
}

// {"a": {"b": sample}} for "a.b"; a sample "@{...}" is a whole settings file (a key of an
// array's element, "a.list[].key", or one that needs its siblings).
std::string nest(const std::string& path, const std::string& sample) {
  if (sample.starts_with("@")) return sample.substr(1);
  nlohmann::json v = nlohmann::json::parse(sample);
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) v = nlohmann::json{{*it, v}};
  return v.dump();
}

std::map<std::string, KeySpec> table() {
  std::map<std::string, KeySpec> out;
  for (const auto& k : settings_key_table()) out.emplace(k.path, k.spec);
  return out;
}

TEST(SrtKeysTest, TheListIsSrtsWholeSchema) {
  const auto keys = srt_keys();
  // 93 keys at every depth; a truncated file must not pass as "all honoured".
  ASSERT_EQ(keys.size(), 93u);
}

TEST(SrtKeysTest, EverySrtKeyIsInTheTableOrUnderARefusedObject) {
  const auto t = table();
  for (const auto& k : srt_keys()) {
    SCOPED_TRACE(k.path);
    if (t.count(k.path) != 0) continue;
    // Not in the table: an ancestor must take the whole object (refused or ignored).
    std::string parent = k.path;
    bool covered = false;
    while (parent.rfind('.') != std::string::npos) {
      parent = parent.substr(0, parent.rfind('.'));
      auto it = t.find(parent);
      if (it != t.end()) {
        covered = it->second.support != Support::kHandled;
        break;
      }
    }
    EXPECT_TRUE(covered) << "srt key not in vigil's key table, nor under an object it refuses";
  }
}

TEST(SrtKeysTest, EveryTableKeyButVigilsOwnIsSrts) {
  std::map<std::string, bool> srt;
  for (const auto& k : srt_keys()) srt[k.path] = true;
  for (const auto& k : settings_key_table()) {
    if (k.path == "vigil" || k.path.rfind("vigil.", 0) == 0) continue;
    EXPECT_TRUE(srt.count(k.path)) << k.path << " is in vigil's table but not srt's schema";
  }
}

TEST(SrtKeysTest, EachKeyIsHonouredOrRefusedWithAPathForward) {
  const auto t = table();
  for (const auto& k : srt_keys()) {
    auto it = t.find(k.path);
    if (it == t.end()) continue;  // under a refused object: checked above
    SCOPED_TRACE(k.path + " = " + k.sample);
    const KeySpec& spec = it->second;
    auto got = parse_policy(nest(k.path, k.sample), "s.json", kNowhere);
    switch (spec.support) {
      case Support::kHandled:
        EXPECT_TRUE(got.ok()) << got.error().message;
        break;
      case Support::kUnsupported:
      case Support::kUnsupportedIfOn: {
        ASSERT_FALSE(got.ok()) << "a refused key loaded";
        EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
        const std::string& msg = got.error().message;
        std::string want = k.path + ": " + refusal(spec);
        if (spec.support == Support::kUnsupportedIfOn) want += " (false is accepted)";
        ASSERT_GE(msg.size(), want.size());
        EXPECT_EQ(msg.substr(msg.size() - want.size()), want);
        EXPECT_FALSE(spec.what.empty());
        EXPECT_GE(spec.instead.size(), 20u) << "a refusal must say what to do instead";
        if (spec.support == Support::kUnsupportedIfOn) {
          auto off = parse_policy(nest(k.path, "false"), "s.json", kNowhere);
          EXPECT_TRUE(off.ok()) << off.error().message;
        }
        break;
      }
      case Support::kNotApplicable: {
        ASSERT_TRUE(got.ok()) << got.error().message;
        bool warned = false;
        for (const auto& w : got->warnings)
          warned = warned || w.find(k.path + " has no effect: ") != std::string::npos;
        EXPECT_TRUE(warned) << "an ignored key must say so";
        break;
      }
    }
  }
}

// srt's README "Complete Configuration Example", byte for byte.
TEST(SrtKeysTest, SrtReadmeExampleIsAccepted) {
  auto got = load_policy_file(kData + "/settings/srt_readme_example.json", kNowhere);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->ignore_violations.size(), 3u);
  std::map<std::string, std::vector<std::string>> ignore;
  for (const auto& r : got->ignore_violations) ignore[r.command] = r.paths;
  EXPECT_EQ(ignore["*"], (std::vector<std::string>{"/usr/bin", "/System"}));
  EXPECT_EQ(ignore["git push"], (std::vector<std::string>{"/usr/bin/nc"}));
  EXPECT_EQ(got->net.allow_unix_sockets, (std::vector<std::string>{"/var/run/docker.sock"}));
  ASSERT_EQ(got->fs.allow_write.size(), 4u);
  EXPECT_EQ(got->fs.allow_write[1].literal, "/nonexistent-vigil/proj/src");
}

// The keys honoured since the table first refused them: what each one sets, and the
// loud part of the ones that hand a decision away.
TEST(SrtKeysTest, ExternalProxyPortsAreHonouredAndSayWhoDecides) {
  auto got = parse_policy(R"({"network": {"httpProxyPort": 8080, "socksProxyPort": 1081}})",
                          "s.json", kNowhere);
#if defined(__APPLE__)
  ASSERT_FALSE(got.ok());
#else
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->net.external_http_port, 8080);
  EXPECT_EQ(got->net.external_socks_port, 1081);
  ASSERT_EQ(got->warnings.size(), 2u);
  EXPECT_EQ(got->warnings[0],
            "s.json: network.httpProxyPort: HTTP traffic goes to your proxy on 127.0.0.1:8080, "
            "which decides it: vigil's allowedDomains, deniedDomains and address guard do not "
            "apply to it; vigil records each connection it passes on as not decided by vigil");
  EXPECT_NE(got->warnings[1].find("network.socksProxyPort: SOCKS5 traffic"), std::string::npos);
#endif
  for (const char* bad : {"0", "65536", "\"3128\"", "-1", "1.5"}) {
    SCOPED_TRACE(bad);
    auto b = parse_policy(std::string(R"({"network": {"httpProxyPort": )") + bad + "}}",
                          "s.json", kNowhere);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().message.find("expected a port number from 1 to 65535"),
              std::string::npos)
        << b.error().message;
  }
}

TEST(SrtKeysTest, WeakerNestedSandboxIsHonouredWithItsWeakeningSaid) {
  auto got = parse_policy(R"({"enableWeakerNestedSandbox": true})", "s.json", kNowhere);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->weaker_nested_sandbox);
  ASSERT_EQ(got->warnings.size(), 1u);
#if !defined(__APPLE__)
  EXPECT_NE(got->warnings[0].find("keeps the container's /proc"), std::string::npos);
  EXPECT_NE(got->warnings[0].find("/proc/PID/root"), std::string::npos);
#endif
  auto off = parse_policy(R"({"enableWeakerNestedSandbox": false})", "s.json", kNowhere);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->weaker_nested_sandbox);
  EXPECT_TRUE(off->warnings.empty());
}

TEST(SrtKeysTest, GitSafeDirectoriesAreExpandedAndChecked) {
  auto got = parse_policy(R"({"git": {"safeDirectories": ["~/repo/", "sub", "/srv/r"]}})",
                          "s.json", kNowhere);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->git_safe_directories,
            (std::vector<std::string>{"/nonexistent-vigil/home/repo",
                                      "/nonexistent-vigil/proj/sub", "/srv/r"}));
  const std::pair<const char*, const char*> rows[] = {
      {R"({"git": {"safeDirectories": ["*"]}})", "would trust every repository"},
      {R"({"git": {"safeDirectories": [""]}})", "an empty path"},
      {R"({"git": {"safeDirectories": "/x"}})", "expected an array of strings"},
      {R"({"git": {"safeDirectory": []}})", "did you mean safeDirectories?"},
  };
  for (const auto& [text, want] : rows) {
    SCOPED_TRACE(text);
    auto b = parse_policy(text, "s.json", kNowhere);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().message.find(want), std::string::npos) << b.error().message;
  }
}

TEST(SrtKeysTest, BadIgnoreViolations) {
  const std::pair<const char*, const char*> rows[] = {
      {R"({"ignoreViolations": []})",
       "s.json: line 1, column 22: ignoreViolations: expected an object of string arrays, got an "
       "array"},
      {R"({"ignoreViolations": {"*": "/usr"}})",
       "s.json: line 1, column 33: ignoreViolations[\"*\"]: expected an array of strings, got a "
       "string"},
      {R"({"ignoreViolations": {"*": [""]}})",
       "s.json: line 1, column 30: ignoreViolations[\"*\"][0]: an empty path would ignore every "
       "violation"},
      {R"({"ignoreViolations": {"": ["/x"]}})",
       "s.json: line 1, column 27: ignoreViolations[\"\"]: command pattern cannot be empty (\"*\" "
       "is all)"},
  };
  for (const auto& [text, want] : rows) {
    SCOPED_TRACE(text);
    auto got = parse_policy(text, "s.json", kNowhere);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().message, want);
  }
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// network.allowUnixSockets on Linux: each entry a full path (~ and relative spellings
// expanded as srt does) or @name; allowAllUnixSockets honoured with a loud warning.
TEST(SrtKeysTest, UnixSocketKeys) {
  const LoadContext ctx{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};
  auto got = parse_policy(
      R"({"network": {"allowUnixSockets": ["/run/a.sock", "~/.ssh/agent.sock", "sub/x.sock", "@bus"]}})",
      "s.json", ctx);
  ASSERT_TRUE(got.ok()) << got.error().message;
#if !defined(__APPLE__)
  EXPECT_EQ(got->net.allow_unix_sockets,
            (std::vector<std::string>{"/run/a.sock", "/nonexistent-vigil/home/.ssh/agent.sock",
                                      "/nonexistent-vigil/proj/sub/x.sock", "@bus"}));
  for (const auto& w : got->warnings) EXPECT_EQ(w.find("allowUnixSockets"), std::string::npos) << w;
  auto bad = parse_policy(R"({"network": {"allowUnixSockets": ["~other/x.sock"]}})", "s.json", ctx);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("network.allowUnixSockets[0]: "), std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("full path, or @name"), std::string::npos);
#endif
  auto all = parse_policy(R"({"network": {"allowAllUnixSockets": true}})", "s.json", ctx);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(all->net.allow_all_unix_sockets);
  ASSERT_EQ(all->warnings.size(), 1u);
  EXPECT_NE(all->warnings[0].find("WARNING: network.allowAllUnixSockets=true"), std::string::npos);
  auto off = parse_policy(R"({"network": {"allowAllUnixSockets": false}})", "s.json", ctx);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->net.allow_all_unix_sockets);
  EXPECT_TRUE(off->warnings.empty());
}

}  // namespace
}  // namespace vigil
