// A day of agent work through `vigil run` with the default policy (issue 19, "Done when"):
// one fixed script of what an agent does all day (git in a subdirectory of a repository and
// in a repository it makes, npm init and npm test, a cargo-like tool filling its cache in
// $HOME, mkdir -p, a local HTTP server and its client, a program alternating stdout and
// stderr) is run outside the sandbox and inside it, with vigil's stdout and stderr the same
// file (`vigil run ... 2>&1`). The test holds that:
//   - every step that works outside works inside, but for the steps that write outside the
//     workspace;
//   - the block has at most one line per distinct cause;
//   - every hint names a setting or a path that, applied to a settings file as written,
//     lets the write through: the test applies each one and runs the script again, and then
//     every step works and nothing is denied.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// The steps, each reporting "@@step NAME RC" on a line of its own. Output is not redirected:
// it reaches vigil's two pipes as the tools wrote it.
constexpr const char* kScript = R"SH(
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid
# npm stays on this machine: no update check, no audit, a registry nobody listens on.
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
export npm_config_registry=http://127.0.0.1:9/
# The hints' other way, when the test sets DAY_TMPDIR_VARS ("npm_config_cache=npm-cache
# CARGO_HOME=cargo"): each variable pointed into $TMPDIR, as the hint says.
for kv in ${DAY_TMPDIR_VARS:-}; do export "${kv%%=*}=$TMPDIR/${kv#*=}"; done
step() {
  local name=$1
  shift
  ( "$@" )
  printf '\n@@step %s %d\n' "$name" "$?"
}
# The workspace is a subdirectory (pkg/) of a repository.
git_in_subdirectory() {
  echo "a line" >> notes.txt && git status --porcelain && git add notes.txt &&
    git commit -qm "notes from pkg" && git status --porcelain
}
git_new_repository() {
  mkdir -p app/src && cd app && git init -q && echo "fn main() {}" > src/main.rs &&
    git add . && git commit -qm init && cd src && git status --porcelain &&
    git log --oneline | grep -q init
}
npm_project() {
  mkdir -p web && cd web && npm init -y >/dev/null &&
    echo "require('assert').strictEqual(1 + 1, 2); console.log('web tests pass')" > test.js &&
    npm pkg set scripts.test="node test.js" && npm test
}
cargo_like() { PATH=$PWD/bin:$PATH cargo build; }
make_dirs() { mkdir -p deep/a/b/c && test -d deep/a/b/c; }
local_http() {
  mkdir -p site && echo hello-from-the-server > site/index.txt || return 1
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 -m http.server "$port" --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
  local server=$! ok=1 i
  # Until the server answers (bounded: 20 s).
  for i in $(seq 400); do
    if curl -fsS -o got.txt "http://127.0.0.1:$port/index.txt" 2>/dev/null; then ok=0; break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  kill "$server"
  wait "$server" 2>/dev/null
  [ "$ok" = 0 ] && grep -qx hello-from-the-server got.txt
}
interleave() {
  python3 -c '
import sys
for i in range(40):
    s = sys.stdout if i % 2 == 0 else sys.stderr
    s.write("il %02d\n" % i)
    s.flush()
'
}
step git_in_subdirectory git_in_subdirectory
step git_new_repository git_new_repository
step npm_project npm_project
step cargo_like cargo_like
step make_dirs make_dirs
step local_http local_http
step interleave interleave
)SH";

// Writes a cargo would make: its registry under $CARGO_HOME (~/.cargo), its build under
// target/.
constexpr const char* kFakeCargo = R"SH(#!/bin/sh
set -e
reg=${CARGO_HOME:-$HOME/.cargo}/registry
mkdir -p "$reg/index/crates.io-6f17d22bba15001f/.cache" "$reg/cache/crates.io-6f17d22bba15001f"
echo index > "$reg/index/crates.io-6f17d22bba15001f/.cache/se"
echo crate > "$reg/cache/crates.io-6f17d22bba15001f/serde-1.0.200.crate"
mkdir -p target/debug
echo built > target/debug/app
echo "    Finished dev [unoptimized + debuginfo] target(s)"
)SH";

