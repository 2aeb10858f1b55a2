// The two platforms must agree on what is allowed. For each row, the Linux resolver's
// verdict (decide(), which is what the mount table does) is compared with the verdict
// of the generated Seatbelt rules, evaluated by the test evaluator under both readings
// of Seatbelt precedence (and the readings must agree with each other).
//
// Where the platforms differ by design the row says so, and the difference is always
// macOS being stricter:
//   kStricter  the mandatory denies match at any depth on macOS (no scan, no depth
//              limit, the temp dir included), where Linux capped only what its scan found;
//              and the .git / .claude directories themselves cannot be created or renamed;
//   ephemeral  a write inside a denyRead directory lands on a throwaway tmpfs on Linux
//              and is denied on macOS: either way the host is unchanged.
#include <gtest/gtest.h>

#include <regex>

#include "seatbelt/profile_builder.h"
#include "tests/unit/seatbelt/fixtures.h"
#include "tests/unit/seatbelt/sbpl_eval.h"

namespace vigil {
namespace {

constexpr Verdict kA = Verdict::kAllowed;
constexpr Verdict kD = Verdict::kDenied;
constexpr Verdict kE = Verdict::kEphemeral;
constexpr Access kR = Access::kRead;
constexpr Access kW = Access::kWrite;

enum class Mac { kSame, kStricter };

struct Built {
  sbfix::Case c;
  Plan plan;
  SeatbeltProfile profile;
  std::unique_ptr<sbpl::Profile> parsed;
  std::unique_ptr<sbpl::Evaluator> ev;
};

std::map<std::string, Built>& built() {
  static std::map<std::string, Built> all = [] {
    std::map<std::string, Built> m;
    for (auto& c : sbfix::golden_cases()) {
      Built b;
      b.c = c;
      b.plan = c.plan();
      auto p = build_seatbelt_profile(SeatbeltInputs{&b.c.policy, &b.plan, b.c.session});
      if (!p.ok()) {
        ADD_FAILURE() << c.name << ": " << p.error().message;
        continue;
      }
      b.profile = *p;
      b.parsed = sbpl::load(b.profile.text);
      b.ev = std::make_unique<sbpl::Evaluator>(
          sbpl::Evaluator{b.parsed.get(), sbfix::param_map(b.profile), {}});
      m.emplace(c.name, std::move(b));
    }
    return m;
  }();
  return all;
}

// macOS verdict for an access: a read is file-read-data; a write must be allowed (or
// denied) as both file-write-create and file-write-data, under both precedence readings.
bool mac_allows(const Built& b, const std::string& path, Access access) {
  std::vector<std::string> ops =
      access == kR ? std::vector<std::string>{"file-read-data"}
                   : std::vector<std::string>{"file-write-create", "file-write-data"};
  std::optional<bool> verdict;
  for (const auto& op : ops) {
    for (const auto prec : {sbpl::Precedence::kLastMatch, sbpl::Precedence::kSpecificFirst}) {
      sbpl::Request r;
      r.op = op;
      r.path = path;
      const bool allow = b.ev->decide(r, prec).allow;
      if (verdict) {
        EXPECT_EQ(*verdict, allow)
            << "operations or precedence readings disagree: " << op << " " << path;
      }
      verdict = allow;
    }
  }
  EXPECT_EQ(b.ev->error, "");
  return *verdict;
}

bool matches_a_mandatory_deny(const std::string& path, bool allow_git_config) {
  static const auto compiled = [] {
    std::vector<std::pair<bool, std::regex>> v;  // (is .git/config, regex)
    for (const auto& d : mandatory_denies())
      v.emplace_back(d.git_config, std::regex(mandatory_deny_regex(d), std::regex::extended));
    for (const auto& re : mandatory_head_regexes())
      v.emplace_back(false, std::regex(re, std::regex::extended));
    return v;
  }();
  for (const auto& [git_config, re] : compiled) {
    if (git_config && allow_git_config) continue;
    if (std::regex_search(path, re)) return true;
  }
  return false;
}

struct Row {
  const char* policy;
  std::string path;
  Access access;
  Verdict linux_verdict;
  Mac mac = Mac::kSame;
};

const std::string P = sbfix::kProj;
const std::string H = sbfix::kHome;
const std::string T = "/private/tmp/vigil-s/tmp";

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      // default: the project and the temp dir writable, the scan's findings capped
      {"default", P + "/src/main.c", kR, kA},
      {"default", P + "/src/main.c", kW, kA},
      {"default", P + "/.git/hooks/pre-commit", kW, kD},
      {"default", P + "/.git/hooks/pre-commit", kR, kA},
      {"default", P + "/.git/config", kW, kD},
      {"default", P + "/.git/HEAD", kW, kA},
      {"default", P + "/.bashrc", kW, kD},
      {"default", P + "/.vscode/tasks.json", kW, kD},
      {"default", P + "/.claude/commands/x.md", kW, kD},
      {"default", P + "/.claude/settings.json", kW, kD},
      {"default", H + "/.bashrc", kW, kD},
      {"default", H + "/.ssh/id_rsa", kR, kA},
      {"default", "/private/etc/passwd", kR, kA},
      {"default", T + "/x", kW, kA},
      {"default", "/private/tmp/other", kW, kD},
      {"default", P + "/.gitignore", kW, kA},
      {"default", P + "/.github/workflows/ci.yml", kW, kA},
      {"default", P + "/a/b/.bashrc", kW, kA, Mac::kStricter},  // deeper than the scan saw
      {"default", T + "/repo/.git/hooks/post-checkout", kW, kA,
       Mac::kStricter},                                             // temp: not scanned
      {"default", P + "/sub/.git/config", kW, kA, Mac::kStricter},  // created after the scan
      {"default", P + "/sub/.git", kW, kA, Mac::kStricter},         // git init, or mv prepared .git
      // hide the home, re-open one directory, the project inside stays readable
      {"deny_read_allow_read", H + "/.ssh/id_rsa", kR, kD},
      {"deny_read_allow_read", H + "/.ssh/id_rsa", kW, kE},
      {"deny_read_allow_read", H + "/.config/git/config", kR, kA},
      {"deny_read_allow_read", H + "/.config/git/config", kW, kD},
      {"deny_read_allow_read", H + "/.config/other", kR, kD},
      {"deny_read_allow_read", P + "/src/a.c", kR, kA},
      {"deny_read_allow_read", P + "/src/a.c", kW, kA},
      {"deny_read_allow_read", P + "/.git/hooks/x", kW, kD},
      {"deny_read_allow_read", "/private/etc/ssh/sshd_config", kR, kD},
      {"deny_read_allow_read", "/private/etc/hosts", kR, kA},
      {"deny_read_allow_read", H, kR, kD},
      {"deny_read_allow_read", "/Users/devil/x", kR, kA},
      // denyWrite inside the project, a file, and a missing path capped at its first
      // missing component
      {"deny_write", P + "/secrets/key", kW, kD},
      {"deny_write", P + "/secrets/key", kR, kA},
      {"deny_write", P + "/build/out.bin", kW, kD},
      {"deny_write", P + "/build/other.o", kW, kA},
      {"deny_write", P + "/gen/new/x", kW, kD},
      {"deny_write", P + "/gen", kW, kD},
      {"deny_write", P + "/generated", kW, kA},
      // nested roots, a root under /tmp, a read-denied file inside the project
      {"nested_roots_pty", "/private/tmp/build/o.o", kW, kA},
      {"nested_roots_pty", P + "/.env", kR, kD},
      {"nested_roots_pty", P + "/.env", kW, kD},
      {"nested_roots_pty", P + "/sub/vendor/lib.c", kW, kD},
      {"nested_roots_pty", P + "/sub/vendor/lib.c", kR, kA},
      {"nested_roots_pty", P + "/sub/main.c", kW, kA},
      // paths that would break a spliced profile
      {"hostile_paths", H + "/we\"ird)\n(allow default)/f", kW, kA},
      {"hostile_paths", H + "/x;y\\z (copy)/secret", kR, kD},
      {"hostile_paths", H + "/x;y\\z (copy)", kW, kE},
      {"hostile_paths", H + "/x;y", kR, kA},
  };
  return r;
}

