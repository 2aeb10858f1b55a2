// `vigil replay`'s pure views: write actions and flag names, the timeline/writes/net
// text, the annotation check, the JSON filter, and the HTML report's escaping of hostile
// log content (paths that are markup, quotes, newlines, control bytes).
#include <fcntl.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "supervisor/report/annotation.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using namespace vigil::events;

// Builds a LoadedLog in memory the way load_log_text would (lines are the canonical
// serialisation; the chain is not needed by the views).
class LogBuilder {
 public:
  LogBuilder& add(Source src, Body b) {
    Event e;
    e.seq = log_.records.size();
    e.t = e.seq * 1500000;
    e.session = "s-1";
    e.src = src;
    e.prev = std::string(kGenesisPrev);
    e.body = std::move(b);
    log_.records.push_back(LogRecord{log_.records.size(), serialize(e), e});
    ++log_.lines;
    return *this;
  }
  const LoadedLog& log() const { return log_; }
  std::vector<Event> events() const {
    std::vector<Event> out;
    for (const auto& r : log_.records) out.push_back(r.event);
    return out;
  }

 private:
  LoadedLog log_;
};

const std::string kHostile = "/w/<script>alert(\"x\")</script>\n'quoted'&amp;\x1b[31m";

LogBuilder sample() {
  LogBuilder b;
  b.add(
      Source::kSupervisor,
      SessionStart{
          {"bash", "-c", "touch a /etc/x"}, "/w", "bwrap", "", {"0.1.0", "", ""}, "/s.jsonl", {}});
  b.add(Source::kObserver, ProcExec{5, 1, {"/usr/bin/touch", "a", "/etc/x"}, "/w", false});
  b.add(Source::kObserver,
        FsWrite{5, "openat", "a", "/w/a", O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK,
                Verdict::kAllowed, "writable root", "", "", "", ""});
  b.add(Source::kObserver,
        FsWrite{5, "openat", "/etc/x", "/etc/x", O_WRONLY | O_CREAT, Verdict::kDenied,
                "outside the writable roots; add it to filesystem.allowWrite", "", "", "", ""});
  b.add(Source::kObserver,
        FsWrite{5, "renameat2", "b", "/w/b", 0, Verdict::kAllowed, "", "a", "/w/a", "", ""});
  b.add(Source::kObserver,
        FsWrite{5, "openat", kHostile, kHostile, O_WRONLY, Verdict::kDenied, "ro", "", "", "", ""});
  b.add(Source::kProxy, NetDecision{NetProto::kConnect, "example.org", 443, NetVerdict::kDenied, "",
                                    "host is not on the allow list", "not-allowed", "", "", ""});
  b.add(Source::kProxy, NetDecision{NetProto::kHttp, "pypi.org", 80, NetVerdict::kAllowed,
                                    "pypi.org", "", "", "151.101.0.223", "", ""});
  b.add(Source::kSupervisor, IoStderr{"touch: cannot touch '/etc/x': Read-only file system\n"});
  return b;
}

TEST(ReplayViewsTest, WriteActionTable) {
  struct R {
    std::string syscall;
    std::uint64_t flags;
    std::string action;
  };
  for (const R& r : std::vector<R>{
           {"openat", O_WRONLY | O_CREAT | O_TRUNC, "create"},
           {"openat", O_WRONLY | O_TRUNC, "truncate"},
           {"openat", O_RDWR, "write"},
           {"open", O_WRONLY | O_APPEND, "write"},
           {"openat2", O_CREAT | O_EXCL | O_WRONLY, "create"},
           {"creat", 0, "create"},
           {"truncate", 0, "truncate"},
           {"unlinkat", 0, "delete"},
           {"unlinkat", AT_REMOVEDIR, "rmdir"},
           {"unlink", 0, "delete"},
           {"rmdir", 0, "rmdir"},
           {"mkdirat", 0, "mkdir"},
           {"mknodat", 0, "mknod"},
           {"renameat2", 1, "rename"},
           {"rename", 0, "rename"},
           {"linkat", 0, "link"},
           {"symlinkat", 0, "symlink"},
           {"fchmodat", 0, "chmod"},
           {"lchown", 0, "chown"},
           {"utimensat", 0, "touch"},
           {"lsetxattr", 0, "xattr"},
           {"removexattr", 0, "xattr"},
       }) {
    FsWrite w{1, r.syscall, "p", "/p", r.flags, Verdict::kDenied, "", "", "", "", ""};
    EXPECT_EQ(write_action(w), r.action) << r.syscall << " " << r.flags;
  }
}

