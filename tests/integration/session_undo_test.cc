// Per-command undo and diff in every mode (issue 32, item 1): a git repository changed
// across several commands (commits, a new file, a deleted file, a branch, a new tree)
// through `vigil serve` driven by the shipped Python and Node clients, through `vigil mcp`
// and through a `vigil session`, then `undo --command N` (newest first) and the whole session's undo.
// After each, the workspace is byte for byte what it was (modes, symlinks, every file of
// .git), `git fsck --strict` is clean, and the dry run printed exactly the plan the real
// run carried out. A hostile store (a pre-image replaced) and a symlink planted where a
// file is to be restored (or on the way to one) are refused whole, changing nothing.
//
// The bug this pins: an agent session keeps one content store per command
// (captures/<id>-<N>), and undo read captures/<id>: its dry run said all was well, the
// real run removed a commit's objects and could not restore the refs.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

struct Entry {
  std::string type;  // file, symlink, dir
  unsigned mode = 0;
  std::string bytes;  // content or target
  bool operator==(const Entry&) const = default;
};
using Snapshot = std::map<std::string, Entry>;  // path relative to the root -> entry

void walk(const std::string& root, const std::string& rel, Snapshot* out) {
  const std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : names) {
    const std::string r = rel.empty() ? n : rel + "/" + n;
    const std::string p = root + "/" + r;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    Entry e;
    e.mode = st.st_mode & 07777;
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      const ssize_t len = ::readlink(p.c_str(), buf, sizeof buf);
      e.type = "symlink";
      e.bytes.assign(buf, static_cast<std::size_t>(std::max<ssize_t>(len, 0)));
      e.mode = 0;
    } else if (S_ISDIR(st.st_mode)) {
      e.type = "dir";
      walk(root, r, out);
    } else {
      e.type = "file";
      e.bytes = read_file(p);
    }
    (*out)[r] = e;
  }
}

Snapshot snapshot(const std::string& root) {
  Snapshot s;
  walk(root, "", &s);
  return s;
}

// What differs, for the failure message.
std::string diff(const Snapshot& want, const Snapshot& got) {
  std::string out;
  for (const auto& [p, e] : want) {
    auto it = got.find(p);
    if (it == got.end()) out += "  missing " + p + "\n";
    else if (!(it->second == e)) out += "  differs " + p + " (" + e.type + ")\n";
  }
  for (const auto& [p, e] : got)
    if (!want.contains(p)) out += "  extra   " + p + "\n";
  return out.empty() ? "  (none)\n" : out;
}

int sh(const std::string& cwd, const std::string& script, std::string* out = nullptr) {
  TempDir o;
  const std::string cmd = "cd '" + cwd + "' && (" + script + ") > '" + (o / "out") + "' 2>&1";
  const int st = std::system(cmd.c_str());
  if (out != nullptr) *out = read_file(o / "out");
  return st;
}

// The repository before the session: two commits' worth of history on main.
void make_repo(const std::string& ws) {
  ASSERT_EQ(sh(ws, "git init -q -b main . && git config user.email t@example.test && "
                   "git config user.name t && git config gc.auto 0 && "
                   "echo one > a.txt && echo keep > gone.txt && ln -s a.txt link && "
                   "git add . && git commit -qm init"),
            0);
}

// The commands the agent runs, one per call.
const std::vector<std::string> kCommands = {
    "echo two >> a.txt && git commit -qam second",
    "echo new > new.txt && git rm -q gone.txt && git add new.txt && git commit -qm third",
    "git checkout -qb feature && mkdir -p d/e && echo f > d/e/f.txt && chmod 0600 d/e/f.txt && "
    "git add d && git commit -qm fourth && echo loose > untracked.txt",
};

// Runs kCommands through one session of `mode`, snapshotting the workspace on the host
// before each command and after the last: snaps[i] is before command i+1.
struct Ran {
  TempDir ws, state, copies;
  std::string log;
  std::vector<Snapshot> snaps;
  std::map<std::string, std::string> env() const { return {{"XDG_STATE_HOME", state.path()}}; }
  Outcome vigil(const std::vector<std::string>& args) const { return run_vigil(args, ws.path(), 120, env()); }
};

// A driver that copies the workspace on the host (cp -a) between the session's commands.
constexpr const char* kPythonDriver = R"PY(
import subprocess, sys
sys.path.insert(0, sys.argv[1])
from vigil_client import VigilSession
vigil, ws, log, copies = sys.argv[2:6]
commands = sys.argv[6:]
with VigilSession(vigil=vigil, log=log, workspace=ws) as s:
    for i, c in enumerate(commands):
        subprocess.run(["cp", "-a", ws, "%s/%d" % (copies, i)], check=True)
        r = s.run(["sh", "-c", c])
        if r["exit_code"] != 0:
            sys.exit("command %d failed: %r" % (i + 1, r))
