// The Seatbelt builder's guarantees, as tables: escaping, parameter values, spellings,
// the mandatory denies, the network form, the unlink guards, hostile paths, the opt-in
// warnings. Profiles are checked with the test SBPL reader/evaluator (sbpl_eval.h).
#include "seatbelt/profile_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <set>

#include "seatbelt/base_profile_text.h"
#include "seatbelt/sandbox_exec_argv.h"
#include "tests/unit/seatbelt/fixtures.h"
#include "tests/unit/seatbelt/sbpl_eval.h"

namespace vigil {
namespace {

using sbfix::kProj;

SeatbeltProfile build(const sbfix::Case& c) {
  const Plan plan = c.plan();
  auto r = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
  EXPECT_TRUE(r.ok()) << c.name << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : SeatbeltProfile{};
}

// One parsed profile and evaluator per (text, params): the evaluator caches its compiled
// regexes, which is where the time goes.
const sbpl::Evaluator& evaluator_for(const SeatbeltProfile& p) {
  struct Compiled {
    std::unique_ptr<sbpl::Profile> prof;
    std::unique_ptr<sbpl::Evaluator> ev;
  };
  static std::map<std::string, Compiled> cache;
  std::string key = p.text;
  for (const auto& x : p.params) key += '\0' + x.name + '=' + x.value;
  auto it = cache.find(key);
  if (it == cache.end()) {
    Compiled c;
    c.prof = sbpl::load(p.text);
    EXPECT_EQ(c.prof->error, "");
    c.ev =
        std::make_unique<sbpl::Evaluator>(sbpl::Evaluator{c.prof.get(), sbfix::param_map(p), {}});
    it = cache.emplace(std::move(key), std::move(c)).first;
  }
  return *it->second.ev;
}

bool denied(const SeatbeltProfile& p, const std::string& op, const std::string& path) {
  const sbpl::Evaluator& ev = evaluator_for(p);
  sbpl::Request r;
  r.op = op;
  r.path = path;
  const bool a = ev.decide(r, sbpl::Precedence::kLastMatch).allow;
  const bool b = ev.decide(r, sbpl::Precedence::kSpecificFirst).allow;
  EXPECT_EQ(a, b) << "the two precedence readings disagree on " << op << " " << path;
  EXPECT_EQ(ev.error, "");
  return !a;
}

// ---- regex_escape: every metacharacter, table-tested, and checked by a real engine ----

TEST(SeatbeltRegexEscape, EveryMetacharacterIsEscaped) {
  struct Row {
    std::string in, out;
  } rows[] = {
      {".", "\\."},
      {"[", "\\["},
      {"]", "]"},
      {"(", "\\("},
      {")", "\\)"},
      {"{", "\\{"},
      {"}", "}"},
      {"*", "\\*"},
      {"+", "\\+"},
      {"?", "\\?"},
      {"^", "\\^"},
      {"$", "\\$"},
      {"|", "\\|"},
      {"\\", "\\\\"},
      {"a-b_c/ ~", "a-b_c/ ~"},
      {".git/hooks", "\\.git/hooks"},
      {"a[b]c{2}", "a\\[b]c\\{2}"},
      {"", ""},
  };
  for (const auto& row : rows) {
    auto r = regex_escape(row.in, false);
    ASSERT_TRUE(r.ok()) << row.in;
    EXPECT_EQ(*r, row.out) << row.in;
  }
}

TEST(SeatbeltRegexEscape, EscapedTextMatchesOnlyItselfInBothDialects) {
  // Every printable ASCII character alone, and all metacharacters together.
  std::vector<std::string> inputs{".[](){}*+?^$|\\", "a.b", "x+y(z)?"};
  for (char c = 0x20; c < 0x7f; ++c) inputs.emplace_back(1, c);
  for (const auto& in : inputs) {
    for (const bool fold : {false, true}) {
      auto esc = regex_escape(in, fold);
      ASSERT_TRUE(esc.ok()) << in;
      for (const auto flavour : {std::regex::extended, std::regex::ECMAScript}) {
        const std::regex re("^" + *esc + "$", flavour);
        EXPECT_TRUE(std::regex_match(in, re)) << "[" << in << "] as " << *esc;
        EXPECT_FALSE(std::regex_match(in + "x", re)) << in;
        EXPECT_FALSE(std::regex_match("x" + in, re)) << in;
      }
    }
  }
}

TEST(SeatbeltRegexEscape, FoldsLetterCaseOnlyWhenAsked) {
  EXPECT_EQ(*regex_escape(".Git", true), "\\.[gG][iI][tT]");
  EXPECT_EQ(*regex_escape(".Git", false), "\\.Git");
  const std::regex re("^" + *regex_escape(".git/hooks", true) + "$", std::regex::extended);
  for (const char* s : {".git/hooks", ".GIT/HOOKS", ".Git/Hooks"})
    EXPECT_TRUE(std::regex_match(s, re)) << s;
  EXPECT_FALSE(std::regex_match(std::string(".gitxhooks"), re));
}

TEST(SeatbeltRegexEscape, RefusesControlAndNonAsciiBytes) {
  for (const std::string& bad : {std::string("a\nb"), std::string("a\0b", 3), std::string("\x7f"),
                                 std::string("caf\xc3\xa9"), std::string("\t")}) {
    EXPECT_FALSE(regex_escape(bad, false).ok()) << bad;
  }
}

// ---- sbpl_string: fixed tokens only ----

TEST(SeatbeltSbplString, QuotesAndBackslashesAreEscapedAndReadBack) {
  struct Row {
    std::string in, out;
  } rows[] = {
      {"abc", "\"abc\""},
      {"a\"b", "\"a\\\"b\""},
      {"a\\b", "\"a\\\\b\""},
      {"\")(allow default)", "\"\\\")(allow default)\""},
      {"^.*/\\.git$", "\"^.*/\\\\.git$\""},
  };
  for (const auto& row : rows) {
    auto r = sbpl_string(row.in);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, row.out);
    const auto parsed = sbpl::read_all(*r);
    ASSERT_EQ(parsed.error, "");
    ASSERT_EQ(parsed.forms.size(), 1u);
    EXPECT_EQ(parsed.forms[0].text, row.in) << "round trip";
  }
  for (const std::string& bad : {std::string("a\nb"), std::string("\r"), std::string("\xff")}) {
    EXPECT_FALSE(sbpl_string(bad).ok());
  }
}

// ---- path parameter values ----

TEST(SeatbeltPathValue, AcceptsAnythingMacosCanNameAndRefusesTheRest) {
  struct Row {
    std::string value;
    bool ok;
  } rows[] = {
      {"/Users/dev/proj", true},
      {"/Users/dev/we\"ird)", true},
      {"/a\n(allow default)\n", true},
      {"/back\\slash", true},
      {"/semi;colon (copy)", true},
      {"/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80", true},  // é, €, an emoji
      {"/" + std::string(1023, 'a'), true},                  // 1024 bytes
      {"/" + std::string(1024, 'a'), false},                 // 1025 bytes
      {"relative/path", false},
      {"", false},
      {std::string("/nul\0byte", 9), false},
      {"/latin1-\xe9", false},             // not UTF-8
      {"/overlong-\xc0\xaf", false},       // overlong '/'
      {"/surrogate-\xed\xa0\x80", false},  // UTF-16 surrogate
      {"/truncated-\xe2\x82", false},
      {"/too-big-\xf4\x90\x80\x80", false},  // past U+10FFFF
  };
  for (const auto& row : rows) EXPECT_EQ(check_path_value(row.value).ok(), row.ok) << row.value;
}

TEST(SeatbeltPrivateTwins, TmpVarEtcAndNothingElse) {
  struct Row {
    std::string in;
    std::vector<std::string> out;
  } rows[] = {
      {"/tmp", {"/tmp", "/private/tmp"}},
      {"/tmp/x", {"/tmp/x", "/private/tmp/x"}},
      {"/private/tmp/x", {"/private/tmp/x", "/tmp/x"}},
      {"/var/folders/ab/T", {"/var/folders/ab/T", "/private/var/folders/ab/T"}},
      {"/private/etc/hosts", {"/private/etc/hosts", "/etc/hosts"}},
      {"/tmpfoo", {"/tmpfoo"}},
      {"/private/tmpfoo", {"/private/tmpfoo"}},
      {"/Users/dev/tmp", {"/Users/dev/tmp"}},
      {"/private", {"/private"}},
  };
  for (const auto& row : rows) EXPECT_EQ(private_twins(row.in), row.out) << row.in;
}

TEST(SeatbeltLogTag, Charset) {
  EXPECT_TRUE(valid_log_tag("vigil_0123456789abcdef"));
  EXPECT_FALSE(valid_log_tag("short"));
  EXPECT_FALSE(valid_log_tag(std::string(65, 'a')));
  EXPECT_FALSE(valid_log_tag("vigil-0123456789"));
  EXPECT_FALSE(valid_log_tag("vigil\")(allow default"));
}

// ---- the profile ----

TEST(SeatbeltProfile, TextIsFixedTokensAndEveryParamIsUsedAndDeclared) {
  for (const auto& c : sbfix::golden_cases()) {
    const auto p = build(c);
    for (char ch : p.text) {
      ASSERT_TRUE(ch == '\n' || (ch >= 0x20 && ch < 0x7f)) << c.name << ": byte " << int(ch);
    }
    std::set<std::string> declared, used;
    for (const auto& x : p.params) {
      EXPECT_TRUE(std::regex_match(x.name, std::regex("[A-Z][A-Z0-9_]*"))) << x.name;
      EXPECT_TRUE(declared.insert(x.name).second) << "duplicate " << x.name;
    }
    const std::regex ref("\\(param \"([^\"]*)\"\\)");
    for (auto it = std::sregex_iterator(p.text.begin(), p.text.end(), ref);
         it != std::sregex_iterator(); ++it) {
      used.insert((*it)[1]);
    }
    EXPECT_EQ(declared, used) << c.name;
    // No parameter value appears in the text (values are long absolute paths; the
    // fixed device literals are the only paths written out).
    for (const auto& x : p.params) {
      EXPECT_EQ(p.text.find("\"" + x.value + "\""), std::string::npos) << c.name << ": " << x.value;
    }
  }
}

TEST(SeatbeltProfile, EveryDenyCarriesTheSessionTag) {
  for (const auto& c : sbfix::golden_cases()) {
    const auto p = build(c);
    auto prof = sbpl::load(p.text);
    ASSERT_EQ(prof->error, "") << c.name;
    EXPECT_EQ(prof->default_message, sbfix::kTag);
    for (const auto& r : prof->rules) {
      if (!r.allow) {
        EXPECT_EQ(r.message.value_or(""), sbfix::kTag) << c.name << " rule " << r.index;
      }
      if (r.allow) {
        EXPECT_FALSE(r.message.has_value());
      }
    }
  }
}

// The fixed base (seatbelt/base_profile.sb) is static text: well-formed on its own, only
// allow rules (a deny must carry the session's tag, which the base cannot know), no
// parameter (it names no path of the user's), and in every generated profile verbatim,
// right after the header, before any plan-derived rule.
TEST(SeatbeltBaseProfile, IsStaticAllowOnlyTextEveryProfileCarriesVerbatim) {
  const std::string base(kSeatbeltBaseProfile);
  auto parsed = sbpl::load("(version 1)\n(deny default (with message \"" +
                           std::string(sbfix::kTag) + "\"))\n" + base);
  ASSERT_EQ(parsed->error, "");
  ASSERT_GT(parsed->rules.size(), 10u);
  for (const auto& r : parsed->rules) EXPECT_TRUE(r.allow) << "rule " << r.index;
  EXPECT_EQ(base.find("(param"), std::string::npos);
  EXPECT_EQ(base.find("file-read*"), std::string::npos) << "reads are the plan's to decide";
  EXPECT_EQ(base.find("file-write*"), std::string::npos) << "writes are the plan's to decide";
  for (const auto& c : sbfix::golden_cases()) {
    const auto p = build(c);
    const auto at = p.text.find(base);
    ASSERT_NE(at, std::string::npos) << c.name;
    EXPECT_LT(at, p.text.find("; files:")) << c.name;
    EXPECT_EQ(p.text.substr(0, at).find("(allow"), std::string::npos) << c.name;
  }
}

// Sbpl is the only type the writer takes: a literal, a checked parameter name, a quoted
// value or a number. A name outside [A-Z0-9_] or a quoted value with a control byte is
// refused, so neither can carry profile syntax.
TEST(SeatbeltSbplText, OnlyCheckedPiecesBecomeText) {
  using namespace sbpl_literals;
  EXPECT_EQ((Sbpl("(subpath "_sbpl) + *Sbpl::param("WRITE_ROOT_0") + ")"_sbpl).text(),
            "(subpath (param \"WRITE_ROOT_0\"))");
  EXPECT_FALSE(Sbpl::param("A\")(allow default").ok());
  EXPECT_FALSE(Sbpl::param("").ok());
  EXPECT_FALSE(Sbpl::param("lower").ok());
  EXPECT_EQ(Sbpl::quoted("a\"b\\c")->text(), "\"a\\\"b\\\\c\"");
  EXPECT_FALSE(Sbpl::quoted("a\nb").ok());
  EXPECT_FALSE(Sbpl::quoted("\xc3\xa9").ok());
  EXPECT_EQ(Sbpl::number(3128).text(), "3128");
}

TEST(SeatbeltProfile, HostilePathsStayParameterValues) {
  sbfix::Case c = sbfix::default_case("hostile");
  const std::string evil = sbfix::kHome + "/a\")\n(allow default)\n; \\\"(deny";
  c.policy.fs.allow_write.push_back(sbfix::rule(evil, "filesystem.allowWrite[0]"));
  c.policy.fs.deny_write.push_back(sbfix::rule(evil + "/inner", "filesystem.denyWrite[0]"));
  const auto p = build(c);
  EXPECT_EQ(p.text.find("(allow default)"), std::string::npos);
  EXPECT_EQ(p.text.find("a\")"), std::string::npos);
  auto prof = sbpl::load(p.text);
  ASSERT_EQ(prof->error, "");
  bool found = false;
  for (const auto& x : p.params) found = found || x.value == evil;
  EXPECT_TRUE(found) << "the path is passed, verbatim, as a value";
  // And it means what it says: writable, with its denied child.
  EXPECT_FALSE(denied(p, "file-write-create", evil + "/f"));
  EXPECT_TRUE(denied(p, "file-write-create", evil + "/inner/f"));
  // The argv carries it as one element.
  const auto argv = sandbox_exec_argv(p, {"/bin/sh", "-c", "true"});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  int hits = 0;
  for (const auto& a : *argv) hits += a.find(evil) != std::string::npos ? 1 : 0;
  EXPECT_GE(hits, 1);
}

TEST(SeatbeltProfile, UnpassablePathsAreRefusedWithTheRuleNamed) {
  struct Row {
    std::string path;
    std::string msg;
  } rows[] = {
      {"/Users/dev/latin1-\xe9", "not valid UTF-8"},
      {"/Users/dev/" + std::string(1100, 'a'), "at most 1024"},
      {std::string("/Users/dev/n\0l", 14), "NUL"},
  };
  for (const auto& row : rows) {
    sbfix::Case c = sbfix::default_case("bad");
    c.policy.fs.deny_read.push_back(sbfix::rule(row.path, "filesystem.denyRead[3]"));
    const Plan plan = c.plan();
    auto r = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kInvalidPolicy);
    EXPECT_NE(r.error().message.find("filesystem.denyRead[3]"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find(row.msg), std::string::npos) << r.error().message;
  }
}

TEST(SeatbeltProfile, BadSessionValuesAreRefused) {
  sbfix::Case c = sbfix::default_case();
  const Plan plan = c.plan();
  for (const std::string tag : {"short", "has space in it", "quote\"quote\"q"}) {
    auto r = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, SeatbeltSession{tag, {3128}}});
    EXPECT_FALSE(r.ok()) << tag;
  }
  auto r =
      build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, SeatbeltSession{sbfix::kTag, {0}}});
  EXPECT_FALSE(r.ok());
  r = build_seatbelt_profile(SeatbeltInputs{nullptr, &plan, c.session});
  EXPECT_FALSE(r.ok());
}

