// `vigil run`: policy -> plan -> bwrap argv -> launch -> exit status.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "bwrap/argv_builder.h"
#include "supervisor/commands.h"
#include "supervisor/core/exit_codes.h"
#include "supervisor/init_locator.h"
#include "supervisor/sandbox_launch.h"
#include "supervisor/sandbox_plan.h"
#include "supervisor/session_dir.h"

namespace vigil {

int exit_code_for(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidPolicy:
    case Errc::kRefused: return to_int(ExitCode::kUsage);
    default: return to_int(ExitCode::kSandboxSetup);
  }
}

int report(const Error& e) {
  std::fprintf(stderr, "vigil: %s\n", e.message.c_str());
  return exit_code_for(e);
}

std::string find_bwrap(const std::optional<std::string>& configured) {
  if (configured) return ::access(configured->c_str(), X_OK) == 0 ? *configured : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // a relative PATH entry could be planted
    const std::string candidate = dir + "/bwrap";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

int cmd_run(const RunArgs& args) {
  if (!args.sandbox) {
    std::fprintf(stderr,
                 "vigil: WARNING: --sandbox off: running the command UNCONFINED, with no "
                 "filesystem or network restrictions\n");
    auto r = launch_unconfined(args.command);
    if (!r) return report(r.error());
    return r->exit_code;
  }
  auto session = SessionDir::create();
  if (!session) return report(session.error());

  PlanRequest req{args.settings, args.allow_writable_settings, session->tmp()};
  auto prepared = prepare_sandbox(req);
  if (!prepared) return report(prepared.error());
  for (const auto& w : prepared->warnings) std::fprintf(stderr, "vigil: warning: %s\n", w.c_str());
  if (!prepared->policy.net.allowed_domains.empty()) {
    return report(make_error(Errc::kInvalidPolicy,
                             prepared->policy.source + ": network.allowedDomains: not supported yet "
                             "(the egress proxy is not built); the command would have no network. "
                             "Remove the entries to run without network"));
  }

  const std::string bwrap = find_bwrap(prepared->policy.bwrap_path);
  if (bwrap.empty()) {
    return report(make_error(
        Errc::kNotFound,
        prepared->policy.bwrap_path
            ? "bwrapPath " + *prepared->policy.bwrap_path + " is not an executable file"
            : "bubblewrap (bwrap) is not installed: run `apt-get install bubblewrap` (or pass "
              "--sandbox off to run unconfined, which vigil does not recommend)"));
  }

  auto init = locate_vigil_init();
  if (!init) return report(init.error());
  if (auto r = check_not_writable(prepared->plan, *init); !r) return report(r.error());

  auto status = make_status_pipe();
  if (!status) return report(status.error());
  auto events = make_event_pipe();
  if (!events) return report(events.error());
  BwrapInputs in;
  in.plan = &prepared->plan;
  auto cwd = current_dir();
  if (!cwd) return report(cwd.error());
  in.cwd = *cwd;
  in.setenv = {{"TMPDIR", session->tmp()}};
  in.json_status_fd = status->write.get();
  in.command = args.command;
  in.init = *init;
  in.init_args = {"--events-fd", std::to_string(events->write.get())};
  if (prepared->policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop) {
    in.init_args.insert(in.init_args.end(), {"--overflow", "drop"});
  }
  const auto bwrap_args = build_bwrap_args(in);

  const auto placeholders = placeholder_paths(prepared->plan);
  std::vector<std::string> event_lines;
  auto launched = launch_bwrap(bwrap, bwrap_args, std::move(status).value(), &*events,
                               [&](std::string_view line) { event_lines.emplace_back(line); });
  if (const char* dump = std::getenv("VIGIL_DEBUG_EVENTS"); dump != nullptr && *dump != '\0') {
    for (const auto& l : event_lines) std::fprintf(stderr, "event: %s\n", l.c_str());
  }
  remove_placeholders(placeholders);
  if (!launched) return report(launched.error());
  return launched->exit_code;
}

}  // namespace vigil
