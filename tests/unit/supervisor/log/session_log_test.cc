// The session log: the writer's envelope and hash chain, file creation rules (0600,
// O_EXCL, no symlinks, private directories), thread-safe appends, and verify_log naming
// the right record for each kind of tampering.
#include "supervisor/log/session_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/sha256.h"
#include "supervisor/log/log_key.h"

namespace vigil {
namespace {

using namespace vigil::events;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vigil-log-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A clock that advances 1000 ns per call: deterministic t values.
SessionLog::Clock stepping_clock() {
  auto n = std::make_shared<std::uint64_t>(0);
  return [n] {
    const auto v = *n;
    *n += 1000;
    return v;
  };
}

// A complete 9-record session: start, exec, three writes, a refused host, stderr, the
// annotation, the end.
std::string write_sample(const std::string& path, std::string id = "sess-1",
                         std::string* head = nullptr) {
  auto log = SessionLog::create(path, std::move(id), stepping_clock());
  EXPECT_TRUE(log.ok()) << log.error().message;
  auto add = [&](Source s, Body b) {
    auto r = log->append(s, std::move(b));
    EXPECT_TRUE(r.ok()) << r.error().message;
  };
  add(Source::kSupervisor, SessionStart{{"bash", "-c", "make"},
                                        "/w",
                                        "bwrap",
                                        std::string(64, 'e'),
                                        {"0.1.0", "0.8.0", "6.1"},
                                        path, {}});
  add(Source::kObserver, ProcExec{2, 1, {"/usr/bin/make"}, "/w", false});
  add(Source::kObserver, FsWrite{2, "openat", "out.o", "/w/out.o", 0x241, Verdict::kAllowed,
                                 "writable root", "", "", "", ""});
  add(Source::kObserver, FsWrite{2, "openat", "/etc/x", "/etc/x", 0x241, Verdict::kDenied,
                                 "read-only", "", "", "", ""});
  add(Source::kObserver, FsWrite{2, "unlinkat", ".git/hooks/pre-commit", "/w/.git/hooks/pre-commit",
                                 0, Verdict::kDenied, "protected path", "", "", "", ""});
  add(Source::kProxy, NetDecision{NetProto::kConnect, "example.org", 443, NetVerdict::kDenied, "",
                                  "host is not on the allow list", "not-allowed", "", "", ""});
  add(Source::kSupervisor, IoStderr{"make: *** error\n"});
  add(Source::kSupervisor, Annotation{"<sandbox_violations>\n</sandbox_violations>\n", false});
  add(Source::kSupervisor, SessionEnd{2, std::nullopt, 8000, {{"fs.denied", 2}}, {}, {}});
  if (head != nullptr) *head = log->head();
  EXPECT_TRUE(log->close().ok());
  return slurp(path);
}

TEST(SessionLogTest, WritesAChainedCanonicalLog) {
  TempDir dir;
  const std::string path = dir.path() + "/s.jsonl";
  std::string head;
  const std::string text = write_sample(path, "sess-1", &head);
  const auto lines = split(text);
  ASSERT_EQ(lines.size(), 9U);
  std::string prev(kGenesisPrev);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(i);
    auto e = parse_log_record(lines[i]);
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->seq, i);
    EXPECT_EQ(e->t, i * 1000);
    EXPECT_EQ(e->session, "sess-1");
    EXPECT_EQ(e->prev, prev);
    prev = sha256_hex(lines[i]);
  }
  EXPECT_EQ(head, prev);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);

  const VerifyReport r = verify_log_text(text);
  EXPECT_TRUE(r.ok) << r.why;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.records, 9U);
  EXPECT_EQ(r.head, head);
}

