// Which subcommands main() builds for a command line: exactly the one argv[1] names,
// none for a lone --version, and every one of them whenever CLI11 has to report or
// describe the top level (no argument, --help, an unknown or misspelt word, options first).
#include "supervisor/cli/cli_subcommands.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace vigil {
namespace {

SubcommandSet only(bool run, bool explain, bool probe, bool proxy, bool replay) {
  return {run, explain, probe, proxy, replay};
}

struct Case {
  std::vector<const char*> args;
  SubcommandSet want;
};

TEST(CliSubcommands, TableOfCommandLines) {
  const SubcommandSet all = SubcommandSet::all();
  const SubcommandSet none;
  const std::vector<Case> cases = {
      {{}, all},
      {{"run"}, only(true, false, false, false, false)},
      {{"run", "--", "true"}, only(true, false, false, false, false)},
      {{"run", "--help"}, only(true, false, false, false, false)},
      {{"run", "explain"}, only(true, false, false, false, false)},
      {{"explain"}, only(false, true, false, false, false)},
      {{"explain", "--filters"}, only(false, true, false, false, false)},
      {{"probe", "--json"}, only(false, false, true, false, false)},
      {{"doctor", "--json"}, only(false, false, true, false, false)},
      {{"proxy", "--settings", "s.json"}, only(false, false, false, true, false)},
      {{"replay", "x.jsonl"}, only(false, false, false, false, true)},
      {{"logs", "prune", "--older-than", "7d"}, {.logs = true}},
      {{"learn", "a.jsonl"}, {.forensics = true}},
      {{"export", "--format", "ocsf", "a.jsonl"}, {.forensics = true}},
      {{"log"}, all},
      {{"--version"}, none},
      // --version with anything after it: CLI11 decides, with everything in place.
      {{"--version", "run"}, all},
      {{"--version", "--bogus"}, all},
      {{"--help"}, all},
      {{"-h"}, all},
      {{"--bogus"}, all},
      {{"bogus"}, all},
      // No prefix or case folding: these are usage errors for CLI11 to word.
      {{"ru"}, all},
      {{"Run"}, all},
      {{"runx"}, all},
      {{"run "}, all},
      {{""}, all},
      {{"--"}, all},
      {{"--", "run"}, all},
      {{"--help", "run"}, all},
      // The global -v/--verbose before the subcommand: the word after it decides.
      {{"-v", "run", "--", "true"}, only(true, false, false, false, false)},
      {{"--verbose", "-v", "proxy"}, only(false, false, false, true, false)},
      {{"-v"}, all},
      {{"-vv", "run"}, all},
  };
  for (const Case& c : cases) {
    std::string line;
    for (const char* a : c.args) line += std::string("[") + a + "]";
    EXPECT_EQ(subcommands_to_register(c.args), c.want) << line;
  }
}

TEST(CliSubcommands, NullFirstArgumentRegistersAll) {
  const std::vector<const char*> args = {nullptr};
  EXPECT_EQ(subcommands_to_register(args), SubcommandSet::all());
}

// The thin client's fast path takes exactly `run -- CMD...` with a session named; every
// other command line is CLI11's, so its options, warnings and usage errors stay as they are.
TEST(CliSubcommands, ThinRunCommandTakesOnlyRunDashDashInASession) {
  using Cmd = std::optional<std::vector<std::string>>;
  struct ThinCase {
    std::vector<const char*> args;
    const char* session;
    Cmd want;
  };
  const char* s = "/run/user/1000/vigil-session-x/agent.sock";
  const std::vector<ThinCase> cases = {
      {{"run", "--", "true"}, s, Cmd{{"true"}}},
      {{"run", "--", "git", "status", "--short"}, s, Cmd{{"git", "status", "--short"}}},
      {{"run", "--", "sh", "-c", "echo -- --x"}, s, Cmd{{"sh", "-c", "echo -- --x"}}},
      {{"run", "--", ""}, s, Cmd{{""}}},  // CLI11 takes it too, and the session refuses it
      {{"run", "--", "true"}, nullptr, std::nullopt},  // no session: a standalone run
      {{"run", "--", "true"}, "", std::nullopt},       // empty: as unset
      {{"run", "--"}, s, std::nullopt},                // nothing to run: CLI11's error
      {{"run", "true"}, s, std::nullopt},
      {{"run", "-c", "true"}, s, std::nullopt},
      {{"run", "--session", "h", "--", "true"}, s, std::nullopt},
      {{"run", "--settings", "x.json", "--", "true"}, s, std::nullopt},  // its warning
      {{"run", "--sandbox", "off", "--", "true"}, s, std::nullopt},
      {{"run", "--output", "inherit", "--", "true"}, s, std::nullopt},
      {{"run", "--violations-fd", "3", "--", "true"}, s, std::nullopt},
      {{"run", "--help"}, s, std::nullopt},
      {{"-v", "run", "--", "true"}, s, std::nullopt},
      {{"Run", "--", "true"}, s, std::nullopt},
      {{"explain", "--", "true"}, s, std::nullopt},
      {{}, s, std::nullopt},
  };
  for (const ThinCase& c : cases) {
    std::string line;
    for (const char* a : c.args) line += std::string("[") + a + "]";
    EXPECT_EQ(thin_run_command(c.args, c.session), c.want) << line;
  }
}

}  // namespace
}  // namespace vigil
