// `vigil replay --changes`, `--diff` and `vigil undo` (issue 17) on real sessions: sed -i,
// git checkout of another branch, npm install of a local package, rm -rf of a tree, mv of
// a directory, a binary file rewritten. Each is checked against snapshots of the workspace
// taken on the host before and after the session: --changes lists exactly the paths that
// differ, with the right hashes; --diff is diff(1)'s; undo puts back the snapshot byte for
// byte, modes and symlinks included; a path changed on the host since is a conflict.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/base/sha256.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

struct Entry {
  std::string type;  // file, symlink, dir
  unsigned mode = 0;
  std::string bytes;  // content or target
  bool operator==(const Entry&) const = default;
};
using Snapshot = std::map<std::string, Entry>;  // absolute path -> entry

void walk(const std::string& dir, Snapshot* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : names) {
    const std::string p = dir + "/" + n;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    Entry e;
    e.mode = st.st_mode & 07777;
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      const ssize_t len = ::readlink(p.c_str(), buf, sizeof buf);
      e.type = "symlink";
      e.bytes.assign(buf, static_cast<std::size_t>(std::max<ssize_t>(len, 0)));
      e.mode = 0;  // a symlink's mode means nothing on Linux
    } else if (S_ISDIR(st.st_mode)) {
      e.type = "dir";
      walk(p, out);
    } else {
      e.type = "file";
      e.bytes = read_file(p);
    }
    (*out)[p] = e;
  }
}

Snapshot snapshot(const std::string& dir) {
  Snapshot s;
  walk(dir, &s);
  return s;
}

struct Session {
  TempDir ws, state;
  std::string log;
  Snapshot before, after;
  Outcome run;
  std::map<std::string, std::string> env() const { return {{"XDG_STATE_HOME", state.path()}}; }
  Outcome vigil(const std::vector<std::string>& args) const { return run_vigil(args, ws.path(), 120, env()); }
};

// Runs `script` under vigil in a workspace `setup` made, snapshotting before and after.
void run_session(Session* s, const std::string& setup, const std::string& script) {
  ASSERT_EQ(std::system(("cd '" + s->ws.path() + "' && " + setup).c_str()), 0) << setup;
  s->before = snapshot(s->ws.path());
  s->log = s->state / "s.jsonl";
  s->run = s->vigil({"run", "--log", s->log, "--", "sh", "-c", script});
  ASSERT_EQ(s->run.exit_code, 0) << s->run.err;
  s->after = snapshot(s->ws.path());
}

struct Listed {
  std::string net, from, before_hash, after_hash;
};

// --changes parsed: path -> what it says (renames under their new name).
std::map<std::string, Listed> changes_of(const Session& s) {
  const Outcome o = s.vigil({"replay", "--changes", s.log});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::map<std::string, Listed> out;
  std::istringstream in(o.out);
  std::string line, current;
  const std::regex head("^(created|modified|deleted|renamed) (\\S+)(?: -> (\\S+))?");
  const std::regex hash("sha256 ([0-9a-f]{64})");
  for (std::smatch m; std::getline(in, line);) {
    if (std::regex_search(line, m, head)) {
      Listed l;
      l.net = m[1];
      if (m[3].matched) {
        l.from = m[2];
        current = m[3];
      } else {
        current = m[2];
      }
      out[current] = l;
    } else if (!current.empty() && line.starts_with("  before") && std::regex_search(line, m, hash)) {
      out[current].before_hash = m[1];
    } else if (!current.empty() && line.starts_with("  after") && std::regex_search(line, m, hash)) {
      out[current].after_hash = m[1];
    }
  }
  return out;
}

// What the snapshots say changed, as --changes must list it (renames aside).
std::map<std::string, std::string> snapshot_changes(const Snapshot& a, const Snapshot& b) {
  std::map<std::string, std::string> out;
  for (const auto& [p, e] : a) {
    auto it = b.find(p);
    if (it == b.end()) {
      out[p] = "deleted";
    } else if (!(it->second == e)) {
      out[p] = "modified";
    }
  }
  for (const auto& [p, e] : b) {
    if (a.count(p) == 0) out[p] = "created";
  }
  return out;
}

// --changes lists exactly what the snapshots show changed, each file with the hashes of
// its content before and after.
void expect_changes_exact(const Session& s) {
  const auto listed = changes_of(s);
  const auto want = snapshot_changes(s.before, s.after);
  std::map<std::string, std::string> got;
  for (const auto& [p, l] : listed) got[p] = l.net;
  EXPECT_EQ(got, want) << s.vigil({"replay", "--changes", s.log}).out;
  for (const auto& [p, l] : listed) {
    auto b = s.before.find(p);
    auto a = s.after.find(p);
    if (b != s.before.end() && b->second.type == "file") {
      EXPECT_EQ(l.before_hash, sha256_hex(b->second.bytes)) << p;
    }
    if (a != s.after.end() && a->second.type == "file") {
      EXPECT_EQ(l.after_hash, sha256_hex(a->second.bytes)) << p;
    }
  }
}

