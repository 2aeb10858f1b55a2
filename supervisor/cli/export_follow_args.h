// `vigil export --follow`'s options, shared by the two binaries that read them: `vigil`
// (which checks them, then hands the run to vigil-export) and vigil-export (which runs the
// exporter, supervisor/export/exporter.h). The exporter lives in a binary of its own so
// that OpenSSL (syslog over TLS) is never loaded by `vigil run`: mapping and relocating
// libssl and libcrypto was two thirds of the instructions of vigil's own process for
// `vigil run -- true` (callgrind: 3.3M of 4.8M).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace vigil {

struct FollowArgs {
  std::string format = "ocsf";
  std::string to;
  std::string ca;
  std::string settings;
  std::string dir;
  std::string state;
  std::uint64_t spool_max = 0;
  bool until_idle = false;
  std::uint64_t settle_ms = 1000;
};

// The options above on `cmd` (`vigil export` or vigil-export's own), with their help.
void add_follow_options(CLI::App* cmd, FollowArgs* args);

// vigil-export's argv for `args` (argv[0] is `exe`): each option given, as the options
// above spell it, so that vigil-export parses back exactly `args`.
std::vector<std::string> follow_argv(const std::string& exe, const FollowArgs& args);

// Runs the exporter (vigil-export only; supervisor/cli/export_follow.cc). The exit status.
int run_follow(const FollowArgs& args);

}  // namespace vigil
