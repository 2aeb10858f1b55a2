// `vigil export --format ocsf LOG`: the log's records as OCSF events, one JSON line each
// (supervisor/replay/ocsf_export.h), streamed: one record is read, converted and written at a
// time, so a log of any size exports in bounded memory.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/replay/ocsf_export.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil {
namespace {

struct ExportArgs {
  std::string format;
  std::string log;
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

int run_export(const ExportArgs& a) {
  if (a.format != "ocsf") return fail("export: unknown --format " + a.format + " (known: ocsf)");
  auto fd = open_session_log(a.log);
  if (!fd) return fail(fd.error().message);
  OcsfContext ctx;
  OcsfProcesses processes;  // actor.process's command line, executable and parent
  std::string error;
  auto fed = replay::feed_of_fd(fd->get())([&](const LogRecord& r) {
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) {
      const auto start = session_start_ms(r.event.session);
      if (!start) {
        error = a.log + ": its session id does not say when it started (expected "
                        "YYYYMMDDTHHMMSSZ-...)";
        return false;
      }
      ctx = OcsfContext{*start, r.event.session, s->versions.vigil, &processes};
      return true;
    }
    if (ctx.session.empty()) {
      error = a.log + ": the first record is not session.start";
      return false;
    }
    // display-safe: JSON with every non-ASCII byte replaced or escaped by the serialiser
    if (auto line = ocsf_line(r.event, ctx)) std::printf("%s\n", line->c_str());
    processes.note(r.event);  // after its line: an exec's actor is its parent
    return true;
  });
  if (!fed) return fail(fed.error().message);
  if (!error.empty()) return fail(error);
  if (fed->unreadable > 0) {
    print_warning(std::to_string(fed->unreadable) + " line(s) of " + a.log +
                  " are not records and were not exported (vigil replay --verify " + a.log +
                  " tells why)");
  }
  return 0;
}

}  // namespace

std::function<int()> add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "a session log as standard records for a SIEM");
  cmd->add_option("--format", args->format, "ocsf: OCSF 1.2.0 events as JSON lines")->required();
  cmd->add_option("log", args->log, "the session log (.jsonl)")->required();
  return [args] { return run_export(*args); };
}

}  // namespace vigil
