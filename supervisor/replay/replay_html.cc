// `vigil replay --html OUT`: one self-contained page (replay_command.h), made in one pass
// over the log. Everything it keeps is bounded whatever the log's size: the violations
// (ViolationCollector's caps), the commands (CommandList), the first kHtmlListedRows rows
// of each table and at most kHtmlMaxGroups groups counting the rest, and the first
// kHtmlMaxOutputBytes of each output stream. Whatever a table does not list one by one is
// said, with how many and the view that lists them.
#include <algorithm>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "supervisor/launch/session_base.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using events::escape_for_html;
using events::Event;
using events::Kind;

constexpr std::size_t kHtmlMaxOutputBytes = 65536;  // per stream
constexpr std::size_t kGroupLabelBytes = 300;       // raw bytes of a group's label

// Multi-line text in a <pre>: each line escaped on its own (escape_for_html would turn
// the newline itself into a visible \x0a).
std::string html_pre_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const std::string_view line = std::string_view(text).substr(
        start, nl == std::string::npos ? std::string::npos : nl - start);
    out += escape_for_html(line);
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

std::string verdict_class(const std::string& v) {
  if (v == "denied") return "deny";
  if (v == "ephemeral") return "eph";
  if (v == "allowed") return "ok";
  if (v == kUnguardedWord) return "ung";
  if (v == kQuarantinedWord) return "quar";
  return "";
}

std::string count_of(std::uint64_t n, const char* what) { return std::to_string(n) + " " + what; }

// The rows of one table: the first kHtmlListedRows as they come, the rest counted by a
// group label (raw; escaped when shown), at most kHtmlMaxGroups labels.
class GroupedTable {
 public:
  GroupedTable(std::string head, std::string grouped_by, std::string see)
      : head_(std::move(head)), grouped_by_(std::move(grouped_by)), see_(std::move(see)) {}

  // `tr`: the row's markup (only called while listing()); `label`: its group.
  template <class MakeRow>
  void add(MakeRow&& tr, std::string_view label) {
    if (rows_++ < kHtmlListedRows) {
      listed_ += tr();
      return;
    }
    const std::string key(label.substr(0, kGroupLabelBytes));
    auto it = groups_.find(key);
    if (it != groups_.end()) {
      ++it->second;
    } else if (groups_.size() < kHtmlMaxGroups) {
      groups_.emplace(key, 1);
    } else {
      ++ungrouped_;
    }
  }
  std::uint64_t rows() const { return rows_; }

