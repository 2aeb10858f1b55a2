// `vigil learn LOG... [--settings CURRENT.json] [--output FILE]`: reads the logs record by
// record (bounded memory: supervisor/replay/learn_plan.h keeps one entry per proposal) and
// prints the settings entries that would have allowed what the sessions were denied, and
// what stays denied and why. --output writes the current settings with them added.
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/domain_matcher.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/replay/learn_plan.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/replay/replay_feed.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

struct LearnArgs {
  std::vector<std::string> logs;
  std::optional<std::string> settings;
  std::optional<std::string> output;
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

void print_line(const std::string& line) {
  const std::string shown = escape_text(line, TextSink::kTerminal) + "\n";
  // display-safe: escaped on the line above
  std::fwrite(shown.data(), 1, shown.size(), stdout);
}

Result<std::string> first_cwd(const std::string& log) {
  auto fd = open_session_log(log);
  VIGIL_TRY(fd);
  std::string cwd;
  VIGIL_TRY_VOID(replay::feed_of_fd(fd->get())([&](const LogRecord& r) {
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) cwd = s->cwd;
    return false;
  }));
  if (cwd.empty()) return make_error(Errc::kInvalidPolicy, log + ": no session.start record");
  return cwd;
}

Result<std::string> read_text(const std::string& path) {
  auto fd = open_settings_file(path);
  VIGIL_TRY(fd);
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("cannot read " + path);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

int run_learn(const LearnArgs& a) {
  auto cwd = first_cwd(a.logs.front());
  if (!cwd) return fail(cwd.error().message);
  PlanRequest req;
  req.settings_path = a.settings;
  req.use_home_settings = false;  // the embedded default unless --settings names one
  req.allow_writable_settings = true;
  req.cwd = *cwd;
  req.placeholders = false;
  req.refuse_missing_at_call = gatekeeper_in_force();
  auto prepared = prepare_sandbox(req);
  if (!prepared) return report(prepared.error());
  auto matcher = proxy::DomainMatcher::build(prepared->policy.net);
  if (!matcher) return fail(matcher.error().message);
  Learner learner(prepared->policy, prepared->plan, *matcher,
                  a.settings ? prepared->policy.source : std::string());
  if (const char* path_value = std::getenv("PATH")) learner.set_path_dirs(path_dirs_of(path_value));
  for (const auto& log : a.logs) {
    auto verify = verify_log(log, std::nullopt);
    if (!verify) return fail(verify.error().message);
    if (!verify->ok) {
      print_warning(log + " does not verify (record " +
                    std::to_string(verify->broken_at.value_or(0)) + ": " + verify->why +
                    "); learning from what can be read");
    }
    auto fd = open_session_log(log);
    if (!fd) return fail(fd.error().message);
    auto fed = replay::feed_of_fd(fd->get())([&](const LogRecord& r) {
      learner.take(r.event);
      return true;
    });
    if (!fed) return fail(log + ": " + fed.error().message);
  }
  const LearnResult r = learner.result();
  print_line("# vigil learn: " + std::to_string(a.logs.size()) + " log(s), " +
             std::to_string(r.denials) + " denial(s); the change to " +
             (a.settings ? *a.settings : std::string("the embedded default (no settings file)")) +
             (r.already_allowed > 0
                  ? " (" + std::to_string(r.already_allowed) + " it already allows)"
                  : std::string()));
  for (const auto& line : learn_report_lines(r, !a.settings)) print_line(line);
  for (const auto& p : r.allow_write) {
    struct stat st {};
    if (::stat(p.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      print_line("# " + p.entry + " does not exist yet: allowWrite takes existing directories, "
                 "so create it first (mkdir -p " + p.entry + ")");
    }
  }
  if (!a.output) return 0;
  std::string text;
  if (a.settings) {
    auto t = read_text(*a.settings);
    if (!t) return report(t.error());
    text = std::move(*t);
  }
  auto merged = learned_settings(text, r);
  if (!merged) return report(merged.error());
  UniqueFd out(::open(a.output->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return report(system_error("cannot write " + *a.output));
  if (auto w = write_all(out.get(), *merged, *a.output); !w) return report(w.error());
  print_error("wrote " + *a.output);
  return 0;
}

}  // namespace

std::function<int()> add_learn_command(CLI::App& app) {
  auto args = std::make_shared<LearnArgs>();
  auto* cmd = app.add_subcommand(
      "learn", "the smallest settings change that would have allowed what sessions were denied");
  cmd->add_option("logs", args->logs, "session logs (.jsonl)")->required();
  cmd->add_option("--settings", args->settings,
                  "the settings to extend (default: the embedded default policy)");
  cmd->add_option("--output", args->output,
                  "write the settings with the proposed entries added to FILE");
  return [args] { return run_learn(*args); };
}

}  // namespace vigil
