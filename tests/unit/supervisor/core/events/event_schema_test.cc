// Event schema v1: the untrusted-line parser as a table of valid, malformed, forged and
// unsupported lines from the sandbox; round trips through the canonical serialisation;
// the canonical-form check on log records; byte strings (UTF-8 or base64); the display
// escapes; the bounded line splitter.
#include "supervisor/core/events/event_schema.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::events {
namespace {

enum class Expect { kOk, kMalformed, kForged, kUnsupported };

struct Row {
  std::string name;
  std::string line;
  Expect expect;
};

// A valid fs.write with one field replaced or added: `extra` is spliced in before the
// closing brace, `drop` removes a field by name.
std::string fs_write(const std::string& extra = "", const std::string& drop = "") {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"kind", R"("fs.write")"},     {"pid", "42"},
      {"syscall", R"("openat")"},    {"path", R"("../x.txt")"},
      {"resolved", R"("/w/x.txt")"}, {"flags", "577"},
      {"verdict", R"("denied")"},    {"reason", R"("read-only file system")"},
  };
  std::string out = "{";
  for (const auto& [k, v] : fields) {
    if (k == drop) continue;
    if (out.size() > 1) out += ",";
    out += "\"" + k + "\":" + v;
  }
  if (!extra.empty()) out += "," + extra;
  return out + "}";
}

// fs.write with field `key` set to `value` (replacing it).
std::string fs_with(const std::string& key, const std::string& value) {
  return fs_write("\"" + key + "\":" + value, key);
}

const std::string kExec =
    R"({"kind":"proc.exec","pid":7,"ppid":1,"argv":["/bin/sh","-c","echo hi"],"cwd":"/w"})";
const std::string kStats = R"({"kind":"observer.stats","events":10,"dropped":0,"held":2})";