TEST(ReplayViewsTest, FlagNames) {
  EXPECT_EQ(describe_flags("openat", 0), "");
  EXPECT_EQ(describe_flags("openat", O_WRONLY | O_CREAT | O_TRUNC), "O_WRONLY|O_CREAT|O_TRUNC");
  EXPECT_EQ(describe_flags("openat", O_RDWR | O_APPEND | O_CLOEXEC), "O_RDWR|O_APPEND|O_CLOEXEC");
  EXPECT_EQ(describe_flags("openat", O_CREAT), "O_CREAT") << "O_RDONLY is 0, not named alongside";
  EXPECT_EQ(describe_flags("openat", O_WRONLY | O_TMPFILE), "O_WRONLY|O_DIRECTORY|O_TMPFILE");
  EXPECT_EQ(describe_flags("openat", O_WRONLY | 0x40000000ULL), "O_WRONLY|0x40000000");
  EXPECT_EQ(describe_flags("renameat2", 1), "flags=0x1");
}

TEST(ReplayViewsTest, TimelineShowsTimePidCommandEventVerdict) {
  const std::string t = render_timeline(sample().log());
  EXPECT_NE(t.find("TIME"), std::string::npos);
  EXPECT_NE(
      t.find("0.003000    5       touch            fs.write             allowed   write /w/a"),
      std::string::npos)
      << t;
  EXPECT_NE(
      t.find("DENIED    write /etc/x  [openat O_WRONLY|O_CREAT]  outside the writable roots"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("rename /w/a -> /w/b"), std::string::npos) << t;
  EXPECT_NE(t.find("net.decision         DENIED    connect example.org:443"), std::string::npos)
      << t;
  EXPECT_NE(t.find("io.stderr"), std::string::npos) << t;
  // The hostile path is one escaped line: no raw newline or ESC from the log.
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_NE(t.find("</script>\\x0a'quoted'&amp;\\x1b[31m"), std::string::npos) << t;
  std::size_t lines = 0;
  for (const char c : t) lines += c == '\n';
  EXPECT_EQ(lines, sample().log().records.size() + 1);
}

TEST(ReplayViewsTest, WritesListsEveryAttemptWithItsVerdict) {
  const std::string w = render_writes(sample().log());
  EXPECT_NE(
      w.find(
          "allowed   write     /w/a  [openat O_WRONLY|O_CREAT|O_NOCTTY|O_NONBLOCK]  writable root"),
      std::string::npos)
      << w;
  EXPECT_NE(w.find("DENIED    write     /etc/x  [openat O_WRONLY|O_CREAT]"), std::string::npos)
      << w;
  EXPECT_NE(w.find("allowed   rename    /w/a -> /w/b  [renameat2]"), std::string::npos) << w;
  EXPECT_EQ(w.find("example.org"), std::string::npos) << "writes only";
  EXPECT_EQ(w.find('\x1b'), std::string::npos);
  LogBuilder empty;
  EXPECT_NE(render_writes(empty.log()).find("(no write attempts recorded)"), std::string::npos);
}

TEST(ReplayViewsTest, NetListsDecisions) {
  const std::string n = render_net(sample().log());
  EXPECT_NE(n.find("DENIED    connect  example.org:443  default deny (no network.allowedDomains "
                   "entry matches)  host is not on the allow list"),
            std::string::npos)
      << n;
  // A log without rule ids: the entry as the record names it, without its index.
  EXPECT_NE(n.find("allowed   http     pypi.org:80  network.allowedDomains \"pypi.org\""),
            std::string::npos)
      << n;
}

TEST(ReplayViewsTest, JsonFilter) {
  const auto log = sample().log();
  const std::string fsw = render_json(log, "fs.write");
  std::size_t lines = 0;
  for (const char c : fsw) lines += c == '\n';
  EXPECT_EQ(lines, 4U);
  EXPECT_EQ(fsw.substr(0, fsw.find('\n')), log.records[2].line) << "the exact record line";
  EXPECT_EQ(render_json(log, "net.*").size(),
            log.records[6].line.size() + log.records[7].line.size() + 2);
  EXPECT_EQ(render_json(log, "nothing"), "");
  EXPECT_EQ(render_json(log, "fs"), "") << "a bare prefix is not a kind";
  lines = 0;
  for (const char c : render_json(log, "all")) lines += c == '\n';
  EXPECT_EQ(lines, log.records.size());
}

TEST(ReplayViewsTest, AnnotationCheck) {
  LogBuilder b = sample();
  const std::string block =
      annotation_from_events(b.events(), AnnotationOptions{kAnnotationMaxLines, "/s.jsonl"});
  ASSERT_FALSE(block.empty());
  b.add(Source::kSupervisor, Annotation{block, false});
  b.add(Source::kSupervisor, SessionEnd{1, std::nullopt, 5, {}, {}, {}});
  AnnotationCheck c = check_annotation(b.log());
  EXPECT_TRUE(c.recorded);
  EXPECT_TRUE(c.match);
  EXPECT_EQ(c.text, block);

  LogBuilder forged = sample();
  forged.add(Source::kSupervisor, Annotation{block + "deny nothing\n", false});
  c = check_annotation(forged.log());
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.first_difference, block.size());

  LogBuilder missing = sample();
  c = check_annotation(missing.log());
  EXPECT_FALSE(c.recorded);
  EXPECT_FALSE(c.match) << "denials but no annotation record";

  LogBuilder quiet;
  quiet.add(Source::kSupervisor, SessionStart{{"true"}, "/", "bwrap", "", {}, "", {}});
  c = check_annotation(quiet.log());
  EXPECT_TRUE(c.match) << "nothing denied, nothing appended";
}

