// `vigil replay`'s options (CLI11): parsed here, run by replay/ (run_replay), which knows
// nothing of the command line's library.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "supervisor/replay/replay_command.h"

namespace vigil {

std::function<int()> add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "replay", "show a session log: timeline, annotation, writes, network, report");
  cmd->add_option("log", args->log, "the session log (.jsonl)")->required();
  cmd->add_option("paths", args->paths,
                  "with --changes/--diff: only these paths (a directory: everything below it)");
  cmd->add_flag("--changes", args->changes,
                "what the session changed, per path: created, modified, deleted, renamed, with "
                "sizes, hashes, modes and the process behind each step");
  cmd->add_flag("--diff", args->diff,
                "the content of each change: a unified diff for text, sizes and hashes otherwise");
  cmd->add_flag(
      "--annotate", args->annotate,
      "print the <sandbox_violations> block the model received, and check it against the events");
  cmd->add_flag("--writes", args->writes,
                "every path created, written, renamed or deleted, with its verdict");
  cmd->add_flag("--net", args->net, "the network decisions");
  cmd->add_flag("--verify", args->verify,
                "check the hash chain; exit 1 and name the first broken record");
  cmd->add_option("--command", args->command,
                  "a session's command N only (its id: command.start's cmd)");
  cmd->add_option("--json", args->json,
                  "print the records of KIND (fs.write, net.*, all) as JSON lines");
  cmd->add_option("--html", args->html, "write a self-contained HTML report to OUT");
  cmd->add_option("--policy", args->policy,
                  "judge every write and connection again under the settings file NEW.json and "
                  "list what would change, with the deciding rule on each side");
  return [args] { return run_replay(*args); };
}

}  // namespace vigil
