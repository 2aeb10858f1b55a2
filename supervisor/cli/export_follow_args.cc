#include "supervisor/cli/export_follow_args.h"

namespace vigil {

void add_follow_options(CLI::App* cmd, FollowArgs* args) {
  cmd->add_option("--format", args->format,
                  "ocsf: OCSF 1.2.0 events as JSON lines (default); vigil: the log's own lines "
                  "(--follow only)");
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
}

std::vector<std::string> follow_argv(const std::string& exe, const FollowArgs& a) {
  const FollowArgs defaults;
  std::vector<std::string> out = {exe, "--format=" + a.format};
  // One row per option that takes a value: given only when set (an empty string is unset).
  const struct {
    const char* flag;
    const std::string* value;
  } strings[] = {{"--to", &a.to},   {"--ca", &a.ca},       {"--settings", &a.settings},
                 {"--dir", &a.dir}, {"--state", &a.state}};
  for (const auto& s : strings) {
    if (s.value->empty()) continue;
    // `--opt=VALUE`: a value that starts with '-' is never taken for an option.
    out.push_back(std::string(s.flag) + "=" + *s.value);
  }
  if (a.spool_max != defaults.spool_max) out.push_back("--spool-max-bytes=" + std::to_string(a.spool_max));
  if (a.settle_ms != defaults.settle_ms) out.push_back("--settle-ms=" + std::to_string(a.settle_ms));
  if (a.until_idle) out.push_back("--until-idle");
  return out;
}

}  // namespace vigil