// ---- HTML -------------------------------------------------------------------------------

std::string html_of(const LogBuilder& b) {
  VerifyReport v;
  v.ok = true;
  v.complete = true;
  v.records = b.log().records.size();
  return render_html(b.log(), v, "/s/<log>.jsonl");
}

TEST(ReplayViewsTest, HtmlEscapesEverythingFromTheLog) {
  LogBuilder b = sample();
  b.add(Source::kObserver,
        ProcExec{9, 5, {"<img src=x onerror=alert(1)>", "\" onmouseover=\"x"}, "/w/'><b>", false});
  b.add(Source::kProxy, NetDecision{NetProto::kHttp, "<iframe>", 80, NetVerdict::kDenied,
                                    "</td></tr>", "<style>", "", "", "", ""});
  b.add(Source::kSupervisor, IoStdout{"<script>document.write(1)</script>\n\x1b]0;title\x07"});
  const std::string h = html_of(b);
  for (const char* raw : {"<script", "<img", "<iframe", "</script", "<b>", "onerror=alert(1)>",
                          "\" onmouseover", "\x1b", "\x07", "'>"}) {
    EXPECT_EQ(h.find(raw), std::string::npos) << "raw from the log: " << raw;
  }
  EXPECT_NE(h.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/"
                   "script&gt;\\x0a&#39;quoted&#39;&amp;amp;\\x1b[31m"),
            std::string::npos);
  EXPECT_NE(h.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(h.find("&quot;&lt;/td&gt;&lt;/tr&gt;&quot;"), std::string::npos)
      << "a rule that closes our table cell";
  EXPECT_NE(h.find("/s/&lt;log&gt;.jsonl"), std::string::npos);
  // Exactly our own markup: one <style>, no <script>, no external reference.
  std::size_t styles = 0;
  for (std::size_t at = h.find("<style"); at != std::string::npos; at = h.find("<style", at + 1))
    ++styles;
  EXPECT_EQ(styles, 1U);
  for (const char* external : {"http://", "https://", "src=\"", "href", "@import", "url("}) {
    EXPECT_EQ(h.find(external), std::string::npos) << external;
  }
  EXPECT_NE(h.find("Content-Security-Policy"), std::string::npos);
}

