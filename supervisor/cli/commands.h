// The CLI's subcommands. Each returns the process exit status and prints its own errors
// ("vigil: ..." on stderr, one line per problem).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/base/diagnostics.h"  // report(): how every subcommand ends on an error
#include "supervisor/core/base/exit_codes.h"   // exit_code_for()
#include "supervisor/core/base/result.h"
#include "supervisor/command/proxy_test_options.h"

namespace vigil {

struct RunArgs {
  std::optional<std::string> settings;
  bool allow_writable_settings = false;
  bool sandbox = true;
  std::vector<std::string> command;  // argv, already including "bash -c" for -c
  std::optional<std::string> log;  // --log PATH; default $XDG_STATE_HOME/vigil/sessions/<id>.jsonl
  std::optional<int> violations_fd;  // --violations-fd N: the violations as JSON, for harnesses
  bool capture_output = true;        // --output capture|inherit
  std::optional<double> timeout;     // --timeout SECONDS: wall-clock cap on the command
  ProxyTestOptions proxy_test;       // --test-*: tests only, gated by VIGIL_TEST_MODE=1
  std::optional<std::string> session;  // --session H (else $VIGIL_SESSION): a thin client
  bool verbose = false;  // -v: always end with the log's path (else only after a denial)
};
int cmd_run(const RunArgs& args);

struct ExplainArgs {
  std::optional<std::string> settings;
  bool allow_writable_settings = false;
  std::optional<std::string> path;
  bool filters = false;
};
int cmd_explain(const ExplainArgs& args);

int cmd_probe(bool json);

// "vigil: WARNING: --sandbox off: ..." (level error: shown unless VIGIL_LOG=off), before
// a command runs unconfined on either platform.
void warn_unconfined();
// Runs the command unconfined (after warn_unconfined()); returns its exit status.
int run_unconfined(const std::vector<std::string>& command);

}  // namespace vigil
