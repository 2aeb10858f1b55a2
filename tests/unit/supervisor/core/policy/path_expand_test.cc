// Path spelling helpers as tables: lexical normalisation, settings-path expansion (~,
// relative, ".." escapes), component-wise containment, and the two functions that read the
// filesystem (resolve_symlinks, stat_path) against a real temporary tree.
#include "supervisor/core/policy/path_expand.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace vigil {
namespace {

namespace fs = std::filesystem;

// --- lexically_normal ---------------------------------------------------------------------

struct NormalRow {
  std::string in;
  std::string out;
};

TEST(PathExpandTest, LexicallyNormalTable) {
  const std::vector<NormalRow> rows = {
      {"/", "/"},
      {"//", "/"},
      {"///", "/"},
      {"/a", "/a"},
      {"/a/", "/a"},
      {"/a//", "/a"},
      {"//a//b//", "/a/b"},
      {"/a/./b", "/a/b"},
      {"/./a/.", "/a"},
      {"/.", "/"},
      {"/a/b/..", "/a"},
      {"/a/b/../c", "/a/c"},
      {"/a/../../b", "/b"},  // ".." above "/" stays at "/"
      {"/..", "/"},
      {"/../..", "/"},
      {"/../a", "/a"},
      {"/a/b/c/../../d", "/a/d"},
      {"/a/..b", "/a/..b"},      // "..b" is a name, not ".."
      {"/a/.b", "/a/.b"},        // ".b" is a name, not "."
      {"/a/.../b", "/a/.../b"},  // so is "..."
      {"/a b/c", "/a b/c"},      // spaces are ordinary bytes
      {"/a\nb", "/a\nb"},
      {"", "/"},          // a relative spelling is read from "/"
      {"a/b", "/a/b"},
      {"a/../b/", "/b"},
      {"/a/b/.", "/a/b"},
      {"/a/b/c", "/a/b/c"},  // already normal: as it is
  };
  for (const auto& r : rows) {
    SCOPED_TRACE("in=\"" + r.in + "\"");
    EXPECT_EQ(lexically_normal(r.in), r.out);
  }
}

// --- expand_settings_path -------------------------------------------------------------------

struct ExpandRow {
  std::string written;
  std::string cwd;
  std::string home;
  bool ok;
  std::string want;  // the path when ok, else a fragment of the error
};

TEST(PathExpandTest, ExpandSettingsPathTable) {
  const std::string C = "/work/proj";
  const std::string H = "/home/u";
  const std::vector<ExpandRow> rows = {
      // ~ and ~/x against home
      {"~", C, H, true, "/home/u"},
      {"~/", C, H, true, "/home/u"},
      {"~/x", C, H, true, "/home/u/x"},
      {"~/.ssh/id_rsa", C, H, true, "/home/u/.ssh/id_rsa"},
      {"~//x/./y/", C, H, true, "/home/u/x/y"},
      {"~/a/../b", C, H, true, "/home/u/b"},
      {"~/x", C, "/home/u/", true, "/home/u/x"},  // trailing / on HOME
      // ~user is refused, as is ~ without an absolute HOME
      {"~bob", C, H, false, "\"~user\" paths are not supported"},
      {"~bob/x", C, H, false, "\"~user\" paths are not supported"},
      {"~x", C, H, false, "\"~user\" paths are not supported"},
      {"~/x", C, "", false, "HOME is not an absolute path"},
      {"~/x", C, "relative/home", false, "HOME is not an absolute path"},
      // absolute spellings: only normalised, ".." is fine there
      {"/etc/passwd", C, H, true, "/etc/passwd"},
      {"/a/b/../c", C, H, true, "/a/c"},
      {"/../../x", C, H, true, "/x"},
      {"/", C, H, true, "/"},
      {"//tmp//", C, H, true, "/tmp"},
      // relative spellings against cwd
      {"x", C, H, true, "/work/proj/x"},
      {"./x", C, H, true, "/work/proj/x"},
      {".", C, H, true, "/work/proj"},
      {"./", C, H, true, "/work/proj"},
      {"a/b/", C, H, true, "/work/proj/a/b"},
      {"a/../b", C, H, true, "/work/proj/b"},  // ".." that stays inside is fine
      {"a/b/../../c", C, H, true, "/work/proj/c"},
      {"a/..", C, H, true, "/work/proj"},
      {"../proj/x", C, H, true, "/work/proj/x"},      // climbs out and back in: still inside
      {"x~", C, H, true, "/work/proj/x~"},            // ~ only matters in front
      {"x", "/work/proj/", H, true, "/work/proj/x"},  // cwd spelled with a trailing /
      {"x", "/", H, true, "/x"},
      // relative ".." that escapes cwd is refused
      {"..", C, H, false, "climbs out of the working directory"},
      {"../x", C, H, false, "climbs out of the working directory"},
      {"./../x", C, H, false, "climbs out of the working directory"},
      {"a/../../x", C, H, false, "climbs out of the working directory"},
      {"../projx", C, H, false,
       "climbs out of the working directory"},  // "/work/projx" is not under "/work/proj"
      {"..", "/work/proj/", H, false, "climbs out of the working directory"},
      // empty and NUL
      {"", C, H, false, "path cannot be empty"},
      {std::string("a\0b", 3), C, H, false, "NUL byte"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE("written=\"" + r.written + "\" cwd=" + r.cwd + " home=" + r.home);
    auto got = expand_settings_path(r.written, r.cwd, r.home);
    ASSERT_EQ(got.ok(), r.ok) << (got.ok() ? *got : got.error().message);
    if (r.ok) {
      EXPECT_EQ(*got, r.want);
    } else {
      EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
      EXPECT_NE(got.error().message.find(r.want), std::string::npos) << got.error().message;
      EXPECT_EQ(got.error().message.find('\n'), std::string::npos) << "one line";
    }
  }
}

// --- path_is_under, has_glob_chars ----------------------------------------------------------

struct UnderRow {
  std::string path;
  std::string root;
  bool under;
};

TEST(PathExpandTest, PathIsUnderTable) {
  const std::vector<UnderRow> rows = {
      {"/a", "/a", true},
      {"/a/b", "/a", true},
      {"/a/b/c", "/a", true},
      {"/a/b/c", "/a/b", true},
      {"/ab", "/a", false},  // the prefix trap
      {"/ab/c", "/a", false},
      {"/a-b", "/a", false},
      {"/a.b", "/a", false},
      {"/a", "/a/b", false},  // a parent is not under its child
      {"/", "/a", false},
      {"/b", "/a", false},
      {"/", "/", true},  // everything absolute is under the root
      {"/a", "/", true},
      {"/a/b", "/", true},
      {"", "/", false},
      {"relative", "/", false},
      {"/home/u/.ssh", "/home/u", true},
      {"/home/u2", "/home/u", false},
      {"/home/u", "/home/u2", false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE("path=" + r.path + " root=" + r.root);
    EXPECT_EQ(path_is_under(r.path, r.root), r.under);
  }
}

TEST(PathExpandTest, HasGlobCharsTable) {
  const std::vector<std::pair<std::string, bool>> rows = {
      {"/a/b", false}, {"/a/*", true},      {"/a/?", true},        {"/a/[ab]", true},
      {"/a/]", false}, {"/a/{x,y}", false}, {"~/.ssh/id_*", true}, {"", false},
  };
  for (const auto& [s, want] : rows) {
    SCOPED_TRACE(s);
    EXPECT_EQ(has_glob_chars(s), want);
  }
}

// --- resolve_symlinks and stat_path on a real tree ------------------------------------------

class PathFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "vigil-path-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    // The temp dir itself may sit behind a symlink (/tmp -> /private/tmp): start from its
    // real path so expectations are exact.
    root_ = fs::canonical(tmpl).string();
    fs::create_directories(root_ + "/real/sub");
    std::ofstream(root_ + "/real/file.txt") << "x";
    fs::create_directory_symlink(root_ + "/real", root_ + "/link");  // absolute target
    fs::create_directory_symlink("real/sub", root_ + "/rel");        // relative target
    fs::create_symlink(root_ + "/real/file.txt", root_ + "/filelink");
    fs::create_symlink(root_ + "/nowhere", root_ + "/dangling");
    fs::create_directory_symlink(root_ + "/link", root_ + "/link2");  // a chain
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string root_;
};

TEST_F(PathFsTest, ResolveSymlinksTable) {
  const std::string R = root_;
  const std::vector<NormalRow> rows = {
      {R, R},
      {R + "/", R},
      {R + "/real", R + "/real"},
      {R + "/link", R + "/real"},
      {R + "/link/", R + "/real"},
      {R + "/link/sub", R + "/real/sub"},
      {R + "/link2/sub", R + "/real/sub"},
      {R + "/rel", R + "/real/sub"},
      {R + "/filelink", R + "/real/file.txt"},
      // a missing tail is re-appended to the resolved ancestor
      {R + "/link/missing", R + "/real/missing"},
      {R + "/link/missing/deeper/x", R + "/real/missing/deeper/x"},
      {R + "/link2/sub/new", R + "/real/sub/new"},
      {R + "/nope/a", R + "/nope/a"},
      // lexical first: "/link/../x" is R/x, not the parent of the link's target
      {R + "/link/../real/sub", R + "/real/sub"},
      {R + "//link//./sub/", R + "/real/sub"},
      // below a regular file: realpath fails (ENOTDIR); the file is the deepest ancestor
      {R + "/real/file.txt/x", R + "/real/file.txt/x"},
      // a dangling symlink cannot be resolved; it comes back as itself
      {R + "/dangling", R + "/dangling"},
      {"/", "/"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in);
    EXPECT_EQ(resolve_symlinks(r.in), r.out);
  }
}

struct StatRow {
  std::string path;
  PathKind kind;
  std::string first_missing;
  bool blocked_by_existing = false;
};

TEST_F(PathFsTest, StatPathTable) {
  const std::string R = root_;
  const std::vector<StatRow> rows = {
      {R, PathKind::kDir, ""},
      {R + "/real", PathKind::kDir, ""},
      {R + "/real/file.txt", PathKind::kFile, ""},
      {R + "/link", PathKind::kOther, ""},  // lstat: the link itself
      {R + "/dangling", PathKind::kOther, ""},
      {"/", PathKind::kDir, ""},
      {R + "/missing", PathKind::kMissing, R + "/missing"},
      {R + "/missing/a/b", PathKind::kMissing, R + "/missing"},  // the shallowest missing one
      {R + "/real/missing/a", PathKind::kMissing, R + "/real/missing"},
      {R + "/real/sub/x/y/z", PathKind::kMissing, R + "/real/sub/x"},
      // a file where a directory would have to be stops the path, and exists
      {R + "/real/file.txt/x", PathKind::kMissing, R + "/real/file.txt", true},
      {R + "/real/file.txt/x/y", PathKind::kMissing, R + "/real/file.txt", true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.path);
    const PathState st = stat_path(r.path);
    EXPECT_EQ(st.kind, r.kind);
    EXPECT_EQ(st.first_missing, r.first_missing);
    EXPECT_EQ(st.blocked_by_existing, r.blocked_by_existing);
  }
}

}  // namespace
}  // namespace vigil
