// The sandbox-exec argv, as tables: every golden profile, hostile parameter values,
// hostile commands, malformed profiles, the ARG_MAX budget. Each accepted argv is read
// back the way sandbox-exec reads it (getopt(3) with "f:n:p:D:", stopping at "--", and
// -D split at its first '='), and must give back exactly the profile, the parameters
// and the command that went in.
#include "seatbelt/sandbox_exec_argv.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "tests/unit/seatbelt/fixtures.h"

namespace vigil {
namespace {

struct Parsed {
  std::string profile;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::string> command;
};

// sandbox-exec's side of the contract. Options may also be glued ("-pTEXT"), as getopt
// allows; we never emit that form, but a value that starts with '-' must not create it.
std::optional<Parsed> parse_like_sandbox_exec(const std::vector<std::string>& argv) {
  Parsed out;
  std::size_t i = 1;
  while (i < argv.size()) {
    const std::string& a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;  // first operand: the command
    const char opt = a[1];
    if (opt != 'f' && opt != 'n' && opt != 'p' && opt != 'D') return std::nullopt;
    std::string arg;
    if (a.size() > 2) {
      arg = a.substr(2);
    } else {
      if (++i >= argv.size()) return std::nullopt;
      arg = argv[i];
    }
    if (opt == 'p') {
      out.profile = arg;
    } else if (opt == 'D') {
      const auto eq = arg.find('=');
      if (eq == std::string::npos) return std::nullopt;
      out.params.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
    } else {
      return std::nullopt;  // -f / -n: we never ask for a file or a named profile
    }
    ++i;
  }
  out.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
  return out;
}

void expect_round_trip(const SeatbeltProfile& p, const std::vector<std::string>& command) {
  auto argv = sandbox_exec_argv(p, command);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  ASSERT_GE(argv->size(), 3u);
  EXPECT_EQ((*argv)[0], "/usr/bin/sandbox-exec");
  auto parsed = parse_like_sandbox_exec(*argv);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->profile, p.text);
  ASSERT_EQ(parsed->params.size(), p.params.size());
  for (std::size_t i = 0; i < p.params.size(); ++i) {
    EXPECT_EQ(parsed->params[i].first, p.params[i].name);
    EXPECT_EQ(parsed->params[i].second, p.params[i].value);
  }
  EXPECT_EQ(parsed->command, command);
}

// A profile whose text reads the given parameters.
SeatbeltProfile profile_with(const std::vector<std::pair<std::string, std::string>>& params) {
  SeatbeltProfile p;
  p.text = "(version 1)\n(deny default)\n";
  for (const auto& [name, value] : params) {
    p.text += "(allow file-write* (subpath (param \"" + name + "\")))\n";
    p.params.push_back({name, value, "test"});
  }
  return p;
}

TEST(SandboxExecArgv, EveryGoldenProfileRoundTrips) {
  for (const auto& c : sbfix::golden_cases()) {
    SCOPED_TRACE(c.name);
    const Plan plan = c.plan();
    auto profile = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    expect_round_trip(*profile, {"/bin/sh", "-c", "make test"});
  }
}

TEST(SandboxExecArgv, ExactShape) {
  const SeatbeltProfile p = profile_with({{"WRITE_ROOT_0", "/Users/dev/proj"}, {"TMP_1", "/t"}});
  auto argv = sandbox_exec_argv(p, {"ls", "-l"});
  ASSERT_TRUE(argv.ok());
  const std::vector<std::string> want = {"/usr/bin/sandbox-exec",
                                         "-p",
                                         p.text,
                                         "-D",
                                         "WRITE_ROOT_0=/Users/dev/proj",
                                         "-D",
                                         "TMP_1=/t",
                                         "--",
                                         "ls",
                                         "-l"};
  EXPECT_EQ(*argv, want);
}

TEST(SandboxExecArgv, HostileValuesArePassedWhole) {
  // Each stays one value: the element starts with our NAME, and its first '=' is ours.
  const std::vector<std::string> values = {
      "-p",
      "-D",
      "--",
      "-f/etc/passwd",
      "/a=b=c",
      "=",
      "/x\n(allow default)\n",
      "/q\"uo)te(",
      "/back\\slash",
      "/semi;colon",
      "/sp ace",
      "/tab\there",
      "/nonutf8\xff\xfe",
      "/" + std::string(1000, 'x'),
  };
  for (const auto& v : values) {
    SCOPED_TRACE(v);
    expect_round_trip(profile_with({{"WRITE_ROOT_0", v}}), {"true"});
  }
}

TEST(SandboxExecArgv, RejectedValues) {
  struct Row {
    std::string value;
    std::string why;
  };
  const std::vector<Row> rows = {
      {std::string("/proj\0/etc", 10), "contains NUL"},
      {std::string("\0", 1), "contains NUL"},
      {"", "is empty"},
  };
  for (const auto& r : rows) {
    auto argv = sandbox_exec_argv(profile_with({{"WRITE_ROOT_0", r.value}}), {"true"});
    ASSERT_FALSE(argv.ok());
    EXPECT_EQ(argv.error().code, Errc::kInternal);
    EXPECT_NE(argv.error().message.find(r.why), std::string::npos) << argv.error().message;
  }
}

TEST(SandboxExecArgv, HostileCommands) {
  const SeatbeltProfile p = profile_with({{"A", "/a"}});
  // Accepted, and still the command after sandbox-exec's option parsing.
  const std::vector<std::vector<std::string>> ok = {
      {"-p", "(allow default)"},
      {"-D", "A=/"},
      {"--", "x"},
      {"-f", "/tmp/evil.sb"},
      {"sh", "-c", "echo $HOME; rm -rf --no-preserve-root /"},
      {"with\nnewline", ""},
      {"x", "--"},
  };
  for (const auto& cmd : ok) {
    SCOPED_TRACE(cmd.front());
    expect_round_trip(p, cmd);
  }
  struct Row {
    std::vector<std::string> command;
    std::string why;
  };
  const std::vector<Row> bad = {
      {{}, "empty command"},
      {{""}, "command name is empty"},
      {{"", "x"}, "command name is empty"},
      {{std::string("ls\0-la", 6)}, "argument 0 contains a NUL"},
      {{"ls", std::string("a\0b", 3)}, "argument 1 contains a NUL"},
  };
  for (const auto& r : bad) {
    auto argv = sandbox_exec_argv(p, r.command);
    ASSERT_FALSE(argv.ok());
    EXPECT_EQ(argv.error().code, Errc::kInvalidPolicy);
    EXPECT_NE(argv.error().message.find(r.why), std::string::npos) << argv.error().message;
  }
}

TEST(SandboxExecArgv, ProfileAndParametersMustAgree) {
  struct Row {
    const char* name;
    SeatbeltProfile profile;
    std::string why;
  };
  auto with_extra = [](SeatbeltProfile p, SeatbeltParam x) {
    p.params.push_back(std::move(x));
    return p;
  };
  auto with_text = [](SeatbeltProfile p, std::string more) {
    p.text += more;
    return p;
  };
  const SeatbeltProfile base = profile_with({{"A_0", "/a"}});
  const std::vector<Row> rows = {
      {"read but not declared", with_text(base, "(deny file-read* (subpath (param \"B_1\")))"),
       "no -D for it"},
      {"declared but not read", with_extra(base, {"B_1", "/b", "x"}), "never used"},
      {"declared twice", with_extra(base, {"A_0", "/other", "x"}), "declared twice"},
      {"lower case", with_text(with_extra(base, {"a_0", "/b", "x"}), "(param \"a_0\")"),
       "not [A-Z0-9_]+"},
      {"an '=' in the name", with_text(with_extra(base, {"A=B", "/b", "x"}), "(param \"A=B\")"),
       "not [A-Z0-9_]+"},
      {"a leading '-'", with_text(with_extra(base, {"-X", "/b", "x"}), "(param \"-X\")"),
       "not [A-Z0-9_]+"},
      {"empty name", with_text(with_extra(base, {"", "/b", "x"}), "(param \"\")"),
       "not [A-Z0-9_]+"},
      {"unclosed reference", with_text(base, "(param \"C"), "unclosed"},
      {"empty text", SeatbeltProfile{}, "empty or contains NUL"},
      {"NUL in text", with_text(base, std::string("\0(allow default)", 16)),
       "empty or contains NUL"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto argv = sandbox_exec_argv(r.profile, {"true"});
    ASSERT_FALSE(argv.ok());
    EXPECT_EQ(argv.error().code, Errc::kInternal);
    EXPECT_NE(argv.error().message.find(r.why), std::string::npos) << argv.error().message;
  }
}

TEST(SandboxExecArgv, ParamRefsInFirstUseOrder) {
  auto refs = profile_param_refs(
      "(allow x (param \"B\"))(deny y (param \"A\"))(allow z (param \"B\") (param \"C_1\"))");
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(*refs, (std::vector<std::string>{"B", "A", "C_1"}));
  auto none = profile_param_refs("(version 1)(deny default)");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(SandboxExecArgv, ArgMaxBudget) {
  // Many long paths: refused with a message naming the fix, not left to E2BIG.
  std::vector<std::pair<std::string, std::string>> params;
  for (int i = 0; i < 600; ++i)
    params.emplace_back("P_" + std::to_string(i), "/" + std::string(1000, 'a'));
  auto big = sandbox_exec_argv(profile_with(params), {"true"});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, Errc::kInvalidPolicy);
  EXPECT_NE(big.error().message.find("ARG_MAX"), std::string::npos);
  // Half as many fit.
  params.resize(300);
  EXPECT_TRUE(sandbox_exec_argv(profile_with(params), {"true"}).ok());
}

}  // namespace
}  // namespace vigil