const std::vector<std::string> kSteps = {"git_in_subdirectory", "git_new_repository", "npm_project",
                                         "cargo_like",          "make_dirs",          "local_http",
                                         "interleave"};

// One run's world: a repository with the workspace pkg/ in it, and a home outside both.
struct Day {
  TempDir root, cfg;
  std::string repo = root / "repo";
  std::string ws = root / "repo/pkg";
  std::string home = root / "home";

  Day() {
    make_dirs(ws + "/bin");
    make_dirs(home);
    write_file(ws + "/day.sh", kScript);
    write_file(ws + "/bin/cargo", kFakeCargo);
    ::chmod((ws + "/bin/cargo").c_str(), 0755);
    write_file(repo + "/README", "a repository\n");
    const std::string git = "cd '" + repo +
                            "' && git init -q && git add README && git -c user.name=t "
                            "-c user.email=t@example.invalid commit -qm first";
    EXPECT_EQ(std::system(git.c_str()), 0);
  }
  std::map<std::string, std::string> env() const {
    return {{"HOME", home},
            {"PATH", "/usr/local/bin:/usr/bin:/bin"},
            {"http_proxy", ""},
            {"https_proxy", ""},
            {"HTTP_PROXY", ""},
            {"HTTPS_PROXY", ""},
            {"no_proxy", "127.0.0.1,localhost"},
            {"NO_PROXY", "127.0.0.1,localhost"}};
  }
};

// stdout and stderr of what `wrapper` runs are one pipe: `2>&1`.
const std::vector<std::string> kMerged = {"/bin/sh", "-c", "exec \"$@\" 2>&1", "sh"};

Outcome run_inside(const Day& d, const std::vector<std::string>& settings = {},
                   const std::map<std::string, std::string>& more_env = {}) {
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), settings.begin(), settings.end());
  args.insert(args.end(), {"--", "/bin/bash", "day.sh"});
  auto env = d.env();
  env.insert(more_env.begin(), more_env.end());
  return run_vigil(args, d.ws, 180, env, "", kMerged);
}

// The same script with no sandbox: the wrapper runs bash and never execs vigil (run_vigil
// hands it vigil's path as "$1"; it is ignored).
Outcome run_outside(const Day& d) {
  const std::vector<std::string> bash = {"/bin/sh", "-c", "exec /bin/bash day.sh 2>&1", "sh"};
  return run_vigil({}, d.ws, 180, d.env(), "", bash);
}

