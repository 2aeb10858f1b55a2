// The `log stream` parser on recorded lines (tests/data/seatbelt/*.log): this session's
// reports become violations; other sessions' reports, other processes' look-alikes,
// banners and garbage do not; malformed input is an error value, never a crash.
#include "seatbelt/log_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "seatbelt/profile_builder.h"

namespace vigil {
namespace {

const std::string kOurs = "vigil_0123456789abcdef";
const std::string kOther = "vigil_fedcba9876543210";
const std::string kDir = std::string(VIGIL_TEST_DATA_DIR) + "/seatbelt/";

using Kind = SeatbeltLogEvent::Kind;
using Target = SeatbeltViolation::Target;

// One expected outcome: an error, or an event of a kind (with the violation's fields).
struct Want {
  char what;  // 'V' violation, 'O' other session, 'I' ignored, 'L' loss, 'E' error
  std::int64_t pid = 0;
  std::string process, operation, target;
  Target kind = Target::kNone;
  std::string host;
  std::uint16_t port = 0;
  std::uint32_t count = 1;
};
Want V(std::int64_t pid, std::string proc, std::string op, std::string target, Target kind,
       std::uint32_t count = 1) {
  return Want{'V', pid, std::move(proc), std::move(op), std::move(target), kind, "", 0, count};
}
Want Net(std::int64_t pid, std::string proc, std::string target, std::string host,
         std::uint16_t port, std::uint32_t count = 1) {
  return Want{'V',
              pid,
              std::move(proc),
              "network-outbound",
              std::move(target),
              Target::kHostPort,
              std::move(host),
              port,
              count};
}
Want only(char what) {
  Want w;
  w.what = what;
  return w;
}
const Want kO = only('O'), kI = only('I'), kL = only('L'), kE = only('E');

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::vector<Result<SeatbeltLogEvent>> run(const std::vector<std::string>& lines,
                                          const std::string& tag = kOurs) {
  SeatbeltLogReader reader(tag);
  std::vector<Result<SeatbeltLogEvent>> out;
  for (const auto& l : lines) {
    for (auto& e : reader.feed(l)) out.push_back(std::move(e));
  }
  for (auto& e : reader.finish()) out.push_back(std::move(e));
  return out;
}

char letter(const Result<SeatbeltLogEvent>& e) {
  if (!e.ok()) return 'E';
  switch (e->kind) {
    case Kind::kViolation:
      return 'V';
    case Kind::kOtherSession:
      return 'O';
    case Kind::kIgnored:
      return 'I';
    case Kind::kLoss:
      return 'L';
  }
  return '?';
}

void expect_events(const std::vector<Result<SeatbeltLogEvent>>& got,
                   const std::vector<Want>& want) {
  std::string got_s, want_s;
  for (const auto& g : got) got_s += letter(g);
  for (const auto& w : want) want_s += w.what;
  ASSERT_EQ(got_s, want_s);
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    if (!got[i].ok()) {
      EXPECT_NE(got[i].error().message.find("seatbelt log: "), std::string::npos);
      continue;
    }
    if (want[i].what != 'V') continue;
    const auto& v = got[i]->violation;
    EXPECT_EQ(v.pid, want[i].pid);
    EXPECT_EQ(v.process, want[i].process);
    EXPECT_EQ(v.operation, want[i].operation);
    EXPECT_EQ(v.target, want[i].target);
    EXPECT_EQ(v.kind, want[i].kind);
    EXPECT_EQ(v.host, want[i].host);
    EXPECT_EQ(v.port, want[i].port);
    EXPECT_EQ(v.count, want[i].count);
  }
}

TEST(SeatbeltLogReport, Grammar) {
  struct Row {
    std::string in;
    std::int64_t pid;
    std::string process, op, target;
    std::uint32_t count;
  } rows[] = {
      {"Sandbox: touch(12) deny(1) file-write-create /a b/c", 12, "touch", "file-write-create",
       "/a b/c", 1},
      {"Sandbox: Google Chrome Helper(7) deny(1) mach-lookup com.x", 7, "Google Chrome Helper",
       "mach-lookup", "com.x", 1},
      {"Sandbox: a (b)(7) deny(1) signal", 7, "a (b)", "signal", "", 1},
      {"Sandbox: qlmanage(37213) deny(1) mach-register com.apple.tsm.portname (per-pid)", 37213,
       "qlmanage", "mach-register", "com.apple.tsm.portname (per-pid)", 1},
      {"1 duplicate report for Sandbox: n(7) deny(1) network-outbound *:443", 7, "n",
       "network-outbound", "*:443", 1},
      {"41 duplicate reports for Sandbox: n(7) deny(1) file-read-data /x", 7, "n", "file-read-data",
       "/x", 41},
      {"Sandbox: p(2147483647) deny(1) file-read-data /x", 2147483647, "p", "file-read-data", "/x",
       1},
  };
  for (const auto& row : rows) {
    auto r = parse_sandbox_report(row.in);
    ASSERT_TRUE(r.ok()) << row.in << ": " << r.error().message;
    EXPECT_EQ(r->pid, row.pid) << row.in;
    EXPECT_EQ(r->process, row.process) << row.in;
    EXPECT_EQ(r->operation, row.op) << row.in;
    EXPECT_EQ(r->target, row.target) << row.in;
    EXPECT_EQ(r->count, row.count) << row.in;
  }
  const std::string bad[] = {
      "Sandbox: p(2147483648) deny(1) file-read-data /x",
      "Sandbox: p(0) deny(1) file-read-data /x",
      "Sandbox: p(-1) deny(1) file-read-data /x",
      "Sandbox: p(1) deny(1) ",
      "Sandbox: p(1) deny(1)",
      "Sandbox: p(1) deny() file-read-data /x",
      "Sandbox: p(1)deny(1) file-read-data /x",
      "Sandbox: p(1) deny(1) file-read-data(x) /x",
      "Sandbox:p(1) deny(1) file-read-data /x",
      "sandbox: p(1) deny(1) file-read-data /x",
      "Sandbox: " + std::string(70, 'n') +
          "(1) deny(1) file-read-data /x",  // no process name is that long
      "Sandbox: p(1) deny(1) file-read-data /x(2) deny(1) file-write-data /y",  // ambiguous
      "0 duplicate reports for Sandbox: p(1) deny(1) file-read-data /x",
      "9999999999 duplicate reports for Sandbox: p(1) deny(1) file-read-data /x",
      "",
      std::string("Sandbox: p(1) deny(1) file-read-data /x\0y", 41),
  };
  for (const auto& in : bad) {
    auto r = parse_sandbox_report(in);
    ASSERT_FALSE(r.ok()) << in;
    EXPECT_TRUE(r.error().message.starts_with("seatbelt log: ")) << r.error().message;
  }
}

TEST(SeatbeltLogReport, TargetKinds) {
  struct Row {
    std::string report;
    Target kind;
    std::string host;
    std::uint16_t port;
  } rows[] = {
      {"Sandbox: c(1) deny(1) network-outbound 93.184.216.34:443", Target::kHostPort,
       "93.184.216.34", 443},
      {"Sandbox: c(1) deny(1) network-outbound [::1]:8080", Target::kHostPort, "::1", 8080},
      {"Sandbox: c(1) deny(1) network-outbound remote:*:443", Target::kHostPort, "*", 443},
      {"Sandbox: c(1) deny(1) network-bind local:*:8080", Target::kHostPort, "*", 8080},
      {"Sandbox: c(1) deny(1) network-outbound localhost:65535", Target::kHostPort, "localhost",
       65535},
      {"Sandbox: c(1) deny(1) network-outbound localhost:65536", Target::kName, "", 0},
      {"Sandbox: c(1) deny(1) network-outbound /private/var/run/mDNSResponder", Target::kPath, "",
       0},
      {"Sandbox: c(1) deny(1) network-outbound evil\"host:443", Target::kName, "", 0},
      {"Sandbox: c(1) deny(1) mach-lookup com.apple.x:1", Target::kName, "", 0},
      {"Sandbox: c(1) deny(1) file-read-data /x:443", Target::kPath, "", 0},
      {"Sandbox: c(1) deny(1) signal", Target::kNone, "", 0},
  };
  for (const auto& row : rows) {
    auto r = parse_sandbox_report(row.report);
    ASSERT_TRUE(r.ok()) << row.report;
    EXPECT_EQ(r->kind, row.kind) << row.report;
    EXPECT_EQ(r->host, row.host) << row.report;
    EXPECT_EQ(r->port, row.port) << row.report;
  }
}

TEST(SeatbeltLogReader, NdjsonSession) {
  expect_events(
      run(read_lines(kDir + "ndjson_session.log")),
      {
          kI,  // the banner
          V(4242, "touch", "file-write-create", "/Users/dev/outside.txt", Target::kPath),
          Net(4243, "curl", "93.184.216.34:443", "93.184.216.34", 443),
          kO,  // another session's tag
          kI,  // written by /usr/bin/logger, not the kernel
          V(4244, "python3.12", "file-write-data", "/Users/dev/proj/.git/hooks/pre-commit",
            Target::kPath, 3),
          V(4245, "sh", "file-write-create", "/Users/dev/proj/x\n" + kOther, Target::kPath),
          kL,
          V(4246, "git", "mach-lookup", "com.apple.SecurityServer", Target::kName),
          kO,  // untagged
          kI,  // not a log event
          V(4247, "com.example (helper)", "file-read-data", "/Users/dev/.ssh/id_ed25519",
            Target::kPath),
          V(4248, "sh", "file-write-data", "/tmp/a) deny(1) b", Target::kPath),
          V(4249, "docker", "network-outbound", "/private/var/run/docker.sock", Target::kPath),
          V(4250, "kill", "signal", "", Target::kNone),
          Net(4251, "curl", "remote:[2606:4700::6810:84e5]:443", "2606:4700::6810:84e5", 443),
          kE,  // ambiguous: a process named to imitate the grammar
          kI,  // the kernel, our tag, but not a report
          V(4253, "ls", "file-read-data", "/Users/dev/Documents", Target::kPath),
          V(4254, "touch", "file-write-create", "/Users/dev/caf\xc3\xa9/\xe2\x82\xac",
            Target::kPath),
      });
}

TEST(SeatbeltLogReader, TheOtherSessionSeesOnlyItsOwn) {
  const auto events = run(read_lines(kDir + "ndjson_session.log"), kOther);
  int violations = 0;
  for (const auto& e : events) {
    if (e.ok() && e->kind == Kind::kViolation) {
      ++violations;
      EXPECT_EQ(e->violation.pid, 5000);
    }
  }
  EXPECT_EQ(violations, 1);
}

TEST(SeatbeltLogReader, NdjsonGarbage) {
  expect_events(run(read_lines(kDir + "ndjson_garbage.log")),
                {
                    kI,  // empty line
                    kE,  // "{"
                    kE,  // truncated JSON
                    kI,  // a JSON array is not an ndjson event line (read as stray text)
                    kE,  // no eventType
                    kE,  // eventType not a string
                    kE,  // eventMessage not a string
                    kI,  // processImagePath null: not provably the kernel
                    kE,  // NUL inside the report
                    kE,  // pid 0
                    kE,  // pid too large
                    kE,  // allow(1)
                    kE,  // no process name
                    kE,  // operation in capitals
                    kE,  // 0 duplicate reports
                    kI,  // "12 duplicates for": not the report grammar
                    kI,  // deep array, as text
                    kE,  // lone UTF-16 surrogate
                    kE,  // deep object without eventType
                    kI,  // control bytes
                    kL,  // duplicate keys: the last one wins, as JSON parsers do
                    kE,  // invalid UTF-8 inside JSON
                    kI,  // a bare report without a header
                });
}

TEST(SeatbeltLogReader, CompactSession) {
  expect_events(run(read_lines(kDir + "compact_session.log")),
                {
                    kI,
                    kI,  // banner, column header
                    V(4242, "touch", "file-write-create", "/Users/dev/outside.txt", Target::kPath),
                    kO,  // another session's report, completed by the next header
                    kI,
                    kI,  // logger's forgery, then our tag on a line of its own
                    kI,
                    kI,  // a process calling itself "kernel" with pid 778
                    V(4245, "sh", "file-write-create", "/Users/dev/proj/x\ny", Target::kPath),
                    Net(4246, "node", "140.82.112.3:443", "140.82.112.3", 443, 2),
                    kO,  // untagged kernel report
                    kI,  // an unrelated kernel message
                    V(4247, "rm", "file-write-unlink", "/Users/dev/proj/.git", Target::kPath),
                });
}

TEST(SeatbeltLogReader, DefaultSyslogAndConsoleStyles) {
  expect_events(run(read_lines(kDir + "text_styles.log")),
                {
                    kI,
                    V(4242, "touch", "file-write-create", "/Users/dev/a.txt", Target::kPath),
                    kI,
                    kI,  // bash's forgery, our tag
                    V(4243, "cp", "file-write-data", "/Users/dev/b.txt", Target::kPath),
                    kI,
                    kI,  // logger's forgery, our tag
                    V(4244, "mv", "file-write-unlink", "/Users/dev/proj/.git/hooks", Target::kPath),
                    kO,
                });
}

TEST(SeatbeltLogReader, OverlongInputIsAnErrorNotACrash) {
  SeatbeltLogReader reader(kOurs);
  auto ev = reader.feed(std::string(kMaxLogLineBytes + 1, 'x'));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_FALSE(ev[0].ok());
  // A report whose message goes on and on: the reader gives up, with an error.
  const std::string header =
      "2025-01-15 10:21:33.123 E  kernel[0:1] Sandbox: sh(1) deny(1) file-read-data /x";
  ev = reader.feed(header);
  EXPECT_TRUE(ev.empty());
  int errors = 0;
  for (int i = 0; i < 1000; ++i) {
    for (auto& e : reader.feed(std::string(100, 'y'))) errors += e.ok() ? 0 : 1;
  }
  EXPECT_EQ(errors, 1);
  EXPECT_TRUE(reader.finish().empty());
  // An ndjson message past the cap, from the kernel.
  std::string big =
      "{\"eventType\":\"logEvent\",\"processImagePath\":\"/kernel\",\"senderImagePath\":\"/S/"
      "Sandbox\","
      "\"eventMessage\":\"Sandbox: sh(1) deny(1) file-read-data /" +
      std::string(kMaxLogLineBytes - 200, 'z') + "\\n" + kOurs + "\"}";
  ev = reader.feed(big);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].ok());  // just under the line cap: parsed
  big.insert(big.size() - 30, std::string(400, 'z'));
  ev = reader.feed(big);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_FALSE(ev[0].ok());
}

