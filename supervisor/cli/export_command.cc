// `vigil export --format ocsf LOG`: the log's records as OCSF events, one JSON line each
// (supervisor/replay/ocsf_export.h), streamed: one record is read, converted and written at a
// time, so a log of any size exports in bounded memory.
// `vigil export --follow [--to SINK]`: every session log of the user, live, verified, to
// stdout, a file, a syslog collector (TCP or TLS) or journald (supervisor/export/exporter.h).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/export/export_spool.h"
#include "supervisor/export/export_status.h"
#include "supervisor/export/exporter.h"
#include "supervisor/log/log_key.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/log/session_log.h"
#include "supervisor/replay/ocsf_export.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil {
namespace {

struct ExportArgs {
  std::string format = "ocsf";
  std::string log;
  bool follow = false;
  std::string to;
  std::string ca;
  std::string settings;
  std::string dir;
  std::string state;
  std::uint64_t spool_max = 0;
  bool until_idle = false;
  std::uint64_t settle_ms = 1000;
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

// The sink: --to, else vigil.export in the settings, else stdout.
Result<void> choose_sink(const ExportArgs& a, const ExportOptions& settings, ExporterOptions* o) {
  const std::string& to = a.to;
  if (to.empty() && !settings.syslog_host.empty()) {
    o->sink = ExporterOptions::Sink::kSyslog;
    o->syslog = SyslogTarget{settings.syslog_host, settings.syslog_port, settings.syslog_tls,
                             settings.syslog_ca};
  } else if (to.empty() && settings.journald) {
    o->sink = ExporterOptions::Sink::kJournald;
    o->journald_socket = "/run/systemd/journal/socket";
  } else if (to.empty() || to == "-" || to == "stdout") {
    o->sink = ExporterOptions::Sink::kStdout;
  } else if (to.starts_with("syslog://") || to.starts_with("syslog+tls://")) {
    auto t = parse_syslog_url(to);
    VIGIL_TRY(t);
    o->sink = ExporterOptions::Sink::kSyslog;
    o->syslog = *t;
    o->syslog.ca_file = settings.syslog_ca;
  } else if (to == "journald" || to.starts_with("journald:")) {
    o->sink = ExporterOptions::Sink::kJournald;
    o->journald_socket = to == "journald" ? "/run/systemd/journal/socket" : to.substr(9);
  } else if (to.find("://") != std::string::npos) {
    return make_error(Errc::kInvalidPolicy, "--to " + to + ": unknown sink (known: a file, -, "
                                            "syslog://HOST:PORT, syslog+tls://HOST:PORT, journald)");
  } else {
    o->sink = ExporterOptions::Sink::kFile;
    o->file = to;
  }
  if (!a.ca.empty()) o->syslog.ca_file = a.ca;
  if (o->sink == ExporterOptions::Sink::kSyslog && o->syslog.tls && o->syslog.ca_file.empty()) {
    return make_error(Errc::kInvalidPolicy, "syslog over TLS needs the collector's CA: give --ca FILE "
                                            "or vigil.export.syslog.ca");
  }
  if (o->sink == ExporterOptions::Sink::kSyslog && o->syslog.tls && !syslog_tls_built()) {
    return make_error(Errc::kUnsupported, "this vigil was built without OpenSSL, so it cannot send "
                                          "syslog over TLS: install libssl-dev and rebuild vigil");
  }
  return {};
}

int run_follow(const ExportArgs& a) {
  if (a.format != "ocsf" && a.format != "vigil")
    return fail("export: unknown --format " + a.format + " (known: ocsf, vigil)");
  ExportOptions settings;
  const char* home = std::getenv("HOME");
  if (!a.settings.empty()) {
    char cwd[4096];
    const LoadContext lc{::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/", home ? home : ""};
    auto p = load_policy_file(a.settings, lc);
    if (!p) return report(p.error());
    settings = p->vigil.export_options;
  }
  ExporterOptions o;
  if (auto chosen = choose_sink(a, settings, &o); !chosen) return report(chosen.error());
  const char* xdg = std::getenv("XDG_STATE_HOME");
  auto state = vigil_state_dir(xdg, home);
  if (!state && (a.dir.empty() || a.state.empty())) return report(state.error());
  o.follow.dir = a.dir.empty() ? *state + "/sessions" : a.dir;
  o.state_dir = a.state.empty() ? *state + "/export" : a.state;
  if (a.state.empty()) ::mkdir(state->c_str(), 0700);
  o.follow.format = a.format;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  o.follow.host = host;
  if (auto kp = log_key_path(xdg, home); kp) {
    if (auto key = load_log_key(*kp); key) o.follow.key = *key;
  }
  o.spool_max = a.spool_max ? a.spool_max
                            : (settings.spool_max_bytes ? settings.spool_max_bytes : kDefaultSpoolMaxBytes);
  o.until_idle = a.until_idle;
  o.settle = std::chrono::milliseconds(a.settle_ms);
  if (!o.follow.key) {
    print_warning("export: no log key here (" + (log_key_path(xdg, home) ? *log_key_path(xdg, home) : std::string("?")) +
                  "): seals cannot be checked, only chains");
  }
  return run_exporter(o);
}

}  // namespace

std::function<int()> add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "session logs as standard records for a SIEM");
  cmd->add_option("--format", args->format,
                  "ocsf: OCSF 1.2.0 events as JSON lines (default); vigil: the log's own lines "
                  "(--follow only)");
  cmd->add_option("log", args->log, "the session log (.jsonl) to export once");
  cmd->add_flag("--follow", args->follow,
                "follow every session log of this user, live, verified (docs/fleet.md)");
  cmd->add_option("--to", args->to,
                  "--follow's sink: - (stdout, default), FILE, syslog://HOST:PORT, "
                  "syslog+tls://HOST:PORT, journald");
  cmd->add_option("--ca", args->ca, "syslog+tls: the CA file that signed the collector's certificate");
  cmd->add_option("--settings", args->settings, "a settings file whose vigil.export says where to send");
  cmd->add_option("--dir", args->dir, "follow this log directory (default: the user's sessions/)");
  cmd->add_option("--state", args->state, "the cursor and spool directory (default: <state>/vigil/export)");
  cmd->add_option("--spool-max-bytes", args->spool_max, "the spool's cap (vigil.export.spoolMaxBytes)");
  cmd->add_option("--settle-ms", args->settle_ms,
                  "how long the collector's TCP must hold a message before it leaves the spool");
  cmd->add_flag("--until-idle", args->until_idle, "exit once everything was read and delivered");
  return [args, cmd] {
    if (args->follow) {
      if (!args->log.empty()) return fail("export: --follow follows every log; give no LOG with it");
      return run_follow(*args);
    }
    if (args->log.empty()) return fail("export: give a LOG to export, or --follow");
    if (!args->to.empty() || args->until_idle)
      return fail("export: --to and --until-idle go with --follow");
    (void)cmd;
    return run_export(*args);
  };
}

}  // namespace vigil
