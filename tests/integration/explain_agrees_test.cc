// `vigil explain --path` says what `vigil run` does (issue 38.1), for every row of the
// protected-name table (supervisor/core/policy/mandatory_denies.cc, whose .git rows are the
// git rules' names), through the real CLI and a real bwrap:
//  * in the workspace, missing at launch (vigil-init refuses it at the call, or lets the
//    git rules judge it) and existing at launch (a read-only mount);
//  * in the home, outside every writable root: explain's reason never suggests a setting
//    that would not help; where it names filesystem.allowWrite, the same write with that
//    entry goes through, and where it does not, it is still refused with the home writable.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "supervisor/core/policy/mandatory_denies.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

struct Target {
  std::string path;     // absolute
  std::string explain;  // "allowed", "denied", "ephemeral"
  std::string reason;   // explain's "(rule: reason)"
};

// The path a write into the entry makes: the name itself for a file, a file in it for a
// directory.
std::string target_in(const std::string& dir, const MandatoryDeny& d) {
  return dir + "/" + std::string(d.relpath) + (d.shape == DenyShape::kDir ? "/f" : "");
}

// explain's write line: "write: VERDICT (RULE: REASON)".
Target explain_write(const std::string& path, const std::string& cwd,
                     const std::vector<std::string>& settings,
                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> args = {"explain"};
  args.insert(args.end(), settings.begin(), settings.end());
  args.insert(args.end(), {"--path", path});
  const Outcome o = run_vigil(args, cwd, 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  Target t{path, "", ""};
  const auto at = o.out.find("\nwrite: ");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no write line for " << path << ":\n" << o.out << o.err;
    return t;
  }
  const auto end = o.out.find('\n', at + 1);
  const std::string line = o.out.substr(at + 8, end - at - 8);
  t.explain = line.substr(0, line.find(' '));
  t.reason = line.substr(line.find(' ') + 1);
  return t;
}

// One `vigil run` that tries each write (making its parent first, as a tool would) and
// prints "W path" when its bytes landed, "D path" when not.
std::map<std::string, bool> run_writes(const std::vector<std::string>& paths,
                                       const std::string& cwd,
                                       const std::vector<std::string>& settings,
                                       const std::map<std::string, std::string>& env) {
  std::string script;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    script += "p=\"${" + std::to_string(i + 1) + "}" +
              "\"; mkdir -p \"${p%/*}\" 2>/dev/null; printf mark-38 >> \"$p\" 2>/dev/null; "
              "if grep -q mark-38 \"$p\" 2>/dev/null; then echo \"W $p\"; else echo \"D $p\"; fi\n";
  }
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), settings.begin(), settings.end());
  args.insert(args.end(), {"--", "sh", "-c", script, "sh"});
  args.insert(args.end(), paths.begin(), paths.end());
  const Outcome o = run_vigil(args, cwd, 120, env);
  std::map<std::string, bool> out;
  std::size_t start = 0;
  for (auto nl = o.out.find('\n'); nl != std::string::npos; nl = o.out.find('\n', start)) {
    const std::string l = o.out.substr(start, nl - start);
    start = nl + 1;
    if (l.size() > 2 && (l[0] == 'W' || l[0] == 'D') && l[1] == ' ') out[l.substr(2)] = l[0] == 'W';
  }
  EXPECT_EQ(out.size(), paths.size()) << o.out << o.err;
  return out;
}

void expect_agree(const std::vector<Target>& targets, const std::map<std::string, bool>& ran,
                  const char* where) {
  for (const auto& t : targets) {
    const auto it = ran.find(t.path);
    ASSERT_NE(it, ran.end()) << t.path;
    EXPECT_EQ(t.explain == "allowed", it->second)
        << where << ": explain says \"" << t.explain << " " << t.reason << "\" for " << t.path
        << " but run " << (it->second ? "wrote it" : "refused it");
  }
}

TEST(ExplainAgrees, EveryProtectedNameInTheWorkspaceMissingOrExisting) {
  TempDir ws, home;
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  std::vector<Target> targets;
  int i = 0;
  for (const MandatoryDeny& d : mandatory_denies()) {
    // Missing at launch, at the top of a subdirectory and deeper.
    for (const std::string& dir :
         {ws / ("m" + std::to_string(i)), ws / ("n" + std::to_string(i) + "/a/b")}) {
      make_dirs(dir);
      targets.push_back(explain_write(target_in(dir, d), ws.path(), {}, env));
    }
    // Existing at launch (within the scan's depth).
    const std::string e = ws / ("e" + std::to_string(i));
    const std::string name = e + "/" + std::string(d.relpath);
    if (d.shape == DenyShape::kDir) {
      make_dirs(name);
    } else {
      make_dirs(name.substr(0, name.rfind('/')));
      write_file(name, d.placeholder.empty() ? std::string("x\n") : std::string(d.placeholder));
    }
    targets.push_back(explain_write(target_in(e, d), ws.path(), {}, env));
    ++i;
  }
  std::vector<std::string> paths;
  for (const auto& t : targets) paths.push_back(t.path);
  expect_agree(targets, run_writes(paths, ws.path(), {}, env), "workspace");
  // Protected names are refused whatever the mounts: never the advice to list them.
  for (const auto& t : targets) {
    if (t.explain != "allowed") {
      EXPECT_EQ(t.reason.find("filesystem.allowWrite"), std::string::npos)
          << t.path << " " << t.reason;
    }
  }
}

TEST(ExplainAgrees, ProtectedNamesOutsideTheRootsNeverGetAFixThatWouldNotHelp) {
  TempDir ws, home, cfg;
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  std::vector<Target> outside;
  for (const MandatoryDeny& d : mandatory_denies()) {
    const std::string t = target_in(home.path(), d);
    outside.push_back(explain_write(t, ws.path(), {}, env));
    EXPECT_EQ(outside.back().explain, "denied") << t;
  }
  // The home made writable: what explain says then is what run does.
  write_file(cfg / "s.json", "{\"filesystem\":{\"allowWrite\":[\".\",\"~\"]}}");
  const std::vector<std::string> settings = {"--settings", cfg / "s.json"};
  std::vector<Target> with_home;
  std::vector<std::string> paths;
  for (const auto& t : outside) {
    with_home.push_back(explain_write(t.path, ws.path(), settings, env));
    paths.push_back(t.path);
  }
  const auto ran = run_writes(paths, ws.path(), settings, env);
  expect_agree(with_home, ran, "home writable");
  // The advice given without it: allowWrite only where it would have let the write through.
  for (const auto& t : outside) {
    const bool advises = t.reason.find("filesystem.allowWrite") != std::string::npos;
    if (advises) {
      EXPECT_TRUE(ran.at(t.path)) << "explain advised allowWrite for " << t.path
                                  << " but the write is refused with it: " << t.reason;
    }
  }
  EXPECT_FALSE(ran.at(home / ".bashrc")) << "protected under allowWrite";
}

}  // namespace
}  // namespace vigil::test
