// The HTML report's Changes section (issue 17): one <details> per changed path, its
// net result, before and after, the process behind it, and its diff inline. Bounded:
// the first kHtmlListedRows paths, each diff cut at kHtmlDiffBytes and all of them at
// kHtmlAllDiffBytes, every cut marked "truncated at N bytes" with the view that shows
// the rest. No script: the filters are checkboxes and CSS (replay_html.cc's bar).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "supervisor/core/policy/path_expand.h"

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
constexpr std::size_t kStoreNames = 20;  // names a folded store lists

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

namespace {

// Directory names (or two-component runs) below which a tool keeps a bulk store: a path
// under one is folded into the store's entry.
constexpr std::string_view kStores[] = {".git/objects", "_cacache",     "node_modules",
                                        "__pycache__",  "site-packages", ".cargo/registry",
                                        ".cache"};

// The store `path` lies in (the prefix up to and including the store's name), "" for none.
std::string store_of(std::string_view path) {
  std::size_t best = std::string_view::npos;
  for (std::string_view s : kStores) {
    for (std::size_t at = path.find(s); at != std::string_view::npos; at = path.find(s, at + 1)) {
      const std::size_t end = at + s.size();
      if (at == 0 || path[at - 1] != '/' || end >= path.size() || path[end] != '/') continue;
      best = std::min(best, end);
      break;
    }
  }
  return best == std::string_view::npos ? std::string() : std::string(path.substr(0, best));
}

// The root a path outside the workspace is grouped under: its first two components
// (/tmp/x), three under /home (/home/u/.npm).
std::string outside_root(std::string_view path) {
  const std::size_t want = path.starts_with("/home/") ? 3 : 2;
  std::size_t at = 0;
  for (std::size_t n = 0; n < want; ++n) {
    at = path.find('/', at + 1);
    if (at == std::string_view::npos) return std::string(path);
  }
  return std::string(path.substr(0, at));
}

std::string change_html(const changes::PathChange& c, const ContentFn& read, const std::string& log,
                        std::size_t* budget, bool open) {
  const char* net = to_string(c.net);
  const std::string name = c.renamed_from.empty()
                               ? escape_for_html(c.path)
                               : escape_for_html(c.renamed_from) + " &rarr; " + escape_for_html(c.path);
  std::string h = std::string("<details class=\"chg ") + net + "\"" + (open ? " open" : "") +
                  "><summary><span class=\"net\">" + net + "</span> <code>" + name +
                  "</code></summary>\n<table>\n";
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
  if (*budget == 0) {
    h += "<p class=\"cut\">[diff not shown: the report's diffs are truncated at " +
         std::to_string(kHtmlAllDiffBytes) + " bytes; <code>" + see + "</code> prints it]</p>\n";
  } else {
    h += diff_html(diff_of(c, read), budget, see);
  }
  return h + "</details>\n";
}

// "12 created, 3 modified" of `paths`, the kinds that occur.
std::string counts_of(const std::vector<const changes::PathChange*>& paths) {
  std::size_t n[4] = {0, 0, 0, 0};
  for (const auto* c : paths) ++n[static_cast<int>(c->net)];
  static constexpr const char* kWords[] = {"created", "modified", "deleted", "renamed"};
  std::string out;
  for (int i = 0; i < 4; ++i) {
    if (n[i] > 0) out += (out.empty() ? "" : ", ") + std::to_string(n[i]) + " " + kWords[i];
  }
  return out;
}

}  // namespace

std::vector<ChangeGroup> group_changes(const changes::ChangeSet& cs, std::string_view workspace) {
  std::vector<ChangeGroup> groups;
  std::map<std::string, std::size_t> at;  // root -> group
  for (const changes::PathChange& c : cs.paths) {
    const bool in_ws = !workspace.empty() && path_is_under(c.path, workspace);
    const std::string root = in_ws ? std::string(workspace) : outside_root(c.path);
    auto [it, fresh] = at.emplace(root, groups.size());
    if (fresh) groups.push_back(ChangeGroup{root, in_ws, {}, {}, 0});
    ChangeGroup& g = groups[it->second];
    ++g.total;
    const std::string store = store_of(c.path);
    if (store.empty()) {
      g.paths.push_back(&c);
      continue;
    }
    auto s = std::find_if(g.stores.begin(), g.stores.end(),
                          [&](const ChangeStore& x) { return x.path == store; });
    if (s == g.stores.end()) s = g.stores.insert(g.stores.end(), ChangeStore{store, {}});
    s->paths.push_back(&c);
  }
  // The workspace first, then the other roots by name.
  std::stable_sort(groups.begin(), groups.end(), [](const ChangeGroup& a, const ChangeGroup& b) {
    if (a.workspace != b.workspace) return a.workspace;
    return a.root < b.root;
  });
  return groups;
}

std::string html_changes_section(const changes::ChangeSet& cs, const ContentFn& read,
                                 const std::string& log, std::string_view workspace) {
  std::string h = "<section id=\"changes\"><h2>Changes: " + html_changes_summary(cs) + "</h2>\n";
  if (!cs.capture_seen) {
    h += "<div class=\"none\">this log has no change capture (vigil.capture was off, or the log "
         "is older): the changes below come from the write records alone</div>\n";
  }
  if (cs.paths.empty()) h += "<div class=\"none\">nothing changed</div>\n";
  std::size_t budget = kHtmlAllDiffBytes;
  std::size_t listed = 0;
  for (const ChangeGroup& g : group_changes(cs, workspace)) {
    h += "<h3 class=\"root\">" + std::string(g.workspace ? "workspace " : "") + "<code>" +
         escape_for_html(g.root) + "</code>: " + std::to_string(g.total) + " path(s)</h3>\n";
    // A store is one entry with its counts and its first names; replay --changes has all.
    for (const ChangeStore& s : g.stores) {
      h += "<details class=\"store\"><summary><code>" + escape_for_html(s.path) +
           "</code>: " + std::to_string(s.paths.size()) + " path(s) folded (" +
           escape_for_html(counts_of(s.paths)) + ")</summary>\n<ul>\n";
      for (std::size_t i = 0; i < s.paths.size() && i < kStoreNames; ++i)
        h += "<li><code>" + escape_for_html(s.paths[i]->path) + "</code></li>\n";
      if (s.paths.size() > kStoreNames) {
        h += "<li>" + std::to_string(s.paths.size() - kStoreNames) +
             " more: <code>vigil replay --changes " + log + "</code></li>\n";
      }
      h += "</ul></details>\n";
    }
    for (const changes::PathChange* c : g.paths) {
      if (listed++ == kHtmlListedRows) {
        h += "<div class=\"more\">more changed path(s) past the first " +
             std::to_string(kHtmlListedRows) +
             " are not listed: <code>vigil replay --changes " + log + "</code> lists them all</div>\n";
        return h + "</section>\n";
      }
      // The first ones open, so that the diffs are on the page as it opens.
      h += change_html(*c, read, log, &budget, listed <= kOpenChanges);
    }
  }
  return h + "</section>\n";
}

}  // namespace vigil::replay