TEST(SeatbeltProfile, BadMachNamesAreRefused) {
  for (const std::string& name :
       std::vector<std::string>{"", "*", "com.x y", "a*b", "bad\"name", std::string(300, 'a')}) {
    sbfix::Case c = sbfix::default_case();
    c.policy.net.allow_mach_lookup = {name};
    const Plan plan = c.plan();
    auto r = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("allowMachLookup[0]"), std::string::npos);
    }
  }
}

TEST(SeatbeltProfile, EveryMandatoryDenyIsPresentAndMatchesAtAnyDepth) {
  const auto p = build(sbfix::default_case());
  for (const auto& d : mandatory_denies()) {
    const std::string re = mandatory_deny_regex(d);
    EXPECT_NE(p.text.find("(regex " + *sbpl_string(re) + ")"), std::string::npos) << d.relpath;
    const std::string rel(d.relpath);
    // Depth 1 and depth 9, in the project, in the temp dir, anywhere; any letter case.
    for (const std::string& base :
         {kProj, kProj + "/a/b/c/d/e/f/g/h", std::string("/private/tmp/vigil-s/tmp/x"),
          std::string("/Users/dev/elsewhere")}) {
      EXPECT_TRUE(denied(p, "file-write-create", base + "/" + rel)) << base << "/" << rel;
      EXPECT_TRUE(denied(p, "file-write-data", base + "/" + rel + "/inside")) << rel;
      std::string upper = rel;
      for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      EXPECT_TRUE(denied(p, "file-write-create", base + "/" + upper)) << upper;
    }
    // A longer name is not the protected one (below the root: the scan's placeholders
    // there, like the whole missing .claude, are denied on both platforms).
    EXPECT_FALSE(denied(p, "file-write-create", kProj + "/deep/" + rel + "x")) << rel;
    EXPECT_FALSE(denied(p, "file-write-create", kProj + "/deep/x" + rel)) << rel;
  }
}

