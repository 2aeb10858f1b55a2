// What the model is told to do about a refused write works (issue 19.2) and says it once
// (19.3): every hint below is checked against the real sandbox, and the allowWrite and
// allowGitConfig hints are applied to the settings and the same command run again.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::string block_of(const Outcome& o) {
  const std::size_t at = o.err.find("<sandbox_violations>\n");
  return at == std::string::npos ? std::string() : o.err.substr(at);
}

std::size_t lines_naming(const std::string& block, const std::string& what) {
  std::size_t n = 0, start = 0;
  for (std::size_t nl = block.find('\n'); nl != std::string::npos; nl = block.find('\n', start)) {
    if (block.substr(start, nl - start).find(what) != std::string::npos) ++n;
    start = nl + 1;
  }
  return n;
}

// The line of the block naming `what` ("" when none).
std::string line_with(const std::string& block, const std::string& what) {
  const std::size_t at = block.find(what);
  if (at == std::string::npos) return {};
  const std::size_t start = block.rfind('\n', at) + 1;
  return block.substr(start, block.find('\n', at) - start);
}

TEST(RunHints, EachRefusedWriteIsToldTheFixThatWorks) {
  TempDir ws, home, outside;
  make_dirs(ws / "r/.git");
  write_file(ws / "r/.git/config", "[core]\n\trepositoryformatversion = 0\n");
  write_file(ws / "r/.git/HEAD", "ref: refs/heads/main\n");
  make_dirs(ws / "r/.git/objects");
  make_dirs(ws / "r/.git/refs");
  const std::string scratch = "/tmp/" + unique_marker("scratch") + ".txt";
  const std::string cmd =
      "echo y >> ~/.bashrc; echo x > " + scratch +
      "; mkdir -p ~/.npm/_cacache/tmp 2>/dev/null; touch /etc/vigil-hint-x; "
      "git -C r config user.name model || echo git-config-refused; "
      "mkdir -p " + (outside / "data") + " && echo z > " + (outside / "data/f") +
      " || echo outside-refused; true";
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  const Outcome o = run_vigil({"run", "--", "sh", "-c", cmd}, ws.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::string block = block_of(o);
  ASSERT_FALSE(block.empty()) << o.err;
  // ~/.bashrc: a protected startup file, not "add it to allowWrite".
  EXPECT_NE(block.find("/.bashrc (a protected startup file (bash sources it at startup)"),
            std::string::npos)
      << block;
  // /tmp: $TMPDIR, not a wider policy.
  const std::string scratch_name = scratch.substr(5);
  EXPECT_NE(line_with(block, scratch_name).find("for scratch files use $TMPDIR"),
            std::string::npos)
      << block;
  // npm's cache: its variable and its stable directory, never the volatile path.
  EXPECT_NE(block.find("npm_config_cache=$TMPDIR/npm-cache, or add ~/.npm to filesystem.allowWrite"),
            std::string::npos)
      << block;
  // touch: one line for one target.
  EXPECT_EQ(lines_naming(block, "/etc/vigil-hint-x"), 1U) << block;
  // (vigil-init performed the open, which failed: touch never got to change the times)
  EXPECT_NE(block.find("deny write /etc/vigil-hint-x (a system directory"),
            std::string::npos)
      << block;
  // git config user.name: allowGitConfig.
  EXPECT_NE(o.out.find("git-config-refused"), std::string::npos) << o.out;
  EXPECT_NE(block.find("set filesystem.allowGitConfig: true"), std::string::npos) << block;
  // A directory outside the workspace: that directory, made first.
  EXPECT_NE(o.out.find("outside-refused"), std::string::npos) << o.out;
  const std::string hint = "add " + outside.path() + " to filesystem.allowWrite (mkdir -p " +
                           outside.path() + " first if it is missing)";
  EXPECT_NE(block.find(hint), std::string::npos) << block;

  // Applied as written, the hints work: the same command writes there and sets user.name.
  // (The settings live where the sandbox cannot write: in the home, not the workspace.)
  write_file(home / "s.json", "{\"filesystem\":{\"allowWrite\":[\".\",\"" + outside.path() +
                                  "\"],\"allowGitConfig\":true}}");
  const Outcome again =
      run_vigil({"run", "--settings", home / "s.json", "--", "sh", "-c", cmd}, ws.path(), 60, env);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.find("git-config-refused"), std::string::npos) << again.out << again.err;
  EXPECT_EQ(again.out.find("outside-refused"), std::string::npos) << again.out << again.err;
  EXPECT_EQ(read_file(outside / "data/f"), "z\n");
  EXPECT_NE(read_file(ws / "r/.git/config").find("name = model"), std::string::npos);
}

}  // namespace
}  // namespace vigil::test
