// Issue 31 (trust boundaries), the host-side state: change capture, replay --changes and
// --diff, undo, the capture store's bounds and the quarantine, with the real bwrap, real
// git and real files on the host.
//   - a name in the sandbox's own trees (/dev/shm, its temp dir) is never the host's:
//     the supervisor does not read, keep, diff or delete the host's file of that name;
//   - undo acts only on logs sealed with this user's key, and only inside the session's
//     recorded writable roots;
//   - the store skips the session temp dir, stops at its caps and says so, and goes with
//     its log (vigil.log.keep, `vigil logs prune`);
//   - a git config that gained a key that runs a program loses that key only.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/base/sha256.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

// Every byte the capture stores under `state` hold, concatenated (files and packs alike).
std::string store_bytes(const std::string& state) {
  std::string all;
  const std::string root = state + "/vigil/captures";
  for (const auto& id : entries(root))
    for (const auto& f : entries(root + "/" + id)) all += read_file(root + "/" + id + "/" + f);
  return all;
}

int host_sh(const std::string& cwd, const std::string& script, std::string* out = nullptr) {
  TempDir o;
  const std::string cmd = "cd '" + cwd + "' && (" + script + ") > '" + (o / "out") + "' 2>&1";
  const int st = std::system(cmd.c_str());
  if (out != nullptr) *out = read_file(o / "out");
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct Ran {
  Outcome o;
  std::string log;
};

Ran run_in(const std::string& ws, const std::string& state, const std::string& script,
           const std::vector<std::string>& extra = {}) {
  Ran r;
  r.log = state + "/s.jsonl";
  std::vector<std::string> args = {"run", "--log", r.log};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  r.o = run_vigil(args, ws, 120, {{"XDG_STATE_HOME", state}});
  return r;
}

Outcome vigil_in(const std::string& state, const std::vector<std::string>& args,
                 const std::string& cwd) {
  return run_vigil(args, cwd, 120, {{"XDG_STATE_HOME", state}});
}

// A file of the host's own in /dev/shm, removed at the end.
struct ShmFile {
  std::string path;
  explicit ShmFile(const std::string& content) : path("/dev/shm/" + unique_marker("t31")) {
    write_file(path, content);
  }
  ~ShmFile() { ::unlink(path.c_str()); }
};

// The review's break (issue 31, item 4): the command writes the sandbox's own
// /dev/shm/NAME while the host has a /dev/shm/NAME of its own.
TEST(TrustState, ASandboxDevShmWriteNeverReachesTheHostsFile) {
  TempDir ws, state;
  ShmFile host("host secret 31\n");
  const std::string name = host.path.substr(std::string("/dev/shm/").size());
  const Ran r = run_in(ws.path(), state.path(),
                       "printf 'sandbox\\n' > /dev/shm/" + name + "; printf 'x\\n' > a.txt");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  EXPECT_EQ(read_file(host.path), "host secret 31\n");
  EXPECT_EQ(store_bytes(state.path()).find("host secret 31"), std::string::npos)
      << "the store kept a host file the session never touched";
  const Outcome changes = vigil_in(state.path(), {"replay", "--changes", r.log}, ws.path());
  EXPECT_EQ(changes.exit_code, 0) << changes.err;
  EXPECT_EQ(changes.out.find("created /dev/shm/"), std::string::npos) << changes.out;
  EXPECT_NE(changes.out.find("1 path(s) changed"), std::string::npos) << changes.out;
  EXPECT_NE(changes.out.find(ws / "a.txt"), std::string::npos) << changes.out;
  const Outcome diff = vigil_in(state.path(), {"replay", "--diff", r.log}, ws.path());
  EXPECT_EQ(diff.out.find("host secret"), std::string::npos) << diff.out;
  const Outcome undo = vigil_in(state.path(), {"undo", "--force", r.log}, ws.path());
  EXPECT_EQ(undo.exit_code, 0) << undo.out << undo.err;
  EXPECT_EQ(read_file(host.path), "host secret 31\n") << "undo deleted the host's file\n" << undo.out;
  EXPECT_FALSE(exists(ws / "a.txt")) << "what the session made in the workspace is undone";
}

// Its siblings: the session temp dir, /proc, a file renamed from /dev/shm into the
// workspace (new to the host: undo removes it, and only it).
TEST(TrustState, TheSandboxsOwnTreesAreNeitherCapturedNorUndone) {
  TempDir ws, state;
  ShmFile host("host shm 31b\n");
  const std::string name = host.path.substr(std::string("/dev/shm/").size());
  const std::string big(200 * 1024, 'T');
  write_file(ws / "big.src", big);
  const Ran r = run_in(ws.path(), state.path(),
                       "cp big.src \"$TMPDIR/big\" && printf y > \"$TMPDIR/big\"; "
                       "printf m > /proc/self/comm; "
                       "printf 'moved\\n' > /dev/shm/" + name + " && mv /dev/shm/" + name + " moved.txt");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  const std::string kept = store_bytes(state.path());
  EXPECT_LT(kept.size(), 64U * 1024) << "the session temp dir's file went into the store";
  const Outcome changes = vigil_in(state.path(), {"replay", "--changes", r.log}, ws.path());
  EXPECT_EQ(changes.out.find("/proc/"), std::string::npos) << changes.out;
  EXPECT_EQ(changes.out.find("/big"), std::string::npos) << changes.out;
  EXPECT_NE(changes.out.find("created " + (ws / "moved.txt")), std::string::npos) << changes.out;
  const Outcome undo = vigil_in(state.path(), {"undo", "--force", r.log}, ws.path());
  EXPECT_EQ(read_file(host.path), "host shm 31b\n") << undo.out;
  EXPECT_FALSE(exists(ws / "moved.txt")) << undo.out;
}

// Rewrites a real log as the command could: chosen paths, no key id, no seal, and the
// hash chain recomputed (anyone can compute it).
std::string forge_unkeyed(const std::string& log, const std::string& from, const std::string& to,
                          bool keep_scope) {
  std::istringstream in(read_file(log));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string& l = lines[i];
    if (i > 0 || !keep_scope) {
      for (auto at = l.find(from); at != std::string::npos; at = l.find(from, at + to.size()))
        l.replace(at, from.size(), to);
    }
    l = std::regex_replace(l, std::regex(",\"key_id\":\"[0-9a-f]{16}\""), "");
    l = std::regex_replace(l, std::regex(",\"mac\":\"[0-9a-f]{64}\""), "");
    if (i > 0) {
      l = std::regex_replace(l, std::regex("\"prev\":\"[0-9a-f]{64}\""),
                             "\"prev\":\"" + sha256_hex(lines[i - 1]) + "\"");
    }
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// The review's break (item 6): an unkeyed log naming a host file the command can read as
// "created", with its true hash. Undo refuses it; --unsealed still acts only inside the
// writable roots the log's session.start records.
TEST(TrustState, UndoRefusesALogNotSealedWithThisUsersKey) {
  TempDir ws, state, victim;
  write_file(victim / "new.txt", "data\n");
  const Ran r = run_in(ws.path(), state.path(), "printf 'data\\n' > new.txt");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  const std::string forged = ws / "forged.jsonl";
  write_file(forged, forge_unkeyed(r.log, ws.path(), victim.path(), /*keep_scope=*/false));
  const Outcome verify = vigil_in(state.path(), {"replay", "--verify", forged}, ws.path());
  ASSERT_EQ(verify.exit_code, 0) << "the forgery is an intact unkeyed chain\n" << verify.out << verify.err;
  const Outcome undo = vigil_in(state.path(), {"undo", forged}, ws.path());
  EXPECT_NE(undo.exit_code, 0) << undo.out;
  EXPECT_NE(undo.err.find("not sealed"), std::string::npos) << undo.err;
  EXPECT_NE(undo.err.find("--unsealed"), std::string::npos) << undo.err;
  EXPECT_TRUE(exists(victim / "new.txt")) << "undo of a forged log deleted a host file";

  // The same forgery keeping the real scope: --unsealed acts, but not outside it.
  write_file(forged, forge_unkeyed(r.log, ws.path(), victim.path(), /*keep_scope=*/true));
  const Outcome opted = vigil_in(state.path(), {"undo", "--unsealed", forged}, ws.path());
  EXPECT_NE(opted.err.find("--unsealed"), std::string::npos) << "a loud warning\n" << opted.err;
  EXPECT_NE(opted.out.find("nothing to undo"), std::string::npos) << opted.out;
  EXPECT_TRUE(exists(victim / "new.txt")) << opted.out;

  // A log sealed with another user's key (another state directory) is refused too.
  TempDir other;
  const Outcome foreign = vigil_in(other.path(), {"undo", r.log}, ws.path());
  EXPECT_NE(foreign.exit_code, 0);
  EXPECT_TRUE(exists(ws / "new.txt"));
  // And the real log, sealed with this user's key, is undone.
  const Outcome real = vigil_in(state.path(), {"undo", r.log}, ws.path());
  EXPECT_EQ(real.exit_code, 0) << real.out << real.err;
  EXPECT_FALSE(exists(ws / "new.txt"));
}

// Item 8: the session cap stops capture, and the log and the block say so.
TEST(TrustState, TheSessionCapStopsCaptureAndSaysSo) {
  TempDir ws, state, cfg;
  for (const char* f : {"f1", "f2", "f3"}) write_file(ws / f, std::string(30000, f[1]));
  write_file(cfg / "s.json",
             R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"capture": {"maxSessionBytes": 50000}}})");
  const Ran r = run_in(ws.path(), state.path(), ": > f1; : > f2; : > f3",
                       {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  EXPECT_NE(read_file(r.log).find("\"kind\":\"limit.reached\",\"limit\":\"capture\""), std::string::npos)
      << read_file(r.log);
  EXPECT_NE(r.o.err.find("vigil.capture.maxSessionBytes"), std::string::npos) << r.o.err;
  EXPECT_LE(store_bytes(state.path()).size(), 50000U);
}

// The total cap counts every store kept; a new key of the "vigil" settings.
TEST(TrustState, TheTotalCapCountsEveryStore) {
  TempDir ws, state, cfg;
  make_dirs(state / "vigil/captures/20200101T000000Z-0123456789ab");
  write_file(state / "vigil/captures/20200101T000000Z-0123456789ab/old", std::string(100000, 'o'));
  ::chmod((state / "vigil").c_str(), 0700);
  ::chmod((state / "vigil/captures").c_str(), 0700);
  write_file(ws / "f", std::string(50000, 'f'));
  write_file(cfg / "s.json",
             R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"capture": {"maxTotalBytes": 120000}}})");
  const Ran r = run_in(ws.path(), state.path(), ": > f", {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  EXPECT_NE(r.o.err.find("vigil.capture.maxTotalBytes"), std::string::npos) << r.o.err;
  EXPECT_NE(r.o.err.find("vigil logs prune"), std::string::npos) << r.o.err;
}

void age(const std::string& path, int days) {
  const timespec then{std::time(nullptr) - static_cast<std::time_t>(days) * 86400, 0};
  const timespec times[2] = {then, then};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

// Item 8: a store goes with its log, by `vigil logs prune` and by vigil.log.keep.
TEST(TrustState, AStoreGoesWithItsLog) {
  TempDir ws, state, cfg;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  for (int i = 0; i < 2; ++i) {
    write_file(ws / "f", "v" + std::to_string(i) + "\n");
    const Outcome o = run_vigil({"run", "--", "sh", "-c", "echo changed > f"}, ws.path(), 60, env);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  const std::string sessions = state / "vigil/sessions", captures = state / "vigil/captures";
  auto logs = entries(sessions);
  std::sort(logs.begin(), logs.end());
  ASSERT_EQ(logs.size(), 2U);
  const std::string old_id = logs[0].substr(0, logs[0].size() - 6), new_id = logs[1].substr(0, logs[1].size() - 6);
  ASSERT_TRUE(exists(captures + "/" + old_id)) << "a session that changed a file has a store";
  age(sessions + "/" + logs[0], 30);
  const Outcome p = run_vigil({"logs", "prune", "--older-than", "7d"}, ws.path(), 60, env);
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_FALSE(exists(captures + "/" + old_id)) << p.out;
  EXPECT_TRUE(exists(captures + "/" + new_id)) << p.out;

  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"log": {"keep": 1}}})");
  for (int i = 0; i < 2; ++i) {
    write_file(ws / "f", "w" + std::to_string(i) + "\n");
    const Outcome o = run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c", "echo again > f"},
                                ws.path(), 60, env);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  EXPECT_EQ(entries(sessions).size(), 1U);
  EXPECT_EQ(entries(captures).size(), 1U) << "vigil.log.keep left stores without their logs";
}

bool have_git() { return std::system("command -v git >/dev/null 2>&1") == 0; }

// The review's break (item 9): with allowGitConfig, `git config core.hooksPath .husky`
// made the backstop move the whole .git/config. Only the key goes; the repository keeps
// its remote, branches and user settings; the block says exactly what went; undo puts it back.
TEST(TrustState, AGitConfigKeepsEverythingButTheOffendingKey) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state, cfg;
  ASSERT_EQ(host_sh(ws.path(),
                    "git init -q -b main . && git config user.name 'Some One' && "
                    "git config user.email one@example.invalid && "
                    "git remote add origin https://example.invalid/r.git && "
                    "git config branch.main.remote origin && git config branch.main.merge refs/heads/main"),
            0);
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."], "allowGitConfig": true}})");
  // `git config core.hooksPath` itself is refused at the call now (git renames its
  // config.lock into place, and the gate judges the keys it adds), and so is a write in
  // place (issue 39); a key written through an fd held across the rename is what only the
  // post-run backstop can see, and take out.
  const Ran r = run_in(ws.path(), state.path(),
                       "cp .git/config .git/c.tmp && exec 3>>.git/c.tmp && mv .git/c.tmp .git/config && "
                       "printf '[core]\\n\\thooksPath = .husky\\n' >&3",
                       {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  ASSERT_TRUE(exists(ws / ".git/config")) << r.o.err;
  std::string out;
  EXPECT_EQ(host_sh(ws.path(), "git remote -v", &out), 0) << out;
  EXPECT_NE(out.find("origin\thttps://example.invalid/r.git"), std::string::npos) << out;
  EXPECT_EQ(host_sh(ws.path(), "git config user.name", &out), 0);
  EXPECT_EQ(out, "Some One\n");
  EXPECT_EQ(host_sh(ws.path(), "git config branch.main.merge", &out), 0);
  EXPECT_NE(host_sh(ws.path(), "git config core.hooksPath", &out), 0) << "the key is still there: " << out;
  EXPECT_NE(r.o.err.find("quarantined " + (ws / ".git/config")), std::string::npos) << r.o.err;
  EXPECT_NE(r.o.err.find("hooksPath = .husky"), std::string::npos) << r.o.err;
  EXPECT_NE(r.o.err.find("vigil undo --quarantined"), std::string::npos) << r.o.err;
  const Outcome v = vigil_in(state.path(), {"replay", "--verify", r.log}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  const Outcome undo = vigil_in(state.path(), {"undo", "--quarantined", r.log}, ws.path());
  EXPECT_EQ(undo.exit_code, 0) << undo.out << undo.err;
  EXPECT_EQ(host_sh(ws.path(), "git config core.hooksPath", &out), 0) << undo.out;
  EXPECT_EQ(out, ".husky\n");
  EXPECT_EQ(host_sh(ws.path(), "git remote -v", &out), 0) << out;
}

}  // namespace
}  // namespace vigil::test