TEST(SeatbeltProfile, AllowGitConfigLiftsOnlyGitConfig) {
  sbfix::Case c = sbfix::default_case();
  c.policy.fs.allow_git_config = true;
  const auto p = build(c);
  EXPECT_FALSE(denied(p, "file-write-data", kProj + "/sub/.git/config"));
  EXPECT_TRUE(denied(p, "file-write-data", kProj + "/sub/.git/hooks/pre-commit"));
  EXPECT_TRUE(denied(p, "file-write-data", kProj + "/.gitconfig"));
}

TEST(SeatbeltProfile, NetworkIsRemoteIpToTheProxyPortsOnly) {
  for (const auto& c : sbfix::golden_cases()) {
    const auto p = build(c);
    for (const auto port : c.session.proxy_ports) {
      EXPECT_NE(p.text.find("(allow network-outbound (remote ip \"localhost:" +
                            std::to_string(port) + "\"))"),
                std::string::npos)
          << c.name;
    }
    auto prof = sbpl::load(p.text);
    for (const auto& r : prof->rules) {
      for (const auto& op : r.ops) {
        if (op != "network-outbound" && op != "network*") continue;
        for (const auto* f : r.filters) {
          EXPECT_FALSE(f->children.size() >= 1 && f->children[0].is_symbol("local"))
              << c.name << ": (local ip ...) on network-outbound admits every connection";
        }
      }
    }
    sbpl::Evaluator ev{prof.get(), sbfix::param_map(p), {}};
    for (const std::string remote : {"93.184.216.34:443", "localhost:22", "localhost:5432"}) {
      sbpl::Request r{"network-outbound", "", remote, "", ""};
      const bool local_binding =
          c.policy.net.allow_local_binding && remote.starts_with("localhost:");
      EXPECT_EQ(ev.decide(r, sbpl::Precedence::kLastMatch).allow, local_binding)
          << c.name << " " << remote;
    }
    for (const auto port : c.session.proxy_ports) {
      sbpl::Request r{"network-outbound", "", "localhost:" + std::to_string(port), "", ""};
      EXPECT_TRUE(ev.decide(r, sbpl::Precedence::kLastMatch).allow) << c.name;
    }
  }
}

