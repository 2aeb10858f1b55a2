// The gatekeeper's view of a caller's cwd and umask: the cwd cache follows a chdir at
// once (never the directory the caller left), a gone process is an error, not a stale
// entry; the umask comes from the Umask line or is an error, never a guessed 022.
#include "observer/cwd_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "observer/emulate.h"

namespace vigil::init {
namespace {

std::string name_of_fd(int fd) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// A child that goes into each directory of `dirs` in turn: after each chdir it writes a
// byte and waits for one before the next.
struct Walker {
  pid_t pid = -1;
  UniqueFd to_child, from_child;
  bool next() {  // lets it move on, waits until it has
    char c = 'n';
    return ::write(to_child.get(), &c, 1) == 1 && ::read(from_child.get(), &c, 1) == 1;
  }
  ~Walker() {
    to_child.reset();  // EOF: it exits
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
};

void start(Walker* w, const std::vector<std::string>& dirs) {
  int down[2], up[2];
  ASSERT_EQ(::pipe2(down, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(up, O_CLOEXEC), 0);
  w->pid = ::fork();
  ASSERT_GE(w->pid, 0);
  if (w->pid == 0) {
    UniqueFd(down[1]).reset();  // or its own copy would keep the EOF from coming
    UniqueFd(up[0]).reset();
    char c;
    for (const std::string& d : dirs) {
      if (::read(down[0], &c, 1) != 1 || ::chdir(d.c_str()) != 0) ::_exit(1);
      if (::write(up[1], "k", 1) != 1) ::_exit(1);
    }
    while (::read(down[0], &c, 1) == 1) {
    }
    ::_exit(0);
  }
  UniqueFd(down[0]).reset();
  UniqueFd(up[1]).reset();
  w->to_child = UniqueFd(down[1]);
  w->from_child = UniqueFd(up[0]);
}

std::string make_dir(const std::string& name) {
  const std::string d =
      std::string(::testing::TempDir()) + "cwd_cache_" + std::to_string(::getpid()) + "_" + name;
  ::mkdir(d.c_str(), 0700);
  char real[PATH_MAX];
  return ::realpath(d.c_str(), real) != nullptr ? real : d;
}

TEST(CwdCache, FollowsAChdirAtOnce) {
  const std::string a = make_dir("a"), b = make_dir("b");
  Walker w;
  start(&w, {a, b, a});
  CwdCache cache;
  int err = 0;
  ASSERT_TRUE(w.next());
  int fd = cache.get(w.pid, &err);
  ASSERT_GE(fd, 0) << err;
  EXPECT_EQ(name_of_fd(fd), a);
  EXPECT_EQ(cache.get(w.pid, &err), fd);  // unchanged: the kept fd, no new open
  ASSERT_TRUE(w.next());                  // now in b
  fd = cache.get(w.pid, &err);
  ASSERT_GE(fd, 0) << err;
  EXPECT_EQ(name_of_fd(fd), b);
  ASSERT_TRUE(w.next());  // back in a
  fd = cache.get(w.pid, &err);
  ASSERT_GE(fd, 0) << err;
  EXPECT_EQ(name_of_fd(fd), a);
  ::rmdir(a.c_str());
  ::rmdir(b.c_str());
}

TEST(CwdCache, AGoneProcessIsAnErrorNotAStaleEntry) {
  const std::string a = make_dir("gone");
  CwdCache cache;
  int err = 0;
  pid_t pid = -1;
  {
    Walker w;
    start(&w, {a});
    ASSERT_TRUE(w.next());
    pid = w.pid;
    ASSERT_GE(cache.get(pid, &err), 0) << err;
  }  // reaped
  err = 0;
  EXPECT_EQ(cache.get(pid, &err), -1);
  EXPECT_NE(err, 0);
  ::rmdir(a.c_str());
}

TEST(CallerUmask, TheUmaskLineOrAnError) {
  struct Case {
    const char* status;
    int mask;  // -1: an error
  } cases[] = {
      {"Name:\tsh\nUmask:\t0022\nState:\tS\n", 022},
      {"Name:\tsh\nUmask:\t0077\n", 077},
      {"Name:\tsh\nUmask:\t0000\n", 0},
      {"Name:\tsh\nState:\tS\n", -1},         // no Umask line (before Linux 4.7)
      {"Name:\tsh\nUmask:\t\nState:\n", -1},  // empty
      {"Name:\tsh\nUmask:\t0x22\n", -1},      // not octal
      {"Name:\tsh\nUmask:\t01777\n", -1},     // more than a permission mask
  };
  for (const Case& c : cases) {
    Result<mode_t> got = umask_from_status(c.status);
    if (c.mask < 0) {
      EXPECT_FALSE(got.ok()) << c.status;
      if (!got.ok()) {
        EXPECT_NE(got.error().message.find("refused"), std::string::npos);
      }
    } else {
      ASSERT_TRUE(got.ok()) << c.status;
      EXPECT_EQ(*got, static_cast<mode_t>(c.mask)) << c.status;
    }
  }
}

TEST(CallerUmask, ALiveCallersIsItsOwnAndAGoneOneIsAnError) {
  const mode_t old = ::umask(027);
  Result<mode_t> mine = caller_umask(::getpid());
  ::umask(old);
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  EXPECT_EQ(*mine, 027u);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(caller_umask(child).ok());
}

}  // namespace
}  // namespace vigil::init
