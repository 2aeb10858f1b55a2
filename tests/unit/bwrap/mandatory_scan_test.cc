// The mandatory-deny scan against real trees built under /tmp.
#include "bwrap/mandatory_scan.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/support/bounded_wait.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempTree {
 public:
  TempTree() {
    std::string tmpl = "/tmp/vigil-scan-test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    root_ = tmpl;
  }
  ~TempTree() {
    std::error_code ec;
    for (const auto& dir : locked_) fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }
  std::string path(std::string_view rel) const { return root_ + "/" + std::string(rel); }

  void mkdirs(std::string_view rel) const {
    std::error_code ec;
    fs::create_directories(path(rel), ec);
    if (ec) ADD_FAILURE() << "mkdir " << rel << ": " << ec.message();
  }
  void touch(std::string_view rel, std::string_view content = {}) const {
    const auto p = path(rel);
    mkdirs(fs::path(rel).parent_path().string());
    UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) {
      ADD_FAILURE() << "create " << p;
      return;
    }
    if (::write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
      ADD_FAILURE() << "write " << p;
    }
  }
  void symlink(std::string_view target, std::string_view rel) const {
    mkdirs(fs::path(rel).parent_path().string());
    if (::symlink(std::string(target).c_str(), path(rel).c_str()) != 0) {
      ADD_FAILURE() << "symlink " << rel;
    }
  }
  void mkfifo(std::string_view rel) const {
    if (::mkfifo(path(rel).c_str(), 0644) != 0) ADD_FAILURE() << "mkfifo " << rel;
  }
  // Takes every permission away from a directory (restored before removal).
  void lock(std::string_view rel) {
    locked_.push_back(path(rel));
    if (::chmod(locked_.back().c_str(), 0) != 0) ADD_FAILURE() << "chmod " << rel;
  }

 private:
  std::string root_;
  std::vector<std::string> locked_;
};

ScanResult scan_ok(const std::string& root, const ScanLimits& limits = {}) {
  auto r = scan_mandatory_denies(root, limits);
  if (!r) {
    ADD_FAILURE() << "scan failed: " << r.error().message;
    return {};
  }
  return std::move(r).value();
}

// "rel/path rule type depth" for each hit: readable in a failure message.
std::vector<std::string> describe(const ScanResult& result, const std::string& root) {
  std::vector<std::string> out;
  for (const auto& hit : result.hits) {
    std::string rel = hit.path;
    if (rel.rfind(root + "/", 0) == 0)
      rel = rel.substr(root.size() + 1);
    else
      rel = "OUTSIDE:" + rel;
    out.push_back(rel + " " + std::string(hit.rule ? hit.rule->relpath : "null") + " " +
                  to_string(hit.type) + " " + std::to_string(hit.depth));
  }
  return out;
}

std::vector<std::string> relative(const std::vector<std::string>& paths, const std::string& root) {
  std::vector<std::string> out;
  for (const auto& p : paths)
    out.push_back(p.rfind(root + "/", 0) == 0 ? p.substr(root.size() + 1) : p);
  return out;
}

const char* shape_type(DenyShape shape) { return shape == DenyShape::kDir ? "dir" : "file"; }

// Creates rule.relpath below `prefix` with the rule's shape.
void create_rule(const TempTree& tree, const std::string& prefix, const MandatoryDeny& rule) {
  const std::string rel = prefix + std::string(rule.relpath);
  if (rule.shape == DenyShape::kDir)
    tree.mkdirs(rel);
  else
    tree.touch(rel);
}

std::string prefix_for_depth(int depth) {
  std::string prefix;
  for (int i = 1; i < depth; ++i) prefix += "lvl" + std::to_string(i) + "/";
  return prefix;
}

// ---- every list entry at depth 1..4 -------------------------------------------------

class RuleAtDepth : public ::testing::TestWithParam<std::tuple<std::size_t, int>> {};