// Held writes (what the supervisor does per wake of its pipe reader): the records reach
// the file only at the last release, in one piece, and the file is byte for byte the one
// unheld appends write; past kHeldBytes the held lines are written without waiting.
TEST(SessionLogTest, HeldWritesGoOutOnReleaseAndMakeTheSameLog) {
  TempDir dir;
  const std::string plain = write_sample(dir.path() + "/plain.jsonl");
  const std::string path = dir.path() + "/held.jsonl";
  auto log = SessionLog::create(path, "sess-1", stepping_clock());
  ASSERT_TRUE(log.ok()) << log.error().message;
  const auto records = split(plain);
  ASSERT_EQ(records.size(), 9U);
  // The sample's bodies, replayed from its own lines.
  std::vector<Event> events;
  for (const auto& l : records) {
    auto e = parse_log_record(l);
    ASSERT_TRUE(e.ok()) << e.error().message;
    events.push_back(std::move(e).value());
  }
  auto add = [&](std::size_t i) {
    auto r = log->append(events[i].src, events[i].body);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, i);
  };
  add(0);
  EXPECT_EQ(slurp(path), records[0] + "\n");
  log->hold_writes();
  add(1);
  add(2);
  log->hold_writes();  // nested: only the outer release writes
  add(3);
  ASSERT_TRUE(log->release_writes().ok());
  add(4);
  EXPECT_EQ(slurp(path), records[0] + "\n") << "held records were written before the last release";
  ASSERT_TRUE(log->release_writes().ok());
  EXPECT_EQ(slurp(path), join({records.begin(), records.begin() + 5}));
  log->hold_writes();
  for (std::size_t i = 5; i < records.size(); ++i) add(i);
  EXPECT_TRUE(log->close().ok());  // close writes what is still held
  EXPECT_EQ(slurp(path), plain);
  EXPECT_TRUE(verify_log_text(slurp(path)).ok);

  // A hold longer than kHeldBytes: written as it fills, nothing lost, one chain.
  const std::string big = dir.path() + "/big.jsonl";
  auto log2 = SessionLog::create(big, "sess-2", stepping_clock());
  ASSERT_TRUE(log2.ok());
  log2->hold_writes();
  std::size_t n = 0;
  while (slurp(big).empty()) {
    ASSERT_LT(n, 100000U) << "held lines were never written";
    ASSERT_TRUE(log2->append(Source::kSupervisor, IoStdout{std::string(1000, 'x')}).ok());
    ++n;
  }
  EXPECT_GE(slurp(big).size(), SessionLog::kHeldBytes);  // written when full, not before
  ASSERT_TRUE(log2->release_writes().ok());
  EXPECT_EQ(split(slurp(big)).size(), n);
}

TEST(SessionLogTest, RefusesExistingFilesAndSymlinks) {
  TempDir dir;
  const std::string path = dir.path() + "/s.jsonl";
  ASSERT_TRUE(SessionLog::create(path, "a").ok());
  auto again = SessionLog::create(path, "a");
  EXPECT_FALSE(again.ok()) << "O_EXCL: never append to an existing log";
  const std::string link = dir.path() + "/link.jsonl";
  ASSERT_EQ(::symlink((dir.path() + "/elsewhere").c_str(), link.c_str()), 0);
  EXPECT_FALSE(SessionLog::create(link, "a").ok()) << "a planted symlink is not followed";
  EXPECT_FALSE(::access((dir.path() + "/elsewhere").c_str(), F_OK) == 0);
  EXPECT_FALSE(SessionLog::create(dir.path() + "/x.jsonl", "../etc").ok()) << "session id syntax";
}

TEST(SessionLogTest, RefusesRecordsItCouldNotReadBack) {
  TempDir dir;
  auto log = SessionLog::create(dir.path() + "/s.jsonl", "a", stepping_clock());
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->append(Source::kObserver, FsWrite{1, "not-a-syscall", "x", "/x", 0,
                                                      Verdict::kDenied, "", "", "", "", ""})
                   .ok());
  EXPECT_FALSE(log->append(Source::kSupervisor, SessionEnd{}).ok());
  EXPECT_EQ(log->records(), 0U) << "a refused record takes no seq";
  EXPECT_EQ(slurp(dir.path() + "/s.jsonl"), "");
  ASSERT_TRUE(log->close().ok());
  EXPECT_FALSE(log->append(Source::kSupervisor, IoStdout{"x"}).ok()) << "closed";
}