std::vector<Row> rows() {
  std::string many_args = R"({"kind":"proc.exec","pid":7,"ppid":1,"cwd":"/w","argv":[)";
  for (int i = 0; i < 257; ++i) many_args += (i ? ",\"a\"" : "\"a\"");
  many_args += "]}";
  std::string max_args = R"({"kind":"proc.exec","pid":7,"ppid":1,"cwd":"/w","argv":[)";
  for (int i = 0; i < 256; ++i) max_args += (i ? ",\"a\"" : "\"a\"");
  max_args += "]}";

  return {
      // --- valid -----------------------------------------------------------------------
      {"fs.write minimal", fs_write(), Expect::kOk},
      {"fs.write with v 1", fs_write(R"("v":1)"), Expect::kOk},
      {"fs.write allowed", fs_with("verdict", R"("allowed")"), Expect::kOk},
      {"fs.write ephemeral", fs_with("verdict", R"("ephemeral")"), Expect::kOk},
      {"fs.write rename with from", fs_write(R"("from":"a","from_resolved":"/w/a")"), Expect::kOk},
      {"fs.write unresolved (empty resolved)", fs_with("resolved", R"("")"), Expect::kOk},
      {"fs.write empty path as read", fs_with("path", R"("")"), Expect::kOk},
      {"fs.write non-UTF-8 path as b64", fs_with("path", R"({"b64":"/2E="})"), Expect::kOk},
      {"fs.write unicode escape path", fs_with("path", R"("caf\u00e9")"), Expect::kOk},
      {"fs.write path of exactly 4096 bytes", fs_with("path", "\"" + std::string(4096, 'p') + "\""),
       Expect::kOk},
      {"fs.write flags 0", fs_with("flags", "0"), Expect::kOk},
      {"fs.write every trapped syscall name: unlinkat", fs_with("syscall", R"("unlinkat")"),
       Expect::kOk},
      {"fs.write fchmodat2", fs_with("syscall", R"("fchmodat2")"), Expect::kOk},
      {"proc.exec", kExec, Expect::kOk},
      {"proc.exec with b64 arg and truncated",
       R"({"kind":"proc.exec","pid":7,"ppid":0,"argv":[{"b64":"/w=="}],"cwd":"/","truncated":true})",
       Expect::kOk},
      {"proc.exec 256 args (the limit)", max_args, Expect::kOk},
      {"observer.stats", kStats, Expect::kOk},
      {"whitespace around tokens",
       " { \"kind\" : \"observer.stats\", \"events\":1,\"dropped\":0,\"held\":0 } ", Expect::kOk},

      // --- malformed -------------------------------------------------------------------
      {"empty line", "", Expect::kMalformed},
      {"not JSON", "hello", Expect::kMalformed},
      {"array, not object", "[1,2]", Expect::kMalformed},
      {"string, not object", R"("fs.write")", Expect::kMalformed},
      {"trailing garbage", fs_write() + "x", Expect::kMalformed},
      {"two objects on one line", fs_write() + fs_write(), Expect::kMalformed},
      {"truncated object", fs_write().substr(0, 30), Expect::kMalformed},
      {"missing kind", fs_write("", "kind"), Expect::kMalformed},
      {"kind not a string", fs_with("kind", "3"), Expect::kMalformed},
      {"missing pid", fs_write("", "pid"), Expect::kMalformed},
      {"pid as string", fs_with("pid", R"("42")"), Expect::kMalformed},
      {"pid zero", fs_with("pid", "0"), Expect::kMalformed},
      {"pid negative", fs_with("pid", "-5"), Expect::kMalformed},
      {"pid above PID_MAX_LIMIT", fs_with("pid", "4194305"), Expect::kMalformed},
      {"pid float", fs_with("pid", "42.0"), Expect::kMalformed},
      {"pid exponent", fs_with("pid", "4e1"), Expect::kMalformed},
      {"pid huge", fs_with("pid", "99999999999999999999999"), Expect::kMalformed},
      {"syscall not trapped (read)", fs_with("syscall", R"("read")"), Expect::kMalformed},
      {"syscall with text appended", fs_with("syscall", R"("openat /etc/passwd")"),
       Expect::kMalformed},
      {"verdict unknown", fs_with("verdict", R"("maybe")"), Expect::kMalformed},
      {"verdict wrong case", fs_with("verdict", R"("DENIED")"), Expect::kMalformed},
      {"path 4097 bytes", fs_with("path", "\"" + std::string(4097, 'p') + "\""),
       Expect::kMalformed},
      {"path with escaped NUL", fs_with("path", R"("a\u0000b")"), Expect::kMalformed},
      {"b64 path decoding to NUL", fs_with("path", R"({"b64":"AA=="})"), Expect::kMalformed},
      {"b64 not base64", fs_with("path", R"({"b64":"!!!!"})"), Expect::kMalformed},
      {"b64 wrong length", fs_with("path", R"({"b64":"abc"})"), Expect::kMalformed},
      {"b64 non-canonical padding bits", fs_with("path", R"({"b64":"/x=="})"), Expect::kMalformed},
      {"b64 object with extra key", fs_with("path", R"({"b64":"/w==","x":1})"), Expect::kMalformed},
      {"path as number", fs_with("path", "5"), Expect::kMalformed},
      {"resolved relative", fs_with("resolved", R"("w/x")"), Expect::kMalformed},
      {"from_resolved relative", fs_write(R"("from":"a","from_resolved":"a")"), Expect::kMalformed},
      {"unknown field", fs_write(R"("extra":1)"), Expect::kMalformed},
      {"duplicate key (verdict twice)", fs_write(R"("verdict":"allowed")"), Expect::kMalformed},
      {"nesting too deep", fs_with("path", "[[[[[[1]]]]]]"), Expect::kMalformed},
      {"flags negative", fs_with("flags", "-1"), Expect::kMalformed},
      {"flags float", fs_with("flags", "1.5"), Expect::kMalformed},
      {"reason too long", fs_with("reason", "\"" + std::string(1025, 'r') + "\""),
       Expect::kMalformed},
      {"raw control byte in a string", fs_with("reason", "\"a\nb\""), Expect::kMalformed},
      {"raw invalid UTF-8 in a string", fs_with("path", "\"\xff\xfe\""), Expect::kMalformed},
      {"lone surrogate escape", fs_with("path", R"("\ud800")"), Expect::kMalformed},
      {"line over 64 KiB", fs_with("reason", "\"" + std::string(70000, 'r') + "\""),
       Expect::kMalformed},
      {"argv with 257 entries", many_args, Expect::kMalformed},
      {"argv entry a number", R"({"kind":"proc.exec","pid":7,"ppid":1,"argv":[1],"cwd":"/w"})",
       Expect::kMalformed},
      {"argv not an array", R"({"kind":"proc.exec","pid":7,"ppid":1,"argv":"sh","cwd":"/w"})",
       Expect::kMalformed},
      {"argv entry over 16 KiB",
       R"({"kind":"proc.exec","pid":7,"ppid":1,"argv":[")" + std::string(16385, 'a') +
           R"("],"cwd":"/w"})",
       Expect::kMalformed},
      {"truncated not a bool",
       R"({"kind":"proc.exec","pid":7,"ppid":1,"argv":[],"cwd":"/w","truncated":"yes"})",
       Expect::kMalformed},
      {"observer.stats negative", R"({"kind":"observer.stats","events":-1,"dropped":0,"held":0})",
       Expect::kMalformed},
      {"observer.stats missing held", R"({"kind":"observer.stats","events":1,"dropped":0})",
       Expect::kMalformed},
      {"JSON null", "null", Expect::kMalformed},
      // --- net.unix: the unix-socket broker's record (observer/unix_broker.h) ------------
      {"net.unix",
       R"({"kind":"net.unix","pid":7,"syscall":"connect","type":"SOCK_STREAM","path":"a.sock","resolved":"/w/a.sock","verdict":"denied","reason":"r","result":"EACCES"})",
       Expect::kOk},
      {"net.unix relative resolved",
       R"({"kind":"net.unix","pid":7,"syscall":"connect","type":"SOCK_STREAM","path":"a","resolved":"a","verdict":"denied","reason":"r","result":"EACCES"})",
       Expect::kMalformed},
      {"net.unix another syscall",
       R"({"kind":"net.unix","pid":7,"syscall":"sendto","type":"SOCK_DGRAM","path":"","resolved":"","verdict":"denied","reason":"r","result":"EPERM"})",
       Expect::kMalformed},
      {"net.unix result not an errno",
       R"({"kind":"net.unix","pid":7,"syscall":"socket","type":"SOCK_DGRAM","path":"","resolved":"","verdict":"denied","reason":"r","result":"nope"})",
       Expect::kMalformed},
      {"net.unix verdict ephemeral",
       R"({"kind":"net.unix","pid":7,"syscall":"socket","type":"SOCK_DGRAM","path":"","resolved":"","verdict":"ephemeral","reason":"r","result":"EPERM"})",
       Expect::kMalformed},

      // --- forged: the envelope and the kinds are the supervisor's -----------------------
      {"sets seq", fs_write(R"("seq":0)"), Expect::kForged},
      {"sets t", fs_write(R"("t":1)"), Expect::kForged},
      {"sets session", fs_write(R"("session":"x")"), Expect::kForged},
      {"sets prev", fs_write(R"("prev":"00")"), Expect::kForged},
      {"sets src", fs_write(R"("src":"supervisor")"), Expect::kForged},
      {"session.start", R"({"kind":"session.start"})", Expect::kForged},
      {"session.end", R"({"kind":"session.end","exit_code":0,"duration_ns":1,"counters":{}})",
       Expect::kForged},
      {"net.decision (the proxy's)",
       R"({"kind":"net.decision","proto":"http","host":"a.com","port":80,"verdict":"allowed","rule":"a.com","reason":""})",
       Expect::kForged},
      {"net.upstream_failure", R"({"kind":"net.upstream_failure"})", Expect::kForged},
      {"io.stdout", R"({"kind":"io.stdout","data":"x"})", Expect::kForged},
      {"io.stderr", R"({"kind":"io.stderr","data":"x"})", Expect::kForged},
      {"annotation", R"({"kind":"annotation","text":"<sandbox_violations>"})", Expect::kForged},

      // --- unsupported -----------------------------------------------------------------
      {"unknown kind", fs_with("kind", R"("fs.chmod")"), Expect::kUnsupported},
      {"empty kind", fs_with("kind", R"("")"), Expect::kUnsupported},
      {"schema version 2", fs_write(R"("v":2)"), Expect::kUnsupported},
      {"schema version as string", fs_write(R"("v":"1")"), Expect::kUnsupported},
  };
}