subprocess.run(["cp", "-a", ws, "%s/%d" % (copies, len(commands))], check=True)
)PY";

// `vigil mcp` spoken by a plain MCP client: initialize, then one tools/call per command.
constexpr const char* kMcpDriver = R"PY(
import json, subprocess, sys
vigil, ws, log, copies = sys.argv[1:5]
commands = sys.argv[5:]
p = subprocess.Popen([vigil, "mcp", "--log", log], cwd=ws, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
def send(msg):
    p.stdin.write((json.dumps(dict(msg, jsonrpc="2.0")) + "\n").encode())
    p.stdin.flush()
def reply(rid):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == rid and "method" not in m:
            return m
    sys.exit("vigil mcp exited")
send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05",
      "capabilities": {}, "clientInfo": {"name": "undo-test", "version": "1"}}})
reply(1)
send({"method": "notifications/initialized"})
for i, c in enumerate(commands):
    subprocess.run(["cp", "-a", ws, "%s/%d" % (copies, i)], check=True)
    send({"id": 10 + i, "method": "tools/call",
          "params": {"name": "run_command", "arguments": {"command": c}}})
    r = reply(10 + i)
    if "error" in r or r["result"].get("isError"):
        sys.exit("command %d failed: %r" % (i + 1, r))
p.stdin.close()
p.wait()
subprocess.run(["cp", "-a", ws, "%s/%d" % (copies, len(commands))], check=True)
)PY";

constexpr const char* kNodeDriver = R"JS(
const { execFileSync } = require('node:child_process');
const { VigilSession } = require(process.argv[2] + '/vigil_client.js');
const [vigil, ws, log, copies, ...commands] = process.argv.slice(3);
(async () => {
  const s = new VigilSession({ vigil, log, workspace: ws });
  for (let i = 0; i < commands.length; i++) {
    execFileSync('cp', ['-a', ws, `${copies}/${i}`]);
    const r = await s.run(['sh', '-c', commands[i]]);
    if (r.exit_code !== 0) { console.error(`command ${i + 1} failed`, r); process.exit(1); }
  }
  await s.close();
  execFileSync('cp', ['-a', ws, `${copies}/${commands.length}`]);
})().catch((e) => { console.error(e); process.exit(1); });
)JS";

std::string find_program(const std::vector<std::string>& names) {
  for (const std::string& n : names)
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
      const std::string p = std::string(dir) + "/" + n;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  return "";
}

std::string clients_dir(const std::string& which) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/../../clients/" + which;
}

void run_serve(Ran* r, const std::string& client) {
  make_repo(r->ws.path());
  r->log = r->state / "serve.jsonl";
  std::vector<std::string> argv;
  if (client == "python") {
    write_file(r->copies / "drive.py", kPythonDriver);
    argv = {python3(), r->copies / "drive.py", clients_dir("python")};
  } else if (client == "mcp") {
    write_file(r->copies / "drive.py", kMcpDriver);
    argv = {python3(), r->copies / "drive.py"};
  } else {
    write_file(r->copies / "drive.js", kNodeDriver);
    argv = {find_program({"node", "nodejs"}), r->copies / "drive.js", clients_dir("node")};
  }
  argv.insert(argv.end(), {vigil_bin(), r->ws.path(), r->log, r->copies.path()});
  argv.insert(argv.end(), kCommands.begin(), kCommands.end());
  // Not in the workspace: run_program keeps the driver's output files in its directory.
  const Outcome o = run_program(argv, r->copies.path(), 180, r->env());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  for (std::size_t i = 0; i <= kCommands.size(); ++i) r->snaps.push_back(snapshot(r->copies / std::to_string(i)));
}

