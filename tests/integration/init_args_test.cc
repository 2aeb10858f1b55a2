// vigil-init's command line fails closed: run directly, a malformed value, an unknown
// option or a descriptor that is not open stops it before anything of the command runs,
// with an error naming the option (the table itself: tests/unit/supervisor/core/wire/init_args_test.cc).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness.h"
#include "supervisor/core/base/exit_codes.h"

namespace vigil::test {
namespace {

struct Case {
  const char* options;  // spliced into the shell line
  const char* said;     // a part of the error
};

TEST(InitArgs, RefusesABadOptionBeforeRunningAnything) {
  const std::string init = vigil_init_bin();
  if (init.empty()) GTEST_SKIP() << "vigil-init not found next to " << vigil_bin();
  const Case cases[] = {
      {"--events-fd 5x", "--events-fd must be a descriptor number above 2"},
      {"--events-fd ' 7'", "--events-fd must be"},
      {"--capture-fd 0", "--capture-fd must be"},
      {"--capture-caps 10", "--capture-caps must be FILE:SESSION"},
      {"--capture-caps 1:2x", "--capture-caps must be FILE:SESSION"},
      {"--rlimit nproc=-1", "--rlimit must be nproc=N"},
      {"--rlimit stack=10", "--rlimit must be nproc=N"},
      {"--overflow block", "--overflow must be drop"},
      {"--refuse-create relative origin", "--refuse-create must be an absolute path"},
      // The "--" after it is taken as its value (values are positional), and refused.
      {"--proxy-socket", "--proxy-socket must be an absolute socket path, not \"--\""},
      {"--event-fd 5", "unknown option \"--event-fd\""},
      {"--outer-proc --outer-proc", "--outer-proc is given twice"},
      // Well-formed, but not open: each of the three descriptors is checked.
      {"--events-fd 200", "--events-fd 200 is not an open descriptor"},
      {"--program-fd 201", "--program-fd 201 is not an open descriptor"},
      {"--capture-fd 202", "--capture-fd 202 is not an open descriptor"},
  };
  for (const auto& c : cases) {
    TempDir ws;
    const std::string cmd =
        "cd '" + ws.path() + "' && '" + init + "' " + c.options + " -- sh -c 'touch ran' 2>&1";
    FILE* f = ::popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int status = ::pclose(f);
    ASSERT_TRUE(WIFEXITED(status)) << c.options << ": " << out;
    EXPECT_EQ(WEXITSTATUS(status), to_int(ExitCode::kSandboxSetup)) << c.options << ": " << out;
    EXPECT_NE(out.find(c.said), std::string::npos) << c.options << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(ws.path() + "/ran")) << c.options;
  }
}

}  // namespace
}  // namespace vigil::test
