// The session socket's trust checks (supervisor/agent/session_socket.h): which directories
// and sockets a client trusts, where a server puts its socket without XDG_RUNTIME_DIR,
// and the client's refusals on a real filesystem.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "supervisor/agent/session_socket.h"

namespace vigil {
namespace {

struct stat with(mode_t mode, uid_t uid) {
  struct stat st {};
  st.st_mode = mode;
  st.st_uid = uid;
  return st;
}

TEST(SessionSocket, OnlyAPrivateDirectoryOfThisUserIsTrusted) {
  EXPECT_EQ(untrusted_dir_reason(with(S_IFDIR | 0700, 1000), 1000), "");
  EXPECT_NE(untrusted_dir_reason(with(S_IFDIR | 0700, 1001), 1000).find("belongs to uid 1001"),
            std::string::npos);
  EXPECT_NE(untrusted_dir_reason(with(S_IFDIR | 0777, 1000), 1000).find("open to other users"),
            std::string::npos);
  EXPECT_NE(untrusted_dir_reason(with(S_IFDIR | 0710, 1000), 1000), "");
  EXPECT_NE(untrusted_dir_reason(with(S_IFDIR | 0701, 1000), 1000), "");
  EXPECT_NE(untrusted_dir_reason(with(S_IFLNK | 0777, 1000), 1000).find("symbolic link"),
            std::string::npos);
  EXPECT_NE(untrusted_dir_reason(with(S_IFREG | 0700, 1000), 1000), "");
  EXPECT_EQ(untrusted_socket_reason(with(S_IFSOCK | 0600, 1000), 1000), "");
  EXPECT_NE(untrusted_socket_reason(with(S_IFSOCK | 0600, 0), 1000), "");
  EXPECT_NE(untrusted_socket_reason(with(S_IFREG | 0600, 1000), 1000), "");
}

class SessionSocketOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/vigil-sock-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    base_ = templ;
  }
  void TearDown() override { (void)std::system(("rm -rf '" + base_ + "'").c_str()); }
  std::string base_;
};

TEST_F(SessionSocketOnDisk, WithoutARuntimeDirTheSocketGoesToTheStateDirNeverTmp) {
  const std::string state = base_ + "/state";
  auto dir = make_session_socket_dir(nullptr, state.c_str(), "/nonexistent-home");
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(dir->rfind(state + "/vigil/run/vigil-session-", 0), 0u) << *dir;
  struct stat st {};
  ASSERT_EQ(::lstat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A runtime dir open to others (or not this user's) is not used either.
  const std::string loose = base_ + "/loose";
  ASSERT_EQ(::mkdir(loose.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(loose.c_str(), 0777), 0);
  auto other = make_session_socket_dir(loose.c_str(), state.c_str(), "/nonexistent-home");
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->rfind(state + "/vigil/run/", 0), 0u) << *other;
  auto good = make_session_socket_dir(base_.c_str(), state.c_str(), "/nonexistent-home");
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->rfind(base_ + "/vigil-session-", 0), 0u) << *good;
}

TEST_F(SessionSocketOnDisk, AClientRefusesWhatItCannotTrustAndNamesTheFix) {
  // Gone: the handle of an ended session.
  auto gone = connect_to_session(base_ + "/ended/agent.sock", std::nullopt);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("it has ended"), std::string::npos) << gone.error().message;
  EXPECT_NE(gone.error().message.find("unset VIGIL_SESSION"), std::string::npos);
  // A directory open to others, with a listening socket of this user's in it.
  const std::string open_dir = base_ + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  auto listener = bind_session_socket(open_dir + "/agent.sock");
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_EQ(::listen(listener->get(), 4), 0);
  auto ok = connect_to_session(open_dir + "/agent.sock", ::getpid());
  EXPECT_TRUE(ok) << ok.error().message;
  // The same listener, but VIGIL_SESSION_PID names another process: replaced.
  auto replaced = connect_to_session(open_dir + "/agent.sock", ::getpid() + 1);
  ASSERT_FALSE(replaced);
  EXPECT_NE(replaced.error().message.find("not VIGIL_SESSION_PID"), std::string::npos);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0755), 0);
  auto loose = connect_to_session(open_dir + "/agent.sock", std::nullopt);
  ASSERT_FALSE(loose);
  EXPECT_NE(loose.error().message.find("open to other users"), std::string::npos)
      << loose.error().message;
  EXPECT_NE(loose.error().message.find("unset VIGIL_SESSION"), std::string::npos);
  // A link to a good directory is not the directory.
  ASSERT_EQ(::chmod(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(open_dir.c_str(), (base_ + "/link").c_str()), 0);
  auto linked = connect_to_session(base_ + "/link/agent.sock", std::nullopt);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("not a real directory"), std::string::npos)
      << linked.error().message;
  // Not a socket.
  const std::string file_dir = base_ + "/file";
  ASSERT_EQ(::mkdir(file_dir.c_str(), 0700), 0);
  std::FILE* f = std::fopen((file_dir + "/agent.sock").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto not_sock = connect_to_session(file_dir + "/agent.sock", std::nullopt);
  ASSERT_FALSE(not_sock);
  EXPECT_NE(not_sock.error().message.find("not a socket"), std::string::npos);
}

}  // namespace
}  // namespace vigil
