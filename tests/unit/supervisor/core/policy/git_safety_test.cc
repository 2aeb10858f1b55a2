#include "supervisor/core/policy/git_safety.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::git {
namespace {

std::vector<std::string> keys(std::string_view text) {
  auto parsed = parse_config(text);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message);
  std::vector<std::string> out;
  if (parsed) {
    for (const auto& e : *parsed) out.push_back(e.key() + "=" + e.value);
  }
  return out;
}

TEST(GitConfigParse, SyntaxAsGitReadsIt) {
  struct Case {
    const char* text;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"[core]\n\tbare = false\n", {"core.bare=false"}},
      {"[CoRe]\n\tFsMonitor = x\n", {"core.fsmonitor=x"}},
      {"[remote \"Origin\"]\n url = /r\n", {"remote.Origin.url=/r"}},
      {"[remote.Origin]\n url = /r\n", {"remote.origin.url=/r"}},  // legacy: lowercased
      {"[a \"q\\\"x\\\\y\"]\nk=v\n", {"a.q\"x\\y.k=v"}},
      {"[core] fsmonitor = a\n", {"core.fsmonitor=a"}},  // key after the header
      {"[core]fsmonitor=a", {"core.fsmonitor=a"}},       // no final newline
      {"[core]\n bare\n", {"core.bare="}},               // bare key: true
      {"[core]\n pager = \"a ; b\" # c\n", {"core.pager=a ; b"}},
      {"[core]\n pager = a \\\n b\n", {"core.pager=a  b"}},  // continuation, as git
      {"[core]\n pager = a\\tb\\n\n", {"core.pager=a\tb\n"}},
      {"[core]\r\n pager = x\r\n", {"core.pager=x"}},
      {"\xEF\xBB\xBF[core]\n bare = true\n", {"core.bare=true"}},
      {"# c\n; c\n[core] # c\n  bare = true ; c\n", {"core.bare=true"}},
      {"[core]\n pager = a   b  \n", {"core.pager=a   b"}},
      {"[core]\n pager = a\\", {"core.pager=a"}},  // backslash at the end: as git
      {"[a.B \"C\"]\nk=v\n", {"a.b.C.k=v"}},
  };
  for (const auto& c : cases) EXPECT_EQ(keys(c.text), c.want) << c.text;
}

TEST(GitConfigParse, MalformedIsAnErrorNamingTheLine) {
  const char* bad[] = {
      "bare = true\n",                // no section
      "[core\n bare = true\n",        // unterminated header
      "[core x]\n",                   // unquoted subsection
      "[core \"x]\n",                 // unterminated subsection
      "[core \"x\" ]\n",              // junk after the subsection
      "[co re]\n",                    // space then junk
      "[c*re]\n",                     // bad character
      "[core]\n 1bare = x\n",         // key starts with a digit
      "[core]\n bare x\n",            // no '='
      "[core]\n pager = \"a\n",       // unterminated quote
      "[core]\n pager = a\\qb\n",     // unknown escape
  };
  for (const char* text : bad) {
    auto r = parse_config(text);
    EXPECT_FALSE(r) << text;
    if (!r) {
      EXPECT_NE(r.error().message.find("line"), std::string::npos) << r.error().message;
    }
  }
  const std::string nul("[core]\n pager = a\0b\n", 20);
  EXPECT_FALSE(parse_config(nul));
}

TEST(GitConfigJudge, WhatGitWritesItselfIsSafe) {
  // git init, clone, remote add, submodule add, config user.*, worktree add, sparse-checkout.
  const char* safe =
      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
      "\tlogallrefupdates = true\n\tworktree = ../../../sub\n"
      "[remote \"origin\"]\n\turl = /src/repo\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
      "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
      "[submodule \"sub\"]\n\turl = /src/sub\n\tactive = true\n"
      "[user]\n\tname = A\n\temail = a@b\n[init]\n\tdefaultBranch = main\n"
      "[extensions]\n\tworktreeConfig = true\n\tobjectFormat = sha256\n";
  const auto v = judge_config(safe);
  EXPECT_TRUE(v.safe);
  EXPECT_TRUE(v.unsafe.empty());
}