// Issue 19.5: the report shows the first 64 KiB of each stream and says where it cut the
// rest (it used to stop without a word, as if the command had printed nothing more).
TEST(ReplayViewsTest, HtmlSaysWhereItCutTheOutput) {
  LogBuilder b = sample();
  for (int i = 0; i < 3; ++i) b.add(Source::kSupervisor, IoStdout{std::string(40000, 'a')});
  const std::string h = html_of(b);
  EXPECT_NE(h.find("[stdout truncated at 65536 bytes: 54464 more bytes of the 120000 logged are not shown; "
                   "<code>vigil replay --json io.stdout /s/&lt;log&gt;.jsonl</code> prints them "
                   "all]"),
            std::string::npos)
      << h.substr(h.find("id=\"output\""));
  const std::size_t first = h.find(std::string(100, 'a'));
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(h.find_first_not_of('a', first) - first, 65536U) << "exactly the first 64 KiB";
  // Under the cap nothing is cut, and nothing says so.
  EXPECT_EQ(h.find("stderr truncated at"), std::string::npos);
  EXPECT_EQ(html_of(sample()).find("truncated at"), std::string::npos);
  EXPECT_NE(html_of(LogBuilder()).find("(no stdout recorded)"), std::string::npos);
}

TEST(ReplayViewsTest, HtmlHighlightsDenials) {
  const std::string h = html_of(sample());
  EXPECT_NE(h.find(std::string("section.denials h2{background:") + std::string(kDenyColour)),
            std::string::npos);
  EXPECT_NE(
      h.find(
          "<section class=\"denials\" id=\"denials\"><h2>Denied: 3 target(s), 3 attempt(s)</h2>"),
      std::string::npos)
      << h;
  EXPECT_NE(h.find("<tr class=\"deny\"><td class=\"v\">denied</td><td>write</td><td "
                   "class=\"p\">/etc/x</td>"),
            std::string::npos);
  EXPECT_NE(h.find("id=\"files\""), std::string::npos);
  EXPECT_NE(h.find("id=\"network\""), std::string::npos);
  EXPECT_NE(h.find("id=\"timeline\""), std::string::npos);

  LogBuilder quiet;
  quiet.add(Source::kSupervisor, SessionStart{{"true"}, "/", "bwrap", "", {}, "", {}});
  const std::string q = html_of(quiet);
  EXPECT_NE(q.find("nothing was denied"), std::string::npos);
  EXPECT_EQ(q.find("class=\"denials\""), std::string::npos);
}

TEST(ReplayViewsTest, HtmlSaysWhenTheChainIsBroken) {
  VerifyReport v;
  v.ok = false;
  v.broken_at = 4;
  v.why = "record 4 was altered <b>";
  const std::string h = render_html(sample().log(), v, "x");
  EXPECT_NE(h.find("hash chain BROKEN at record 4: record 4 was altered &lt;b&gt;"),
            std::string::npos);
}

TEST(ReplayViewsTest, VerifyText) {
  VerifyReport ok;
  ok.ok = true;
  ok.complete = true;
  ok.records = 9;
  ok.head = std::string(64, 'a');
  // An unkeyed log (older than sealing) says so, on a line of its own.
  EXPECT_EQ(render_verify(ok),
            "ok: 9 records, chain intact, session ended\nUNKEYED: this log names "
            "no key (written before vigil sealed its logs, or not by vigil): "
            "the chain shows it is one unbroken sequence, but nothing proves "
            "it is not a replacement\nhead " +
                ok.head + "\n");
  ok.key_id = "0123456789abcdef";
  ok.why = "sealed with key 0123456789abcdef, but there is no key to check the seal with";
  EXPECT_EQ(render_verify(ok), "ok: 9 records, chain intact, session ended\nUNCHECKED: " + ok.why +
                                   "\nhead " + ok.head + "\n");
  ok.sealed = true;
  EXPECT_EQ(render_verify(ok),
            "ok: 9 records, chain intact, session ended\nsealed: the seal matches this user's key "
            "0123456789abcdef\nhead " +
                ok.head + "\n");
  VerifyReport bad;
  bad.broken_at = 3;
  bad.why = "record 3 was altered\x1b[2J";
  EXPECT_EQ(render_verify(bad), "BROKEN at record 3: record 3 was altered\\x1b[2J\n");
}

}  // namespace
}  // namespace vigil::replay