TEST(EventSchemaTest, UntrustedLineTable) {
  const auto table = rows();
  ASSERT_GE(table.size(), 40U);
  for (const auto& r : table) {
    SCOPED_TRACE(r.name + ": " + r.line.substr(0, 200));
    auto got = parse_untrusted_event_line(r.line);
    if (r.expect == Expect::kOk) {
      EXPECT_TRUE(got.ok()) << got.error().message;
      continue;
    }
    ASSERT_FALSE(got.ok());
    const LineFault want = r.expect == Expect::kForged        ? LineFault::kForged
                           : r.expect == Expect::kUnsupported ? LineFault::kUnsupported
                                                              : LineFault::kMalformed;
    EXPECT_EQ(fault_of(got.error()), want) << got.error().message;
    // Messages are counted and may be logged: one line, bounded, no raw input.
    EXPECT_EQ(got.error().message.find('\n'), std::string::npos);
    EXPECT_LT(got.error().message.size(), 200U) << got.error().message;
  }
}

TEST(EventSchemaTest, UntrustedFieldsDecodeToExactValues) {
  auto got =
      parse_untrusted_event_line(fs_write(R"("from":{"b64":"/2E="},"from_resolved":"/w/a")"));
  ASSERT_TRUE(got.ok()) << got.error().message;
  const auto& w = std::get<FsWrite>(*got);
  EXPECT_EQ(w.pid, 42);
  EXPECT_EQ(w.syscall, "openat");
  EXPECT_EQ(w.path, "../x.txt");
  EXPECT_EQ(w.resolved, "/w/x.txt");
  EXPECT_EQ(w.flags, 577U);
  EXPECT_EQ(w.verdict, Verdict::kDenied);
  EXPECT_EQ(w.reason, "read-only file system");
  EXPECT_EQ(w.from,
            "\xff"
            "a");
  EXPECT_EQ(w.from_resolved, "/w/a");

  auto exec = parse_untrusted_event_line(kExec);
  ASSERT_TRUE(exec.ok());
  EXPECT_EQ(std::get<ProcExec>(*exec).argv, (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));
}