std::map<std::string, int> step_results(const std::string& out) {
  std::map<std::string, int> r;
  std::size_t at = 0;
  while ((at = out.find("\n@@step ", at)) != std::string::npos) {
    at += 8;
    const std::size_t sp = out.find(' ', at), nl = out.find('\n', at);
    if (sp == std::string::npos || nl == std::string::npos || sp > nl) break;
    r[out.substr(at, sp - at)] = std::stoi(out.substr(sp + 1, nl - sp - 1));
  }
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// The lines between the block's tags ({} when there is no block).
std::vector<std::string> block_lines(const std::string& out) {
  const std::size_t open = out.find("<sandbox_violations>\n");
  if (open == std::string::npos) return {};
  const std::size_t close = out.find("</sandbox_violations>", open);
  return lines_of(
      out.substr(open + 21, close == std::string::npos ? std::string::npos : close - open - 21));
}

// "deny ACTIONS TARGET (CAUSE)[ (xN)]": the cause, what the line says is wrong and what to do.
std::string cause_of(const std::string& line) {
  std::string l = line;
  if (const auto x = l.rfind(" (x"); x != std::string::npos && l.ends_with(")")) l.resize(x);
  const std::size_t open = l.find(" (");
  if (open == std::string::npos || !l.ends_with(")")) return {};
  // Grouped lines end with ": a, b, c and N more" after the cause.
  return l.substr(open + 2, l.rfind(')') - open - 2);
}

// A hint, applied: what goes into the settings file, and the directory to make first.
struct Fix {
  std::string allow_write;  // as written in the hint (~ allowed)
  bool git_config = false;
  bool writable_repository = false;
  std::string tmpdir_var;  // "NAME=sub" of a hint's "set NAME=$TMPDIR/sub", if it has one
};

// "set NAME=$TMPDIR/sub": a tool's own variable, the hint's other way.
std::string tmpdir_var_in(const std::string& line) {
  static const std::string kSet = "set ", kTmp = "=$TMPDIR/";
  const auto eq = line.find(kTmp);
  if (eq == std::string::npos) return {};
  const auto set = line.rfind(kSet, eq);
  if (set == std::string::npos) return {};
  const std::string name = line.substr(set + kSet.size(), eq - set - kSet.size());
  const auto end = line.find_first_of(" ,;)", eq + kTmp.size());
  return name + "=" + line.substr(eq + kTmp.size(), end - eq - kTmp.size());
}

std::optional<Fix> fix_in(const std::string& line) {
  Fix f;
  static const std::string kAdd = "add ";
  static const std::string kTo = " to filesystem.allowWrite";
  if (const auto to = line.find(kTo); to != std::string::npos) {
    const auto add = line.rfind(kAdd, to);
    if (add == std::string::npos) return std::nullopt;
    f.allow_write = line.substr(add + kAdd.size(), to - add - kAdd.size());
    if (f.allow_write.find(' ') != std::string::npos) return std::nullopt;  // prose
    f.tmpdir_var = tmpdir_var_in(line);
    return f;
  }
  if (line.find("set filesystem.allowGitConfig: true") != std::string::npos) {
    f.git_config = true;
    return f;
  }
  if (line.find("set vigil.git.writableRepository: true") != std::string::npos) {
    f.writable_repository = true;
    return f;
  }
  return std::nullopt;
}

std::string expand_home(const std::string& p, const std::string& home) {
  return p.starts_with("~/") ? home + p.substr(1) : p;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The interleaving program's lines, in the order they came out.
std::vector<std::string> interleaved(const std::string& out) {
  std::vector<std::string> got;
  for (const auto& l : lines_of(out)) {
    if (l.starts_with("il ")) got.push_back(l);
  }
  return got;
}

bool have(const char* tool) {
  const std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(AgentDay, WhatWorksOutsideWorksInsideAndEveryHintWorksWhenApplied) {
  for (const char* tool : {"git", "npm", "node", "python3", "curl"}) {
    if (!have(tool)) GTEST_SKIP() << tool << " is missing (tools/bootstrap.sh installs it)";
  }
  std::vector<std::string> expected_il;
  for (int i = 0; i < 40; ++i) expected_il.push_back((i < 10 ? "il 0" : "il ") + std::to_string(i));

  // Outside the sandbox: the reference.
  const Day out_day;
  const Outcome outside = run_outside(out_day);
  const auto outside_steps = step_results(outside.out);
  ASSERT_EQ(outside_steps.size(), kSteps.size()) << outside.out;
  for (const auto& s : kSteps) {
    EXPECT_EQ(outside_steps.at(s), 0) << s << " fails with no sandbox at all:\n" << outside.out;
  }
  EXPECT_EQ(interleaved(outside.out), expected_il);

  // Inside, with the default policy.
  const Day day;
  const Outcome inside = run_inside(day);
  const auto steps = step_results(inside.out);
  ASSERT_EQ(steps.size(), kSteps.size()) << inside.out;
  // These write outside the workspace: the repository's .git above it, and ~/.cargo.
  const std::set<std::string> writes_outside = {"git_in_subdirectory", "cargo_like"};
  for (const auto& s : kSteps) {
    if (writes_outside.contains(s) || outside_steps.at(s) != 0) continue;
    EXPECT_EQ(steps.at(s), 0) << s << " works outside the sandbox but not inside:\n" << inside.out;
  }
  // 2>&1: the order the program wrote, line by line.
  EXPECT_EQ(interleaved(inside.out), expected_il) << inside.out;

  // One line per cause; a hint on every denial that can be applied as written.
  const auto block = block_lines(inside.out);
  ASSERT_FALSE(block.empty()) << "the steps writing outside the workspace were denied:\n"
                              << inside.out;
  std::set<std::string> causes;
  std::vector<Fix> fixes;
  for (const auto& line : block) {
    const std::string cause = cause_of(line);
    EXPECT_FALSE(cause.empty()) << "a line without its cause: " << line;
    EXPECT_TRUE(causes.insert(cause).second) << "two lines for one cause: " << cause << "\n"
                                             << inside.out;
    // `git init` made app/.git/hooks and .git/config: allowed writes the user is told of
    // (nothing to apply), not denials.
    if (line.starts_with("unguarded ")) continue;
    ASSERT_TRUE(line.starts_with("deny ")) << line;
    // Only writes outside the workspace are denied.
    const std::size_t target = line.find(" /");
    ASSERT_NE(target, std::string::npos) << line;
    EXPECT_FALSE(line.compare(target + 1, day.ws.size() + 1, day.ws + "/") == 0)
        << "a write inside the workspace was denied: " << line;
    const auto fix = fix_in(line);
    EXPECT_TRUE(fix.has_value()) << "no setting or path to apply in: " << line;
    if (fix) fixes.push_back(*fix);
  }
  EXPECT_LE(block.size(), 6U) << inside.out;
  // `git init` in the workspace: one line for the new repository, however many of its
  // protected names it made.
  std::size_t new_repo_lines = 0;
  for (const auto& line : block) new_repo_lines += line.find(day.ws + "/app/") != std::string::npos;
  EXPECT_LE(new_repo_lines, 1U) << inside.out;

  // A tool's own variable pointed into $TMPDIR (the hint's other way), with the default
  // policy: that tool's line goes, and its step still works.
  std::string tmpdir_vars;
  for (const auto& f : fixes) {
    if (!f.tmpdir_var.empty()) tmpdir_vars += (tmpdir_vars.empty() ? "" : " ") + f.tmpdir_var;
  }
  EXPECT_NE(tmpdir_vars.find("npm_config_cache="), std::string::npos) << tmpdir_vars;
  EXPECT_NE(tmpdir_vars.find("CARGO_HOME="), std::string::npos) << tmpdir_vars;
  {
    const Day vars_day;
    const Outcome vars = run_inside(vars_day, {}, {{"DAY_TMPDIR_VARS", tmpdir_vars}});
    const auto vars_steps = step_results(vars.out);
    EXPECT_EQ(vars_steps.at("npm_project"), 0) << vars.out;
    EXPECT_EQ(vars_steps.at("cargo_like"), 0) << vars.out;
    for (const auto& line : block_lines(vars.out)) {
      EXPECT_EQ(line.find(vars_day.home), std::string::npos)
          << "a write in the home with " << tmpdir_vars << ": " << line;
    }
  }

  // Applied as written (allowWrite takes existing directories: the hint says mkdir -p).
  std::string allow = "\".\"";
  bool git_config = false, writable_repository = false;
  for (const auto& f : fixes) {
    if (!f.allow_write.empty()) {
      make_dirs(expand_home(f.allow_write, day.home));
      allow += "," + json_string(f.allow_write);
    }
    git_config = git_config || f.git_config;
    writable_repository = writable_repository || f.writable_repository;
  }
  const std::string settings =
      std::string("{\"filesystem\":{\"allowWrite\":[") + allow + "]" +
      (git_config ? ",\"allowGitConfig\":true" : "") + "}" +
      (writable_repository ? ",\"vigil\":{\"git\":{\"writableRepository\":true}}" : "") + "}";
  write_file(day.cfg / "settings.json", settings);
  // The same day, begun afresh in the same world but for the steps' own leftovers.
  ASSERT_EQ(std::system(("cd '" + day.ws + "' && rm -rf app web deep site got.txt target").c_str()),
            0);
  const Outcome again = run_inside(day, {"--settings", day.cfg / "settings.json"});
  const auto again_steps = step_results(again.out);
  ASSERT_EQ(again_steps.size(), kSteps.size()) << again.out;
  for (const auto& s : kSteps) {
    EXPECT_EQ(again_steps.at(s), 0)
        << s << " still fails with the hints applied (" << settings << "):\n"
        << again.out;
  }
  for (const auto& line : block_lines(again.out)) {
    EXPECT_FALSE(line.starts_with("deny ")) << "still denied with the hints applied: " << line;
  }
  // The writes landed where the tools meant them to.
  EXPECT_TRUE(exists(day.home + "/.cargo/registry/cache/crates.io-6f17d22bba15001f/"
                                "serde-1.0.200.crate"));
  const std::string log = "cd '" + day.repo + "' && git log --oneline | grep -q 'notes from pkg'";
  EXPECT_EQ(std::system(log.c_str()), 0);
  EXPECT_EQ(interleaved(again.out), expected_il);
}

// Issue 38: the same day's friction, each in its own world.

std::string block_of(const std::string& out) {
  const std::size_t open = out.find("<sandbox_violations>");
  return open == std::string::npos ? std::string() : out.substr(open);
}

// 38.2: a successful `git init` and `git clone` of a local repository are not "the sandbox
// stopped something": no block, and the repositories work on the host afterwards.
TEST(AgentDay, GitInitAndCloneOfALocalRepositoryLeaveNoBlock) {
  if (!have("git")) GTEST_SKIP() << "git is missing (tools/bootstrap.sh installs it)";
  const Day d;
  const std::string script =
      "git init -q fresh && cd fresh && echo one > f && git add f && git commit -qm one && cd .. "
      "&& git clone -q fresh copy && git -C copy log --oneline | grep -q one && "
      "git clone -q \"$REPO\" cloned && test -f cloned/README && echo day-ok";
  const Outcome o = run_vigil({"run", "--", "/bin/sh", "-c", script}, d.ws, 120,
                              [&] {
                                auto env = d.env();
                                env["REPO"] = d.repo;
                                env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "agent";
                                env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] =
                                    "agent@example.invalid";
                                return env;
                              }(),
                              "", kMerged);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("day-ok"), std::string::npos) << o.out;
  EXPECT_EQ(block_of(o.out), "") << "a successful git init / git clone made a block:\n" << o.out;
  // The repositories are whole on the host: nothing of git's own was taken away.
  for (const std::string& repo : {d.ws + "/fresh", d.ws + "/copy", d.ws + "/cloned"}) {
    const std::string check = "git -C '" + repo + "' status --porcelain >/dev/null 2>&1";
    EXPECT_EQ(std::system(check.c_str()), 0) << repo;
  }
}

// 38.3: a settings file naming an allowWrite directory that does not exist yet (~/.npm on a
// fresh machine) starts, says so once, and a tool filling it during the run works.
TEST(AgentDay, ASettingsFileWithAMissingAllowWriteDirectoryStarts) {
  const Day d;
  write_file(d.cfg / "settings.json", R"({"filesystem":{"allowWrite":[".","~/.npm"]}})");
  ASSERT_FALSE(exists(d.home + "/.npm"));
  const Outcome o = run_vigil(
      {"run", "--settings", d.cfg / "settings.json", "--", "/bin/sh", "-c",
       "mkdir -p ~/.npm/_cacache/tmp && echo cached > ~/.npm/_cacache/tmp/x && echo day-ok"},
      d.ws, 60, d.env(), "", kMerged);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("day-ok"), std::string::npos) << o.out;
  EXPECT_EQ(read_file(d.home + "/.npm/_cacache/tmp/x"), "cached\n");
  EXPECT_EQ(block_of(o.out), "") << o.out;
  // Said once, and no warning at all (the post-run check has nothing to say of it either).
  std::size_t said = 0;
  for (const auto& l : lines_of(o.out)) said += l.find(d.home + "/.npm") != std::string::npos;
  EXPECT_EQ(said, 1u) << o.out;
  EXPECT_EQ(o.out.find("warning"), std::string::npos) << o.out;
  // The next run has nothing to make or say.
  const Outcome again = run_vigil({"run", "--settings", d.cfg / "settings.json", "--", "true"},
                                  d.ws, 60, d.env(), "", kMerged);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(again.out.find(".npm"), std::string::npos) << again.out;
}

