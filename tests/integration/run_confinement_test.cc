// `vigil run` with the real bwrap: what the command can and cannot do to the host.
// Every test checks the command's own view (errno) AND a host-side fact.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/core/policy/mandatory_denies.h"
#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/harness.h"
#include "tests/support/bounded_wait.h"

namespace vigil::test {
namespace {

// A python one-liner that tries to write PATH and prints "ok" or the errno name.
std::vector<std::string> try_write(const std::string& path, const std::string& mode = "w") {
  return {"run",
          "--",
          "python3",
          "-c",
          "import sys,errno\n"
          "try:\n"
          "  open(sys.argv[1], sys.argv[2]).write('pwned')\n"
          "  print('ok')\n"
          "except OSError as e:\n"
          "  print(errno.errorcode[e.errno])\n",
          path,
          mode};
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST(RunConfinement, WriteInsideWorkspaceWorks) {
  TempDir ws;
  auto o = run_vigil(try_write(ws / "made.txt"), ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "ok") << o.err;
  EXPECT_EQ(read_file(ws / "made.txt"), "pwned");
}

TEST(RunConfinement, WriteOutsideIsEROFSAndHostFileUnchanged) {
  TempDir ws, outside;
  write_file(outside / "keep.txt", "original");
  auto o = run_vigil(try_write(outside / "keep.txt"), ws.path());
  EXPECT_EQ(trim(o.out), "EROFS") << o.err;
  EXPECT_EQ(read_file(outside / "keep.txt"), "original");
  auto o2 = run_vigil(try_write(outside / "new.txt"), ws.path());
  EXPECT_EQ(trim(o2.out), "EROFS") << o2.err;
  EXPECT_FALSE(exists(outside / "new.txt"));
}

TEST(RunConfinement, SymlinkPointingOutsideCannotBeWrittenThrough) {
  TempDir ws, outside;
  write_file(outside / "target.txt", "original");
  ASSERT_EQ(::symlink((outside / "target.txt").c_str(), (ws / "link").c_str()), 0);
  auto o = run_vigil(try_write(ws / "link", "a"), ws.path());
  EXPECT_EQ(trim(o.out), "EROFS") << o.err;
  EXPECT_EQ(read_file(outside / "target.txt"), "original");
}

TEST(RunConfinement, HardLinkToEtcPasswdFails) {
  TempDir ws;
  auto o = run_vigil({"run", "--", "python3", "-c",
                      "import os,errno\n"
                      "try:\n"
                      "  os.link('/etc/passwd', 'pw'); print('ok')\n"
                      "except OSError as e:\n"
                      "  print(errno.errorcode[e.errno])\n"},
                     ws.path());
  EXPECT_EQ(trim(o.out), "EXDEV") << o.err;
  EXPECT_FALSE(exists(ws / "pw"));
}

TEST(RunConfinement, DenyReadDirectoryIsEmptyAndDenyReadFileUnreadable) {
  TempDir ws, secrets, settings_dir;
  make_dirs(secrets / "dir");
  write_file(secrets / "dir/key", "SECRET");
  write_file(secrets / "file.txt", "SECRET2");
  write_file(settings_dir / "s.json", R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                                          secrets / "dir" + R"(", ")" + secrets / "file.txt" +
                                          R"("]}})");
  auto o = run_vigil(
      {"run", "--settings", settings_dir / "s.json", "--", "sh", "-c",
       "ls -A " + secrets / "dir" + "; echo ---; cat " + secrets / "file.txt" + "; echo rc=$?"},
      ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // The directory lists empty (a tmpfs); the file is /dev/null on a nodev mount: EACCES.
  EXPECT_EQ(o.out, "---\nrc=1\n") << o.err;
  EXPECT_NE(o.err.find("Permission denied"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("SECRET"), std::string::npos);
}

TEST(RunConfinement, MktempInTmpdirWorksAndTheDirGoesAway) {
  TempDir ws;
  auto o =
      run_vigil({"run", "--", "sh", "-c", "f=$(mktemp) && echo data > \"$f\" && echo \"$TMPDIR\""},
                ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string tmpdir = trim(o.out);
  ASSERT_FALSE(tmpdir.empty());
  EXPECT_NE(tmpdir.find("/tmp"), std::string::npos);
  EXPECT_FALSE(exists(tmpdir)) << "the session temp dir must be removed after the session";
}

TEST(RunConfinement, RootInsideHasNoPowerOverTheHost) {
  TempDir ws;
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "grep CapEff /proc/self/status; "
                      "(echo h > /proc/sysrq-trigger) 2>/dev/null && echo sysrq-writable; "
                      "(echo 1 > /proc/sys/kernel/sysrq) 2>/dev/null && echo procsys-writable; "
                      "(echo x > /sys/kernel/uevent_helper) 2>/dev/null && echo sys-writable; "
                      "ls /dev | tr '\\n' ' '"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("CapEff:\t0000000000000000"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("writable"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find(" sda"), std::string::npos) << o.out;
}

// --- mandatory denies -------------------------------------------------------------

struct DepthCase {
  int depth;
};

std::string dir_at_depth(const TempDir& ws, int depth) {
  std::string d = ws.path();
  for (int i = 1; i < depth; ++i) d += "/d" + std::to_string(i);
  return d;
}

TEST(RunConfinement, EveryMandatoryDenyAtDepth1To3IsUnwritable) {
  TempDir ws;
  std::vector<std::string> targets;
  for (int depth = 1; depth <= 3; ++depth) {
    const std::string base = dir_at_depth(ws, depth);
    for (const auto& d : mandatory_denies()) {
      const std::string p = base + "/" + std::string(d.relpath);
      if (d.shape == DenyShape::kDir) {
        make_dirs(p);
        write_file(p + "/inner", "original");
        targets.push_back(p + "/inner");
      } else {
        make_dirs(p.substr(0, p.rfind('/')));
        write_file(p, "original");
        targets.push_back(p);
      }
    }
  }
  std::string script =
      "import sys,errno\n"
      "for p in sys.argv[1:]:\n"
      "  try:\n"
      "    open(p,'a').write('pwned'); print(p, 'ok')\n"
      "  except OSError as e:\n"
      "    print(p, errno.errorcode[e.errno])\n";
  std::vector<std::string> args = {"run", "--", "python3", "-c", script};
  args.insert(args.end(), targets.begin(), targets.end());
  auto o = run_vigil(args, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const auto& t : targets) {
    SCOPED_TRACE(t);
    EXPECT_NE(o.out.find(t + " EROFS"), std::string::npos) << o.out;
    EXPECT_EQ(read_file(t), "original");
  }
}

// A protected directory that exists is guarded as a whole, not file by file: a *new* file
// or a new subdirectory created inside it, at depth 1 to 3 of the workspace, is refused
// and leaves nothing on the host.
TEST(RunConfinement, NewFilesInsideAnExistingProtectedDirectoryAreRefused) {
  TempDir ws;
  std::vector<std::string> targets;
  for (int depth = 1; depth <= 3; ++depth) {
    const std::string base = dir_at_depth(ws, depth);
    for (const auto& d : mandatory_denies()) {
      if (d.shape != DenyShape::kDir) continue;
      const std::string dir = base + "/" + std::string(d.relpath);
      make_dirs(dir);
      write_file(dir + "/existing", "original");
      targets.push_back(dir + "/new-file");
      targets.push_back(dir + "/new-dir/file");
    }
  }
  ASSERT_FALSE(targets.empty());
  const std::string script =
      "import os,sys,errno\n"
      "for p in sys.argv[1:]:\n"
      "  try:\n"
      "    os.makedirs(os.path.dirname(p), exist_ok=True)\n"
      "    open(p,'x').write('pwned'); print(p, 'ok')\n"
      "  except OSError as e:\n"
      "    print(p, errno.errorcode[e.errno])\n";
  std::vector<std::string> args = {"run", "--", "python3", "-c", script};
  args.insert(args.end(), targets.begin(), targets.end());
  auto o = run_vigil(args, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const auto& t : targets) {
    SCOPED_TRACE(t);
    EXPECT_NE(o.out.find(t + " EROFS"), std::string::npos) << o.out;
    EXPECT_FALSE(exists(t));
    EXPECT_FALSE(exists(t.substr(0, t.rfind('/'))) && t.ends_with("/new-dir/file"))
        << "the new directory was created on the host";
  }
}

TEST(RunConfinement, GitObjectsRefsIndexStayWritable) {
  TempDir ws;
  for (const char* d : {".git/objects/ab", ".git/refs/heads", ".git/hooks"}) make_dirs(ws / d);
  write_file(ws / ".git/config", "[core]\n");
  write_file(ws / ".git/index", "idx");
  write_file(ws / ".git/HEAD", "ref: refs/heads/main\n");
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "echo o > .git/objects/ab/cd && echo r > .git/refs/heads/main && "
                      "echo i > .git/index && echo all-ok"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "all-ok") << o.err;
  EXPECT_EQ(read_file(ws / ".git/index"), "i\n");
}

TEST(RunConfinement, MissingProtectedNamesCannotBeCreatedAndLeaveNoTrace) {
  TempDir ws;
  make_dirs(ws / ".git/hooks");
  write_file(ws / ".git/config", "[core]\n");
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "for f in .bashrc .profile .mcp.json .gitconfig; do (echo x > $f) "
                      "2>/dev/null && echo made $f; done; "
                      "mkdir -p .vscode/x 2>/dev/null && echo made vscode; "
                      "mkdir -p .claude/commands 2>/dev/null && echo made claude; echo done"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "done") << o.out;
  for (const char* n : {".bashrc", ".profile", ".mcp.json", ".gitconfig", ".vscode",
                         ".claude/commands", ".idea"}) {
    EXPECT_FALSE(exists(ws / n)) << n << " placeholder left behind";
  }
  // Under the gatekeeper `mkdir -p` made .claude itself (no protected name) before the
  // refusal of .claude/commands; otherwise a placeholder stood there and must be gone.
  if (!kernel_has_gatekeeper()) {
    EXPECT_FALSE(exists(ws / ".claude")) << "placeholder left behind";
  }
}

// A directory holding a protected name that exists is pinned as a mount of its own
// (.claude, with agents/ read-only in it): a missing sibling under it (.claude/commands)
// is judged with the components above the pin, and refused at the call, not left to the
// post-run check.
TEST(RunConfinement, AMissingProtectedNameBesideAnExistingOneIsRefusedAtTheCall) {
  TempDir ws;
  make_dirs(ws / ".claude/agents");
  make_dirs(ws / "sub/.vscode");
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "mkdir .claude/commands 2>/dev/null && echo made commands; "
                      "(echo x > .claude/commands.md) && echo made plain; "
                      "mkdir -p sub/.claude/agents && (echo x > sub/.claude/commands) 2>/dev/null "
                      "&& echo made nested; echo done"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "made plain\ndone") << o.out << o.err;
  EXPECT_NE(o.err.find("deny create"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("quarantined"), std::string::npos) << "left to the post-run check: " << o.err;
  EXPECT_FALSE(exists(ws / ".claude/commands"));
}

// Below the top level, a protected name that did not exist at launch has no mount to
// stop it (vigil cannot bind every name into every directory, nor into directories made
// during the session): vigil-init refuses creating it at the call (EACCES), a deny line
// each. The names inside a new repository's .git are left to the git rules: those writes
// go through, and being what git init makes they are only worth knowing (issue 38.2): the
// log records which name each write was, `vigil -v` says it in one note outside the
// block, and the block holds none of it; replay recomputes the same block from the log.
TEST(RunConfinement, UnguardedProtectedNamesAreToldToTheModel) {
  TempDir ws;
  TempDir logs;
  make_dirs(ws / "sub/deep");
  const std::string log = logs / "s.jsonl";
  auto o = run_vigil({"-v", "run", "--log", log, "--", "sh", "-c",
                      "mkdir -p sub/.vscode && echo x > sub/.vscode/tasks.json; "
                      "echo y > sub/deep/.bashrc; git init -q r; rm sub/deep/.bashrc; "
                      "echo fine > sub/notes.txt; echo done"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "done") << o.out;
  EXPECT_FALSE(exists(ws / "sub/.vscode"));  // refused at the call
  EXPECT_FALSE(exists(ws / "sub/deep/.bashrc"));
  for (const std::string& line :
       {"deny create " + (ws / "sub/.vscode") + " (protected name .vscode ",
        "deny write " + (ws / "sub/deep/.bashrc") + " (protected name .bashrc "}) {
    EXPECT_NE(o.err.find(line), std::string::npos) << line << "\n" << o.err;
  }
  const std::size_t open = o.err.find("<sandbox_violations>");
  ASSERT_NE(open, std::string::npos) << o.err;
  const std::string shown = o.err.substr(open, o.err.find("</sandbox_violations>") - open);
  EXPECT_EQ(shown.find(ws / "r/.git"), std::string::npos) << "git init's own names: " << o.err;
  EXPECT_EQ(shown.find("unguarded"), std::string::npos) << o.err;
  // The one note outside the block, at -v.
  EXPECT_NE(o.err.find("git wrote the protected names (hooks, config) of 1 new repository: " +
                       (ws / "r/.git") + "; allowed"),
            std::string::npos)
      << o.err;
  // One line, however many writes went into it (git's sample hooks).
  // (In the block: -v's debug lines name what they like.)
  EXPECT_EQ(shown.find("pre-commit.sample"), std::string::npos) << o.err;
  EXPECT_EQ(shown.find("notes.txt"), std::string::npos) << "an ordinary write is not told";
  EXPECT_EQ(shown.find("unguarded unlink"), std::string::npos) << "a deletion plants nothing";
  const std::string text = read_file(log);
  EXPECT_EQ(text.find("\"unguarded\":\".vscode\""), std::string::npos);
  EXPECT_NE(text.find("\"result\":\"EACCES\""), std::string::npos);
  EXPECT_NE(text.find("\"unguarded\":\".git/hooks\""), std::string::npos);
  auto v = run_vigil({"replay", "--verify", log}, logs.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  auto a = run_vigil({"replay", "--annotate", log}, logs.path());
  EXPECT_EQ(a.exit_code, 0) << a.err;
  const std::size_t block = o.err.find("<sandbox_violations>");
  ASSERT_NE(block, std::string::npos);
  const std::string end = "</sandbox_violations>\n";  // vigil's "session log:" line follows
  EXPECT_EQ(a.out, o.err.substr(block, o.err.find(end, block) + end.size() - block))
      << "replay recomputes exactly what the model was told";
  // Every replay view marks the writes that were not stopped (issue 21.1).
  auto w = run_vigil({"replay", "--writes", log}, logs.path());
  EXPECT_NE(w.out.find("NOT STOPPED: protected name .git/hooks"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find(" 0 UNGUARDED (not stopped)"), std::string::npos) << w.out;
  auto t = run_vigil({"replay", log}, logs.path());
  EXPECT_NE(t.out.find("UNGUARDED"), std::string::npos) << t.out;
  auto h = run_vigil({"replay", "--html", logs / "r.html", log}, logs.path());
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const std::string page = read_file(logs / "r.html");
  // A new repository's own names: allowed, for review, not "NOT stopped" (issue 38.2).
  EXPECT_NE(page.find("<section id=\"repositories\"><h2>Allowed, for review: 1 new repositor"),
            std::string::npos);
  EXPECT_NE(page.find("<tr class=\"repo\"><td class=\"v\">allowed</td>"), std::string::npos);
  EXPECT_EQ(page.find("protected name(s) written and NOT stopped"), std::string::npos);
}

// A protected name that is a symlink is guarded at its target; the link itself can be
// removed (no mount can sit on a symlink), but making the name again is refused at the
// call, like any protected name under a writable root.
TEST(RunConfinement, AReplacedProtectedSymlinkIsTold) {
  TempDir ws;
  make_dirs(ws / "dot");
  write_file(ws / "dot/bashrc", "orig\n");
  ASSERT_EQ(::symlink("dot/bashrc", (ws / ".bashrc").c_str()), 0);
  auto o =
      run_vigil({"run", "--", "sh", "-c",
                 "echo x >> .bashrc 2>/dev/null; rm .bashrc && echo evil > .bashrc; echo done"},
                ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(ws / "dot/bashrc"), "orig\n");  // the target: denied
  EXPECT_NE(o.err.find("deny write " + (ws / "dot/bashrc") + " (protected path"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("deny write " + (ws / ".bashrc") + " (protected name .bashrc "),
            std::string::npos)
      << o.err;
  EXPECT_FALSE(exists(ws / ".bashrc"));
}

TEST(RunConfinement, RenamingAnAncestorCannotStepAroundADeny) {
  TempDir ws;
  make_dirs(ws / "sub/.git/hooks");
  write_file(ws / "sub/.git/config", "[core]\n");
  make_dirs(ws / ".git/hooks");
  write_file(ws / ".git/config", "[core]\n");
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "mv .git .git2 2>/dev/null && echo moved-root; "
                      "mv sub sub2 2>/dev/null && echo moved-sub; "
                      "mv sub/.git sub/.git2 2>/dev/null && echo moved-subgit; "
                      "rm -rf .git 2>/dev/null; echo done"},
                     ws.path());
  EXPECT_EQ(trim(o.out), "done") << o.out;
  EXPECT_EQ(read_file(ws / ".git/config"), "[core]\n");
  EXPECT_EQ(read_file(ws / "sub/.git/config"), "[core]\n");
}

TEST(RunConfinement, AFileWhereAProtectedDirectoryWouldGoIsCappedAndStillRuns) {
  // A file named .claude (or a placeholder left behind by a vigil that was SIGKILLed)
  // stands where .claude/commands would have to be created: the run must still start,
  // and the file must not be replaceable by a directory.
  TempDir ws;
  write_file(ws / ".claude", "");
  write_file(ws / ".bashrc", "");
  auto o =
      run_vigil({"run", "--", "sh", "-c",
                 "(rm -f .claude && mkdir -p .claude/commands && echo pwn > .claude/commands/x) "
                 "2>/dev/null && echo replaced; echo done"},
                ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(trim(o.out), "done") << o.out << o.err;
  struct stat st {};
  ASSERT_EQ(::lstat((ws / ".claude").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(RunProcesses, TheCommandInheritsNoDescriptorButStdio) {
  // A caller that leaks an fd to a host directory would hand the command a way around
  // every mount: vigil-init closes everything above stderr.
  TempDir ws, outside;
  // ls runs as the command itself (no shell, whose pipelines hold fds of their own while
  // they start): it lists 0, 1, 2 and the one it opened to read the directory.
  auto o = run_vigil({"run", "--", "ls", "/proc/self/fd"}, ws.path(), 60, {}, outside.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "0\n1\n2\n3\n") << o.err;
}

TEST(RunProcesses, RefusesAVigilInitTheSandboxCouldRewrite) {
  // A vigil installed inside a writable root would let one session plant the PID 1 of
  // the next: vigil (and vigil-init beside it) copied into the workspace must refuse.
  TempDir ws;
  const std::string bin = vigil_bin();
  const std::string init = bin.substr(0, bin.rfind('/')) + "/vigil-init";
  const std::string init_fallback = bin.substr(0, bin.rfind('/')) + "/../observer/vigil-init";
  const std::string src_init = exists(init) ? init : init_fallback;
  const std::string cmd = "cp '" + bin + "' '" + (ws / "vigil") + "' && cp '" + src_init + "' '" +
                          (ws / "vigil-init") + "' && cd '" + ws.path() +
                          "' && ./vigil run -- true 2>err; echo $? > rc";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(read_file(ws / "rc"), "2\n");
  EXPECT_NE(read_file(ws / "err").find("writable inside the sandbox"), std::string::npos)
      << read_file(ws / "err");
}

TEST(RunProcesses, TheCommandSeesOnlyItsOwnProcessTree) {
  // vigil-init is PID 1 (no bwrap init, no helper beside the command), and it is
  // non-dumpable: its environ cannot be read.
  TempDir ws;
  auto o = run_vigil({"run", "--", "sh", "-c",
                      "ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; "
                      "cat /proc/1/environ >/dev/null 2>&1 || echo environ-refused"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // 1 = vigil-init, 2 = sh, then ls/grep/sort/tr (pids 3..6): nothing else.
  EXPECT_EQ(o.out.substr(0, 4), "1 2 ") << o.out;
  EXPECT_NE(o.out.find("environ-refused"), std::string::npos) << o.out;
}

TEST(RunNetwork, TheOnlyWayOutIsTheBridgeToTheProxyWhichExplainsRefusals) {
  // curl honours HTTP_PROXY: through vigil-init's bridge on 127.0.0.1:3128 to the
  // session's proxy, which refuses a host off the allow list before any DNS lookup, so
  // nothing leaves this machine. The model is told in the annotation block.
  TempDir ws;
  auto o = run_vigil({"run", "--", "curl", "-sS", "-i", "-m", "10", "http://blocked.example/"},
                     ws.path());
  EXPECT_NE(o.out.find("403"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("X-Proxy-Error: blocked-by-allowlist"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("deny network-outbound blocked.example:80 (host is not on the allow list; "
                       "to allow it, add \"blocked.example:80\" to network.allowedDomains)"),
            std::string::npos)
      << o.err;
  // Without the proxy variables there is no route at all: the namespace has only lo
  // and an empty routing table (checked without sending anything anywhere).
  auto direct = run_vigil(
      {"run", "--", "sh", "-c",
       "grep ':' /proc/net/dev | cut -d: -f1 | tr -d ' '; tail -n +2 /proc/net/route | wc -l"},
      ws.path());
  EXPECT_EQ(direct.out, "lo\n0\n") << direct.out << direct.err;
}

// --- processes, exit codes, signals --------------------------------------------------

TEST(RunProcesses, ExitCodesPropagate) {
  TempDir ws;
  EXPECT_EQ(run_vigil({"run", "--", "sh", "-c", "exit 7"}, ws.path()).exit_code, 7);
  EXPECT_EQ(run_vigil({"run", "--", "true"}, ws.path()).exit_code, 0);
  EXPECT_EQ(run_vigil({"run", "-c", "exit 3"}, ws.path()).exit_code, 3);
  EXPECT_EQ(run_vigil({"run", "--", "sh", "-c", "kill -TERM $$"}, ws.path()).exit_code, 143);
  EXPECT_EQ(run_vigil({"run", "--", "sh", "-c", "kill -KILL $$"}, ws.path()).exit_code, 137);
  auto missing = run_vigil({"run", "--", "/nonexistent/cmd"}, ws.path());
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("command not found"), std::string::npos) << missing.err;
  EXPECT_EQ(run_vigil({"run", "--", "no-such-command-vigil"}, ws.path()).exit_code, 127);
  write_file(ws / "noexec.sh", "#!/bin/sh\n");
  EXPECT_EQ(run_vigil({"run", "--", "./noexec.sh"}, ws.path()).exit_code, 126);
}

TEST(RunProcesses, PathLookupSkipsWhatExecvpSkipsAndRunsScriptsWithoutAShebang) {
  // vigil-init walks $PATH itself before installing the observer's filter; it must pick
  // what execvp would: not a directory, not a file without x, and a #!-less script runs
  // under /bin/sh.
  TempDir ws;
  make_dirs(ws / "bin1/tool");
  make_dirs(ws / "bin2");
  make_dirs(ws / "bin3");
  write_file(ws / "bin2/tool", "echo from-bin2\n");
  write_file(ws / "bin2/only-here", "echo never\n");
  write_file(ws / "bin3/tool", "echo from-bin3\n");
  ASSERT_EQ(::chmod((ws / "bin2/tool").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((ws / "bin2/only-here").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((ws / "bin3/tool").c_str(), 0755), 0);
  const std::map<std::string, std::string> env = {
      {"PATH", ws / "bin1" + ":" + ws / "bin2" + ":" + ws / "bin3" + ":/usr/bin:/bin"}};
  auto r = run_vigil({"run", "--", "tool"}, ws.path(), 60, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "from-bin3");
  // Found, but nowhere executable: execvp's EACCES, as a shell reports it.
  EXPECT_EQ(run_vigil({"run", "--", "only-here"}, ws.path(), 60, env).exit_code, 126);
}

TEST(RunProcesses, NoProcessOutlivesTheCommand) {
  TempDir ws;
  const std::string m1 = unique_marker("bg"), m2 = unique_marker("setsid"),
                    m3 = unique_marker("dfork");
  // Each sleeper writes its pid (renamed into place, so never half-written) and sleeps.
  write_file(ws / "sleeper.py",
             "import os, sys, time\n"
             "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
             "os.replace(sys.argv[1] + '.tmp', sys.argv[1] + '.pid')\n"
             "time.sleep(1000)\n");
  // The command starts a background child, a setsid'd one and a double-forked one, waits
  // until all three have written their pids (a condition, bounded at 20 s), then records
  // which of them are alive (kill -0) at the moment it exits.
  const std::string script =
      "python3 sleeper.py " + m1 + " & setsid python3 sleeper.py " + m2 +
      " & (python3 sleeper.py " + m3 + " &); "
      "for i in $(seq 400); do [ -s " + m1 + ".pid ] && [ -s " + m2 + ".pid ] && [ -s " + m3 +
      ".pid ] && break; sleep 0.05; done; "
      "for m in " + m1 + " " + m2 + " " + m3 + "; do "
      "[ -s $m.pid ] && kill -0 \"$(cat $m.pid)\" && echo \"alive $m\"; done > alive.txt; exit 0";
  auto o = run_vigil({"run", "--", "sh", "-c", script}, ws.path(), 30);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // The claim needs its premise: all three were running when the command exited.
  const std::string alive = read_file(ws / "alive.txt");
  for (const auto& m : {m1, m2, m3}) {
    ASSERT_NE(alive.find("alive " + m + "\n"), std::string::npos)
        << m << " was not running when the command exited; alive.txt:\n" << alive << o.err;
  }
  // vigil returns after bwrap, which returns after PID 1, whose exit kills and reaps the
  // whole PID namespace: nothing may be left by now, without waiting.
  for (const auto& m : {m1, m2, m3}) EXPECT_TRUE(pids_with_marker(m).empty()) << m << " survived";
}

TEST(RunProcesses, SigtermToVigilReachesTheCommand) {
  TempDir ws, state;
  // vigil is started by a shell that sends it SIGTERM after the command is up; the
  // command traps TERM and exits 42, which vigil must pass through.
  const std::string bin = vigil_bin();
  const std::string script =
      "'" + bin +
      "' run -- sh -c 'trap \"exit 42\" TERM; echo up > ready; while :; do sleep 0.05; done' & "
      "v=$!; for i in $(seq 100); do [ -f ready ] && break; sleep 0.05; done; kill -TERM $v; wait "
      "$v; echo rc=$?";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(1);
    ::setenv("XDG_STATE_HOME", state.path().c_str(), 1);  // the session log goes away with it
    ::execl("/bin/sh", "sh", "-c", (script + " > out.txt 2>&1").c_str(), nullptr);
    ::_exit(1);
  }
  EXPECT_EQ(wait_child(pid, std::chrono::seconds(60)), 0) << "the shell driving vigil hung";
  EXPECT_NE(read_file(ws / "out.txt").find("rc=42"), std::string::npos)
      << read_file(ws / "out.txt");
}

}  // namespace
}  // namespace vigil::test