TEST(SessionLogTest, TimeNeverGoesBackwards) {
  TempDir dir;
  std::vector<std::uint64_t> ticks = {500, 300, 900};
  std::size_t i = 0;
  auto log = SessionLog::create(dir.path() + "/s.jsonl", "a", [&] { return ticks[i++]; });
  ASSERT_TRUE(log.ok());
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(log->append(Source::kSupervisor, IoStdout{"x"}).ok());
  const auto lines = split(slurp(dir.path() + "/s.jsonl"));
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(parse_log_record(lines[1])->t, 500U);
  EXPECT_EQ(parse_log_record(lines[2])->t, 900U);
}

TEST(SessionLogTest, ListenerSeesEveryRecordInOrder) {
  TempDir dir;
  auto log = SessionLog::create(dir.path() + "/s.jsonl", "a", stepping_clock());
  ASSERT_TRUE(log.ok());
  std::vector<std::string> seen;
  log->set_listener([&](const Event& e, const std::string& line) {
    EXPECT_EQ(serialize(e), line);
    seen.push_back(line);
  });
  for (int k = 0; k < 5; ++k)
    ASSERT_TRUE(log->append(Source::kSupervisor, IoStdout{std::to_string(k)}).ok());
  EXPECT_EQ(join(seen), slurp(dir.path() + "/s.jsonl"));
}

TEST(SessionLogTest, ConcurrentAppendsStayOneChain) {
  TempDir dir;
  const std::string path = dir.path() + "/s.jsonl";
  auto log = SessionLog::create(path, "a");
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log->append(Source::kSupervisor, SessionStart{{"x"}, "/", "bwrap", "", {}, "", {}}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        auto r =
            log->append(t % 2 ? Source::kProxy : Source::kObserver,
                        t % 2 ? Body{NetDecision{NetProto::kHttp, "h", 80, NetVerdict::kAllowed,
                                                 "h", "", "", "", "", ""}}
                              : Body{ProcExec{t + 1, 1, {"x"}, "/", false}});
        ASSERT_TRUE(r.ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(log->append(Source::kSupervisor, SessionEnd{0, std::nullopt, 1, {}, {}, {}}).ok());
  const VerifyReport r = verify_log_text(slurp(path));
  EXPECT_TRUE(r.ok) << r.why;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.records, 802U);
}

// A keyed log: session.start names the key, session.end carries the seal; a log whose
// end was forged with the right prev (the attack a chain alone cannot catch), one
// truncated, and one checked with another key or none.
TEST(SessionLogTest, KeyedLogsAreSealedAndAForgedEndFails) {
  TempDir dir;
  const std::string key(kLogKeyBytes, 'k');
  const std::string path = dir.path() + "/s.jsonl";
  auto log = SessionLog::create(path, "a");
  ASSERT_TRUE(log.ok());
  log->set_key(key);
  SessionStart start{{"x"}, "/", "bwrap", "", {}, "", {}};
  start.key_id = log_key_id(key);
  ASSERT_TRUE(log->append(Source::kSupervisor, start).ok());
  ASSERT_TRUE(log->append(Source::kObserver, ProcExec{2, 1, {"x"}, "/", false}).ok());
  const std::string head_before_end = log->head();
  ASSERT_TRUE(log->append(Source::kSupervisor, SessionEnd{3, std::nullopt, 1, {}, {}, {}}).ok());
  const std::string text = slurp(path);

  VerifyReport r = verify_log_text(text, key);
  EXPECT_TRUE(r.ok && r.complete && r.sealed) << r.why;
  EXPECT_EQ(r.key_id, log_key_id(key));

  // The forger keeps session.start and the exec and writes its own session.end, with the
  // right prev and seq, exit 0: the chain holds, the seal cannot.
  std::vector<std::string> lines;
  for (std::size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1)
    lines.push_back(text.substr(a, b - a));
  ASSERT_EQ(lines.size(), 3u);
  auto forged_end = events::parse_log_record(lines[2]);
  ASSERT_TRUE(forged_end.ok());
  auto& end_body = std::get<SessionEnd>(forged_end->body);
  end_body.exit_code = 0;
  EXPECT_EQ(forged_end->prev, head_before_end);
  for (const std::string& mac : {std::string(), std::string(64, 'f'), end_body.mac}) {
    end_body.mac = mac;
    const std::string forged = lines[0] + "\n" + lines[1] + "\n" + events::serialize(*forged_end) + "\n";
    r = verify_log_text(forged, key);
    EXPECT_FALSE(r.ok) << "seal '" << mac << "' accepted";
    EXPECT_EQ(r.broken_at, 2u);
  }
  // Truncated: no sealed end.
  r = verify_log_text(lines[0] + "\n" + lines[1] + "\n", key);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.why.find("keyed log"), std::string::npos) << r.why;
  // Another key, or none: intact, but the seal is not vouched for.
  r = verify_log_text(text, std::string(kLogKeyBytes, 'o'));
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.sealed);
  r = verify_log_text(text);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.sealed);
  // A seal on a log that names no key was added by someone else.
  SessionStart unkeyed = start;
  unkeyed.key_id.clear();
  auto first = events::parse_log_record(lines[0]);
  ASSERT_TRUE(first.ok());
  first->body = unkeyed;
  EXPECT_FALSE(verify_log_text(events::serialize(*first) + "\n", key).complete);
}

