// An agent session's network namespace (supervisor/launch/session_netns.h): each command's
// loopback address, and the namespace itself made as this user (root or not).
#include "supervisor/launch/session_netns.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>
#include <string>

namespace vigil {
namespace {

TEST(SessionNetns, EachCommandsAddressIsItsOwnLoopbackOne) {
  struct Row {
    std::uint32_t n;
    const char* want;
  };
  const Row rows[] = {{0, "127.86.0.1"},       {1, "127.86.0.2"},     {253, "127.86.0.254"},
                      {254, "127.86.1.1"},     {255, "127.86.1.2"},   {254 * 256 - 1, "127.86.255.254"},
                      {254 * 256, "127.86.0.1"}};
  for (const auto& r : rows) EXPECT_EQ(session_loopback_address(r.n), r.want) << r.n;
  // Every one a host address of 127/8 (never .0 or .255, never 127.0.0.1), none repeated
  // before the cycle is over.
  std::set<std::string> seen;
  for (std::uint32_t n = 0; n < 254 * 256; ++n) {
    const std::string a = session_loopback_address(n);
    in_addr addr{};
    ASSERT_EQ(::inet_pton(AF_INET, a.c_str(), &addr), 1) << a;
    const std::uint32_t h = ntohl(addr.s_addr);
    ASSERT_EQ(h >> 24, 127u) << a;
    ASSERT_NE(h & 0xff, 0u) << a;
    ASSERT_NE(h & 0xff, 255u) << a;
    ASSERT_NE(a, "127.0.0.1");
    ASSERT_TRUE(seen.insert(a).second) << a;
  }
}

TEST(SessionNetns, IsANamespaceOfItsOwnWithDistinctAddressesPerCommand) {
  auto ns = SessionNetns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message;
  struct stat self {};
  ASSERT_EQ(::stat("/proc/self/ns/net", &self), 0);
  EXPECT_NE((*ns)->inode(), self.st_ino) << "not this process's namespace";
  EXPECT_GE((*ns)->join().net_fd, 0);
  auto other = SessionNetns::create();
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_NE((*other)->inode(), (*ns)->inode()) << "each session has its own";
  EXPECT_EQ((*ns)->next_loopback(), "127.86.0.1");
  EXPECT_EQ((*ns)->next_loopback(), "127.86.0.2");
}

}  // namespace
}  // namespace vigil