TEST_P(RuleAtDepth, HitsWithinDefaultDepthOnly) {
  const auto [index, depth] = GetParam();
  const MandatoryDeny& rule = mandatory_denies()[index];
  TempTree tree;
  const std::string prefix = prefix_for_depth(depth);
  create_rule(tree, prefix, rule);
  const std::string expected = prefix + std::string(rule.relpath) + " " +
                               std::string(rule.relpath) + " " + shape_type(rule.shape) + " " +
                               std::to_string(depth);

  const auto result = scan_ok(tree.root());
  if (depth <= ScanLimits{}.max_depth) {
    EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{expected});
    ASSERT_EQ(result.hits.size(), 1u);
    EXPECT_EQ(result.hits[0].rule, &rule);  // the list entry itself, not a copy
  } else {
    EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{});
    // ... and found once the depth allows it.
    const auto deeper = scan_ok(tree.root(), ScanLimits{.max_depth = depth});
    EXPECT_EQ(describe(deeper, tree.root()), std::vector<std::string>{expected});
  }
  EXPECT_TRUE(result.unreadable_dirs.empty());
  EXPECT_TRUE(result.git_files.empty());
}

std::string rule_param_name(const ::testing::TestParamInfo<RuleAtDepth::ParamType>& info) {
  std::string name;
  for (char c : mandatory_denies()[std::get<0>(info.param)].relpath) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      name += c;
    else if (c == '/')
      name += "_";
  }
  return name + "_depth" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    AllRules, RuleAtDepth,
    ::testing::Combine(::testing::Range<std::size_t>(0, mandatory_denies().size()),
                       ::testing::Values(1, 2, 3, 4)),
    rule_param_name);

TEST(MandatoryScan, AllRulesInOneRootAreEachHitOnce) {
  TempTree tree;
  for (const auto& rule : mandatory_denies()) create_rule(tree, "p/", rule);
  const auto result = scan_ok(tree.root());
  ASSERT_EQ(result.hits.size(), mandatory_denies().size())
      << ::testing::PrintToString(describe(result, tree.root()));
  for (const auto& rule : mandatory_denies()) {
    int count = 0;
    for (const auto& hit : result.hits) count += hit.rule == &rule ? 1 : 0;
    EXPECT_EQ(count, 1) << rule.relpath;
  }
}

TEST(MandatoryScan, NearMissNamesAreNotHits) {
  TempTree tree;
  tree.touch(".bashrc.bak");
  tree.touch("bashrc");
  tree.touch("x.bashrc");
  tree.mkdirs(".git2/hooks");
  tree.mkdirs(".claudeX/commands");
  tree.mkdirs(".claude/settings");
  tree.touch(".claude/commands.md");
  tree.mkdirs("hooks");
  tree.mkdirs(".git/hooks.old");
  tree.touch(".git/config.lock");
  tree.mkdirs("sub/.gitx/hooks");
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{});
}

TEST(MandatoryScan, HeadAtMaxDepthHasItsChildProbedBeyondIt) {
  TempTree tree;
  tree.mkdirs("a/b/.git/hooks");    // .git at depth 3, hooks at 4
  tree.touch("a/b/c/.git/config");  // .git at depth 4: too deep
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()),
            (std::vector<std::string>{"a/b/.git/hooks .git/hooks dir 3"}));
}

// ---- depth limits -------------------------------------------------------------------

TEST(MandatoryScan, DepthLimitVariations) {
  TempTree tree;
  std::string dir;
  for (int d = 1; d <= 6; ++d) {
    tree.touch(dir + ".bashrc");
    dir += "d" + std::to_string(d) + "/";
  }
  for (int max_depth = 0; max_depth <= 8; ++max_depth) {
    SCOPED_TRACE("max_depth " + std::to_string(max_depth));
    const auto result = scan_ok(tree.root(), ScanLimits{.max_depth = max_depth});
    std::vector<int> depths;
    for (const auto& hit : result.hits) depths.push_back(hit.depth);
    std::vector<int> expected;
    for (int d = 1; d <= std::min(max_depth, 6); ++d) expected.push_back(d);
    EXPECT_EQ(depths, expected);
  }
}