TEST(SessionLogTest, HmacSha256MatchesRfc4231) {
  // RFC 4231 test case 2.
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block.
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'),
                               "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// ---- tampering -----------------------------------------------------------------------

struct Tamper {
  std::string name;
  std::function<std::string(std::vector<std::string>)> edit;
  std::optional<std::size_t> broken_at;  // nullopt: the chain holds
  std::string why_has;
  bool complete = true;
};

// Flips one character of `line` at the first occurrence of `anchor` + offset.
std::string flip(std::string line, const std::string& anchor, std::size_t offset = 0) {
  const auto at = line.find(anchor);
  EXPECT_NE(at, std::string::npos) << anchor;
  char& c = line[at + anchor.size() + offset];
  c = c == '0' ? '1' : (c == 'a' ? 'b' : (c == '1' ? '2' : (c == 'x' ? 'y' : '0')));
  return line;
}

TEST(SessionLogTest, VerifyNamesTheBrokenRecord) {
  TempDir dir;
  const std::string original = write_sample(dir.path() + "/s.jsonl");
  const std::string other = write_sample(dir.path() + "/o.jsonl", "other-session");
  const auto other_lines = split(other);

  const std::vector<Tamper> table = {
      {"untouched", [](auto l) { return join(l); }, std::nullopt, "", true},
      {"one byte of a path in record 3",
       [](auto l) {
         l[3] = flip(l[3], "\"path\":\"/etc/");
         return join(l);
       },
       3, "record 3 was altered"},
      {"one hex digit of record 4's prev",
       [](auto l) {
         l[4] = flip(l[4], "\"prev\":\"");
         return join(l);
       },
       4, "record 4 was altered"},
      {"one digit of record 5's t (forwards)",
       [](auto l) {
         l[5] = flip(l[5], "\"t\":5");
         return join(l);
       },
       5, "record 5 was altered"},
      {"record 5's t set backwards",
       [](auto l) {
         const auto at = l[5].find("\"t\":5000");
         l[5].replace(at, 8, "\"t\":10");
         return join(l);
       },
       5, "time goes backwards"},
      {"record 2's seq",
       [](auto l) {
         l[2] = flip(l[2], "\"seq\":");
         return join(l);
       },
       2, "seq"},
      {"record 6 made invalid JSON",
       [](auto l) {
         l[6].pop_back();
         return join(l);
       },
       6, "not a valid record"},
      {"record 4 deleted",
       [](auto l) {
         l.erase(l.begin() + 4);
         return join(l);
       },
       4, "the record with seq 4 is missing"},
      {"record 0 deleted",
       [](auto l) {
         l.erase(l.begin());
         return join(l);
       },
       0, "not session.start"},
      {"records 3 and 4 swapped",
       [](auto l) {
         std::swap(l[3], l[4]);
         return join(l);
       },
       3, "out of order"},
      {"record 3 duplicated",
       [](auto l) {
         l.insert(l.begin() + 4, l[3]);
         return join(l);
       },
       4, "duplicated"},
      {"truncated inside the last record",
       [](auto l) {
         std::string t = join(l);
         return t.substr(0, t.size() - 20);
       },
       8, "truncated"},
      {"truncated inside record 5",
       [](auto l) {
         std::string t;
         for (int i = 0; i < 5; ++i) t += l[i] + "\n";
         return t + l[5].substr(0, 40);
       },
       5, "truncated"},
      {"a record appended after session.end",
       [](auto l) {
         l.push_back(l[2]);
         return join(l);
       },
       9, "after session.end"},
      {"record 4 replaced by another session's",
       [&](auto l) {
         l[4] = other_lines[4];
         return join(l);
       },
       4, "another session"},
      {"session.end removed",
       [](auto l) {
         l.pop_back();
         return join(l);
       },
       std::nullopt, "without session.end", false},
      {"the last two records removed",
       [](auto l) {
         l.resize(7);
         return join(l);
       },
       std::nullopt, "without session.end", false},
      {"empty file", [](auto) { return std::string(); }, 0, "empty log"},
      {"a blank line inserted",
       [](auto l) {
         l.insert(l.begin() + 2, "");
         return join(l);
       },
       2, "not a valid record"},
  };
  const auto lines = split(original);
  for (const auto& t : table) {
    SCOPED_TRACE(t.name);
    const VerifyReport r = verify_log_text(t.edit(lines));
    if (!t.broken_at) {
      EXPECT_TRUE(r.ok) << r.why;
      EXPECT_EQ(r.complete, t.complete);
      if (!t.why_has.empty()) {
        EXPECT_NE(r.why.find(t.why_has), std::string::npos) << r.why;
      }
      continue;
    }
    EXPECT_FALSE(r.ok);
    ASSERT_TRUE(r.broken_at.has_value());
    EXPECT_EQ(*r.broken_at, *t.broken_at) << r.why;
    EXPECT_NE(r.why.find(t.why_has), std::string::npos) << r.why;
    EXPECT_EQ(r.why.find('\n'), std::string::npos);
  }
}

// The chain cannot protect its own last record: an edit there verifies, and only a head
// hash kept elsewhere shows it. (Documented in docs/events.md.)
TEST(SessionLogTest, AnEditToTheLastRecordNeedsTheSavedHead) {
  TempDir dir;
  std::string head;
  const std::string text = write_sample(dir.path() + "/s.jsonl", "sess-1", &head);
  auto lines = split(text);
  const auto at = lines[8].find("\"exit_code\":2");
  ASSERT_NE(at, std::string::npos);
  lines[8].replace(at, 13, "\"exit_code\":0");
  const VerifyReport r = verify_log_text(join(lines));
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.head, head) << "compare with the head saved at the end of the session";
}

