// `vigil logs prune --older-than DURATION [--dir D] [--dry-run]`: removes the session logs
// last written more than DURATION ago (issue 19, item 5). What may go, and the checks of
// the directory, are vigil.log.keep's (supervisor/log/log_retention.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/log/log_retention.h"
#include "supervisor/log/state_size.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

struct PruneArgs {
  std::string older_than;
  std::optional<std::string> dir;
  bool dry_run = false;
};

std::string utc(std::int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32] = {};
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

int prune(const PruneArgs& args) {
  auto age = parse_log_age(args.older_than);
  if (!age) return report(age.error());
  std::string dir;
  if (args.dir) {
    dir = *args.dir;
  } else {
    auto state = vigil_state_dir(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
    if (!state) {
      print_error("no default log directory: " + state.error().message +
                  "; give the directory with --dir");
      return to_int(ExitCode::kUsage);
    }
    dir = *state + "/sessions";
  }
  auto d = LogDir::open(dir);
  if (!d && d.error().code == Errc::kNotFound && !args.dir) {
    // display-safe: escaped
    std::printf("no session logs: %s does not exist\n", escape_text(dir).c_str());
    return 0;
  }
  if (!d) {
    print_error(d.error().message);
    return to_int(ExitCode::kUsage);
  }
  auto logs = d->logs();
  if (!logs) return report(logs.error());
  const auto old =
      logs_older_than(std::move(*logs), static_cast<std::int64_t>(std::time(nullptr)), *age);
  std::size_t count = 0, failed = 0;
  std::uint64_t bytes = 0;
  // A log's change capture store goes with it (state_size.h): it lives in the default
  // state directory whichever directory the log is in.
  std::string captures;
  if (auto state = vigil_state_dir(std::getenv("XDG_STATE_HOME"), std::getenv("HOME")); state)
    captures = *state + "/captures";
  std::size_t stores = 0;
  for (const auto& e : old) {
    const std::string path = dir + "/" + e.name;
    const auto id = d->session_of(e.name);
    if (!id) {
      print_warning("left " + path +
                    ": it does not begin with a session.start record, so it is not a log "
                    "vigil wrote");
      continue;
    }
    if (!args.dry_run) {
      if (auto r = d->remove(e.name); !r) {
        print_warning(r.error().message);
        ++failed;
        continue;
      }
    }
    if (!captures.empty()) {
      // Every store of the session: its own and, for an agent session, one per command.
      TreeSize store;
      if (auto dirs = capture_dirs_for(*id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME")); dirs) {
        for (const auto& store_dir : *dirs) {
          const TreeSize one = tree_size(store_dir);
          store.entries += one.entries;
          store.bytes += one.bytes;
        }
      }
      if (store.entries > 0 || store.bytes > 0) {
        if (!args.dry_run) {
          if (auto r = remove_capture_store(captures, *id); !r) {
            print_warning(r.error().message);
            ++failed;
          }
        }
        ++stores;
        bytes += store.bytes;
      }
    }
    ++count;
    bytes += e.bytes;
    // display-safe: escaped
    std::printf("%s %s (last written %s, %llu bytes)\n", args.dry_run ? "would remove" : "removed",
                escape_text(path).c_str(), utc(e.mtime).c_str(),
                static_cast<unsigned long long>(e.bytes));
  }
  // display-safe: escaped
  std::printf("%s %zu session logs last written more than %s ago from %s and %zu change "
              "capture store(s) (%llu bytes)%s\n",
              args.dry_run ? "would remove" : "removed", count,
              escape_text(args.older_than).c_str(), escape_text(dir).c_str(), stores,
              static_cast<unsigned long long>(bytes),
              args.dry_run ? "; nothing was removed (--dry-run)" : "");
  return failed == 0 ? 0 : 1;
}

}  // namespace

std::function<int()> add_logs_command(CLI::App& app) {
  auto args = std::make_shared<PruneArgs>();
  auto* logs = app.add_subcommand("logs", "manage the session logs");
  logs->require_subcommand(1);
  auto* p = logs->add_subcommand(
      "prune", "remove the session logs vigil wrote that were last written more than DURATION ago");
  p->add_option("--older-than", args->older_than,
                "DURATION: a whole number and a unit, s m h d or w (7d, 12h)")
      ->required();
  p->add_option("--dir", args->dir,
                "the log directory (default: $XDG_STATE_HOME/vigil/sessions, or "
                "~/.local/state/vigil/sessions)");
  p->add_flag("--dry-run", args->dry_run, "list what would go; remove nothing");
  return [args, p] { return p->parsed() ? prune(*args) : to_int(ExitCode::kUsage); };
}

}  // namespace vigil
