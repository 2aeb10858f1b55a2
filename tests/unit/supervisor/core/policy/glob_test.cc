// The deny-glob matcher (a table of pattern/path/verdict rows) and the launch-time walk
// over a real temp tree.
#include "supervisor/core/policy/glob.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace vigil {
namespace {

namespace fs = std::filesystem;

TEST(GlobTest, MatchTable) {
  struct Row {
    const char* pattern;
    const char* path;
    bool match;
  };
  const Row rows[] = {
      {"/p/**/.env", "/p/.env", true},  // ** is zero components too
      {"/p/**/.env", "/p/a/b/c/.env", true},
      {"/p/**/.env", "/p/a/.envrc", false},
      {"/p/**/.env", "/q/.env", false},
      {"/p/*.pem", "/p/key.pem", true},
      {"/p/*.pem", "/p/.hidden.pem", true},   // a deny glob errs on covering more
      {"/p/*.pem", "/p/sub/key.pem", false},  // * stays within one component
      {"/p/*.pem", "/p/key.pem.bak", false},
      {"/p/id_?sa", "/p/id_rsa", true},
      {"/p/id_?sa", "/p/id_ed25519", false},
      {"/p/[ab]*", "/p/beta", true},
      {"/p/[ab]*", "/p/gamma", false},
      {"/p/[!a]*", "/p/gamma", true},
      {"/p/[!a]*", "/p/alpha", false},
      {"/p/[a-c]x", "/p/bx", true},
      {"/p/[a-c]x", "/p/dx", false},
      {"/p/[x", "/p/[x", true},  // an unterminated [ is literal
      {"/p/**", "/p/a/b", true},
      {"/p/**/*", "/p", false},
      {"/p/a*b*c", "/p/aXbYc", true},
      {"/p/a*b*c", "/p/aXbY", false},
      {"/p/*/", "/p/a", false},  // a trailing / matches nothing
      {"/p//*.pem", "/p/k.pem", true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(glob_match(r.pattern, r.path), r.match) << r.pattern << " vs " << r.path;
  }
}

TEST(GlobTest, Base) {
  EXPECT_EQ(glob_base("/home/u/**/.env"), "/home/u");
  EXPECT_EQ(glob_base("/home/u/*.pem"), "/home/u");
  EXPECT_EQ(glob_base("/*/x"), "/");
  EXPECT_EQ(glob_base("/a/b[c]/d"), "/a");
}

TEST(GlobTest, ExpandWalksWhatExists) {
  std::string tmpl = (fs::temp_directory_path() / "vigil-glob-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string root = fs::canonical(tmpl).string();
  fs::create_directories(root + "/a/b");
  fs::create_directories(root + "/c");
  std::ofstream(root + "/.env") << "1";
  std::ofstream(root + "/a/b/.env") << "1";
  std::ofstream(root + "/c/.envrc") << "1";
  fs::create_directory_symlink(root + "/a", root + "/link");  // not followed into
  const GlobExpansion got = expand_glob(root + "/**/.env");
  EXPECT_EQ(got.matches, (std::vector<std::string>{root + "/.env", root + "/a/b/.env"}));
  EXPECT_FALSE(got.truncated);
  // Through a symlinked base, the matches are the real paths.
  const GlobExpansion via = expand_glob(root + "/link/**/.env");
  EXPECT_EQ(via.matches, (std::vector<std::string>{root + "/a/b/.env"}));
  // The depth limit is said, never silently partial.
  const GlobExpansion shallow = expand_glob(root + "/**/.env", GlobLimits{1, 1000});
  EXPECT_TRUE(shallow.truncated);
  EXPECT_EQ(shallow.matches, (std::vector<std::string>{root + "/.env"}));
  EXPECT_TRUE(expand_glob("/nonexistent-vigil-glob/**/x").matches.empty());
  fs::remove_all(root);
}

}  // namespace
}  // namespace vigil