// ---- paths, ids, digests -----------------------------------------------------------------

TEST(SessionLogTest, DefaultLogPathTable) {
  struct Row {
    const char* xdg;
    const char* home;
    std::string id;
    std::string want;  // "" = error
  };
  for (const Row& r : std::vector<Row>{
           {"/x/state", "/h", "ID", "/x/state/vigil/sessions/ID.jsonl"},
           {"/x/state/", "/h", "ID", "/x/state/vigil/sessions/ID.jsonl"},
           {"", "/h", "ID", "/h/.local/state/vigil/sessions/ID.jsonl"},
           {nullptr, "/h", "ID", "/h/.local/state/vigil/sessions/ID.jsonl"},
           {"relative/state", "/h", "ID", "/h/.local/state/vigil/sessions/ID.jsonl"},
           {"/", "/h", "ID", "/vigil/sessions/ID.jsonl"},
           {nullptr, nullptr, "ID", ""},
           {nullptr, "relative", "ID", ""},
           {"/x", "/h", "../up", ""},
           {"/x", "/h", "", ""},
       }) {
    SCOPED_TRACE(std::string(r.xdg ? r.xdg : "(unset)") + " " + (r.home ? r.home : "(unset)") +
                 " " + r.id);
    auto got = default_log_path(r.id, r.xdg, r.home);
    if (r.want.empty()) {
      EXPECT_FALSE(got.ok());
    } else {
      ASSERT_TRUE(got.ok()) << got.error().message;
      EXPECT_EQ(*got, r.want);
    }
  }
}