  // `columns`: of head_, for the "none" row.
  std::string html(std::size_t columns) const {
    std::string s = "<table>\n" + head_ + listed_;
    if (rows_ == 0) {
      s += "<tr><td colspan=\"" + std::to_string(columns) + "\" class=\"none\">none</td></tr>\n";
    }
    s += "</table>\n";
    if (rows_ <= kHtmlListedRows) return s;
    const std::uint64_t rest = rows_ - kHtmlListedRows;
    s += "<div class=\"more\">" + count_of(rest, "more row(s)") + " past the first " +
         std::to_string(kHtmlListedRows) +
         " are not listed one by one: they are counted below by " + grouped_by_ +
         ". Every one: <code>" + see_ + "</code></div>\n";
    std::vector<std::pair<std::string, std::uint64_t>> order(groups_.begin(), groups_.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    s += "<details><summary>" + count_of(rest, "row(s)") + " in " +
         count_of(groups_.size(), "group(s)") + "</summary>\n<table>\n<tr><th>rows</th><th>" +
         grouped_by_ + "</th></tr>\n";
    for (const auto& [label, n] : order) {
      s += "<tr><td>" + std::to_string(n) + "</td><td class=\"p\">" + escape_for_html(label) +
           "</td></tr>\n";
    }
    s += "</table></details>\n";
    if (ungrouped_ > 0) {
      s += "<div class=\"more\">" + count_of(ungrouped_, "row(s)") +
           " fall in no group shown (only " + std::to_string(kHtmlMaxGroups) +
           " groups are kept): <code>" + see_ + "</code> lists them</div>\n";
    }
    return s;
  }

 private:
  std::string head_, grouped_by_, see_;
  std::string listed_;
  std::uint64_t rows_ = 0;
  std::map<std::string, std::uint64_t> groups_;
  std::uint64_t ungrouped_ = 0;
};

const char* const kRowHead =
    "<tr><th>time</th><th>pid</th><th>command</th><th>event</th><th>verdict</th><th>detail</th>"
    "</tr>\n";
const char* const kViolationHead =
    "<tr><th>verdict</th><th>operation</th><th>target</th><th>attempts</th><th>reason</th></tr>\n";

std::string row_html(const Row& r) {
  const std::string cls = verdict_class(r.verdict);
  return "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + "><td>" + seconds(r.t) +
         "</td><td>" + escape_for_html(r.pid) + "</td><td>" + escape_for_html(r.command) +
         "</td><td>" + escape_for_html(r.event) + "</td><td class=\"v\">" +
         escape_for_html(r.verdict) + "</td><td class=\"p\">" + escape_for_html(r.detail) +
         "</td></tr>\n";
}

// One list of the collector (denied, unguarded, quarantined) as a grouped table.
GroupedTable violation_table(const std::deque<Violation>& list, const char* cls,
                             const char* verdict, bool actions, const std::string& see) {
  GroupedTable t(kViolationHead, "directory and cause", see);
  for (const auto& v : list) {
    // A write's words are the block's (plain_actions); a connection or a socket keeps its op.
    const std::string op =
        actions && v.kind == Violation::Kind::kFs ? plain_actions(v.actions) : v.op;
    t.add(
        [&] {
          return std::string("<tr class=\"") + cls + "\"><td class=\"v\">" + verdict + "</td><td>" +
                 escape_for_html(op) + "</td><td class=\"p\">" + escape_for_html(v.target) +
                 "</td><td>" + std::to_string(v.count) + "</td><td>" + escape_for_html(v.reason) +
                 "</td></tr>\n";
        },
        op + " in " + parent_dir(v.target) + "/  (" + v.reason + ")");
  }
  return t;
}

const char* const kStyle =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}\n"
    "header{padding:16px 24px;background:#24292f;color:#fff}\n"
    "header h1{margin:0 0 6px;font-size:20px}\n"
    "header code,header .cmd{font-family:ui-monospace,monospace}\n"
    "section{margin:16px 24px;background:#fff;border:1px solid "
    "#d0d7de;border-radius:6px;overflow:hidden}\n"
    "section h2{margin:0;padding:8px 12px;font-size:16px;background:#eef1f4;border-bottom:1px "
    "solid #d0d7de}\n"
    "section.denials h2{background:DENY;color:#fff}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px}\n"
    "td,th{padding:3px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}\n"
    "td.p{font-family:ui-monospace,monospace;overflow-wrap:anywhere}\n"
    "tr.deny td{background:#fdecea}\n"
    "tr.deny td.v{background:DENY;color:#fff;font-weight:bold}\n"
    "tr.eph td.v{background:#f1c40f}\n"
    "tr.ung td{background:#fff1e0}\n"
    "tr.ung td.v{background:#bc4c00;color:#fff;font-weight:bold}\n"
    "section.unguarded h2{background:#bc4c00;color:#fff}\n"
    "tr.quar td{background:#f3e8fd}\n"
    "tr.quar td.v{background:#6639ba;color:#fff;font-weight:bold}\n"
    "section.quarantined h2{background:#6639ba;color:#fff}\n"
    "tr.ok td.v{color:#1a7f37}\n"
    "pre{margin:0;padding:8px 12px;font:12px/1.35 "
    "ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    ".chain{padding:6px 10px;margin-top:8px;border-radius:4px;display:inline-block}\n"
    ".chain.good{background:#1a7f37}.chain.bad{background:#9a6700}\n"
    ".none{padding:8px 12px;color:#57606a}\n"
    ".more,.cut{padding:8px 12px;background:#fff8c5;font-weight:bold}\n"
    "details{padding:4px 12px}summary{cursor:pointer;padding:4px 0}\n"
    // Filters without a script (the CSP forbids any): checkboxes before every section.
    "input.f{display:none}\n"
    ".bar{margin:12px 24px 0;font-size:13px}.bar label{display:inline-block;margin:0 6px 4px "
    "0;padding:2px 8px;border:1px solid #d0d7de;border-radius:12px;background:#fff;cursor:pointer}\n"
    "#f-ok:checked~section tr.ok,#f-eph:checked~section tr.eph,#f-created:checked~section "
    "details.created,#f-modified:checked~section details.modified,#f-deleted:checked~section "
    "details.deleted,#f-renamed:checked~section details.renamed{display:none}\n"
    "#f-ok:checked~.bar label[for=f-ok],#f-eph:checked~.bar label[for=f-eph],#f-created:checked~.bar "
    "label[for=f-created],#f-modified:checked~.bar label[for=f-modified],#f-deleted:checked~.bar "
    "label[for=f-deleted],#f-renamed:checked~.bar "
    "label[for=f-renamed]{text-decoration:line-through;color:#57606a}\n"
    ".summary{margin-top:8px;font-weight:bold}\n"
    "details.chg{border-top:1px solid #eee}details.chg table{margin:4px 0}\n"
    "span.net{display:inline-block;min-width:70px;font-weight:bold}\n"
    "details.created span.net{color:#1a7f37}details.deleted span.net{color:DENY}\n"
    "details.modified span.net{color:#9a6700}details.renamed span.net{color:#0969da}\n"
    "pre.diff{background:#f6f8fa;border:1px solid #eee;white-space:pre}\n"
    // A whole-width line each (inline-block: the newline after it in the <pre> ends the
    // line, where a block would add an empty one).
    "pre.diff span{display:inline-block;min-width:100%}\n"
    "pre.diff .add{background:#dafbe1}pre.diff .del{background:#ffebe9}\n"
    "pre.diff .hunk{color:#0969da}pre.diff .fh{font-weight:bold}\n"
    ".dsum{padding:4px 12px;font-family:ui-monospace,monospace}\n";

