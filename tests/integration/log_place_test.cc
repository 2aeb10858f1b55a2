// The log's place cannot move, and a replaced or truncated log fails `vigil replay
// --verify`. The workspace is $HOME and the log goes to the default
// $HOME/.local/state/vigil/sessions/ (XDG_STATE_HOME unset): the command may write
// everywhere in $HOME but the log's directory. The attack of the issue: rename an
// ancestor of the log directory (the read-only mount moved with it), recreate the path,
// and plant a log with the real session.start and a forged session.end whose prev is
// right. Checked on the host afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Inside the sandbox: tries to move ~/.local away and, if that worked, plants a forged
// log at the official path: the real session.start (read from the real log), and a
// session.end with the right prev and exit 0. Prints what happened.
const char kAttack[] = R"PY(
import hashlib, json, os, sys
home = os.environ["HOME"]
sessions = home + "/.local/state/vigil/sessions"
logs = [f for f in os.listdir(sessions) if f.endswith(".jsonl")]
real = max(logs, key=lambda f: os.stat(os.path.join(sessions, f)).st_mtime)
with open(os.path.join(sessions, real)) as f:
    start = f.readline()
rec = json.loads(start)
try:
    os.rename(home + "/.local", home + "/.local.hidden")
    print("renamed")
except OSError as e:
    print("rename", e.errno)
    sys.exit(0)
os.makedirs(sessions)
# In the log's canonical key order, so that only the seal can tell it apart.
end = {"v": rec["v"], "seq": 1, "t": rec["t"] + 1, "session": rec["session"], "src": "supervisor",
       "kind": "session.end", "exit_code": 0, "duration_ns": 1, "counters": {},
       "prev": hashlib.sha256(start.rstrip("\n").encode()).hexdigest()}
with open(os.path.join(sessions, real), "w") as f:
    f.write(start + json.dumps(end, separators=(",", ":")) + "\n")
print("planted")
)PY";

TEST(LogPlace, AnAncestorOfTheLogCannotBeRenamedAndTheLogStaysSealed) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
  TempDir home;
  const std::map<std::string, std::string> env = {{"HOME", home.path()}, {"XDG_STATE_HOME", ""}};
  auto o = run_vigil({"run", "--", "python3", "-c", kAttack}, home.path(), 60, env);
  EXPECT_FALSE(has(o.out, "renamed")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "rename 16")) << "EBUSY: a pinned mount point\n" << o.out << o.err;
  EXPECT_FALSE(exists(home / ".local.hidden"));
  // The official log is the real one, and it verifies, sealed.
  const std::string sessions = home / ".local/state/vigil/sessions";
  auto v = run_vigil({"replay", "--verify", sessions + "/" + session_dirs(sessions).at(0)},
                     home.path(), 60, env);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_TRUE(has(v.out, "sealed: the seal matches")) << v.out;
  // The key is this user's, private, and was hidden from the command.
  struct stat st {};
  ASSERT_EQ(::stat((home / ".local/state/vigil/log.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto peek = run_vigil({"run", "--", "sh", "-c", "wc -c < .local/state/vigil/log.key"},
                        home.path(), 60, env);
  EXPECT_FALSE(has(peek.out, "32")) << "the key was readable inside: " << peek.out;
}

// What the host sees when the forgery is done anyway (as the pre-pinning build let it):
// the same forged log, and a truncated one, fail --verify.
TEST(LogPlace, AForgedOrTruncatedLogFailsVerify) {
  TempDir home;
  const std::map<std::string, std::string> env = {{"HOME", home.path()}, {"XDG_STATE_HOME", ""}};
  auto o = run_vigil({"run", "--", "sh", "-c", "echo hi; echo x > /etc/nope"}, home.path(), 60, env);
  const std::string sessions = home / ".local/state/vigil/sessions";
  const std::string log = sessions + "/" + session_dirs(sessions).at(0);
  const std::string text = read_file(log);
  auto ok = run_vigil({"replay", "--verify", log}, home.path(), 60, env);
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  // Truncated to its first two records.
  const std::size_t second = text.find('\n', text.find('\n') + 1);
  write_file(home / "truncated.jsonl", text.substr(0, second + 1));
  auto t = run_vigil({"replay", "--verify", home / "truncated.jsonl"}, home.path(), 60, env);
  EXPECT_EQ(t.exit_code, 1) << t.out;
  // Replaced: the real session.start and a forged session.end with the right prev.
  const std::string start = text.substr(0, text.find('\n'));
  const std::string forge =
      "import hashlib, json, sys\n"
      "start = open(sys.argv[1]).readline().rstrip('\\n')\n"
      "r = json.loads(start)\n"
      "end = {'v': r['v'], 'seq': 1, 't': r['t'] + 1, 'session': r['session'], 'src': "
      "'supervisor', 'kind': 'session.end', 'exit_code': 0, 'duration_ns': 1, 'counters': {}, "
      "'prev': hashlib.sha256(start.encode()).hexdigest()}\n"
      "print(start)\n"
      "print(json.dumps(end, separators=(',', ':')))\n";
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
  auto f = run_vigil({"run", "--sandbox", "off", "--", "python3", "-c", forge, log}, home.path(), 60,
                     env);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  write_file(home / "forged.jsonl", f.out);
  auto v = run_vigil({"replay", "--verify", home / "forged.jsonl"}, home.path(), 60, env);
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_TRUE(has(v.out, "BROKEN at record 1")) << v.out;
  EXPECT_TRUE(has(v.out, "does not match its seal") || has(v.out, "has no seal")) << v.out;
}

}  // namespace
}  // namespace vigil::test