TEST(EventSchemaTest, ErrorMessagesDoNotEchoHostileKeys) {
  auto got = parse_untrusted_event_line(fs_write(R"("\u001b[2J\nforged":1)"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message.find('\x1b'), std::string::npos);
  EXPECT_EQ(got.error().message.find('\n'), std::string::npos);
  EXPECT_NE(got.error().message.find("\\x1b"), std::string::npos) << got.error().message;
}

// One event of every kind, with awkward bytes where the kind allows them.
std::vector<Event> one_of_each() {
  std::vector<Event> evs;
  auto add = [&](Source src, Body b) {
    Event e;
    e.seq = evs.size();
    e.t = evs.size() * 1000;
    e.session = "20250101T000000Z-abcdef012345";
    e.src = src;
    e.prev = std::string(kGenesisPrev);
    e.body = std::move(b);
    evs.push_back(std::move(e));
  };
  add(Source::kSupervisor, SessionStart{{"bash", "-c", "touch /x; caf\xc3\xa9"},
                                        "/w",
                                        "bwrap",
                                        std::string(64, 'a'),
                                        {"0.1.0", "0.8.0", "6.1.0"},
                                        "/s/x.jsonl", {}});
  add(Source::kObserver, ProcExec{7, 1, {"/bin/touch", "\xff\xfe"}, "/w", true});
  add(Source::kObserver,
      FsWrite{7, "renameat2", "b", "/w/b", 1, Verdict::kDenied, "nope", "a", "/w/a", "", ""});
  add(Source::kObserver,
      FsWrite{7, "openat", "\x80x", "", 0x241, Verdict::kEphemeral, "", "", "", "", ""});
  add(Source::kObserver, FsWrite{7, "mkdir", "s/.vscode", "/w/s/.vscode", 0, Verdict::kAllowed,
                                 "on a writable mount", "", "", ".vscode", ""});
  add(Source::kProxy, NetDecision{NetProto::kConnect, "example.org", 443, NetVerdict::kDenied, "",
                                  "not allowed", "not-allowed", "", "", ""});
  add(Source::kProxy, NetDecision{NetProto::kSocks5, "::1", 22, NetVerdict::kAllowed, "*.x", "", "",
                                  "::1", "", ""});
  add(Source::kProxy, NetUpstreamFailure{NetProto::kHttp, "a.b", 80, "", "connection refused"});
  add(Source::kSupervisor, IoStdout{std::string("bin\0ary\n\xff", 9)});
  add(Source::kSupervisor, IoStderr{"plain text\n"});
  add(Source::kObserver, ObserverStats{3, 1, 2});
  add(Source::kSupervisor,
      Annotation{"<sandbox_violations>\ndeny x\n</sandbox_violations>\n", true});
  add(Source::kSupervisor,
      SessionEnd{std::nullopt, 9, 12345, {{"fs.denied", 2}, {"lines.forged", 1}}, {}, {}});
  add(Source::kSupervisor, SessionEnd{0, std::nullopt, 1, {}, {}, {}});
  add(Source::kSupervisor, FsQuarantine{"/w/r/.git/hooks/post-checkout", "git-hook",
                                        "git runs it", "/s/vigil/quarantine/id/1"});
  add(Source::kSupervisor, FsQuarantine{"/w/\xff/.bashrc", ".bashrc", "not moved", ""});
  add(Source::kProxy, NetAsk{3, NetProto::kConnect, "pypi.org", 443, "151.101.0.223", 60000});
  add(Source::kSupervisor,
      NetAskAnswer{3, "always", "pypi.org:443", "/w/sandbox.json", "", "tty"});
  add(Source::kSupervisor, NetAskAnswer{4, "deny", "", "", "not an answer: \"\xff\"", "client"});
  add(Source::kSupervisor, NetAskAnswer{5, "timeout", "", "", "", ""});
  add(Source::kSupervisor, LimitReached{"pids", "the sandbox reached its cap of 64 \xff"});
  add(Source::kObserver, NetUnix{7, "connect", "SOCK_STREAM", "rel/\xff.sock", "/w/rel/\xff.sock",
                                 NetVerdict::kDenied, "not listed", "EACCES"});
  add(Source::kObserver, NetUnix{7, "socket", "SOCK_DGRAM", "", "", NetVerdict::kDenied, "datagram", "EPERM"});
  add(Source::kSupervisor, CommandCancel{"client", "notifications/cancelled", "stop \xff", 2000});
  add(Source::kSupervisor, CommandCancel{"disconnect", "eof", "", 2000});
  NetRequest req{"GET", "api.example.com", 443, "/v1/x?k=[redacted]", 200, 12, 340, true,
                 NetVerdict::kAllowed, "", ""};
  add(Source::kProxy, req);
  req.verdict = NetVerdict::kDenied;
  req.status = 403;
  req.rule = "vigil.network.requestRules[0]";
  req.reason = "DELETE /v1/x is not allowed \xff";
  add(Source::kProxy, req);
  return evs;
}

// net.request is the proxy's: a sandbox's line claiming one is a forgery.
TEST(EventSchemaTest, NetRequestIsTheProxysAndNeverTheSandboxs) {
  auto forged = parse_untrusted_event_line(
      R"({"kind":"net.request","method":"GET","host":"h","port":1,"path":"/","status":200,"bytes_up":0,"bytes_down":0,"secret_injected":false,"verdict":"allowed"})");
  ASSERT_FALSE(forged);
  EXPECT_EQ(fault_of(forged.error()), LineFault::kForged);
}

TEST(EventSchemaTest, EveryKindRoundTripsThroughTheCanonicalLine) {
  for (const auto& e : one_of_each()) {
    SCOPED_TRACE(to_string(e.kind()));
    const std::string line = serialize(e);
    for (const char c : line) {
      ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "the log is printable ASCII: " << line;
    }
    auto back = parse_log_record(line);
    ASSERT_TRUE(back.ok()) << back.error().message << "\n" << line;
    EXPECT_EQ(*back, e);
    EXPECT_EQ(serialize(*back), line);
  }
}

TEST(EventSchemaTest, QuarantineIsTheSupervisorsAndChecked) {
  // The observer can never claim one: only the supervisor's backstop moves things.
  auto forged = parse_untrusted_event_line(
      R"({"kind":"fs.quarantine","path":"/w/x","rule":".bashrc","reason":"r"})");
  ASSERT_FALSE(forged);
  EXPECT_EQ(fault_of(forged.error()), LineFault::kForged);
  const Limits lim;
  EXPECT_FALSE(validate(Body{FsQuarantine{"rel/x", ".bashrc", "r", ""}}, lim).ok());
  EXPECT_FALSE(validate(Body{FsQuarantine{"/w/x", ".bashrc", "r", "rel"}}, lim).ok());
  EXPECT_FALSE(validate(Body{FsQuarantine{"/w/x", ".bashrc", std::string(2000, 'r'), ""}}, lim).ok());
  EXPECT_TRUE(validate(Body{FsQuarantine{"/w/x", ".bashrc", "r", "/q/1"}}, lim).ok());
}

TEST(EventSchemaTest, LimitReachedIsTheSupervisorsAndChecked) {
  auto forged = parse_untrusted_event_line(R"({"kind":"limit.reached","limit":"pids","detail":"d"})");
  ASSERT_FALSE(forged);
  EXPECT_EQ(fault_of(forged.error()), LineFault::kForged);
  const Limits lim;
  EXPECT_FALSE(validate(Body{LimitReached{"", "d"}}, lim).ok());
  EXPECT_FALSE(validate(Body{LimitReached{"pids", std::string(2000, 'd')}}, lim).ok());
  EXPECT_TRUE(validate(Body{LimitReached{"memory", "d"}}, lim).ok());
}

// vigil.observer.reads: the observer may send fs.read, checked like fs.write.
TEST(EventSchemaTest, FsReadFromTheObserverIsParsedAndChecked) {
  const std::string line =
      R"({"kind":"fs.read","pid":7,"syscall":"openat","path":".ssh/id_x","resolved":"/h/.ssh/id_x","reason":"hidden by filesystem.denyRead[0]"})";
  auto ok = parse_untrusted_event_line(line);
  ASSERT_TRUE(ok) << ok.error().message;
  const auto* r = std::get_if<FsRead>(&*ok);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(*r, (FsRead{7, "openat", ".ssh/id_x", "/h/.ssh/id_x", "hidden by filesystem.denyRead[0]"}));
  struct Bad {
    const char* line;
    const char* why;
  };
  const Bad bad[] = {
      {R"({"kind":"fs.read","pid":7,"syscall":"unlink","path":"x","resolved":"/x","reason":"r"})",
       "syscall"},
      {R"({"kind":"fs.read","pid":7,"syscall":"creat","path":"x","resolved":"/x","reason":"r"})",
       "syscall"},
      {R"({"kind":"fs.read","pid":7,"syscall":"openat","path":"x","resolved":"x","reason":"r"})",
       "absolute"},
      {R"({"kind":"fs.read","pid":0,"syscall":"openat","path":"x","resolved":"/x","reason":"r"})",
       "pid"},
      {R"({"kind":"fs.read","pid":7,"syscall":"openat","path":"x","resolved":"/x","reason":"r","verdict":"allowed"})",
       "verdict"},
  };
  for (const auto& b : bad) {
    auto got = parse_untrusted_event_line(b.line);
    ASSERT_FALSE(got) << b.line;
    EXPECT_NE(got.error().message.find(b.why), std::string::npos) << got.error().message;
  }
  Event e;
  e.session = "s1";
  e.src = Source::kObserver;
  e.prev = std::string(kGenesisPrev);
  e.body = *r;
  auto back = parse_log_record(serialize(e));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, e);
}

TEST(EventSchemaTest, CanonicalLineLayout) {
  Event e;
  e.seq = 3;
  e.t = 99;
  e.session = "s1";
  e.src = Source::kObserver;
  e.prev = std::string(kGenesisPrev);
  e.body = FsWrite{42, "openat", "x", "/w/x", 577, Verdict::kDenied, "r", "", "", "", ""};
  EXPECT_EQ(
      serialize(e),
      R"({"v":1,"seq":3,"t":99,"session":"s1","src":"observer","kind":"fs.write","pid":42,"syscall":"openat",)"
      R"("path":"x","resolved":"/w/x","flags":577,"verdict":"denied","reason":"r","prev":")" +
          std::string(kGenesisPrev) + R"("})");
}

