// The command's environment on its way into vigil-init (supervisor/core/wire/env_block.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "supervisor/core/wire/env_block.h"

namespace vigil::wire {
namespace {

TEST(EnvBlock, RoundTripsEveryEntryAsItWas) {
  const std::vector<std::string> env = {"PATH=/usr/bin", "EMPTY=", "LD_PRELOAD=/w/x.so",
                                        "X=a=b", std::string("BYTES=\xff\x80", 8)};
  auto back = decode_env_block(encode_env_block(env));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, env);
  auto none = decode_env_block("");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(EnvBlock, EntriesExecveCouldNotPassAreLeftOutAndBadBlocksRefused) {
  EXPECT_EQ(encode_env_block({"NOEQUALS", "=x", "A=1"}), std::string("A=1\0", 4));
  EXPECT_FALSE(decode_env_block(std::string("A=1", 3)));           // no NUL at its end
  EXPECT_FALSE(decode_env_block(std::string("A=1\0B\0", 6)));      // no '='
  EXPECT_FALSE(decode_env_block(std::string("=1\0", 3)));          // no name
}

TEST(EnvBlock, HostHelpersGetNothingOfTheCallers) {
  const auto env = host_helper_environment();
  for (const auto& e : env) {
    const std::string name = e.substr(0, e.find('='));
    EXPECT_EQ(name, "PATH") << e;  // only vigil's own PATH of system directories
    EXPECT_EQ(e.find("/usr/local"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace vigil::wire
