// The HTML report's Changes section (issue 17): one <details> per changed path, its
// net result, before and after, the process behind it, and its diff inline. Bounded:
// the first kHtmlListedRows paths, each diff cut at kHtmlDiffBytes and all of them at
// kHtmlAllDiffBytes, every cut marked "truncated at N bytes" with the view that shows
// the rest. No script: the filters are checkboxes and CSS (replay_html.cc's bar).
#include <algorithm>

#include "supervisor/replay/line_diff.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using events::escape_for_html;

constexpr std::size_t kHtmlDiffBytes = 64 * 1024;         // of one diff's markup source
constexpr std::size_t kHtmlAllDiffBytes = 4 * 1024 * 1024;  // of every diff in the report
constexpr std::size_t kOpenChanges = 100;

std::string diff_html(const ChangeDiff& d, std::size_t* budget, const std::string& see) {
  std::string h;
  if (!d.summary.empty()) h += "<div class=\"dsum\">" + escape_for_html(d.summary) + "</div>\n";
  if (d.shortened) {
    h += "<div class=\"more\">over 2000 lines differ: the middle is shown replaced whole</div>\n";
  }
  if (d.lines.empty()) return h;
  const std::size_t cap = std::min(kHtmlDiffBytes, *budget);
  std::size_t raw = 0, total = 0;
  for (const std::string& l : d.lines) total += l.size() + 1;
  h += "<pre class=\"diff\">";
  for (const std::string& l : d.lines) {
    if (raw + l.size() + 1 > cap) break;
    raw += l.size() + 1;
    const char* cls = l.starts_with("+++") || l.starts_with("---") ? "fh"
                      : l[0] == '@'                                 ? "hunk"
                      : l[0] == '+'                                 ? "add"
                      : l[0] == '-'                                 ? "del"
                                                                    : "";
    const std::string line = l == kNoNewlineMarker ? l : escape_for_html(l);
    h += *cls != '\0' ? std::string("<span class=\"") + cls + "\">" + line + "</span>\n" : line + "\n";
  }
  h += "</pre>\n";
  *budget -= raw;
  if (raw < total) {
    h += "<p class=\"cut\">[diff truncated at " + std::to_string(raw) + " bytes: " +
         std::to_string(total - raw) + " more bytes of it are not shown; <code>" + see +
         "</code> prints it whole]</p>\n";
  }
  return h;
}

}  // namespace

std::string html_changes_summary(const changes::ChangeSet& cs) {
  std::size_t n[4] = {0, 0, 0, 0};
  for (const auto& c : cs.paths) ++n[static_cast<int>(c.net)];
  return std::to_string(cs.paths.size()) + " path(s) changed: " + std::to_string(n[0]) +
         " created, " + std::to_string(n[1]) + " modified, " + std::to_string(n[2]) +
         " deleted, " + std::to_string(n[3]) + " renamed";
}

std::string html_changes_section(const changes::ChangeSet& cs, const ContentFn& read,
                                 const std::string& log) {
  std::string h = "<section id=\"changes\"><h2>Changes: " + html_changes_summary(cs) + "</h2>\n";
  if (!cs.capture_seen) {
    h += "<div class=\"none\">this log has no change capture (vigil.capture was off, or the log "
         "is older): the changes below come from the write records alone</div>\n";
  }
  if (cs.paths.empty()) h += "<div class=\"none\">nothing changed</div>\n";
  std::size_t budget = kHtmlAllDiffBytes;
  std::size_t listed = 0;
  for (const changes::PathChange& c : cs.paths) {
    if (listed++ == kHtmlListedRows) {
      h += "<div class=\"more\">" + std::to_string(cs.paths.size() - kHtmlListedRows) +
           " more changed path(s) past the first " + std::to_string(kHtmlListedRows) +
           " are not listed: <code>vigil replay --changes " + log + "</code> lists them all</div>\n";
      break;
    }
    const char* net = to_string(c.net);
    const std::string name = c.renamed_from.empty()
                                 ? escape_for_html(c.path)
                                 : escape_for_html(c.renamed_from) + " &rarr; " + escape_for_html(c.path);
    // The first ones open, so that the diffs are on the page as it opens.
    h += std::string("<details class=\"chg ") + net + "\"" + (listed <= kOpenChanges ? " open" : "") +
         "><summary><span class=\"net\">" + net +
         "</span> <code>" + name + "</code></summary>\n<table>\n";
    h += "<tr><th>before</th><td class=\"p\">" +
         escape_for_html(c.before ? describe_state(*c.before) : "unknown") + "</td></tr>\n";
    h += "<tr><th>after</th><td class=\"p\">" +
         escape_for_html(c.after ? describe_state(*c.after) : "unknown") + "</td></tr>\n";
    for (const changes::Step& s : c.steps) {
      h += "<tr><th>" + seconds(s.t) + "</th><td class=\"p\">pid " + std::to_string(s.pid) +
           (s.cmd ? " [command " + std::to_string(*s.cmd) + "]" : "") + " " +
           escape_for_html(s.action + (s.other.empty() ? "" : " " + s.other)) + " [" +
           escape_for_html(s.syscall) + "]" + (s.argv ? " &mdash; " + escape_for_html(*s.argv) : "") +
           "</td></tr>\n";
    }
    if (c.more_steps > 0) {
      h += "<tr><th></th><td>" + std::to_string(c.more_steps) + " more step(s)</td></tr>\n";
    }
    h += "</table>\n";
    const std::string see = "vigil replay --diff " + log + " " + escape_for_html(c.path);
    if (budget == 0) {
      h += "<p class=\"cut\">[diff not shown: the report's diffs are truncated at " +
           std::to_string(kHtmlAllDiffBytes) + " bytes; <code>" + see + "</code> prints it]</p>\n";
    } else {
      h += diff_html(diff_of(c, read), &budget, see);
    }
    h += "</details>\n";
  }
  return h + "</section>\n";
}

}  // namespace vigil::replay