TEST(EventSchemaTest, LogRecordsMustBeCanonical) {
  Event e = one_of_each()[2];
  const std::string good = serialize(e);
  ASSERT_TRUE(parse_log_record(good).ok());
  struct Edit {
    std::string name;
    std::string line;
  };
  std::string reordered = good;
  // Swap "v":1 and "seq":2 -> keys out of order.
  reordered.replace(0, std::string(R"({"v":1,"seq":2,)").size(), R"({"seq":2,"v":1,)");
  std::string spaced = good;
  spaced.insert(1, " ");
  std::string b64_for_utf8 = good;
  b64_for_utf8.replace(b64_for_utf8.find(R"("path":"b")"), 10, R"("path":{"b64":"Yg=="})");
  // A ProcExec with truncated=false spelled out (the writer omits a false flag).
  Event exec = one_of_each()[1];
  std::get<ProcExec>(exec.body).truncated = false;
  std::string explicit_default = serialize(exec);
  const std::size_t prev_field = explicit_default.size() - 1 - (9 + 64 + 1);  // ,"prev":"<64 hex>"
  ASSERT_EQ(explicit_default.substr(prev_field, 9), R"(,"prev":")");
  explicit_default.insert(prev_field, R"(,"truncated":false)");
  ASSERT_TRUE(parse_log_record(serialize(exec)).ok());
  std::string raw_utf8 = serialize(one_of_each()[0]);
  const auto at = raw_utf8.find("\\u00e9");
  ASSERT_NE(at, std::string::npos);
  raw_utf8.replace(at, 6, "\xc3\xa9");
  for (const Edit& x : std::vector<Edit>{{"keys reordered", reordered},
                                         {"extra whitespace", spaced},
                                         {"b64 for a UTF-8 string", b64_for_utf8},
                                         {"raw non-ASCII instead of \\u escape", raw_utf8},
                                         {"explicit default field", explicit_default}}) {
    SCOPED_TRACE(x.name);
    EXPECT_FALSE(parse_log_record(x.line).ok()) << x.line;
  }
}