TEST(GitConfigJudge, AnythingThatCanRunAProgramIsNot) {
  struct Case {
    const char* text;
    const char* key;
  };
  const Case cases[] = {
      {"[core]\nfsmonitor = /tmp/x\n", "core.fsmonitor"},
      {"[core]\nhooksPath = /tmp/h\n", "core.hookspath"},
      {"[core]\nsshCommand = x\n", "core.sshcommand"},
      {"[core]\npager = x\n", "core.pager"},
      {"[core]\neditor = x\n", "core.editor"},
      {"[core]\naskPass = x\n", "core.askpass"},
      {"[credential]\nhelper = !x\n", "credential.helper"},
      {"[credential \"https://h\"]\nhelper = x\n", "credential.https://h.helper"},
      {"[alias]\nst = !sh -c x\n", "alias.st"},
      {"[filter \"lfs\"]\nclean = x\n", "filter.lfs.clean"},
      {"[diff \"d\"]\ntextconv = x\n", "diff.d.textconv"},
      {"[diff]\nexternal = x\n", "diff.external"},
      {"[merge \"m\"]\ndriver = x\n", "merge.m.driver"},
      {"[include]\npath = ../x\n", "include.path"},
      {"[includeIf \"gitdir:/\"]\npath = x\n", "includeif.gitdir:/.path"},
      {"[gpg]\nprogram = x\n", "gpg.program"},
      {"[sequence]\neditor = x\n", "sequence.editor"},
      {"[uploadpack]\npackObjectsHook = x\n", "uploadpack.packobjectshook"},
      {"[remote \"o\"]\nuploadpack = x\n", "remote.o.uploadpack"},
      {"[remote \"o\"]\nreceivepack = x\n", "remote.o.receivepack"},
      {"[remote \"o\"]\nvcs = x\n", "remote.o.vcs"},
      {"[submodule \"s\"]\nupdate = !x\n", "submodule.s.update"},
      {"[protocol \"ext\"]\nallow = always\n", "protocol.ext.allow"},
      {"[commit]\ngpgsign = true\n", "commit.gpgsign"},
      {"[core \"x\"]\nbare = true\n", "core.x.bare"},  // a subsection where none belongs
      {"[remote]\nurl = x\n", "remote.url"},          // none where one belongs
      {"[core] bare = true fsmonitor\n", nullptr},     // one key, "bare", value "true fsmonitor"
      {"[core]\nbare = true\n[core] fsmonitor\n", "core.fsmonitor"},
      {"[core]\nbare = true \\\n\nfsmonitor = x\n", "core.fsmonitor"},
      {"[core]\r\nfsMonitor=x", "core.fsmonitor"},
      {"[foo]\nbar = 1\n", "foo.bar"},  // unknown: not on the list
  };
  for (const auto& c : cases) {
    const auto v = judge_config(c.text);
    if (c.key == nullptr) {
      EXPECT_TRUE(v.safe) << c.text;
      continue;
    }
    EXPECT_FALSE(v.safe) << c.text;
    EXPECT_EQ(v.unsafe, std::vector<std::string>{c.key}) << c.text;
  }
}

TEST(GitConfigJudge, UnparseableIsUnsafeWithTheReason) {
  const auto v = judge_config("[core]\nbare = true\n[core\nfsmonitor = x\n");
  EXPECT_FALSE(v.safe);
  ASSERT_EQ(v.unsafe.size(), 1u);
  EXPECT_NE(v.unsafe[0].find("line 3"), std::string::npos) << v.unsafe[0];
}

TEST(GitConfigJudge, EachUnsafeKeyOnce) {
  const auto v = judge_config("[core]\npager=a\npager=b\n[alias]\nx=!y\n");
  EXPECT_EQ(v.unsafe, (std::vector<std::string>{"core.pager", "alias.x"}));
}

TEST(GitHooks, OnlyRegularSampleFilesAreInert) {
  EXPECT_TRUE(is_inert_hook("pre-commit.sample", true));
  EXPECT_TRUE(is_inert_hook("fsmonitor-watchman.sample", true));
  EXPECT_FALSE(is_inert_hook("pre-commit.sample", false));  // a symlink or a dir
  EXPECT_FALSE(is_inert_hook("post-checkout", true));
  EXPECT_FALSE(is_inert_hook(".sample", true));
  EXPECT_FALSE(is_inert_hook("pre-commit.sample.sh", true));
  EXPECT_FALSE(is_inert_hook("pre-commit.SAMPLE", true));
}

}  // namespace
}  // namespace vigil::git