const char* const kFilterInputs =
    "<input type=\"checkbox\" class=\"f\" id=\"f-ok\"><input type=\"checkbox\" class=\"f\" "
    "id=\"f-eph\"><input type=\"checkbox\" class=\"f\" id=\"f-created\"><input "
    "type=\"checkbox\" class=\"f\" id=\"f-modified\"><input type=\"checkbox\" class=\"f\" "
    "id=\"f-deleted\"><input type=\"checkbox\" class=\"f\" id=\"f-renamed\">\n";
const char* const kFilterBar =
    "<div class=\"bar\">hide: <label for=\"f-ok\">allowed rows</label><label "
    "for=\"f-eph\">ephemeral rows</label><label for=\"f-created\">created</label><label "
    "for=\"f-modified\">modified</label><label for=\"f-deleted\">deleted</label><label "
    "for=\"f-renamed\">renamed</label></div>\n";

std::string style() {
  std::string s = kStyle;
  for (auto at = s.find("DENY"); at != std::string::npos; at = s.find("DENY", at))
    s.replace(at, 4, kDenyColour);
  return s;
}

// One stream of the command's output for the report: its first kHtmlMaxOutputBytes, and
// where it was cut, said in the report (issue 19.5: a cut without a marker reads as the
// command having printed nothing more).
class HtmlOutput {
 public:
  void add(const std::string& data) {
    total_ += data.size();
    if (kept_.size() < kHtmlMaxOutputBytes)
      kept_.append(data, 0, std::min(data.size(), kHtmlMaxOutputBytes - kept_.size()));
  }
  std::string html(const char* stream, std::string_view log_name) const {
    if (total_ == 0) return std::string("<pre>(no ") + stream + " recorded)</pre>\n";
    std::string h = "<pre>" + html_pre_lines(kept_) + "</pre>\n";
    if (total_ > kept_.size()) {
      h += std::string("<p class=\"cut\">[") + stream + " truncated at " +
           std::to_string(kept_.size()) + " bytes: " + std::to_string(total_ - kept_.size()) +
           " more bytes of the " +
           std::to_string(total_) + " logged are not shown; <code>vigil replay --json io." +
           stream + " " + escape_for_html(log_name) + "</code> prints them all]</p>\n";
    }
    return h;
  }

