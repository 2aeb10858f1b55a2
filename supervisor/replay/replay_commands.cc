// `vigil replay` for a session of many commands (vigil session / serve / mcp): whether
// command N is in the log (--command N), and the list of commands with their violations
// that heads the timeline and the HTML report.
#include <string>
#include <vector>

#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {

struct CommandList::Entry {
  std::uint64_t id = 0;
  std::vector<std::string> argv;  // command.start's (bounded by the schema's limits)
  std::optional<events::CommandEnd> end;
  ViolationCollector violations;
};

CommandList::CommandList() = default;
CommandList::~CommandList() = default;

void CommandList::take(const events::Event& e) {
  if (const auto* s = std::get_if<events::SessionStart>(&e.body)) opts_.log_path = s->log;
  if (!e.cmd) return;
  auto it = listed_.find(*e.cmd);
  if (it == listed_.end()) {
    if (listed_.size() >= kMaxListedCommands) {
      if (e.kind() == events::Kind::kCommandStart) ++unlisted_;
      return;
    }
    it = listed_.emplace(*e.cmd, std::make_unique<Entry>()).first;
    it->second->id = *e.cmd;
  }
  Entry& c = *it->second;
  if (const auto* s = std::get_if<events::CommandStart>(&e.body)) c.argv = s->argv;
  if (const auto* s = std::get_if<events::CommandEnd>(&e.body)) c.end = *s;
  c.violations.add(e);
}

namespace {

std::string headline(std::uint64_t id, const std::vector<std::string>& argv,
                     const std::optional<events::CommandEnd>& end) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
  std::string status = "running or killed";
  if (end) {
    status = end->exit_code ? "exit " + std::to_string(*end->exit_code)
                            : "signal " + std::to_string(end->signal.value_or(0));
  }
  return "#" + std::to_string(id) + "  " + status + "  " + line.substr(0, 200);
}

std::string more_commands(std::uint64_t n) {
  return std::to_string(n) + " more command(s) not listed (the first " +
         std::to_string(kMaxListedCommands) + " are): vigil replay LOG --command N shows one";
}

}  // namespace

std::string CommandList::text() const {
  if (listed_.empty()) return "";
  std::string out = "COMMANDS (vigil replay LOG --command N shows one)\n";
  for (const auto& [id, c] : listed_) {
    out += "  " + events::escape_for_terminal(headline(id, c->argv, c->end)) + "\n";
    // The block is escaped by construction (annotation.h).
    const std::string block = render_annotation(c->violations, opts_);
    std::size_t start = 0;
    while (start < block.size()) {
      const std::size_t nl = block.find('\n', start);
      out += "      " + block.substr(start, nl - start) + "\n";
      start = nl == std::string::npos ? block.size() : nl + 1;
    }
  }
  if (unlisted_ > 0) out += "  " + more_commands(unlisted_) + "\n";
  return out + "\n";
}

std::string CommandList::html() const {
  if (listed_.empty()) return "";
  std::string h =
      "<section id=\"commands\"><h2>Commands</h2>\n<table>\n"
      "<tr><th>command</th><th>violations</th></tr>\n";
  for (const auto& [id, c] : listed_) {
    h += "<tr><td>" + events::escape_for_html(headline(id, c->argv, c->end)) + "</td><td><pre>";
    const std::string block = render_annotation(c->violations, opts_);
    std::size_t start = 0;
    while (start < block.size()) {
      const std::size_t nl = block.find('\n', start);
      h += events::escape_for_html(block.substr(start, nl - start)) + "\n";
      start = nl == std::string::npos ? block.size() : nl + 1;
    }
    h += (block.empty() ? "none" : "") + std::string("</pre></td></tr>\n");
  }
  if (unlisted_ > 0) {
    h += "<tr><td colspan=\"2\" class=\"more\">" +
         events::escape_for_html(more_commands(unlisted_)) + "</td></tr>\n";
  }
  return h + "</table></section>\n";
}

Result<bool> has_command(const Feed& feed, std::uint64_t id) {
  bool found = false;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    found = r.event.cmd == id;
    return !found;
  }));
  return found;
}

Result<Feed> command_feed(Feed feed, std::uint64_t id, const std::string& log) {
  bool found = false, any = false;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    any = any || r.event.cmd.has_value();
    found = r.event.cmd == id;
    return !found;
  }));
  if (found) return only_command(std::move(feed), id);
  // A `vigil run` log is one command: its records carry no id, and it is command 1.
  if (!any && id == 1) return feed;
  return make_error(Errc::kNotFound, log + " has no command " + std::to_string(id) +
                                         (any ? " (`vigil replay " + log + "` lists its commands)"
                                              : " (a `vigil run` log has one command: 1)"));
}

bool has_command(const LoadedLog& log, std::uint64_t id) {
  auto r = has_command(feed_of(log), id);
  return r && *r;
}

}  // namespace vigil::replay
