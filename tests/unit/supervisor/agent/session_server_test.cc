// What `vigil session start` prints for `eval`: no byte of the socket path is shell syntax,
// whatever the path holds (a real sh evaluates the lines and must hand back the very bytes).
#include "supervisor/agent/session_server.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// VIGIL_SESSION and VIGIL_SESSION_PID as sh sees them after `eval`ing `lines`.
std::string through_sh(const std::string& lines) {
  std::string file = ::testing::TempDir() + "session-lines-XXXXXX";
  const UniqueFd fd(::mkstemp(file.data()));
  if (!fd) return "(no temp file)";
  std::ofstream(file) << lines;
  const std::string cmd = "sh -c 'eval \"$(cat \"$0\")\"; printf \"%s|%s\" \"$VIGIL_SESSION\" \"$VIGIL_SESSION_PID\"' " + file;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  std::size_t n;
  while (p != nullptr && (n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (p != nullptr) ::pclose(p);
  ::unlink(file.c_str());
  return out;
}

TEST(SessionServer, TheEvalLinesQuoteEveryByteOfThePath) {
  EXPECT_EQ(session_start_lines("/run/user/1000/vigil/run/vigil-session-ab/agent.sock", "42"),
            "VIGIL_SESSION='/run/user/1000/vigil/run/vigil-session-ab/agent.sock'; export "
            "VIGIL_SESSION;\nVIGIL_SESSION_PID=42; export VIGIL_SESSION_PID;\n");
  for (const std::string& path : {std::string("/tmp/plain/agent.sock"), std::string("/tmp/a'b/agent.sock"),
                                 std::string("/tmp/$(touch x)/`id`/agent.sock"),
                                 std::string("/tmp/x;y&&z|w/\"q\"/agent.sock"),
                                 std::string("/tmp/new\nline/agent.sock"), std::string("/tmp/''''/a")}) {
    EXPECT_EQ(through_sh(session_start_lines(path, "123")), path + "|123") << path;
  }
}

}  // namespace
}  // namespace vigil