 private:
  std::string kept_;
  std::uint64_t total_ = 0;
};

// Everything the page shows, gathered in one pass.
struct Report {
  explicit Report(const std::string& log)
      : files(kRowHead, "directory, verdict and cause", "vigil replay " + log + " --writes"),
        network(kRowHead, "host and verdict", "vigil replay " + log + " --net"),
        timeline(kRowHead, "event and verdict", "vigil replay " + log) {}
  std::string session;
  std::optional<events::SessionStart> start;
  std::optional<events::SessionEnd> end;
  HtmlOutput out_bytes, err_bytes;
  ViolationCollector violations;
  AnnotationCheck ann;
  AnnotationOptions opts;
  CommandList commands;
  RowMaker rows;
  GroupedTable files, network, timeline;
  changes::ChangeSetBuilder changed{session_base_dir()};

  void take(const Event& e) {
    if (session.empty()) session = e.session;
    if (const auto* s = std::get_if<events::SessionStart>(&e.body)) {
      start = *s;
      opts.log_path = s->log;
    }
    if (const auto* s = std::get_if<events::SessionEnd>(&e.body)) end = *s;
    if (const auto* a = std::get_if<events::Annotation>(&e.body)) {
      ann.recorded = true;
      ann.text = a->text;
    }
    if (const auto* s = std::get_if<events::IoStdout>(&e.body)) out_bytes.add(s->data);
    if (const auto* s = std::get_if<events::IoStderr>(&e.body)) err_bytes.add(s->data);
    violations.add(e);
    commands.take(e);
    changed.take(e);
    const Kind k = e.kind();
    if (k == Kind::kIoStdout || k == Kind::kIoStderr) return;
    const Row r = rows.row(e);
    auto tr = [&] { return row_html(r); };
    if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
      files.add(tr, fs_verdict_word(*w) + " " + write_word(*w) + " in " +
                        parent_dir(w->resolved.empty() ? w->path : w->resolved) + "/" +
                        (w->reason.empty() ? "" : "  (" + w->reason + ")"));
    }
    if (const auto* d = std::get_if<events::NetDecision>(&e.body)) {
      network.add(tr, std::string(events::to_string(d->verdict)) + " " + d->host +
                          (d->reason.empty() ? "" : "  (" + d->reason + ")"));
    }
    if (const auto* f = std::get_if<events::NetUpstreamFailure>(&e.body)) {
      network.add(tr, "failed " + f->host + "  (" + f->what + ")");
    }
    timeline.add(tr,
                 std::string(events::to_string(k)) + (r.verdict.empty() ? "" : " " + r.verdict));
  }
};