void run_session(Ran* r) {
  make_repo(r->ws.path());
  Session s(r->ws.path());
  for (const std::string& c : kCommands) {
    r->snaps.push_back(snapshot(r->ws.path()));
    const Outcome o = s.run({"sh", "-c", c});
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  r->snaps.push_back(snapshot(r->ws.path()));
  ASSERT_EQ(s.end().exit_code, 0);
  // The session's log, key and stores live in its own state directory.
  r->log = s.log();
  ASSERT_EQ(sh(r->state.path(), "cp -a '" + s.env().at("XDG_STATE_HOME") + "/.' ."), 0);
  r->log = r->state / "session.jsonl";
}

void expect_git_clean(const std::string& ws) {
  std::string out;
  EXPECT_EQ(sh(ws, "git fsck --strict --no-dangling 2>&1", &out), 0) << out;
  EXPECT_EQ(out.find("error"), std::string::npos) << out;
  EXPECT_EQ(out.find("missing"), std::string::npos) << out;
  EXPECT_EQ(sh(ws, "git rev-parse --verify HEAD", &out), 0) << out;
}

// The plan part of undo's output (everything before what the real run did).
std::string plan_part(const std::string& out) {
  std::istringstream in(out);
  std::string plan;
  for (std::string l; std::getline(in, l);) {
    if (l.starts_with("done ") || l.starts_with("FAILED ") || l == "dry run: nothing was changed" ||
        l.find(" step(s) done, ") != std::string::npos)
      continue;
    plan += l + "\n";
  }
  return plan;
}

// Dry run, then the real run; the dry run predicted it exactly, every step was done.
void undo_and_check(const Ran& r, const std::vector<std::string>& extra, const Snapshot& want) {
  std::vector<std::string> dry = {"undo", "--dry-run"};
  dry.insert(dry.end(), extra.begin(), extra.end());
  dry.push_back(r.log);
  const Snapshot before = snapshot(r.ws.path());
  const Outcome d = r.vigil(dry);
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_EQ(snapshot(r.ws.path()), before) << "the dry run changed the workspace";
  std::vector<std::string> real = {"undo"};
  real.insert(real.end(), extra.begin(), extra.end());
  real.push_back(r.log);
  const Outcome u = r.vigil(real);
  EXPECT_EQ(u.exit_code, 0) << u.out << u.err;
  EXPECT_EQ(plan_part(u.out), plan_part(d.out)) << "the dry run did not predict the real run";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d.out, m, std::regex("plan: (\\d+) step\\(s\\)"))) << d.out;
  EXPECT_NE(m[1], "0") << d.out;
  EXPECT_NE(u.out.find(std::string(m[1]) + " step(s) done, 0 failed"), std::string::npos) << u.out;
  const Snapshot now = snapshot(r.ws.path());
  EXPECT_TRUE(now == want) << "differences after undo:\n" << diff(want, now) << u.out;
  expect_git_clean(r.ws.path());
}

// Command by command, newest first, each back to the workspace before it; then a second
// session undone whole.
void per_command_then_whole(const std::function<void(Ran*)>& drive) {
  {
    Ran r;
    drive(&r);
    if (::testing::Test::HasFatalFailure()) return;
    const Outcome diff3 = r.vigil({"replay", "--diff", "--command", "3", r.log});
    EXPECT_EQ(diff3.exit_code, 0) << diff3.err;
    EXPECT_NE(diff3.out.find("+f"), std::string::npos) << diff3.out;
    EXPECT_EQ(diff3.out.find("not in the store"), std::string::npos) << diff3.out;
    const Outcome changes2 = r.vigil({"replay", "--changes", "--command", "2", r.log});
    EXPECT_NE(changes2.out.find("deleted " + (r.ws / "gone.txt")), std::string::npos) << changes2.out;
    EXPECT_EQ(changes2.out.find("d/e/f.txt"), std::string::npos) << "command 3's change in 2's\n" << changes2.out;
    for (std::size_t n = kCommands.size(); n >= 1; --n) {
      SCOPED_TRACE("undo --command " + std::to_string(n));
      undo_and_check(r, {"--command", std::to_string(n)}, r.snaps[n - 1]);
    }
  }
  {
    Ran r;
    drive(&r);
    if (::testing::Test::HasFatalFailure()) return;
    const Outcome diff = r.vigil({"replay", "--diff", r.log});
    EXPECT_EQ(diff.out.find("not in the store"), std::string::npos) << diff.out;
    SCOPED_TRACE("the whole session");
    undo_and_check(r, {}, r.snaps[0]);
  }
}

bool have_git() { return !find_program({"git"}).empty(); }

TEST(SessionUndo, ServeThroughThePythonClient) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  per_command_then_whole([](Ran* r) { run_serve(r, "python"); });
}

TEST(SessionUndo, ServeThroughTheNodeClient) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  if (find_program({"node", "nodejs"}).empty()) GTEST_SKIP() << "node is not installed (tools/bootstrap.sh installs nodejs)";
  per_command_then_whole([](Ran* r) { run_serve(r, "node"); });
}

TEST(SessionUndo, McpThroughAPlainClient) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  per_command_then_whole([](Ran* r) { run_serve(r, "mcp"); });
}

TEST(SessionUndo, VigilSession) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  per_command_then_whole(run_session);
}