TEST(EventSchemaTest, LogRecordEnvelopeIsRequiredAndChecked) {
  const std::string good = serialize(one_of_each()[9]);
  auto without = [&](const std::string& key) {
    std::string s = good;
    const auto at = s.find("\"" + key + "\":");
    const auto comma = s.find(',', at);
    s.erase(at, comma - at + 1);
    return s;
  };
  for (const char* key : {"v", "seq", "t", "session", "src"}) {
    SCOPED_TRACE(key);
    EXPECT_FALSE(parse_log_record(without(key)).ok());
  }
  std::string bad_prev = good;
  bad_prev.replace(bad_prev.find("\"prev\":\"") + 8, 1, "X");
  EXPECT_FALSE(parse_log_record(bad_prev).ok());
  std::string bad_session = good;
  bad_session.replace(bad_session.find("\"session\":\"") + 11, 1, "/");
  EXPECT_FALSE(parse_log_record(bad_session).ok());
}

TEST(EventSchemaTest, ValidateBoundsWhatTheWriterMayLog) {
  const Limits lim = Limits::log();
  EXPECT_TRUE(
      validate(Body{FsWrite{1, "openat", "x", "/x", 0, Verdict::kDenied, "", "", "", "", ""}}, lim)
          .ok());
  EXPECT_FALSE(
      validate(Body{FsWrite{1, "read", "x", "/x", 0, Verdict::kDenied, "", "", "", "", ""}}, lim)
          .ok());
  EXPECT_FALSE(
      validate(Body{FsWrite{0, "openat", "x", "/x", 0, Verdict::kDenied, "", "", "", "", ""}}, lim)
          .ok());
  // unguarded: a protected name, on an allowed write only.
  EXPECT_TRUE(validate(Body{FsWrite{1, "openat", "x", "/w/a/.bashrc", 0, Verdict::kAllowed, "", "",
                                    "", ".bashrc", ""}},
                       lim)
                  .ok());
  EXPECT_FALSE(validate(Body{FsWrite{1, "openat", "x", "/w/a/x", 0, Verdict::kAllowed, "", "", "",
                                     "notes.txt", ""}},
                        lim)
                   .ok());
  EXPECT_FALSE(validate(Body{FsWrite{1, "openat", "x", "/w/.bashrc", 0, Verdict::kDenied, "", "",
                                     "", ".bashrc", ""}},
                        lim)
                   .ok());
  EXPECT_FALSE(validate(Body{SessionEnd{}}, lim).ok()) << "neither exit_code nor signal";
  EXPECT_FALSE(validate(Body{SessionEnd{0, 9, 0, {}, {}, {}}}, lim).ok()) << "both";
  EXPECT_FALSE(validate(Body{SessionStart{{}, "/", "docker", "", {}, "", {}}}, lim).ok());
  EXPECT_FALSE(validate(Body{SessionStart{{}, "/", "bwrap", "ABC", {}, "", {}}}, lim).ok());
  EXPECT_FALSE(validate(Body{IoStdout{std::string(lim.max_data + 1, 'x')}}, lim).ok());
  EXPECT_TRUE(validate(Body{IoStdout{std::string(lim.max_data, '\0')}}, lim).ok());
  EXPECT_FALSE(validate(Body{Annotation{std::string("a\0b", 3), false}}, lim).ok());
}

