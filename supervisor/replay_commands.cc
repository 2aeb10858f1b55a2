// `vigil replay` for a session of many commands (vigil session / serve / mcp): one
// command's records alone (--command N), and the list of commands with their violations
// that heads the timeline and the HTML report.
#include <map>
#include <vector>

#include "supervisor/annotation.h"
#include "supervisor/replay_command.h"

namespace vigil::replay {
namespace {

struct CommandSummary {
  std::uint64_t id = 0;
  const events::CommandStart* start = nullptr;
  const events::CommandEnd* end = nullptr;
  std::string block;  // its <sandbox_violations>, recomputed from its own events
};

std::vector<CommandSummary> summaries(const LoadedLog& log) {
  std::map<std::uint64_t, CommandSummary> by_id;
  std::map<std::uint64_t, std::vector<events::Event>> evs;
  AnnotationOptions opts;
  for (const auto& r : log.records) {
    const auto& e = r.event;
    if (const auto* s = std::get_if<events::SessionStart>(&e.body)) opts.log_path = s->log;
    if (!e.cmd) continue;
    auto& c = by_id[*e.cmd];
    c.id = *e.cmd;
    if (const auto* s = std::get_if<events::CommandStart>(&e.body)) c.start = s;
    if (const auto* s = std::get_if<events::CommandEnd>(&e.body)) c.end = s;
    evs[*e.cmd].push_back(e);
  }
  std::vector<CommandSummary> out;
  for (auto& [id, c] : by_id) {
    c.block = annotation_from_events(evs[id], opts);
    out.push_back(std::move(c));
  }
  return out;
}

std::string headline(const CommandSummary& c) {
  std::string argv;
  if (c.start != nullptr) {
    for (const auto& a : c.start->argv) argv += (argv.empty() ? "" : " ") + a;
  }
  std::string status = "running or killed";
  if (c.end != nullptr) {
    status = c.end->exit_code ? "exit " + std::to_string(*c.end->exit_code)
                              : "signal " + std::to_string(c.end->signal.value_or(0));
  }
  return "#" + std::to_string(c.id) + "  " + status + "  " + argv.substr(0, 200);
}

}  // namespace

LoadedLog only_command(const LoadedLog& log, std::uint64_t id) {
  LoadedLog out;
  out.lines = log.lines;
  for (const auto& r : log.records) {
    if (r.event.kind() == events::Kind::kSessionStart || r.event.cmd == id) out.records.push_back(r);
  }
  return out;
}

bool has_command(const LoadedLog& log, std::uint64_t id) {
  for (const auto& r : log.records) {
    if (r.event.cmd == id) return true;
  }
  return false;
}

std::string render_commands(const LoadedLog& log) {
  const auto list = summaries(log);
  if (list.empty()) return "";
  std::string out = "COMMANDS (vigil replay LOG --command N shows one)\n";
  for (const auto& c : list) {
    out += "  " + events::escape_for_terminal(headline(c)) + "\n";
    // The block is escaped by construction (annotation.h).
    std::size_t start = 0;
    while (start < c.block.size()) {
      const std::size_t nl = c.block.find('\n', start);
      out += "      " + c.block.substr(start, nl - start) + "\n";
      start = nl == std::string::npos ? c.block.size() : nl + 1;
    }
  }
  return out + "\n";
}

std::string render_commands_html(const LoadedLog& log) {
  const auto list = summaries(log);
  if (list.empty()) return "";
  std::string h = "<section id=\"commands\"><h2>Commands</h2>\n<table>\n"
                  "<tr><th>command</th><th>violations</th></tr>\n";
  for (const auto& c : list) {
    h += "<tr><td>" + events::escape_for_html(headline(c)) + "</td><td><pre>";
    std::size_t start = 0;
    while (start < c.block.size()) {
      const std::size_t nl = c.block.find('\n', start);
      h += events::escape_for_html(c.block.substr(start, nl - start)) + "\n";
      start = nl == std::string::npos ? c.block.size() : nl + 1;
    }
    h += (c.block.empty() ? "none" : "") + std::string("</pre></td></tr>\n");
  }
  return h + "</table></section>\n";
}

}  // namespace vigil::replay