TEST(MandatoryScan, EntriesVisitedCountsEveryEntryWithinDepth) {
  TempTree tree;
  tree.touch("f1");
  tree.mkdirs("b");
  tree.touch("a/f2");
  tree.touch("a/c/f3");
  tree.touch("a/c/d/f4");
  // depth 1: f1 b a; 2: f2 c; 3: f3 d; 4: f4.
  const std::vector<std::size_t> expected = {0, 3, 5, 7, 8, 8};
  for (int max_depth = 0; max_depth < static_cast<int>(expected.size()); ++max_depth) {
    EXPECT_EQ(scan_ok(tree.root(), ScanLimits{.max_depth = max_depth}).entries_visited,
              expected[max_depth])
        << "max_depth " << max_depth;
  }
}

// ---- symlinks -----------------------------------------------------------------------

TEST(MandatoryScan, SymlinkedDirsAreNotFollowed) {
  TempTree tree;
  TempTree outside;
  outside.touch(".bashrc");
  outside.mkdirs("x/.git/hooks");
  tree.symlink(outside.root(), "link");
  tree.symlink(outside.root() + "/x", "sub/link2");
  tree.symlink(tree.root(), "loop");  // would never end if followed
  const auto result = scan_ok(tree.root(), ScanLimits{.max_depth = 10});
  EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{});
  EXPECT_EQ(result.entries_visited, 4u);  // link, sub, loop, sub/link2
}

TEST(MandatoryScan, SymlinkNamedLikeARuleIsReportedAsSymlink) {
  TempTree tree;
  tree.symlink("/etc/passwd", ".bashrc");
  tree.symlink("/nonexistent/dangling", "sub/.profile");
  tree.symlink("/tmp", "sub/.vscode");
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(
      describe(result, tree.root()),
      (std::vector<std::string>{".bashrc .bashrc symlink 1", "sub/.profile .profile symlink 2",
                                "sub/.vscode .vscode symlink 2"}));
}

TEST(MandatoryScan, SymlinkedGitDirIsItselfTheHitForEachOfItsRules) {
  TempTree tree;
  TempTree outside;
  outside.mkdirs("realgit/hooks");
  outside.touch("realgit/config");
  tree.symlink(outside.path("realgit"), "w/.git");
  const auto result = scan_ok(tree.root());
  // Same path for both rules: ordered by list position (.git/hooks comes first).
  EXPECT_EQ(
      describe(result, tree.root()),
      (std::vector<std::string>{"w/.git .git/hooks symlink 2", "w/.git .git/commondir symlink 2",
                                "w/.git .git/config symlink 2"}));
  EXPECT_TRUE(result.git_files.empty());
}

TEST(MandatoryScan, SymlinkedChildOfHeadIsReportedAsSymlink) {
  TempTree tree;
  tree.symlink("/tmp", ".git/hooks");
  tree.symlink("/nonexistent", ".claude/agents");
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()),
            (std::vector<std::string>{".claude/agents .claude/agents symlink 1",
                                      ".git/hooks .git/hooks symlink 1"}));
}

TEST(MandatoryScan, SymlinkedRootIsFollowed) {
  TempTree tree;
  tree.touch("real/.zshrc");
  tree.symlink(tree.path("real"), "alias");
  const auto result = scan_ok(tree.path("alias"));
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].path, tree.path("alias/.zshrc"));
}

// ---- .git ---------------------------------------------------------------------------

TEST(MandatoryScan, GitFileIsReportedNotHit) {
  TempTree tree;
  tree.touch("wt/.git", "gitdir: /elsewhere/.git/worktrees/wt\n");
  tree.touch("a/b/c/.git", "gitdir: ../../.git/modules/c\n");  // depth 4: not seen
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(relative(result.git_files, tree.root()), std::vector<std::string>{"wt/.git"});
  EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{});
}

TEST(MandatoryScan, GitDirIsNotDescended) {
  TempTree tree;
  tree.mkdirs(".git/hooks");
  tree.touch(".git/config");
  tree.touch(".git/objects/ab/cdef");
  tree.touch(".git/nested/.bashrc");
  tree.mkdirs(".git/nested/.git/hooks");
  tree.touch(".git/modules/sub/config");
  const auto result = scan_ok(tree.root(), ScanLimits{.max_depth = 10});
  EXPECT_EQ(
      describe(result, tree.root()),
      (std::vector<std::string>{".git/config .git/config file 1", ".git/hooks .git/hooks dir 1"}));
  EXPECT_EQ(result.entries_visited, 1u);
}

