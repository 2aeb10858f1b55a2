// vigil-export: `vigil export --follow` (supervisor/cli/export_follow_args.h says why it is
// a binary of its own). `vigil` checks the options and execs this with them; it can be run
// by hand too, with the same options.
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "supervisor/cli/export_follow_args.h"
#include "supervisor/core/base/diagnostics.h"

int main(int argc, char** argv) {
  vigil::configure_logging(std::getenv("VIGIL_LOG"), false);
  CLI::App app{"vigil-export: every session log of this user, live, verified, to a sink "
               "(what `vigil export --follow` runs; docs/fleet.md)"};
  vigil::FollowArgs args;
  vigil::add_follow_options(&app, &args);
  CLI11_PARSE(app, argc, argv);
  return vigil::run_follow(args);
}