// The page's head and header: what ran, how it ended, whether the log can be trusted,
// what was not stopped, and the summary.
std::string html_header(const Report& rep, const VerifyReport& verify, const FeedStats& stats,
                        const changes::ChangeSet& changed, const std::string& log) {
  const auto& violations = rep.violations;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  // Belt and braces: nothing in this page is loaded from anywhere or run, even if an
  // escaping bug let markup through.
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'\">\n";
  h += "<title>vigil session " + escape_for_html(rep.session) + "</title>\n<style>\n" + style() +
       "</style></head><body>\n" + kFilterInputs;

  // Header: what ran, how it ended, whether the log can be trusted, what was not stopped.
  h += "<header><h1>vigil session <code>" + escape_for_html(rep.session) + "</code></h1>\n";
  h += "<div>log: <code>" + log + "</code></div>\n";
  if (rep.start) {
    std::string argv;
    for (const auto& a : rep.start->argv) argv += (argv.empty() ? "" : " ") + escape_for_html(a);
    h += "<div>command: <span class=\"cmd\">" + argv + "</span></div>\n";
    h += "<div>cwd: <code>" + escape_for_html(rep.start->cwd) +
         "</code> &middot; backend: " + escape_for_html(rep.start->backend) + " &middot; vigil " +
         escape_for_html(rep.start->versions.vigil) + "</div>\n";
  }
  if (rep.end) {
    h += "<div>ended: " +
         (rep.end->exit_code ? "exit " + std::to_string(*rep.end->exit_code)
                             : "signal " + std::to_string(rep.end->signal.value_or(0))) +
         " after " + seconds(rep.end->duration_ns) + " s</div>\n";
  }
  if (verify.ok && verify.complete) {
    h += "<div class=\"chain good\">hash chain intact, " + std::to_string(verify.records) +
         " records</div>\n";
  } else {
    h +=
        "<div class=\"chain bad\">" +
        (verify.ok ? "hash chain intact but incomplete: " + escape_for_html(verify.why)
                   : "hash chain BROKEN at record " + std::to_string(verify.broken_at.value_or(0)) +
                         ": " + escape_for_html(verify.why)) +
        "</div>\n";
  }
  if (stats.unreadable > 0) {
    h += "<div class=\"chain bad\">" + std::to_string(stats.unreadable) +
         " unreadable line(s) skipped</div>\n";
  }
  if (!violations.quarantined().empty()) {
    h += "<div class=\"chain bad\">" + std::to_string(violations.quarantined().size()) +
         " path(s) QUARANTINED: moved out of the workspace after the command</div>\n";
  }
  if (!violations.unguarded().empty()) {
    h += "<div class=\"chain bad\">" + std::to_string(violations.unguarded().size()) +
         " protected name(s) written and NOT stopped</div>\n";
  }
  // The summary a reader wants first: what was refused, what got through, what changed.
  h += "<div class=\"summary\">" + count_of(violations.denied().size(), "denied") + ", " +
       count_of(violations.unguarded().size(), "unguarded") + ", " +
       count_of(violations.quarantined().size(), "quarantined") + ", " +
       html_changes_summary(changed) + "</div>\n";
  h += "</header>\n";
  return h;
}

// The violation tables: what got through first, then what was refused.
void violation_sections(const ViolationCollector& violations, const std::string& log,
                        const Out& out) {
  std::string h;
  const std::string see_writes = "vigil replay " + log + " --writes";
  // What got through first: quarantined after the command, or not stopped at all.
  if (!violations.quarantined().empty()) {
    const auto t =
        violation_table(violations.quarantined(), "quar", kQuarantinedWord, false, see_writes);
    out("<section class=\"quarantined\" id=\"quarantined\"><h2>Quarantined: " +
        count_of(t.rows(), "path(s) moved out of the workspace") + "</h2>\n" + t.html(5) +
        "</section>\n");
  }
  if (!violations.unguarded().empty()) {
    const auto t = violation_table(violations.unguarded(), "ung", kUnguardedWord, true, see_writes);
    out("<section class=\"unguarded\" id=\"unguarded\"><h2>Not stopped: " +
        count_of(t.rows(), "protected name(s) written") + "</h2>\n" + t.html(5) + "</section>\n");
  }
  // Allowed and only worth knowing: the repositories git made (their hooks and config).
  if (!violations.repositories().empty()) {
    const auto t =
        violation_table(violations.repositories(), "repo", "allowed", true, see_writes);
    out("<section id=\"repositories\"><h2>Allowed, for review: " +
        count_of(t.rows(), "new repositor(y/ies) whose hooks and config git wrote") + "</h2>\n" +
        t.html(5) + "</section>\n");
  }
  // Denials next: what a person opening the report is looking for.
  if (!violations.denied().empty()) {
    const auto t = violation_table(violations.denied(), "deny", "denied", true, see_writes);
    h = "<section class=\"denials\" id=\"denials\"><h2>Denied: " +
        count_of(violations.denied().size(), "target(s), ") +
        count_of(violations.denied_attempts(), "attempt(s)") + "</h2>\n" + t.html(5);
    if (violations.untracked_attempts() > 0) {
      h += "<div class=\"more\">" + count_of(violations.untracked_attempts(), "attempt(s)") +
           " on targets past the first " + std::to_string(kMaxTrackedTargets) +
           " (or their first " + std::to_string(kMaxTrackedBytes >> 20) +
           " MiB) are counted but not named here: <code>" + see_writes +
           "</code> lists every one</div>\n";
    }
    out(h + "</section>\n");
  } else {
    out("<section id=\"denials\"><h2>Denied</h2><div class=\"none\">nothing was "
        "denied</div></section>\n");
  }

}

}  // namespace

