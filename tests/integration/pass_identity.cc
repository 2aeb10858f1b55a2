// Which user a pass really runs as. tools/test.sh runs the integration and adversarial
// binaries once as the calling user and, when that is root, again as an unprivileged user;
// it tells each pass which it is meant to be with VIGIL_EXPECT_UNPRIVILEGED (1: no
// privilege at all, 0: root). A pass that silently ran as root would test nothing of what
// "every guarantee holds for an unprivileged user" claims, and this test would fail it.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace {

// The effective capability set, as the kernel reports it ("CapEff:\t0000...").
std::string effective_capabilities() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 7));
  }
  return "";
}

TEST(PassIdentity, RunsAsTheUserThePassClaims) {
  const char* expect = std::getenv("VIGIL_EXPECT_UNPRIVILEGED");
  if (expect == nullptr) GTEST_SKIP() << "VIGIL_EXPECT_UNPRIVILEGED is unset: run by hand, not by tools/test.sh";
  const std::string caps = effective_capabilities();
  ASSERT_FALSE(caps.empty()) << "no CapEff line in /proc/self/status";
  if (std::string(expect) == "1") {
    EXPECT_NE(::geteuid(), 0u) << "the unprivileged pass runs as root";
    EXPECT_NE(::getuid(), 0u) << "the unprivileged pass has a root real uid";
    EXPECT_EQ(caps.find_first_not_of('0'), std::string::npos)
        << "the unprivileged pass holds capabilities: CapEff " << caps;
  } else {
    ASSERT_EQ(std::string(expect), "0") << "VIGIL_EXPECT_UNPRIVILEGED must be 0 or 1";
    EXPECT_EQ(::geteuid(), 0u) << "the root pass does not run as root";
  }
}

}  // namespace