// A refusal: non-zero, "refused", the words named, and nothing changed in the workspace.
void expect_refused(const Ran& r, const std::vector<std::string>& args, const std::string& words) {
  const Snapshot before = snapshot(r.ws.path());
  const Outcome dry = r.vigil([&] {
    std::vector<std::string> a = {"undo", "--dry-run"};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }());
  std::vector<std::string> a = {"undo"};
  a.insert(a.end(), args.begin(), args.end());
  const Outcome u = r.vigil(a);
  EXPECT_NE(u.exit_code, 0) << u.out;
  EXPECT_NE(dry.exit_code, 0) << "the dry run predicts the refusal\n" << dry.out;
  EXPECT_EQ(plan_part(u.out), plan_part(dry.out));
  EXPECT_NE(u.out.find("refused: nothing will be changed"), std::string::npos) << u.out;
  EXPECT_NE(u.out.find(words), std::string::npos) << u.out;
  EXPECT_NE(u.out.find("what you can do:"), std::string::npos) << u.out;
  EXPECT_EQ(u.out.find("\ndone "), std::string::npos) << u.out;
  const Snapshot now = snapshot(r.ws.path());
  EXPECT_TRUE(now == before) << "a refused undo changed the workspace:\n" << diff(before, now);
}

// The pre-image of a path the undo would restore, replaced in every store that holds it.
TEST(SessionUndo, AReplacedPreImageRefusesTheWholeUndo) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  Ran r;
  run_serve(&r, "python");
  if (::testing::Test::HasFatalFailure()) return;
  // gone.txt's content ("keep\n") is the pre-image the whole-session undo restores.
  std::string hash;
  ASSERT_EQ(sh(r.ws.path(), "printf 'keep\\n' | sha256sum | cut -c1-64", &hash), 0);
  hash = hash.substr(0, 64);
  std::string found;
  ASSERT_EQ(sh(r.state.path(), "find vigil/captures -name " + hash + " -type f", &found), 0);
  ASSERT_FALSE(found.empty()) << "the pre-image is in a store of the session";
  ASSERT_EQ(sh(r.state.path(), "for f in $(find vigil/captures -name " + hash +
                                   " -type f); do chmod u+w $f; printf 'evil\\n' > $f; done"),
            0);
  expect_refused(r, {r.log}, "does not match its hash");
  EXPECT_NE(r.vigil({"undo", r.log}).out.find(r.ws / "gone.txt"), std::string::npos);
  expect_git_clean(r.ws.path());
}

// Where a deleted file is to be restored, a symlink to a host file was planted since.
TEST(SessionUndo, ASymlinkPlantedWhereAFileIsRestoredRefuses) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  Ran r;
  run_session(&r);
  if (::testing::Test::HasFatalFailure()) return;
  TempDir victim;
  write_file(victim / "target", "host file\n");
  ASSERT_EQ(::symlink((victim / "target").c_str(), (r.ws / "gone.txt").c_str()), 0);
  expect_refused(r, {r.log}, r.ws / "gone.txt" + ": CONFLICT");
  EXPECT_EQ(read_file(victim / "target"), "host file\n");
  // A symlink on the way: the directory d of command 3 replaced by a link elsewhere.
  ASSERT_EQ(sh(r.ws.path(), "rm -f gone.txt && mv d d.real && ln -s '" + victim.path() + "' d"), 0);
  expect_refused(r, {"--force", r.log}, "cannot be reached");
  EXPECT_EQ(read_file(victim / "target"), "host file\n");
}

// --command N of a command the log does not have: said, nothing done.
TEST(SessionUndo, ACommandTheLogDoesNotHaveIsNamed) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  Ran r;
  run_session(&r);
  if (::testing::Test::HasFatalFailure()) return;
  const Outcome u = r.vigil({"undo", "--command", "9", r.log});
  EXPECT_NE(u.exit_code, 0);
  EXPECT_NE(u.err.find("has no command 9"), std::string::npos) << u.err;
}

// A `vigil run` log is one command: --command 1 is the whole run, in undo and replay alike.
TEST(SessionUndo, AVigilRunLogIsCommandOne) {
  if (!have_git()) GTEST_SKIP() << "git is not installed (tools/bootstrap.sh installs it)";
  Ran r;
  make_repo(r.ws.path());
  const Snapshot before = snapshot(r.ws.path());
  r.log = r.state / "run.jsonl";
  const Outcome run = r.vigil({"run", "--log", r.log, "--", "sh", "-c", kCommands[0] + " && " + kCommands[1]});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Outcome whole = r.vigil({"replay", "--changes", r.log});
  const Outcome one = r.vigil({"replay", "--changes", "--command", "1", r.log});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, whole.out);
  const Outcome two = r.vigil({"undo", "--command", "2", r.log});
  EXPECT_NE(two.exit_code, 0);
  EXPECT_NE(two.err.find("a `vigil run` log has one command: 1"), std::string::npos) << two.err;
  undo_and_check(r, {"--command", "1"}, before);
}

}  // namespace
}  // namespace vigil::test