TEST(EventSchemaTest, Base64IsStrictAndRoundTrips) {
  for (const std::string& s :
       {std::string(""), std::string("f"), std::string("fo"), std::string("foo"),
        std::string("foob"), std::string("\0\xff\x80", 3)}) {
    const std::string enc = base64_encode(s);
    auto dec = base64_decode(enc);
    ASSERT_TRUE(dec.has_value()) << enc;
    EXPECT_EQ(*dec, s);
  }
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  for (const char* bad : {"Zm8", "Zm9=Zm8=", "Zm=8", "Zm9v\n", "Zn==", "Zm9=", "====", "Z==="}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(EventSchemaTest, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // cut short
}

// The escaping itself is tested over every Unicode general category in
// tests/unit/supervisor/core/base/display_text_test.cc; this is the alias replay's views use.
TEST(EventSchemaTest, TerminalEscapeIsTheOneFunction) {
  EXPECT_EQ(escape_for_terminal("rlo\xe2\x80\xaegpj.exe\n"), "rlo\\u{202e}gpj.exe\\x0a");
}

TEST(EventSchemaTest, HtmlEscapeTable) {
  EXPECT_EQ(escape_for_html("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(escape_for_html(R"(a"b'c&d)"), "a&quot;b&#39;c&amp;d");
  EXPECT_EQ(escape_for_html("x\n<img src=x onerror=1>"), "x\\x0a&lt;img src=x onerror=1&gt;");
}

TEST(EventSchemaTest, LineSplitterBoundsAndSplits) {
  LineSplitter sp(8);
  std::vector<std::string> got;
  auto sink = [&](std::string_view l) { got.emplace_back(l); };
  sp.feed("ab", sink);
  sp.feed("c\nde", sink);
  sp.feed("f\n0123456789abc", sink);  // 13 bytes: over the bound, dropped
  EXPECT_TRUE(sp.has_partial());
  sp.feed("def\nok\n", sink);
  sp.feed("12345678\n", sink);  // exactly the bound: kept
  EXPECT_EQ(got, (std::vector<std::string>{"abc", "def", "ok", "12345678"}));
  EXPECT_EQ(sp.oversize(), 1U);
  EXPECT_FALSE(sp.has_partial());
}

TEST(EventSchemaTest, KindNamesRoundTrip) {
  for (int i = 0; i < 10; ++i) {
    const auto k = static_cast<Kind>(i);
    EXPECT_EQ(kind_from_string(to_string(k)), k);
  }
  EXPECT_FALSE(kind_from_string("fs.write ").has_value());
}

}  // namespace
}  // namespace vigil::events