TEST(SeatbeltLogReader, TextStyleForgeryIsTheDocumentedLimit) {
  // In the text styles a path containing a newline can imitate a kernel header; the
  // report it forges is attributed to the session whose tag ends the real message (the
  // forger's own session: another session's tag is not the last line). ndjson carries
  // the same message as one JSON string, and the forgery stays inside the target.
  const std::string fake =
      "2025-01-15 10:21:33.200 E  kernel[0:1] (Sandbox) Sandbox: launchd(1) deny(1) "
      "file-write-data /etc/x";
  const std::vector<std::string> text = {
      "2025-01-15 10:21:33.199 E  kernel[0:1] (Sandbox) Sandbox: sh(9) deny(1) file-write-create "
      "/tmp/a",
      fake, kOurs};
  const auto t = run(text);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(letter(t[0]), 'O');  // the real report lost its tag to the forged header
  ASSERT_EQ(letter(t[1]), 'V');
  EXPECT_EQ(t[1]->violation.process, "launchd");

  const std::string json =
      "{\"eventType\":\"logEvent\",\"processImagePath\":\"/kernel\",\"senderImagePath\":"
      "\"/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox\",\"eventMessage\":"
      "\"Sandbox: sh(9) deny(1) file-write-create /tmp/a\\n" +
      fake + "\\n" + kOurs + "\"}";
  const auto j = run({json});
  ASSERT_EQ(j.size(), 1u);
  ASSERT_EQ(letter(j[0]), 'V');
  EXPECT_EQ(j[0]->violation.process, "sh");
  EXPECT_EQ(j[0]->violation.target, "/tmp/a\n" + fake);
}

TEST(SeatbeltLogReader, EmptyTagMatchesNothing) {
  const auto events = run(read_lines(kDir + "ndjson_session.log"), "");
  for (const auto& e : events) {
    if (e.ok()) {
      EXPECT_NE(e->kind, Kind::kViolation);
    }
  }
}

TEST(SeatbeltLogStream, ArgvAsksForThisSessionsKernelReportsAsNdjson) {
  auto argv = log_stream_argv(kOurs);
  ASSERT_TRUE(argv.ok());
  const std::vector<std::string> want = {
      "/usr/bin/log",
      "stream",
      "--style",
      "ndjson",
      "--level",
      "default",
      "--predicate",
      "process == \"kernel\" AND sender == \"Sandbox\" AND eventMessage ENDSWITH \"" + kOurs +
          "\""};
  EXPECT_EQ(*argv, want);
  EXPECT_FALSE(log_stream_argv("bad\" OR 1 == 1 OR \"").ok());
  EXPECT_FALSE(log_stream_argv("").ok());
}

}  // namespace
}  // namespace vigil