Result<void> stream_html(const Feed& feed, const VerifyReport& verify, std::string_view log_name,
                         const Out& out, const std::function<ContentFn(const std::string&)>& store) {
  const std::string log = escape_for_html(log_name);
  Report rep(log);
  auto stats = feed([&](const LogRecord& r) {
    rep.take(r.event);
    return true;
  });
  VIGIL_TRY(stats);
  const auto& violations = rep.violations;
  const changes::ChangeSet changed = rep.changed.finish();
  rep.ann.recomputed = render_annotation(violations, rep.opts);
  rep.ann.match = rep.ann.recomputed == rep.ann.text;
  if (!rep.ann.match) {
    const auto& [a, b] = std::mismatch(rep.ann.text.begin(), rep.ann.text.end(),
                                       rep.ann.recomputed.begin(), rep.ann.recomputed.end());
    (void)b;
    rep.ann.first_difference = static_cast<std::size_t>(a - rep.ann.text.begin());
  }

  out(html_header(rep, verify, *stats, changed, log) + kFilterBar);
  violation_sections(violations, log, out);
  std::string h;
  h = "<section id=\"annotation\"><h2>What the model was told (appended to stderr)</h2>\n";
  if (rep.ann.recorded) {
    h += "<pre>" + html_pre_lines(rep.ann.text) + "</pre>\n";
  } else {
    h += "<div class=\"none\">no annotation: nothing was appended to stderr</div>\n";
  }
  if (!rep.ann.match) {
    h += "<div class=\"chain bad\">the recorded annotation differs from the one recomputed from "
         "the events (first difference at byte " +
         std::to_string(rep.ann.first_difference) + ")</div>\n";
  }
  out(h + "</section>\n");
  const ContentFn no_store = [](const events::FsImage&) {
    return Content{false, {}, "not at hand (no content store given)"};
  };
  out(html_changes_section(changed, store ? store(changed.session) : no_store, log,
                           rep.start ? std::string_view(rep.start->cwd) : std::string_view()));
  out(rep.commands.html());
  out("<section id=\"files\"><h2>Files touched</h2>\n" + rep.files.html(6) + "</section>\n");
  out("<section id=\"network\"><h2>Network decisions</h2>\n" + rep.network.html(6) +
      "</section>\n");
  out("<section id=\"timeline\"><h2>Timeline</h2>\n" + rep.timeline.html(6) + "</section>\n");
  out("<section id=\"output\"><h2>Command output</h2>\n" +
      rep.out_bytes.html("stdout", log_name) + rep.err_bytes.html("stderr", log_name) +
      "</section>\n</body></html>\n");
  return {};
}

std::string render_html(const LoadedLog& log, const VerifyReport& verify,
                        std::string_view log_name) {
  std::string s;
  (void)stream_html(feed_of(log), verify, log_name, append_to(&s));
  return s;
}

}  // namespace vigil::replay