TEST(SessionLogTest, PrepareLogDirMakesPrivateDirsAndRefusesOpenOnes) {
  TempDir dir;
  const std::string log = dir.path() + "/state/vigil/sessions/x.jsonl";
  ASSERT_TRUE(prepare_log_dir(log).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/state/vigil/sessions").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);
  ASSERT_TRUE(prepare_log_dir(log).ok()) << "idempotent";
  ASSERT_EQ(::chmod((dir.path() + "/state/vigil").c_str(), 0777), 0);
  EXPECT_FALSE(prepare_log_dir(log).ok()) << "a world-writable vigil dir lets others swap logs";
  ASSERT_EQ(::chmod((dir.path() + "/state/vigil").c_str(), 0700), 0);
  // sessions as a symlink to somewhere else
  const std::string other = dir.path() + "/elsewhere/vigil/sessions";
  ASSERT_TRUE(prepare_log_dir(other + "/y.jsonl").ok());
  ASSERT_EQ(::rmdir((dir.path() + "/state/vigil/sessions").c_str()), 0);
  ASSERT_EQ(::symlink(other.c_str(), (dir.path() + "/state/vigil/sessions").c_str()), 0);
  EXPECT_FALSE(prepare_log_dir(log).ok());
}

TEST(SessionLogTest, SessionIdsSortByTimeAndDiffer) {
  const std::string a = new_session_id();
  const std::string b = new_session_id();
  const std::regex shape("^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(a, shape)) << a;
  EXPECT_NE(a, b);
  EXPECT_TRUE(default_log_path(a, "/s", "/h").ok());
}

TEST(SessionLogTest, PolicyDigestIsStableAndCoversThePolicy) {
  Policy p;
  p.source = "<embedded default>";
  p.cwd = "/w";
  p.fs.allow_write.push_back(
      PathRule{"./", "/w", "/w", "default: working directory", PathKind::kDir, "", false, false});
  const std::string d = policy_digest(p);
  EXPECT_EQ(d.size(), 64U);
  EXPECT_EQ(policy_digest(p), d);
  Policy q = p;
  q.warnings.push_back("ignored on Linux");
  EXPECT_EQ(policy_digest(q), d) << "warnings are not policy";
  q.net.allowed_domains.push_back("example.com");
  EXPECT_NE(policy_digest(q), d);
  Policy r = p;
  r.fs.allow_write[0].resolved = "/w2";
  EXPECT_NE(policy_digest(r), d);
  // The canonical JSON is ASCII with sorted keys.
  const std::string j = canonical_policy_json(p);
  EXPECT_LT(j.find("\"cwd\""), j.find("\"filesystem\""));
}

TEST(SessionLogTest, LoadLogKeepsReadableRecordsAndSaysWhatItSkipped) {
  TempDir dir;
  auto lines = split(write_sample(dir.path() + "/s.jsonl"));
  lines[3] = "{not json";
  std::string text = join(lines);
  text += "{\"partial";
  const LoadedLog log = load_log_text(text);
  EXPECT_EQ(log.lines, 9U);
  EXPECT_EQ(log.records.size(), 8U);
  ASSERT_EQ(log.unreadable.size(), 1U);
  EXPECT_EQ(log.unreadable[0].index, 3U);
  EXPECT_TRUE(log.truncated_tail);
}

}  // namespace
}  // namespace vigil