TEST(SeatbeltProfile, TheEvaluatorCatchesALocalIpFilter) {
  // The check above is only as good as the evaluator's model of (local ip ...): a profile
  // written with it must be seen admitting an arbitrary host.
  const std::string text =
      "(version 1)\n(deny default (with message \"t\"))\n(allow network-outbound (local ip "
      "\"localhost:3128\"))\n";
  auto prof = sbpl::load(text);
  ASSERT_EQ(prof->error, "");
  sbpl::Evaluator ev{prof.get(), {}, {}};
  EXPECT_TRUE(
      ev.decide({"network-outbound", "", "93.184.216.34:443", "", ""}, sbpl::Precedence::kLastMatch)
          .allow);
}

TEST(SeatbeltProfile, OptInsAreOffByDefaultAndWarnWhenOn) {
  struct Row {
    const char* name;
    void (*set)(Policy*);
    const char* service;
    const char* warning;
  } rows[] = {
      {"weaker", [](Policy* p) { p->macos.enable_weaker_network_isolation = true; },
       "com.apple.trustd.agent", "enableWeakerNetworkIsolation"},
      {"events", [](Policy* p) { p->macos.allow_apple_events = true; },
       "com.apple.coreservices.appleevents", "allowAppleEvents"},
  };
  const auto off = build(sbfix::default_case());
  EXPECT_TRUE(off.warnings.empty());
  auto off_prof = sbpl::load(off.text);
  sbpl::Evaluator off_ev{off_prof.get(), sbfix::param_map(off), {}};
  for (const auto& row : rows) {
    EXPECT_FALSE(
        off_ev.decide({"mach-lookup", "", "", row.service, ""}, sbpl::Precedence::kLastMatch)
            .allow);
    sbfix::Case c = sbfix::default_case(row.name);
    row.set(&c.policy);
    const auto on = build(c);
    ASSERT_EQ(on.warnings.size(), 1u) << row.name;
    EXPECT_NE(on.warnings[0].find(row.warning), std::string::npos);
    auto prof = sbpl::load(on.text);
    sbpl::Evaluator ev{prof.get(), sbfix::param_map(on), {}};
    EXPECT_TRUE(
        ev.decide({"mach-lookup", "", "", row.service, ""}, sbpl::Precedence::kLastMatch).allow);
  }
  EXPECT_EQ(off.text.find("appleevent-send"), std::string::npos);
}