// Undo restores the before snapshot exactly; its own log verifies.
void expect_undo_restores(const Session& s) {
  const Outcome o = s.vigil({"undo", s.log});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  const Snapshot now = snapshot(s.ws.path());
  EXPECT_EQ(snapshot_changes(s.before, now), (std::map<std::string, std::string>{})) << o.out;
  EXPECT_TRUE(now == s.before) << o.out;
  const auto at = o.err.find("undo log: ");
  ASSERT_NE(at, std::string::npos) << o.err;
  std::string undo_log = o.err.substr(at + 10);
  undo_log = undo_log.substr(0, undo_log.find('\n'));
  const Outcome v = s.vigil({"replay", "--verify", undo_log});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// diff -u of the host's two versions, without its header lines.
std::string host_diff(const std::string& before, const std::string& after) {
  TempDir d;
  write_file(d / "a", before);
  write_file(d / "b", after);
  const std::string out = d / "out";
  const int rc = std::system(("diff -u '" + (d / "a") + "' '" + (d / "b") + "' > '" + out + "'").c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
  std::string text = read_file(out);
  text = text.substr(text.find('\n') + 1);
  return text.substr(text.find('\n') + 1);
}

TEST(ChangesUndo, SedInPlace) {
  Session s;
  run_session(&s, "printf 'a = 1\\nb = 2\\nc = 3\\n' > calc.py && chmod 640 calc.py",
              "sed -i 's/2/20/' calc.py");
  expect_changes_exact(s);
  const std::string path = s.ws / "calc.py";
  const Outcome d = s.vigil({"replay", "--diff", s.log});
  EXPECT_EQ(d.out, "=== modified " + path + "\n--- " + path + "\n+++ " + path + "\n" +
                       host_diff("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n"));
  expect_undo_restores(s);
}

TEST(ChangesUndo, RmRfOfATree) {
  Session s;
  run_session(&s,
              "mkdir -p t/s t/e && chmod 750 t/s && printf one > t/a && printf two > t/s/b && "
              "chmod 600 t/s/b && ln -s a t/l && printf keep > k",
              "rm -rf t");
  expect_changes_exact(s);
  const Outcome d = s.vigil({"replay", "--diff", s.log, s.ws / "t/s/b"});
  EXPECT_EQ(d.out, "=== deleted " + (s.ws / "t/s/b") + "\n--- " + (s.ws / "t/s/b") +
                       "\n+++ /dev/null\n@@ -1 +0,0 @@\n-two\n\\ No newline at end of file\n");
  expect_undo_restores(s);
}

TEST(ChangesUndo, MvOfADirectory) {
  Session s;
  run_session(&s, "mkdir -p d/in && printf x > d/in/f && printf y > d/g", "mv d moved");
  const auto listed = changes_of(s);
  ASSERT_EQ(listed.size(), 1U) << s.vigil({"replay", "--changes", s.log}).out;
  EXPECT_EQ(listed.begin()->first, s.ws / "moved");
  EXPECT_EQ(listed.begin()->second.net, "renamed");
  EXPECT_EQ(listed.begin()->second.from, s.ws / "d");
  expect_undo_restores(s);
}

TEST(ChangesUndo, BinaryFileRewritten) {
  Session s;
  run_session(&s, "printf '\\000\\001\\002\\003binary' > blob.bin && chmod 755 blob.bin",
              "printf '\\377\\000new' > blob.bin");
  expect_changes_exact(s);
  const std::string before = s.before.at(s.ws / "blob.bin").bytes;
  const std::string after = s.after.at(s.ws / "blob.bin").bytes;
  const Outcome d = s.vigil({"replay", "--diff", s.log});
  EXPECT_NE(d.out.find("binary, " + std::to_string(before.size()) + " -> " + std::to_string(after.size()) +
                       " bytes, sha256 " + sha256_hex(before) + " -> " + sha256_hex(after)),
            std::string::npos)
      << d.out;
  expect_undo_restores(s);
}

TEST(ChangesUndo, GitCheckoutOfAnotherBranch) {
  Session s;
  run_session(&s,
              "git init -q -b main . && git config user.email t@e && git config user.name t && "
              "printf 'v1\\n' > a.txt && printf 'same\\n' > b.txt && git add . && git commit -qm one && "
              "git checkout -qb other && printf 'v2\\n' > a.txt && git rm -q b.txt && printf 'new\\n' > "
              "c.txt && chmod 755 c.txt && git add . && git commit -qm two && git checkout -q main",
              "git checkout -q other");
  ASSERT_EQ(read_file(s.ws / "a.txt"), "v2\n");
  expect_changes_exact(s);
  expect_undo_restores(s);
}

TEST(ChangesUndo, NpmInstallOfALocalPackage) {
  if (std::system("command -v npm >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "npm is not installed (apt-get install npm; tools/bootstrap.sh installs it for CI)";
  }
  Session s;
  // A package as a tarball in the workspace: npm installs it with no network at all.
  run_session(&s,
              "mkdir -p pkgsrc/lib && printf '{\"name\":\"localpkg\",\"version\":\"1.0.0\",\"main\":\"lib/i.js\"}' "
              "> pkgsrc/package.json && printf 'module.exports = 1;\\n' > pkgsrc/lib/i.js && "
              "(cd pkgsrc && npm pack --silent --cache ../.npmcache >/dev/null) && mv pkgsrc/localpkg-1.0.0.tgz . && "
              "rm -rf pkgsrc .npmcache && printf '{\"name\":\"app\",\"version\":\"1.0.0\"}' > package.json",
              "npm install --offline --no-audit --no-fund --cache \"$PWD/.npmcache\" ./localpkg-1.0.0.tgz "
              ">/dev/null 2>&1");
  ASSERT_TRUE(exists(s.ws / "node_modules/localpkg/lib/i.js")) << s.run.err;
  expect_changes_exact(s);
  expect_undo_restores(s);
}

TEST(ChangesUndo, AHostChangeSinceTheSessionIsAConflict) {
  Session s;
  run_session(&s, "printf 'one\\n' > a && printf 'two\\n' > b", "printf 'ONE\\n' > a && printf 'TWO\\n' > b");
  write_file(s.ws / "b", "changed on the host\n");
  const Outcome dry = s.vigil({"undo", "--dry-run", s.log});
  EXPECT_EQ(dry.exit_code, 1) << dry.out;
  EXPECT_NE(dry.out.find("  " + (s.ws / "b") + ": CONFLICT: changed on the host since"), std::string::npos)
      << dry.out;
  EXPECT_EQ(read_file(s.ws / "a"), "ONE\n") << "a dry run changes nothing";
  // Plan first, then act (issue 32): one step that cannot be done, and nothing is done.
  const Outcome o = s.vigil({"undo", s.log});
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("refused: nothing will be changed"), std::string::npos) << o.out;
  EXPECT_EQ(read_file(s.ws / "a"), "ONE\n") << "a refused plan changes nothing";
  EXPECT_EQ(read_file(s.ws / "b"), "changed on the host\n") << "a conflict is left alone";
  const Outcome only_a = s.vigil({"undo", s.log, s.ws / "a"});
  EXPECT_EQ(only_a.exit_code, 0) << only_a.out << only_a.err;
  EXPECT_EQ(read_file(s.ws / "a"), "one\n");
  const Outcome forced = s.vigil({"undo", "--force", s.log, s.ws / "b"});
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  EXPECT_EQ(read_file(s.ws / "b"), "two\n");
}

// A symlink planted on the way after the session never sends a restore elsewhere, and a
// log that does not verify is refused.
TEST(ChangesUndo, NeverFollowsAPlantedLinkAndRefusesABrokenLog) {
  Session s;
  TempDir outside;
  run_session(&s, "mkdir d && printf 'orig\\n' > d/f", "printf 'changed\\n' > d/f");
  ASSERT_EQ(::rename((s.ws / "d").c_str(), (s.ws / "d.real").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), (s.ws / "d").c_str()), 0);
  write_file(outside / "f", "changed\n");  // what the session left, seen through the link
  const Outcome o = s.vigil({"undo", "--force", s.log});
  EXPECT_NE(o.exit_code, 0) << o.out;
  EXPECT_EQ(read_file(outside / "f"), "changed\n") << "nothing written through the link";
  EXPECT_NE(o.out.find("symlink on the way"), std::string::npos) << o.out;

  std::string text = read_file(s.log);
  const auto seq1 = text.find("\"seq\":1,");
  ASSERT_NE(seq1, std::string::npos);
  text.replace(seq1, 8, "\"seq\":9,");  // record 1 now claims to be record 9
  write_file(s.log, text);
  const Outcome refused = s.vigil({"undo", s.log});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("does not verify"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace vigil::test