TEST(SeatbeltAgreement, TableAgainstTheLinuxResolver) {
  ASSERT_GE(rows().size(), 40u);
  for (const auto& row : rows()) {
    SCOPED_TRACE(std::string(row.policy) + " " + (row.access == kR ? "read " : "write ") +
                 row.path);
    const auto it = built().find(row.policy);
    ASSERT_NE(it, built().end());
    const Built& b = it->second;
    const Decision linux_d = decide(b.plan, row.path, row.access);
    ASSERT_EQ(linux_d.verdict, row.linux_verdict)
        << "the table is wrong about Linux: " << linux_d.reason;
    const bool mac = mac_allows(b, row.path, row.access);
    if (row.mac == Mac::kStricter) {
      EXPECT_FALSE(mac) << "expected macOS to be stricter here";
      EXPECT_TRUE(matches_a_mandatory_deny(row.path, b.c.policy.fs.allow_git_config));
    } else {
      EXPECT_EQ(mac, linux_d.verdict == Verdict::kAllowed)
          << "macOS and Linux disagree (" << linux_d.rule << ")";
    }
    // The /private twin of the path gets the same verdict.
    for (const auto& twin : private_twins(row.path)) {
      EXPECT_EQ(mac_allows(b, twin, row.access), mac) << "twin " << twin;
    }
  }
}

// Beyond the table: for every op of every golden policy, the op's path, a child, a
// grandchild and the parent, both accesses. macOS is never more permissive than Linux,
// and it is stricter only where a mandatory-deny name matches.
TEST(SeatbeltAgreement, NeverMorePermissiveThanLinuxOnEveryPlannedPath) {
  int checked = 0, stricter = 0;
  for (const auto& [name, b] : built()) {
    std::vector<std::string> paths;
    for (const auto& op : b.plan.ops) {
      paths.push_back(op.path);
      paths.push_back(op.path + "/child");
      paths.push_back(op.path + "/a/b");
      paths.push_back(op.path.substr(0, std::max<std::size_t>(1, op.path.rfind('/'))));
    }
    for (const auto& path : paths) {
      for (const auto access : {kR, kW}) {
        const Decision d = decide(b.plan, path, access);
        const bool linux_allows = d.verdict == Verdict::kAllowed;
        const bool mac = mac_allows(b, path, access);
        ++checked;
        if (mac) {
          EXPECT_TRUE(linux_allows) << name << ": macOS allows what Linux denies: " << path;
        } else if (linux_allows) {
          ++stricter;
          EXPECT_TRUE(access == kW &&
                      matches_a_mandatory_deny(path, b.c.policy.fs.allow_git_config))
              << name << ": macOS denies " << (access == kR ? "read " : "write ") << path
              << " without a reason";
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
  RecordProperty("checked", checked);
  RecordProperty("stricter", stricter);
}

}  // namespace
}  // namespace vigil