// 38.4: 30 MB of output, alternating stdout and stderr under 2>&1: the model sees all of
// it in order, the log stays under its cap (vigil.log.maxOutputBytes, 4 MiB by default)
// and keeps head and tail in order around one record of what was cut.
TEST(AgentDay, ThirtyMegabytesOfOutputKeepTheLogUnderTheCapAndTheOrder) {
  if (!have("python3")) GTEST_SKIP() << "python3 is missing";
  const Day d;
  TempDir logs;
  const std::string log = logs / "day.jsonl";
  constexpr int kLines = 30000;  // of 1000 bytes: 30 MB
  const std::string py =
      "import sys\n"
      "for i in range(30000):\n"
      "    s = sys.stdout if i % 2 == 0 else sys.stderr\n"
      "    s.write('%07d ' % i + 'x' * 991 + '\\n')\n"
      "    s.flush()\n";
  const Outcome o = run_vigil({"run", "--log", log, "--", "python3", "-c", py}, d.ws, 180,
                              d.env(), "", kMerged);
  ASSERT_EQ(o.exit_code, 0) << o.out.substr(0, 2000);
  // What the model saw: every line, in the order written.
  int next = 0;
  bool ordered = true;
  for (const auto& l : lines_of(o.out)) {
    if (l.size() != 999 || l[7] != ' ') continue;
    ordered = ordered && std::stoi(l.substr(0, 7)) == next;
    ++next;
  }
  EXPECT_TRUE(ordered);
  EXPECT_EQ(next, kLines);
  // The log: under the cap (and its records' overhead), head and tail in order.
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  const std::uint64_t cap = std::uint64_t{4} << 20;
  EXPECT_LT(static_cast<std::uint64_t>(st.st_size), cap + cap / 4) << "the log is not capped";
  std::string logged;
  bool cut_seen = false;
  int last = -1;
  bool log_ordered = true;
  for (const auto& line : lines_of(read_file(log))) {
    if (line.find("\"kind\":\"log.truncated\"") != std::string::npos) {
      cut_seen = true;
      EXPECT_NE(line.find("\"omitted_bytes\":" + std::to_string(kLines * 1000 - cap)),
                std::string::npos)
          << line;
      continue;
    }
    const auto data = line.find("\"data\":\"");
    if (data == std::string::npos) continue;
    logged += line.substr(data + 8, line.find('"', data + 8) - data - 8);
  }
  EXPECT_TRUE(cut_seen);
  // Every whole line the log kept, in increasing order: the head's, then the tail's.
  for (std::size_t at = logged.find("\\n"); at != std::string::npos;
       at = logged.find("\\n", at + 2)) {
    const std::size_t start = at + 2;
    if (start + 8 > logged.size() || logged[start + 7] != ' ') continue;
    const int n = std::stoi(logged.substr(start, 7));
    log_ordered = log_ordered && n > last;
    last = n;
  }
  EXPECT_TRUE(log_ordered);
  EXPECT_EQ(last, kLines - 1) << "the tail ends with the last line";
  EXPECT_NE(logged.find("0000000 "), std::string::npos) << "the head begins with the first";
}

}  // namespace
}  // namespace vigil::test
