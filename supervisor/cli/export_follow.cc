// vigil-export's work: `vigil export --follow`'s sink chosen from --to and the settings,
// the state directory and the log key found, then the exporter run
// (supervisor/export/exporter.h). Linked only into vigil-export (export_follow_args.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "supervisor/cli/export_follow_args.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/export/export_spool.h"
#include "supervisor/export/exporter.h"
#include "supervisor/log/log_key.h"

namespace vigil {
namespace {

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

// The sink: --to, else vigil.export in the settings, else stdout.
Result<void> choose_sink(const FollowArgs& a, const ExportOptions& settings, ExporterOptions* o) {
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

}  // namespace

int run_follow(const FollowArgs& a) {
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


}  // namespace vigil
