// git.safeDirectories as the command's environment: each directory and "<dir>/*", after
// the command's own GIT_CONFIG_* entries; and the bridges' table for the external proxy
// ports (which bridge leads where, what is bound in).
#include "supervisor/launch/git_safe_env.h"

#include <gtest/gtest.h>

#include "supervisor/launch/external_proxy.h"

namespace vigil {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

TEST(GitSafeEnvTest, Table) {
  struct Row {
    std::vector<std::string> dirs;
    std::optional<std::string> inherited;
    Env want;
  };
  const Row rows[] = {
      {{}, std::nullopt, {}},
      {{}, "3", {}},
      {{"/work/repo"},
       std::nullopt,
       {{"GIT_CONFIG_KEY_0", "safe.directory"},
        {"GIT_CONFIG_VALUE_0", "/work/repo"},
        {"GIT_CONFIG_KEY_1", "safe.directory"},
        {"GIT_CONFIG_VALUE_1", "/work/repo/*"},
        {"GIT_CONFIG_COUNT", "2"}}},
      // The command's own two entries are kept: numbering continues after them.
      {{"/r"},
       "2",
       {{"GIT_CONFIG_KEY_2", "safe.directory"},
        {"GIT_CONFIG_VALUE_2", "/r"},
        {"GIT_CONFIG_KEY_3", "safe.directory"},
        {"GIT_CONFIG_VALUE_3", "/r/*"},
        {"GIT_CONFIG_COUNT", "4"}}},
      // An unreadable count is not guessed at.
      {{"/"},
       "two",
       {{"GIT_CONFIG_KEY_0", "safe.directory"},
        {"GIT_CONFIG_VALUE_0", "/"},
        {"GIT_CONFIG_KEY_1", "safe.directory"},
        {"GIT_CONFIG_VALUE_1", "/*"},
        {"GIT_CONFIG_COUNT", "2"}}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dirs.empty() ? "(none)" : r.dirs[0]);
    EXPECT_EQ(git_safe_directory_env(r.dirs, r.inherited), r.want);
  }
}

TEST(GitSafeEnvTest, EnvValueReadsTheSessionsListLastOneWins) {
  const std::optional<std::vector<std::string>> env = std::vector<std::string>{
      "A=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_COUNTX=9", "GIT_CONFIG_COUNT=3"};
  EXPECT_EQ(env_value(env, "GIT_CONFIG_COUNT"), "3");
  EXPECT_EQ(env_value(env, "B"), std::nullopt);
}

TEST(ExternalProxyTest, BridgesLeadToTheRelayOfEachKeySet) {
  NetworkPolicy net;
  EXPECT_TRUE(external_bridges(net, "/s/proxy.sock").init_args.empty());
  EXPECT_TRUE(external_proxy_lines(net).empty());
  net.external_socks_port = 1081;
  auto b = external_bridges(net, "/s/proxy.sock");
  EXPECT_EQ(b.init_args, (std::vector<std::string>{"--socks-socket", "/s/proxy-socks.sock"}));
  EXPECT_EQ(b.binds, (std::vector<std::string>{"/s/proxy-socks.sock"}));
  net.external_http_port = 8080;
  b = external_bridges(net, "/s/proxy.sock");
  EXPECT_EQ(b.init_args, (std::vector<std::string>{"--http-socket", "/s/proxy-http.sock",
                                                   "--socks-socket", "/s/proxy-socks.sock"}));
  const auto lines = external_proxy_lines(net);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("127.0.0.1:8080 (network.httpProxyPort), which decides it"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
