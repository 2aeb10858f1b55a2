// mask_credential_files (credential_files.h) on real files in a temp directory: a masked
// file gets a copy of sentinels bound over its real path (symlinks resolved); a file that
// cannot be masked is hidden with a warning that shows none of it; a missing one is left
// alone; a file the plan already hides stays hidden.
#include "supervisor/command/credential_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace vigil {
namespace {

class CredentialFilesLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil-credfiles-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::mkdir((dir_ + "/session").c_str(), 0700), 0);
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ + "/" + rel, std::ios::binary) << text;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  CredentialFile masked(const std::string& rel, std::string extract = "") {
    CredentialFile f;
    f.written = rel;
    f.path = dir_ + "/" + rel;
    f.rule.mode = CredentialMode::kMask;
    f.rule.extract = std::move(extract);
    f.rule.origin = "credentials.files[" + std::to_string(policy_.credentials.files.size()) + "]";
    return f;
  }
  std::string dir_;
  Policy policy_;
};

TEST_F(CredentialFilesLaunch, AMaskedFileGetsACopyOfSentinelsAtItsRealPath) {
  write("token", "real-token-value\n");
  ASSERT_EQ(::symlink((dir_ + "/token").c_str(), (dir_ + "/link").c_str()), 0);
  policy_.credentials.files.push_back(masked("link"));  // named through a symlink
  proxy::SentinelTable table;
  auto m = mask_credential_files(policy_, Plan{}, dir_ + "/session", &table);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->binds.size(), 1u);
  EXPECT_EQ(m->binds[0].dest, dir_ + "/token");
  EXPECT_EQ(m->binds[0].source.rfind(dir_ + "/session/", 0), 0u);
  const std::string copy = read(m->binds[0].source);
  EXPECT_EQ(copy.rfind("fake_value_", 0), 0u) << copy;
  EXPECT_EQ(copy.find("real-token"), std::string::npos);
  ASSERT_EQ(table.entries().size(), 1u);
  EXPECT_EQ(table.entries()[0].real, "real-token-value");
  EXPECT_TRUE(m->hide.empty());
  EXPECT_TRUE(m->warnings.empty());
}

TEST_F(CredentialFilesLaunch, WhatCannotBeMaskedIsHiddenAndAMissingFileIsLeftAlone) {
  write("binary", std::string("\xff\xfe secret-bytes", 15));
  write("nomatch", "no secret-here\n");
  ASSERT_EQ(::mkdir((dir_ + "/adir").c_str(), 0700), 0);
  policy_.credentials.files.push_back(masked("binary"));
  policy_.credentials.files.push_back(masked("nomatch", "token=(\\S+)"));
  policy_.credentials.files.push_back(masked("adir"));
  policy_.credentials.files.push_back(masked("absent"));
  proxy::SentinelTable table;
  auto m = mask_credential_files(policy_, Plan{}, dir_ + "/session", &table);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->binds.empty());
  ASSERT_EQ(m->hide.size(), 3u);
  EXPECT_EQ(m->hide[0].resolved, dir_ + "/binary");
  EXPECT_EQ(m->hide[1].resolved, dir_ + "/nomatch");
  EXPECT_EQ(m->hide[2].resolved, dir_ + "/adir");
  ASSERT_EQ(m->warnings.size(), 3u);
  for (const auto& w : m->warnings) {
    EXPECT_EQ(w.find("secret"), std::string::npos) << "a warning shows none of the file: " << w;
  }
  EXPECT_NE(m->warnings[0].find("not UTF-8"), std::string::npos) << m->warnings[0];
  EXPECT_NE(m->warnings[2].find("directory"), std::string::npos) << m->warnings[2];
  EXPECT_TRUE(table.empty());
}

TEST_F(CredentialFilesLaunch, AFileThePlanHidesStaysHidden) {
  write("token", "real-token-value\n");
  policy_.credentials.files.push_back(masked("token"));
  Plan plan;
  plan.ops.push_back(PlanOp{OpKind::kHide, dir_, "filesystem.denyRead[0]", "hidden by denyRead",
                            true, DenyShape::kDir});
  proxy::SentinelTable table;
  auto m = mask_credential_files(policy_, plan, dir_ + "/session", &table);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->binds.empty());
  EXPECT_TRUE(m->hide.empty());
  EXPECT_TRUE(table.empty());
}

}  // namespace
}  // namespace vigil
