// `vigil replay` through the real binary, on session logs this test writes itself.
//
// The logs are built here line by line, in the canonical form docs/events.md specifies,
// with the hash chain computed by coreutils' sha256sum: an implementation independent of
// vigil's writer (supervisor/log/session_log.cc) and of its SHA-256, so these tests check the
// documented format, not vigil against itself.
//
// The demo session is the README scenario: a write inside the workspace, one outside it
// (twice), one to a mandatory-deny file, an allowed and a refused host.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {

namespace {

std::string sha256_of(const std::string& line) {
  TempDir d;
  write_file(d / "line", line);
  std::string cmd = "sha256sum '" + (d / "line") + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  char buf[65] = {};
  const std::size_t n = std::fread(buf, 1, 64, p);
  ::pclose(p);
  return std::string(buf, n);
}

// A JSON string as vigil's canonical writer spells it (nlohmann, ensure_ascii) for the
// characters these tests use.
std::string js(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\x1b':
        out += "\\u001b";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

class LogText {
 public:
  explicit LogText(std::string session) : session_(std::move(session)) {}
  void add(const std::string& src, const std::string& kind, const std::string& body) {
    const std::size_t seq = lines_.size();
    std::string line = "{\"v\":1,\"seq\":" + std::to_string(seq) +
                       ",\"t\":" + std::to_string(seq * 1000000) + ",\"session\":" + js(session_) +
                       ",\"src\":" + js(src) + ",\"kind\":" + js(kind) +
                       (body.empty() ? "" : "," + body) + ",\"prev\":\"" + prev_ + "\"}";
    prev_ = sha256_of(line);
    lines_.push_back(line);
  }
  const std::vector<std::string>& lines() const { return lines_; }
  std::string text() const {
    std::string t;
    for (const auto& l : lines_) t += l + "\n";
    return t;
  }

 private:
  std::string session_;
  std::string prev_ = std::string(64, '0');
  std::vector<std::string> lines_;
};

std::string fs_write(int pid, const std::string& path, const std::string& resolved,
                     const std::string& verdict, const std::string& reason) {
  return "\"pid\":" + std::to_string(pid) + ",\"syscall\":\"openat\",\"path\":" + js(path) +
         ",\"resolved\":" + js(resolved) + ",\"flags\":577,\"verdict\":" + js(verdict) +
         ",\"reason\":" + js(reason);
}

const std::string kOutsideReason = "outside the writable roots; add it to filesystem.allowWrite";
const std::string kHookReason = "protected path: git hooks run code on the host";

}  // namespace

// The block the demo session's model received (and replay must reproduce).
const std::string kDemoAnnotation =
    "<sandbox_violations>\n"
    "deny write /home/u/other/x.txt (" +
    kOutsideReason +
    ") (x2)\n"
    "deny network-outbound example.org:443 (host is not on the allow list; to allow it, add "
    "\"example.org:443\" to network.allowedDomains)\n"
    "deny write /home/u/proj/.git/hooks/pre-commit (" +
    kHookReason +
    ")\n"
    "</sandbox_violations>\n";

// Also used by replay_html_test.cc. `annotation` replaces the recorded block (to forge
// one); `hostile` adds a write whose path is markup and terminal escapes.
std::vector<std::string> demo_log_lines(const std::string& log_path,
                                        const std::string& annotation = kDemoAnnotation,
                                        bool hostile = false) {
  LogText log("20250101T000000Z-0123456789ab");
  const std::string cmd = "echo hi > ok.txt; echo x > ../other/x.txt; curl https://example.org";
  log.add("supervisor", "session.start",
          "\"argv\":[\"bash\",\"-c\"," + js(cmd) +
              "],\"cwd\":\"/home/u/proj\",\"backend\":\"bwrap\",\"policy_digest\":\"" +
              std::string(64, 'a') +
              "\",\"versions\":{\"vigil\":\"0.1.0\",\"bwrap\":\"0.8.0\",\"kernel\":\"6.1.0\"},"
              "\"log\":" +
              js(log_path));
  log.add(
      "observer", "proc.exec",
      "\"pid\":2,\"ppid\":1,\"argv\":[\"bash\",\"-c\"," + js(cmd) + "],\"cwd\":\"/home/u/proj\"");
  log.add("observer", "fs.write",
          fs_write(2, "ok.txt", "/home/u/proj/ok.txt", "allowed", "writable root"));
  log.add("observer", "fs.write",
          fs_write(2, "../other/x.txt", "/home/u/other/x.txt", "denied", kOutsideReason));
  log.add(
      "observer", "proc.exec",
      "\"pid\":3,\"ppid\":2,\"argv\":[\"curl\",\"https://example.org\"],\"cwd\":\"/home/u/proj\"");
  log.add("proxy", "net.decision",
          "\"proto\":\"connect\",\"host\":\"pypi.org\",\"port\":443,\"verdict\":\"allowed\","
          "\"rule\":\"pypi.org\","
          "\"reason\":\"\"");
  log.add("proxy", "net.decision",
          "\"proto\":\"connect\",\"host\":\"example.org\",\"port\":443,\"verdict\":\"denied\","
          "\"rule\":\"\","
          "\"reason\":\"host is not on the allow list\",\"refused_by\":\"not-allowed\"");
  log.add("observer", "fs.write",
          fs_write(2, ".git/hooks/pre-commit", "/home/u/proj/.git/hooks/pre-commit", "denied",
                   kHookReason));
  log.add("observer", "fs.write",
          fs_write(2, "../other/x.txt", "/home/u/other/x.txt", "denied", kOutsideReason));
  if (hostile) {
    log.add("observer", "fs.write",
            fs_write(2, "<script>alert(1)</script>", "/home/u/proj/\x1b[2J\n\"<b>evil</b>'",
                     "allowed", "writable root"));
    log.add("observer", "proc.exec",
            "\"pid\":4,\"ppid\":2,\"argv\":[\"sh\",\"-c\"," + js("echo a\necho \x1b[2J") +
                "],\"cwd\":\"/home/u/proj\"");
  }
  log.add("supervisor", "io.stderr",
          "\"data\":" + js("bash: ../other/x.txt: Read-only file system\n"));
  log.add("supervisor", "annotation", "\"text\":" + js(annotation));
  log.add(
      "supervisor", "session.end",
      "\"exit_code\":1,\"duration_ns\":123456789,\"counters\":{\"fs.denied\":3,\"net.denied\":1}");
  return log.lines();
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string t;
  for (const auto& l : lines) t += l + "\n";
  return t;
}

std::string write_demo_log(const std::string& path, bool hostile) {
  write_file(path, join_lines(demo_log_lines(path, kDemoAnnotation, hostile)));
  return path;
}

namespace {

TEST(Replay, AnnotateReproducesTheBlockByteForByte) {
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", false);
  auto o = run_vigil({"replay", "--annotate", log}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, kDemoAnnotation);
  EXPECT_EQ(o.err, "");
}

TEST(Replay, AnnotateRefusesARecordedBlockTheEventsDoNotExplain) {
  TempDir d;
  // A consistent chain, but the recorded annotation leaves out a denial.
  const std::string tampered = "<sandbox_violations>\n</sandbox_violations>\n";
  write_file(d / "demo.jsonl", join_lines(demo_log_lines(d / "demo.jsonl", tampered)));
  auto o = run_vigil({"replay", "--annotate", d / "demo.jsonl"}, d.path());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("differs from the one recomputed from the events"), std::string::npos)
      << o.err;
  EXPECT_EQ(o.out, tampered);
}

TEST(Replay, TimelineHasTimePidCommandEventVerdict) {
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", false);
  auto o = run_vigil({"replay", log}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(
      o.out.find("TIME        PID     COMMAND          EVENT                VERDICT   DETAIL"),
      std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("0.003000    2       bash             fs.write             DENIED    write "
                       "/home/u/other/x.txt"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("net.decision         DENIED    connect example.org:443"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("session.end                    exit 1 after 0.123456 s"), std::string::npos)
      << o.out;
}

TEST(Replay, WritesListsEveryAttemptWithItsVerdict) {
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", false);
  auto o = run_vigil({"replay", "--writes", log}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> want = {
      "allowed   write     /home/u/proj/ok.txt  [openat O_WRONLY|O_CREAT|O_TRUNC]  writable root",
      "DENIED    write     /home/u/other/x.txt  [openat O_WRONLY|O_CREAT|O_TRUNC]  " +
          kOutsideReason,
      "DENIED    write     /home/u/proj/.git/hooks/pre-commit  [openat O_WRONLY|O_CREAT|O_TRUNC] "
      " " +
          kHookReason,
  };
  std::size_t at = 0;
  for (const auto& w : want) {
    const auto found = o.out.find(w, at);
    ASSERT_NE(found, std::string::npos) << w << "\n" << o.out;
    at = found;
  }
  std::size_t lines = 0;
  for (const char c : o.out) lines += c == '\n';
  EXPECT_EQ(lines, 6U) << "a header, four attempts and the summary\n" << o.out;
  EXPECT_NE(o.out.find("4 write attempt(s): 3 denied, 0 UNGUARDED (not stopped), 0 QUARANTINED (moved out after "
                       "the command)\n"),
            std::string::npos)
      << o.out;
}

TEST(Replay, NetListsDecisions) {
  TempDir d;
  auto o = run_vigil({"replay", "--net", write_demo_log(d / "demo.jsonl", false)}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // A log without rule ids: the entry as the record names it (no index), or the default.
  EXPECT_NE(o.out.find("allowed   connect  pypi.org:443  network.allowedDomains \"pypi.org\""),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("DENIED    connect  example.org:443  default deny (no "
                       "network.allowedDomains entry matches)  host is not on the allow list"),
            std::string::npos)
      << o.out;
}

TEST(Replay, JsonFiltersRecordsExactly) {
  TempDir d;
  const auto lines = demo_log_lines(d / "demo.jsonl");
  write_file(d / "demo.jsonl", join_lines(lines));
  auto o = run_vigil({"replay", "--json", "net.*", d / "demo.jsonl"}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, lines[5] + "\n" + lines[6] + "\n");
  o = run_vigil({"replay", "--json", "session.end", d / "demo.jsonl"}, d.path());
  EXPECT_EQ(o.out, lines.back() + "\n");
}

TEST(Replay, VerifyAcceptsTheIntactLog) {
  TempDir d;
  auto o = run_vigil({"replay", "--verify", write_demo_log(d / "demo.jsonl", false)}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.substr(0, 44), "ok: 12 records, chain intact, session ended\n") << o.out;
  EXPECT_NE(o.out.find("head "), std::string::npos);
}

TEST(Replay, VerifyFailsAtTheRightRecord) {
  TempDir d;
  const auto lines = demo_log_lines(d / "demo.jsonl");
  struct Case {
    std::string name;
    std::string text;
    std::string expect;  // start of stdout
  };
  auto edited = lines;
  edited[3].replace(edited[3].find("other/x.txt"), 5, "otter");  // one byte: h -> t
  auto reordered = lines;
  std::swap(reordered[5], reordered[6]);
  auto deleted = lines;
  deleted.erase(deleted.begin() + 7);
  const std::string whole = join_lines(lines);
  const std::vector<Case> cases = {
      {"one byte edited in record 3", join_lines(edited),
       "BROKEN at record 3: record 3 was altered"},
      {"records 5 and 6 reordered", join_lines(reordered),
       "BROKEN at record 5: record 5 is out of order"},
      {"record 7 deleted", join_lines(deleted),
       "BROKEN at record 7: the record with seq 7 is missing"},
      {"truncated inside the last record", whole.substr(0, whole.size() - 30),
       "BROKEN at record 11: record 11 is incomplete (no newline)"},
      {"session.end cut off at a line boundary", join_lines({lines.begin(), lines.end() - 1}),
       "INCOMPLETE: intact, but ends without session.end"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    write_file(d / "t.jsonl", c.text);
    auto o = run_vigil({"replay", "--verify", d / "t.jsonl"}, d.path());
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_EQ(o.out.substr(0, c.expect.size()), c.expect) << o.out;
  }
}

TEST(Replay, ViewsOfABrokenLogWarnFirst) {
  TempDir d;
  auto lines = demo_log_lines(d / "demo.jsonl");
  lines[3].replace(lines[3].rfind("other/x.txt"), 5, "otter");  // the resolved path
  write_file(d / "t.jsonl", join_lines(lines));
  auto o = run_vigil({"replay", "--writes", d / "t.jsonl"}, d.path());
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.err.find("warning: this log does not verify (record 3"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("/home/u/otter/x.txt"), std::string::npos);
}

TEST(Replay, HostileLogContentIsEscapedOnTheTerminal) {
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", true);
  for (const char* mode : {"", "--writes"}) {
    SCOPED_TRACE(mode);
    std::vector<std::string> args = {"replay"};
    if (*mode != '\0') args.push_back(mode);
    args.push_back(log);
    auto o = run_vigil(args, d.path());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.find('\x1b'), std::string::npos);
    EXPECT_NE(o.out.find("/home/u/proj/\\x1b[2J\\x0a\"<b>evil</b>'"), std::string::npos) << o.out;
  }
  // argv in the timeline: escaped once (a newline reads \x0a, not \\x0a).
  auto t = run_vigil({"replay", log}, d.path());
  EXPECT_NE(t.out.find("sh -c 'echo a\\x0aecho \\x1b[2J'"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos);
}

TEST(Replay, HtmlReportIsWrittenAndEscaped) {
  TempDir d;
  const std::string log = write_demo_log(d / "demo.jsonl", true);
  auto o = run_vigil({"replay", "--html", d / "report.html", log}, d.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::string h = read_file(d / "report.html");
  EXPECT_NE(
      h.find(
          "<section class=\"denials\" id=\"denials\"><h2>Denied: 3 target(s), 4 attempt(s)</h2>"),
      std::string::npos);
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("<b>evil"), std::string::npos);
  EXPECT_NE(h.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(h.find("hash chain intact, 14 records"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((d / "report.html").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
}

TEST(Replay, UsageErrors) {
  TempDir d;
  auto o = run_vigil({"replay", d / "missing.jsonl"}, d.path());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("cannot open"), std::string::npos) << o.err;
  const std::string log = write_demo_log(d / "demo.jsonl", false);
  o = run_vigil({"replay", "--writes", "--net", log}, d.path());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("at most one of"), std::string::npos) << o.err;
  o = run_vigil({"replay", d.path()}, d.path());
  EXPECT_EQ(o.exit_code, 2) << "a directory is not a log";
}

}  // namespace
}  // namespace vigil::test