TEST(MandatoryScan, ClaudeDirIsDescended) {
  TempTree tree;
  tree.mkdirs(".claude/commands");
  tree.touch(".claude/sub/.bashrc");
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()),
            (std::vector<std::string>{".claude/commands .claude/commands dir 1",
                                      ".claude/sub/.bashrc .bashrc file 3"}));
}

// ---- other types --------------------------------------------------------------------

TEST(MandatoryScan, OneComponentRulesHitWhateverTheType) {
  TempTree tree;
  tree.mkfifo(".bashrc");
  tree.touch(".vscode");    // a dir-shaped rule present as a file
  tree.mkdirs(".profile");  // a file-shaped rule present as a dir
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()),
            (std::vector<std::string>{".bashrc .bashrc other 1", ".profile .profile dir 1",
                                      ".vscode .vscode file 1"}));
}

TEST(MandatoryScan, NonDirectoryHeadHasNothingBelowIt) {
  TempTree tree;
  tree.touch(".claude");
  tree.mkfifo(".git");
  const auto result = scan_ok(tree.root());
  EXPECT_EQ(describe(result, tree.root()), std::vector<std::string>{});
  EXPECT_TRUE(result.git_files.empty());  // a FIFO is not a gitdir pointer
}

// ---- permissions --------------------------------------------------------------------

// Root reads and searches any directory, so to see EACCES as root the scan runs in a
// forked child that has become nobody (uid/gid 65534), on a tree handed over to nobody.
// As a normal user it runs in-process. Returns "unreadable dirs | hits", or an error.
std::string unreadable_summary(const TempTree& tree) {
  auto summarize = [&]() {
    const auto r = scan_mandatory_denies(tree.root());
    if (!r.ok()) return "error: " + r.error().message;
    std::string out;
    for (const auto& d : relative(r->unreadable_dirs, tree.root())) out += d + ";";
    out += "|";
    for (const auto& h : describe(*r, tree.root())) out += h + ";";
    return out;
  };
  if (::geteuid() != 0) return summarize();
  const std::string chown = "chown -R 65534:65534 '" + tree.root() + "'";
  if (std::system(chown.c_str()) != 0) return "error: chown failed";
  int fds[2];
  if (::pipe(fds) != 0) return "error: pipe failed";
  UniqueFd rd(fds[0]), wr(fds[1]);
  const pid_t pid = ::fork();
  if (pid == 0) {
    rd.reset();
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(3);
    }
    const std::string out = summarize();
    const bool ok = ::write(wr.get(), out.data(), out.size()) == static_cast<ssize_t>(out.size());
    ::_exit(ok ? 0 : 4);
  }
  wr.reset();
  bool late = false;
  const std::string out = test::read_until_eof(rd.get(), std::chrono::seconds(60), &late);
  if (late || test::wait_child(pid, std::chrono::seconds(30)) != 0)
    return "error: unprivileged child failed or hung";
  return out;
}

TEST(MandatoryScan, UnreadableDirIsReportedAndTheScanGoesOn) {
  TempTree tree;
  tree.touch("locked/.bashrc");
  tree.touch("open/.bashrc");
  tree.lock("locked");
  EXPECT_EQ(unreadable_summary(tree), "locked;|open/.bashrc .bashrc file 2;");
}

TEST(MandatoryScan, UnsearchableGitDirIsReportedOnce) {
  TempTree tree;
  tree.mkdirs(".git/hooks");
  tree.touch(".git/config");
  tree.lock(".git");
  EXPECT_EQ(unreadable_summary(tree), ".git;|");
}

// ---- limits and errors --------------------------------------------------------------