TEST(SeatbeltProfile, MachServicesAreNamedWithoutWildcards) {
  const auto p = build(sbfix::default_case());
  EXPECT_EQ(p.text.find("global-name-prefix"), std::string::npos);
  EXPECT_EQ(p.text.find("global-name-regex"), std::string::npos);
  auto prof = sbpl::load(p.text);
  sbpl::Evaluator ev{prof.get(), {}, {}};
  EXPECT_TRUE(
      ev.decide({"mach-lookup", "", "", "com.apple.logd", ""}, sbpl::Precedence::kLastMatch).allow);
  EXPECT_FALSE(ev.decide({"mach-lookup", "", "", "com.apple.SecurityServer", ""},
                         sbpl::Precedence::kLastMatch)
                   .allow);
  EXPECT_FALSE(
      ev.decide({"mach-lookup", "", "", "com.apple.logd.x", ""}, sbpl::Precedence::kLastMatch)
          .allow);
}

TEST(SeatbeltProfile, UnlinkIsDeniedOnEveryProtectedPathAndItsWritableAncestors) {
  // A denyWrite three levels deep, a read-denied file, a placeholder, nested roots.
  sbfix::Case c = sbfix::default_case();
  c.policy.fs.allow_write.push_back(sbfix::rule(kProj + "/sub", "filesystem.allowWrite[0]"));
  c.policy.fs.deny_write.push_back(
      sbfix::rule(kProj + "/sub/a/b/locked", "filesystem.denyWrite[0]"));
  c.policy.fs.deny_read.push_back(
      sbfix::rule(kProj + "/conf/.env", "filesystem.denyRead[0]", PathKind::kFile));
  const Plan plan = c.plan();
  const auto p = build(c);
  int protected_seen = 0;
  for (const auto& op : plan.ops) {
    if (op.kind != OpKind::kDenyWrite && op.kind != OpKind::kHide) continue;
    ++protected_seen;
    EXPECT_TRUE(denied(p, "file-write-unlink", op.path)) << op.path;
    for (std::string dir = op.path.substr(0, op.path.rfind('/'));
         dir.size() > std::string("/Users/dev").size(); dir = dir.substr(0, dir.rfind('/'))) {
      EXPECT_TRUE(denied(p, "file-write-unlink", dir)) << "ancestor " << dir << " of " << op.path;
      for (const auto& twin : private_twins(dir)) EXPECT_TRUE(denied(p, "file-write-unlink", twin));
    }
  }
  EXPECT_GE(protected_seen, 15);
  // Unrelated files and directories in the same roots can still be removed and renamed.
  for (const std::string& ok :
       {kProj + "/src/main.c", kProj + "/sub/a/other", kProj + "/sub/a/b/sibling",
        kProj + "/conf/app.yaml", std::string("/private/tmp/vigil-s/tmp/f")}) {
    EXPECT_FALSE(denied(p, "file-write-unlink", ok)) << ok;
  }
  // The directory holding .git/hooks (and .claude/...) can be neither renamed away nor
  // created (renamed into place), anywhere; what is inside it is another matter.
  for (const char* op : {"file-write-unlink", "file-write-create", "file-write-data"}) {
    EXPECT_TRUE(denied(p, op, "/private/tmp/vigil-s/tmp/clone/.git")) << op;
    EXPECT_TRUE(denied(p, op, kProj + "/x/.claude")) << op;
    EXPECT_TRUE(denied(p, op, kProj + "/x/.GIT")) << op;
    EXPECT_FALSE(denied(p, op, kProj + "/x/.github")) << op;
    EXPECT_FALSE(denied(p, op, kProj + "/x/.gitx")) << op;
  }
  EXPECT_FALSE(denied(p, "file-write-create", kProj + "/.git/index.lock"));
  EXPECT_FALSE(denied(p, "file-write-data", kProj + "/.git/objects/ab/cdef"));
  EXPECT_FALSE(denied(p, "file-write-create", kProj + "/x/.claude/settings.json"));
}