namespace vigil::replay {
namespace {

// docs/events.md's example session is a real log: it verifies, every kind appears, and
// its annotation record is what the events produce.
TEST(ReplayViewsTest, TheDocumentedExampleLogIsValid) {
  const std::string doc_path = std::string(VIGIL_TEST_DATA_DIR) + "/../../docs/events.md";
  auto doc = read_log_file(doc_path);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const auto begin = doc->find("```jsonl\n");
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc->find("```", begin + 9);
  ASSERT_NE(end, std::string::npos);
  const std::string text = doc->substr(begin + 9, end - begin - 9);
  const VerifyReport v = verify_log_text(text);
  EXPECT_TRUE(v.ok) << v.why;
  EXPECT_TRUE(v.complete);
  const LoadedLog log = load_log_text(text);
  EXPECT_TRUE(log.unreadable.empty());
  std::set<Kind> kinds;
  for (const auto& r : log.records) kinds.insert(r.event.kind());
  EXPECT_EQ(kinds.size(), 10U) << "an example of every kind";
  const AnnotationCheck c = check_annotation(log);
  EXPECT_TRUE(c.recorded);
  EXPECT_TRUE(c.match) << c.recomputed;
}

}  // namespace
}  // namespace vigil::replay

namespace vigil::replay {
namespace {

// Issue 21.1: every view marks a write that was not stopped (an allowed write into a
// protected name no mount guarded): a verdict of its own, a colour, and a count.
TEST(ReplayViewsTest, EveryViewMarksUnguardedWrites) {
  LogBuilder b;
  b.add(Source::kSupervisor,
        SessionStart{{"sh", "-c", "x"}, "/w", "bwrap", "", {"0.1.0", "", ""}, "/s.jsonl"});
  b.add(Source::kObserver,
        FsWrite{5, "openat", "sub/.vscode/tasks.json", "/w/sub/.vscode/tasks.json",
                O_WRONLY | O_CREAT, Verdict::kAllowed, "writable root", "", "", ".vscode"});
  b.add(Source::kObserver, FsWrite{5, "openat", "/etc/x", "/etc/x", O_WRONLY, Verdict::kDenied,
                                   "outside", "", "", ""});
  const std::string w = render_writes(b.log());
  EXPECT_NE(w.find("UNGUARDED write     /w/sub/.vscode/tasks.json"), std::string::npos) << w;
  EXPECT_NE(w.find("NOT STOPPED: protected name .vscode"), std::string::npos) << w;
  EXPECT_NE(w.find("2 write attempt(s): 1 denied, 1 UNGUARDED (not stopped)"), std::string::npos)
      << w;
  const std::string t = render_timeline(b.log());
  EXPECT_NE(t.find("fs.write             UNGUARDED write /w/sub/.vscode/tasks.json"),
            std::string::npos)
      << t;
  VerifyReport v;
  v.ok = true;
  v.complete = true;
  const std::string h = render_html(b.log(), v, "x");
  EXPECT_NE(h.find("1 protected name(s) written and NOT stopped"), std::string::npos);
  EXPECT_NE(h.find("<section class=\"unguarded\" id=\"unguarded\"><h2>Not stopped: 1"),
            std::string::npos);
  EXPECT_NE(h.find("<tr class=\"ung\"><td class=\"v\">UNGUARDED</td>"), std::string::npos);
  EXPECT_NE(h.find("tr.ung td.v{background:#bc4c00"), std::string::npos);
  EXPECT_LT(h.find("id=\"unguarded\""), h.find("id=\"denials\"")) << "not stopped comes first";
}

}  // namespace
}  // namespace vigil::replay