TEST(MandatoryScan, MaxEntriesExceededIsAnErrorNamingRootLimitAndFix) {
  TempTree tree;
  for (int i = 0; i < 10; ++i) tree.touch("f" + std::to_string(i));
  const auto at_limit = scan_mandatory_denies(tree.root(), ScanLimits{.max_entries = 10});
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().message;
  EXPECT_EQ(at_limit->entries_visited, 10u);

  const auto over = scan_mandatory_denies(tree.root(), ScanLimits{.max_entries = 9});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, Errc::kRefused);
  const auto& msg = over.error().message;
  EXPECT_NE(msg.find(tree.root()), std::string::npos) << msg;
  EXPECT_NE(msg.find(" 9 "), std::string::npos) << msg;
  EXPECT_NE(msg.find("mandatoryDenySearchDepth"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allowWrite"), std::string::npos) << msg;
}

TEST(MandatoryScan, MaxEntriesCountsEntriesInSubdirectories) {
  TempTree tree;
  for (int i = 0; i < 5; ++i) tree.touch("a/b/f" + std::to_string(i));
  // a, b, 5 files = 7 entries within depth 3.
  EXPECT_TRUE(scan_mandatory_denies(tree.root(), ScanLimits{.max_entries = 7}).ok());
  EXPECT_FALSE(scan_mandatory_denies(tree.root(), ScanLimits{.max_entries = 6}).ok());
  // Beyond the depth they are not read, so they do not count.
  EXPECT_TRUE(
      scan_mandatory_denies(tree.root(), ScanLimits{.max_depth = 2, .max_entries = 2}).ok());
}

TEST(MandatoryScan, RootErrors) {
  TempTree tree;
  tree.touch("file");

  const auto missing = scan_mandatory_denies(tree.path("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Errc::kNotFound);
  EXPECT_NE(missing.error().message.find(tree.path("nope")), std::string::npos);

  const auto file = scan_mandatory_denies(tree.path("file"));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().code, Errc::kInvalidPolicy);
  EXPECT_NE(file.error().message.find("not a directory"), std::string::npos);

  const auto relative_root = scan_mandatory_denies("tmp");
  ASSERT_FALSE(relative_root.ok());
  EXPECT_EQ(relative_root.error().code, Errc::kInternal);
  EXPECT_FALSE(scan_mandatory_denies("").ok());

  for (int bad : {-1, kMaxScanDepth + 1}) {
    const auto r = scan_mandatory_denies(tree.root(), ScanLimits{.max_depth = bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, Errc::kInvalidPolicy);
  }
  EXPECT_TRUE(scan_mandatory_denies(tree.root(), ScanLimits{.max_depth = kMaxScanDepth}).ok());
}

TEST(MandatoryScan, TrailingSlashesInRootDoNotDoubleSeparators) {
  TempTree tree;
  tree.touch("a/.bashrc");
  const auto result = scan_ok(tree.root() + "//");
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].path, tree.path("a/.bashrc"));
}

TEST(MandatoryScan, FilesystemRootGivesSingleSlashPaths) {
  const auto result = scan_ok("/", ScanLimits{.max_depth = 1});
  EXPECT_GT(result.entries_visited, 0u);
  for (const auto& hit : result.hits) EXPECT_NE(hit.path.rfind("//", 0), 0u) << hit.path;
  for (const auto& dir : result.unreadable_dirs) EXPECT_NE(dir.rfind("//", 0), 0u) << dir;
}

// ---- ordering -----------------------------------------------------------------------

TEST(MandatoryScan, OrderingIsSortedAndRepeatable) {
  TempTree tree;
  // Created in an order unrelated to the sorted one, in many directories so the
  // directory order on disk does not happen to be sorted.
  for (const char* dir : {"zz", "m", "a", "q/r", "b", "zz/a", "k"}) {
    tree.touch(std::string(dir) + "/.profile");
    tree.mkdirs(std::string(dir) + "/.git/hooks");
    tree.touch(std::string(dir) + "/.git/config");
    tree.touch(std::string(dir) + "/.bashrc");
  }
  tree.touch("wt2/.git");
  tree.touch("wt1/.git");
  const auto first = scan_ok(tree.root());
  const auto second = scan_ok(tree.root());
  ASSERT_EQ(first.hits.size(), 7u * 4u);
  for (std::size_t i = 1; i < first.hits.size(); ++i) {
    EXPECT_LT(first.hits[i - 1].path, first.hits[i].path);
  }
  EXPECT_EQ(describe(first, tree.root()), describe(second, tree.root()));
  EXPECT_EQ(relative(first.git_files, tree.root()),
            (std::vector<std::string>{"wt1/.git", "wt2/.git"}));
  EXPECT_EQ(describe(first, tree.root()).front(), "a/.bashrc .bashrc file 2");
}

}  // namespace
}  // namespace vigil