TEST(SeatbeltProfile, EveryPathIsEmittedInBothSpellings) {
  sbfix::Case c = sbfix::default_case();
  c.policy.fs.allow_write.push_back(sbfix::rule("/private/var/folders/ab/T",
                                                "filesystem.allowWrite[0]", PathKind::kDir,
                                                "/var/folders/ab/T"));
  c.policy.fs.deny_write.push_back(
      sbfix::rule("/private/var/folders/ab/T/keep", "filesystem.denyWrite[0]"));
  c.policy.fs.deny_read.push_back(
      sbfix::rule("/private/etc/secret", "filesystem.denyRead[0]", PathKind::kFile, "/etc/secret"));
  const auto p = build(c);
  struct Row {
    std::string op, path;
    bool deny;
  } rows[] = {
      {"file-write-create", "/tmp/vigil-s/tmp/f", false},
      {"file-write-create", "/private/tmp/vigil-s/tmp/f", false},
      {"file-write-create", "/var/folders/ab/T/f", false},
      {"file-write-create", "/private/var/folders/ab/T/f", false},
      {"file-write-create", "/var/folders/ab/T/keep/f", true},
      {"file-write-create", "/private/var/folders/ab/T/keep/f", true},
      {"file-write-unlink", "/var/folders/ab/T/keep", true},
      {"file-write-unlink", "/private/var/folders/ab/T/keep", true},
      {"file-read-data", "/etc/secret", true},
      {"file-read-data", "/private/etc/secret", true},
      {"file-read-data", "/private/etc/hosts", false},
  };
  for (const auto& row : rows)
    EXPECT_EQ(denied(p, row.op, row.path), row.deny) << row.op << " " << row.path;
}

