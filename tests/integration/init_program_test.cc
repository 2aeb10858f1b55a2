// vigil-init's go: under `vigil run` it receives its seccomp program from the supervisor
// (--program-fd) and starts the command only once a whole, well-formed program arrived.
// Run directly here, with real pipes, so that the gate itself is what is tested: nothing
// of the command runs while the program is outstanding, or ever when the pipe closes
// empty or with a malformed program.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "filters/sandbox_program.h"
#include "harness.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"
#include "tests/support/bounded_wait.h"

extern char** environ;

namespace vigil::test {
namespace {

std::string drain(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

// vigil-init --events-fd E --program-fd P -- sh -c 'touch ran', in `ws`.
struct Started {
  pid_t pid = -1;
  UniqueFd program;  // our write end
  UniqueFd events;   // our read end
  UniqueFd err;      // vigil-init's (and the command's) stderr
};

Started start_init(const std::string& init, const std::string& ws) {
  int ev[2], prog[2], err[2];
  EXPECT_EQ(::pipe2(ev, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(prog, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
  std::vector<std::string> args = {init,
                                   "--events-fd",
                                   std::to_string(ev[1]),
                                   "--program-fd",
                                   std::to_string(prog[0]),
                                   "--",
                                   "sh",
                                   "-c",
                                   "touch ran"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, ev[1], ev[1]);  // clears CLOEXEC
  posix_spawn_file_actions_adddup2(&fa, prog[0], prog[0]);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, ws.c_str());
  Started s;
  EXPECT_EQ(::posix_spawn(&s.pid, init.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  UniqueFd(ev[1]).reset();
  UniqueFd(prog[0]).reset();
  UniqueFd(err[1]).reset();
  s.program.reset(prog[1]);
  s.events.reset(ev[0]);
  s.err.reset(err[0]);
  return s;
}

// Bounded: a vigil-init that never ends fails the test (-1) instead of hanging it.
int wait_exit(pid_t pid) {
  const int code = wait_child(pid, std::chrono::seconds(60));
  EXPECT_NE(code, -1) << "vigil-init did not end within 60 s (killed)";
  return code;
}

TEST(InitProgram, TheCommandWaitsForTheProgramThenRuns) {
  const std::string init = vigil_init_bin();
  if (init.empty()) GTEST_SKIP() << "vigil-init not found next to " << vigil_bin();
  TempDir ws;
  Started s = start_init(init, ws.path());
  auto program = sandbox_program(true);
  ASSERT_TRUE(program.ok()) << program.error().message;
  auto wire = encode_program(*program);
  ASSERT_TRUE(wire.ok());
  ASSERT_GT(wire->size(), 1u);
  // All but the last byte, then wait until vigil-init has read them (the pipe is empty
  // again): from then on it is provably in its wait for the rest, not still starting up.
  const std::size_t head = wire->size() - 1;
  ASSERT_EQ(::write(s.program.get(), wire->data(), head), static_cast<ssize_t>(head));
  int queued = -1;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(::ioctl(s.program.get(), FIONREAD, &queued), 0);
    if (queued == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(queued, 0) << "vigil-init never read its program";
  EXPECT_FALSE(exists(ws / "ran")) << "the command ran before its seccomp program arrived";
  pollfd p{s.events.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0) << "an event before the program arrived";
  // The last byte, and the time it left (the coarse clock file timestamps are taken from):
  // the command's file must be no older than that.
  timespec sent{};
  ASSERT_EQ(::clock_gettime(CLOCK_REALTIME_COARSE, &sent), 0);
  ASSERT_EQ(::write(s.program.get(), wire->data() + head, 1), 1);
  s.program.reset();  // EOF: the whole program is there
  const std::string events = drain(s.events.get());
  const std::string err = drain(s.err.get());
  EXPECT_EQ(wait_exit(s.pid), 0) << err;
  struct stat ran {};
  ASSERT_EQ(::stat((ws / "ran").c_str(), &ran), 0) << "the command did not run: " << err;
  EXPECT_TRUE(ran.st_mtim.tv_sec > sent.tv_sec ||
              (ran.st_mtim.tv_sec == sent.tv_sec && ran.st_mtim.tv_nsec >= sent.tv_nsec))
      << "the command ran before the last byte of its program was sent";
  // The program installed is the observing one: the command's exec and its touch were seen.
  EXPECT_NE(events.find("\"kind\":\"proc.exec\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"kind\":\"fs.write\""), std::string::npos) << events;
}

TEST(InitProgram, NoWholeProgramNoCommand) {
  const std::string init = vigil_init_bin();
  if (init.empty()) GTEST_SKIP() << "vigil-init not found next to " << vigil_bin();
  auto program = sandbox_program(true);
  ASSERT_TRUE(program.ok());
  auto wire = encode_program(*program);
  ASSERT_TRUE(wire.ok());
  struct Case {
    const char* name;
    std::string bytes;
  };
  const Case cases[] = {
      {"the supervisor gave up (closed empty)", ""},
      {"cut short", wire->substr(0, wire->size() - 3)},
      {"garbage", std::string(200, 'x')},
      {"a valid header announcing more than follows", wire->substr(0, 12) + "12345678"},
  };
  for (const auto& c : cases) {
    TempDir ws;
    Started s = start_init(init, ws.path());
    if (!c.bytes.empty()) {
      ASSERT_EQ(::write(s.program.get(), c.bytes.data(), c.bytes.size()),
                static_cast<ssize_t>(c.bytes.size()));
    }
    s.program.reset();
    const std::string events = drain(s.events.get());
    const std::string err = drain(s.err.get());
    EXPECT_EQ(wait_exit(s.pid), to_int(ExitCode::kSandboxSetup)) << c.name << ": " << err;
    EXPECT_FALSE(exists(ws / "ran")) << c.name;
    EXPECT_EQ(events, "") << c.name;
    EXPECT_NE(err.find("cannot receive the seccomp filters"), std::string::npos)
        << c.name << ": " << err;
  }
}

TEST(InitProgram, RefusesAProgramFdThatIsNotItsOwn) {
  const std::string init = vigil_init_bin();
  if (init.empty()) GTEST_SKIP() << "vigil-init not found next to " << vigil_bin();
  TempDir ws;
  for (const char* fd : {"0", "2", "-5", "abc"}) {
    const std::string cmd = "'" + init + "' --program-fd " + fd + " -- sh -c 'touch ran' 2>&1";
    FILE* f = ::popen(("cd '" + ws.path() + "' && " + cmd).c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int status = ::pclose(f);
    EXPECT_EQ(WEXITSTATUS(status), to_int(ExitCode::kSandboxSetup)) << fd << ": " << out;
    EXPECT_NE(out.find("--program-fd must be"), std::string::npos) << fd << ": " << out;
    EXPECT_FALSE(exists(ws / "ran")) << fd;
  }
}

}  // namespace
}  // namespace vigil::test
