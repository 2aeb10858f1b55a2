// Which subcommands main() builds for a command line: exactly the one argv[1] names,
// none for a lone --version, and every one of them whenever CLI11 has to report or
// describe the top level (no argument, --help, an unknown or misspelt word, options first).
#include "supervisor/cli/cli_subcommands.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace vigil
