// A session's command runs inside the workspace fixed at its start
// (supervisor/agent/command_cwd.h): the containment test on resolved paths, and the
// resolution itself against symlinks and `..` on a real filesystem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "supervisor/agent/command_cwd.h"

namespace vigil {
namespace {

TEST(CommandCwd, WithinIsByComponentsNeverByStringPrefix) {
  struct Row {
    const char* path;
    const char* root;
    bool within;
  } rows[] = {
      {"/work", "/work", true},         {"/work/a/b", "/work", true},
      {"/workshop", "/work", false},    {"/work2/x", "/work", false},
      {"/", "/work", false},            {"/home/u", "/work", false},
      {"/anything", "/", true},         {"relative", "/work", false},
      {"/work", "relative", false},     {"", "/work", false},
  };
  for (const auto& r : rows) EXPECT_EQ(cwd_within(r.path, r.root), r.within) << r.path << " in " << r.root;
}

class CommandCwdOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/vigil-cwd-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    char* real = ::realpath(templ, nullptr);
    base_ = real;
    std::free(real);
    ws_ = base_ + "/ws";
    outside_ = base_ + "/home";
    ASSERT_EQ(::mkdir(ws_.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir((ws_ + "/sub").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(outside_.c_str(), 0700), 0);
    ASSERT_EQ(::symlink(outside_.c_str(), (ws_ + "/to-home").c_str()), 0);
    ASSERT_EQ(::symlink((ws_ + "/sub").c_str(), (base_ + "/to-sub").c_str()), 0);
  }
  void TearDown() override {
    ::unlink((ws_ + "/to-home").c_str());
    ::unlink((base_ + "/to-sub").c_str());
    ::rmdir((ws_ + "/sub").c_str());
    ::rmdir(ws_.c_str());
    ::rmdir(outside_.c_str());
    ::rmdir(base_.c_str());
  }
  std::string base_, ws_, outside_;
};

TEST_F(CommandCwdOnDisk, InsideTheWorkspaceIsResolved) {
  auto same = command_cwd_in(ws_, ws_);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(*same, ws_);
  auto sub = command_cwd_in(ws_ + "/./sub/", ws_);
  ASSERT_TRUE(sub) << sub.error().message;
  EXPECT_EQ(*sub, ws_ + "/sub");
  // A link from outside that leads inside is the directory it leads to.
  auto via = command_cwd_in(base_ + "/to-sub", ws_);
  ASSERT_TRUE(via) << via.error().message;
  EXPECT_EQ(*via, ws_ + "/sub");
}

TEST_F(CommandCwdOnDisk, OutsideIsRefusedHoweverItIsSpelled) {
  for (const std::string& cwd : {outside_, ws_ + "/to-home", ws_ + "/../home", ws_ + "/sub/../../home",
                                 std::string("/"), base_}) {
    auto r = command_cwd_in(cwd, ws_);
    ASSERT_FALSE(r) << cwd << " was let through as " << *r;
    EXPECT_NE(r.error().message.find("outside this session's workspace"), std::string::npos)
        << r.error().message;
  }
  // A prefix of the name is not the directory: ws2 is not inside ws.
  ASSERT_EQ(::mkdir((ws_ + "2").c_str(), 0700), 0);
  EXPECT_FALSE(command_cwd_in(ws_ + "2", ws_));
  ::rmdir((ws_ + "2").c_str());
  auto missing = command_cwd_in(ws_ + "/nope", ws_);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("must be an existing directory"), std::string::npos);
  EXPECT_FALSE(command_cwd_in("sub", ws_));
}

}  // namespace
}  // namespace vigil