namespace vigil::replay {
namespace {

// The report's header for a log whose chain checked out.
VerifyReport intact_chain() {
  VerifyReport v;
  v.ok = true;
  v.complete = true;
  return v;
}

// What the post-run backstop moved out of the workspace is marked in every view: a verdict
// of its own, a colour and a count in the summary.
TEST(ReplayViewsTest, EveryViewMarksQuarantinedWrites) {
  LogBuilder b;
  b.add(Source::kSupervisor,
        SessionStart{{"sh", "-c", "x"}, "/w", "bwrap", "", {"0.1.0", "", ""}, "/s.jsonl"});
  b.add(Source::kObserver,
        FsWrite{5, "openat", ".git/hooks/pre-commit", "/w/.git/hooks/pre-commit",
                O_WRONLY | O_CREAT, Verdict::kAllowed, "writable root", "", "", ""});
  b.add(Source::kSupervisor, FsQuarantine{"/w/.git/hooks/pre-commit", "git-hook",
                                          "git runs it on the host", "/q/pre-commit"});
  const std::string w = render_writes(b.log());
  EXPECT_NE(w.find("QUARANTINED moved     /w/.git/hooks/pre-commit  [git-hook]  git runs it on "
                   "the host  -> /q/pre-commit"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("1 write attempt(s): 0 denied, 0 UNGUARDED (not stopped), 1 QUARANTINED"),
            std::string::npos)
      << w;
  const std::string t = render_timeline(b.log());
  EXPECT_NE(t.find("fs.quarantine        QUARANTINED /w/.git/hooks/pre-commit (git-hook"),
            std::string::npos)
      << t;
  const std::string h = render_html(b.log(), intact_chain(), "x");
  EXPECT_NE(h.find("1 path(s) QUARANTINED: moved out of the workspace after the command"),
            std::string::npos);
  EXPECT_NE(h.find("<section class=\"quarantined\" id=\"quarantined\"><h2>Quarantined: 1"),
            std::string::npos);
  EXPECT_NE(h.find("<tr class=\"quar\"><td class=\"v\">QUARANTINED</td><td>git-hook</td>"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("tr.quar td.v{background:#6639ba"), std::string::npos);
  EXPECT_LT(h.find("id=\"quarantined\""), h.find("id=\"denials\""));
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Issue 21.7: a table longer than kHtmlListedRows lists that many rows, then counts the rest
// by directory and cause in a <details>, and says how many rows are not listed and which
// view lists them: nothing is left out silently.
TEST(ReplayViewsTest, HtmlGroupsWhatItDoesNotListAndSaysSo) {
  LogBuilder b;
  b.add(Source::kSupervisor,
        SessionStart{{"sh", "-c", "x"}, "/w", "bwrap", "", {"0.1.0", "", ""}, "/s.jsonl"});
  const std::size_t n = kHtmlListedRows + 700;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string dir = i % 7 == 0 ? "/etc/seven" : "/usr/lib/rest";
    const std::string p = dir + "/f" + std::to_string(i);
    b.add(Source::kObserver, FsWrite{5, "openat", p, p, O_WRONLY | O_CREAT, Verdict::kDenied,
                                     "read-only <mount>", "", "", ""});
  }
  const std::string h = render_html(b.log(), intact_chain(), "/l/s.jsonl");
  // The denied table, the files table and the timeline (session.start, then denials)
  // each list their first rows.
  EXPECT_EQ(count(h, "<tr class=\"deny\">"), 3 * kHtmlListedRows - 1);
  const std::string more = " more row(s) past the first " + std::to_string(kHtmlListedRows) +
                           " are not listed one by one";
  EXPECT_EQ(count(h, "<div class=\"more\">700" + more), 2U) << "denied and files";
  EXPECT_EQ(count(h, "<div class=\"more\">701" + more), 1U) << "the timeline";
  EXPECT_NE(h.find("Every one: <code>vigil replay /l/s.jsonl --writes</code>"), std::string::npos);
  EXPECT_NE(h.find("Every one: <code>vigil replay /l/s.jsonl</code>"), std::string::npos);
  // The 700 rows past the listed ones, by directory and cause (the cause escaped).
  std::size_t seven = 0;
  for (std::size_t i = kHtmlListedRows; i < n; ++i) seven += i % 7 == 0 ? 1 : 0;
  EXPECT_NE(h.find("<details><summary>700 row(s) in 2 group(s)</summary>"), std::string::npos);
  EXPECT_NE(h.find("<tr><td>" + std::to_string(seven) +
                   "</td><td class=\"p\">write in /etc/seven/  (read-only &lt;mount&gt;)</td>"),
            std::string::npos)
      << h.substr(h.find("<details>"), 800);
  EXPECT_NE(h.find("<tr><td>" + std::to_string(700 - seven) +
                   "</td><td class=\"p\">denied write in /usr/lib/rest/  (read-only "
                   "&lt;mount&gt;)</td>"),
            std::string::npos);
  EXPECT_EQ(h.find("<script"), std::string::npos);
}

// Past kHtmlMaxGroups groups, the rest is counted and the view that lists it named.
TEST(ReplayViewsTest, HtmlSaysHowManyRowsFitNoGroup) {
  LogBuilder b;
  b.add(Source::kSupervisor, SessionStart{{"true"}, "/", "bwrap", "", {}, "", {}});
  const std::size_t n = kHtmlListedRows + kHtmlMaxGroups + 30;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string p = "/d" + std::to_string(i) + "/f";
    b.add(Source::kObserver,
          FsWrite{5, "openat", p, p, O_WRONLY, Verdict::kDenied, "ro", "", "", ""});
  }
  const std::string h = render_html(b.log(), intact_chain(), "L");
  EXPECT_NE(h.find("<div class=\"more\">30 row(s) fall in no group shown (only " +
                   std::to_string(kHtmlMaxGroups) +
                   " groups are kept): <code>vigil replay L --writes</code> lists them</div>"),
            std::string::npos);
}

// A session of more commands than the list holds counts the rest.
TEST(ReplayViewsTest, CommandListCountsWhatItDoesNotList) {
  LogBuilder b;
  b.add(Source::kSupervisor, SessionStart{{"true"}, "/", "bwrap", "", {}, "", {}});
  LoadedLog log = b.log();
  for (std::uint64_t c = 1; c <= kMaxListedCommands + 5; ++c) {
    Event e;
    e.seq = log.records.size();
    e.session = "s-1";
    e.prev = std::string(kGenesisPrev);
    e.cmd = c;
    e.body = CommandStart{{"echo", std::to_string(c)}, "/"};
    log.records.push_back(LogRecord{log.records.size(), serialize(e), e});
  }
  const std::string t = render_timeline(log);
  EXPECT_NE(t.find("#" + std::to_string(kMaxListedCommands) + "  running or killed  echo"),
            std::string::npos);
  EXPECT_EQ(t.find("#" + std::to_string(kMaxListedCommands + 1) + "  "), std::string::npos);
  EXPECT_NE(t.find("5 more command(s) not listed (the first " + std::to_string(kMaxListedCommands) +
                   " are)"),
            std::string::npos);
  EXPECT_TRUE(has_command(log, kMaxListedCommands + 5));
  EXPECT_FALSE(has_command(log, kMaxListedCommands + 6));
}

}  // namespace
}  // namespace vigil::replay

namespace vigil::replay {
namespace {

// Issue 38.7: the timeline is causal. vigil-init records an exec once it has happened,
// which can reach the log after the new program's first output: an output row is never
// listed before an exec record that follows it with nothing else between.
TEST(ReplayViewsCausalTest, OutputIsNeverListedBeforeTheExecThatFollowsIt) {
  LogBuilder b;
  b.add(Source::kSupervisor,
        SessionStart{{"sh", "-c", "x"}, "/w", "bwrap", "", {"0.1.0", "", ""}, "/s.jsonl", {}});
  b.add(Source::kObserver, ProcExec{5, 1, {"/bin/sh", "-c", "x"}, "/w", false});
  b.add(Source::kSupervisor, IoStderr{"Cloning into 'copy'...\n"});
  b.add(Source::kSupervisor, IoStdout{"more\n"});
  b.add(Source::kObserver, ProcExec{6, 5, {"/usr/bin/git", "clone"}, "/w", false});
  b.add(Source::kObserver, FsWrite{6, "mkdirat", "copy", "/w/copy", 0, Verdict::kAllowed,
                                   "writable root", "", "", "", ""});
  b.add(Source::kSupervisor, IoStderr{"done.\n"});
  const std::string t = render_timeline(b.log());
  const auto at = [&](const std::string& s) {
    const auto p = t.find(s);
    EXPECT_NE(p, std::string::npos) << s << "\n" << t;
    return p;
  };
  EXPECT_LT(at("/usr/bin/git clone"), at("Cloning into")) << t;
  EXPECT_LT(at("Cloning into"), at("more")) << "output keeps its own order";
  EXPECT_LT(at("more"), at("/w/copy")) << "any other record lets the output go";
  EXPECT_LT(at("/w/copy"), at("done.")) << t;
  EXPECT_LT(at("/bin/sh -c x"), at("Cloning into")) << t;
}

}  // namespace
}  // namespace vigil::replay