TEST(SeatbeltProfile, DevicesAShellWrites) {
  const auto p = build(sbfix::default_case());
  EXPECT_FALSE(denied(p, "file-write-data", "/dev/null"));
  EXPECT_FALSE(denied(p, "file-write-data", "/dev/fd/2"));
  EXPECT_TRUE(denied(p, "file-write-data", "/dev/fd/2x"));
  EXPECT_TRUE(denied(p, "file-write-data", "/dev/disk0"));
  EXPECT_TRUE(denied(p, "file-ioctl", "/dev/tty"));
  EXPECT_TRUE(denied(p, "file-write-data", "/dev/ttys001"));
}

TEST(SeatbeltProfile, SandboxExecArgvKeepsEveryValueOneElement) {
  const auto c = sbfix::golden_cases()[8];  // hostile_paths
  const auto p = build(c);
  const auto built = sandbox_exec_argv(p, {"/bin/bash", "-c", "echo hi"});
  ASSERT_TRUE(built.ok()) << built.error().message;
  const auto& argv = *built;
  ASSERT_GE(argv.size(), 7u);
  EXPECT_EQ(argv[0], "/usr/bin/sandbox-exec");
  EXPECT_EQ(argv[1], "-p");
  EXPECT_EQ(argv[2], p.text);
  std::size_t i = 3;
  for (const auto& x : p.params) {
    EXPECT_EQ(argv[i++], "-D");
    EXPECT_EQ(argv[i++], x.name + "=" + x.value);
  }
  EXPECT_EQ(argv[i++], "--");
  EXPECT_EQ(argv[i++], "/bin/bash");
  EXPECT_EQ(argv[i++], "-c");
  EXPECT_EQ(argv[i++], "echo hi");
  EXPECT_EQ(i, argv.size());
}

}  // namespace
}  // namespace vigil
