// `vigil export --format ocsf LOG`: the log's records as OCSF events, one JSON line each
// (supervisor/replay/ocsf_export.h), streamed: one record is read, converted and written at a
// time, so a log of any size exports in bounded memory.
// `vigil export --follow [--to SINK]`: every session log of the user, live, verified, to
// stdout, a file, a syslog collector (TCP or TLS) or journald (supervisor/export/exporter.h),
// run by vigil-export (supervisor/cli/export_follow_args.h).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "supervisor/cli/export_follow_args.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/launch/init_locator.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/log/session_log.h"
#include "supervisor/replay/ocsf_export.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil {
namespace {

struct ExportArgs {
  std::string log;
  bool follow = false;
  FollowArgs f;  // --format is the one-off export's too
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

int run_export(const ExportArgs& a) {
  if (a.f.format != "ocsf") return fail("export: unknown --format " + a.f.format + " (known: ocsf)");
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

// --follow: vigil-export runs it (export_follow_args.h says why), found where vigil-init
// is, given the options as parsed here.
int exec_exporter(const FollowArgs& a) {
  auto exe = locate_vigil_helper("vigil-export");
  if (!exe) return report(exe.error());
  const std::vector<std::string> argv = follow_argv(*exe, a);
  std::vector<char*> cargv;
  for (const auto& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(exe->c_str(), cargv.data());
  return report(system_error("cannot run " + *exe));
}

}  // namespace

std::function<int()> add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "session logs as standard records for a SIEM");
  cmd->add_option("log", args->log, "the session log (.jsonl) to export once");
  cmd->add_flag("--follow", args->follow,
                "follow every session log of this user, live, verified (docs/fleet.md)");
  add_follow_options(cmd, &args->f);
  return [args] {
    if (args->follow) {
      if (!args->log.empty()) return fail("export: --follow follows every log; give no LOG with it");
      if (args->f.format != "ocsf" && args->f.format != "vigil")
        return fail("export: unknown --format " + args->f.format + " (known: ocsf, vigil)");
      return exec_exporter(args->f);
    }
    if (args->log.empty()) return fail("export: give a LOG to export, or --follow");
    if (!args->f.to.empty() || args->f.until_idle)
      return fail("export: --to and --until-idle go with --follow");
    return run_export(*args);
  };
}

}  // namespace vigil
