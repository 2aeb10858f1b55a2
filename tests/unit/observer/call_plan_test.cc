// The gatekeeper's pure half: a notification + the caller's memory (a fake kernel
// interface) + the syscall table -> the call to perform. And the verdict a result gets.
#include "observer/call_plan.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>

#include "observer/notify_loop.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {
namespace {

// Caller memory as a set of regions; a read past a region's end is cut there, a read
// outside every region fails (EFAULT), or every read fails with `error` (a non-dumpable
// caller: EPERM). `valid` says whether the call is still waiting.
class FakeMemory : public CallerMemory {
 public:
  std::map<std::uint64_t, std::string> regions;
  int error = 0;
  bool valid = true;
  int reads = 0;
  bool id_valid(std::uint64_t) override { return valid; }
  long read(pid_t, std::uint64_t addr, void* buf, std::size_t len) override {
    ++reads;
    if (error != 0) {
      errno = error;
      return -1;
    }
    for (const auto& [start, bytes] : regions) {
      if (addr < start || addr >= start + bytes.size()) continue;
      const std::size_t off = addr - start;
      const std::size_t n = std::min(len, bytes.size() - off);
      std::memcpy(buf, bytes.data() + off, n);
      return static_cast<long>(n);
    }
    errno = EFAULT;
    return -1;
  }
  std::uint64_t put(std::uint64_t at, std::string bytes) {
    regions[at] = std::move(bytes);
    return at;
  }
};

const WriteSyscall& row(std::string_view name) {
  const WriteSyscall* r = find_write_syscall(name);
  EXPECT_NE(r, nullptr) << name;
  return *r;
}

Notification call(std::initializer_list<std::uint64_t> args) {
  Notification n;
  n.id = 7;
  n.pid = 42;
  int i = 0;
  for (auto a : args) n.args[i++] = a;
  return n;
}

constexpr std::uint64_t kCwdArg = static_cast<std::uint64_t>(-100);
using std::string_literals::operator""s;

TEST(CallPlan, OpenatIsPerformedOnTheBytesRead) {
  FakeMemory m;
  const auto p = m.put(0x1000, "a/b\0"s);
  CallPlan c = plan_call(call({kCwdArg, p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644}), &row("openat"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kPerform);
  EXPECT_EQ(c.target.path, "a/b");
  EXPECT_EQ(c.target.dirfd, kCwd);
  EXPECT_EQ(c.flags, static_cast<std::uint64_t>(O_WRONLY | O_CREAT | O_CLOEXEC));
  EXPECT_EQ(c.mode, 0644u);
  EXPECT_TRUE(c.writes);
}

TEST(CallPlan, Openat2ReadsOpenHowOnceAndKeepsReadOnlyOnesUnlogged) {
  FakeMemory m;
  const auto p = m.put(0x1000, "f\0"s);
  std::uint64_t how[3] = {O_RDONLY, 0, RESOLVE_BENEATH};
  const auto h = m.put(0x2000, std::string(reinterpret_cast<char*>(how), sizeof how));
  CallPlan c = plan_call(call({3, p, h, sizeof how}), &row("openat2"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kPerform);  // performed: its flags cannot race
  EXPECT_FALSE(c.writes);
  EXPECT_EQ(c.resolve, static_cast<std::uint64_t>(RESOLVE_BENEATH));
  EXPECT_EQ(c.target.dirfd, 3);
  // A size below version 0 of the struct: EINVAL, as the kernel answers.
  CallPlan small = plan_call(call({3, p, h, 16}), &row("openat2"), m);
  EXPECT_EQ(small.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(small.error, EINVAL);
}

TEST(CallPlan, CreatIsAnOpenForWritingThatCreates) {
  FakeMemory m;
  const auto p = m.put(0x1000, "x\0"s);
  CallPlan c = plan_call(call({p, 0600}), &row("creat"), m);
  EXPECT_EQ(c.flags, static_cast<std::uint64_t>(O_CREAT | O_WRONLY | O_TRUNC));
  EXPECT_EQ(c.mode, 0600u);
}

TEST(CallPlan, UnreadableMemoryIsAnErrorNeverAnUnrecordedCall) {
  FakeMemory m;
  m.put(0x1000, "x\0"s);
  m.error = EPERM;  // a process that made itself non-dumpable
  CallPlan c = plan_call(call({kCwdArg, 0x1000, 0755}), &row("mkdirat"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(c.error, EPERM);
  EXPECT_FALSE(c.why.empty());
  m.error = 0;
  CallPlan bad = plan_call(call({kCwdArg, 0x9000, 0755}), &row("mkdirat"), m);
  EXPECT_EQ(bad.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(bad.error, EFAULT);
}

TEST(CallPlan, PathLengthsUpToTheKernelsLimit) {
  FakeMemory m;
  // 4,094 bytes of ./././... then NUL, crossing a page boundary: read in page pieces.
  std::string path;
  while (path.size() < 4090) path += "./";
  path += "xy";
  ASSERT_EQ(path.size(), 4092u);
  path += "zz";
  const auto p = m.put(0x1ffd, path + '\0');
  CallPlan c = plan_call(call({p, 0755}), &row("mkdir"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kPerform);
  EXPECT_EQ(c.target.path, path);
  // No NUL within PATH_MAX bytes: ENAMETOOLONG, as the kernel answers.
  const auto q = m.put(0x10000, std::string(5000, 'a'));
  CallPlan longer = plan_call(call({q, 0755}), &row("mkdir"), m);
  EXPECT_EQ(longer.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(longer.error, ENAMETOOLONG);
  // A name longer than the first, short read (256 bytes) is read on to its NUL, wherever
  // it falls, and one a read's end away from an unmapped byte still ends at its NUL.
  for (std::size_t len : {0u, 1u, 255u, 256u, 257u, 300u, 4000u}) {
    const std::string name(len, 'n');
    const auto at = m.put(0x40000 + 0x3000 * len, name + '\0');
    CallPlan c2 = plan_call(call({at, 0755}), &row("mkdir"), m);
    EXPECT_EQ(c2.kind, CallPlan::Kind::kPerform) << len;
    EXPECT_EQ(c2.target.path, name) << len;
  }
}

TEST(CallPlan, TwoNameCalls) {
  FakeMemory m;
  const auto a = m.put(0x1000, "old\0"s);
  const auto b = m.put(0x2000, "new\0"s);
  CallPlan r = plan_call(call({3, a, kCwdArg, b, 1}), &row("renameat2"), m);
  EXPECT_EQ(r.kind, CallPlan::Kind::kPerform);
  EXPECT_TRUE(r.has_from);
  EXPECT_EQ(r.from.path, "old");
  EXPECT_EQ(r.from.dirfd, 3);
  EXPECT_EQ(r.target.path, "new");
  EXPECT_EQ(r.target.dirfd, kCwd);
  EXPECT_EQ(r.flags, 1u);
  // symlink: `from` is the link's contents.
  CallPlan s = plan_call(call({a, 5, b}), &row("symlinkat"), m);
  EXPECT_EQ(s.from.path, "old");
  EXPECT_EQ(s.target.path, "new");
  EXPECT_EQ(s.target.dirfd, 5);
}

TEST(CallPlan, FdCallsContinueWithTheirFd) {
  FakeMemory m;
  CallPlan f = plan_call(call({9, 0600}), &row("fchmod"), m);
  EXPECT_EQ(f.kind, CallPlan::Kind::kContinue);
  EXPECT_TRUE(f.on_fd);
  EXPECT_EQ(f.target.dirfd, 9);
  EXPECT_EQ(m.reads, 0);
  // futimens: utimensat with a NULL path and an fd.
  CallPlan u = plan_call(call({4, 0, 0, 0}), &row("utimensat"), m);
  EXPECT_EQ(u.kind, CallPlan::Kind::kContinue);
  EXPECT_EQ(u.target.dirfd, 4);
  // An empty path with AT_EMPTY_PATH is the fd too, but its bytes could change: performed.
  const auto e = m.put(0x1000, "\0"s);
  CallPlan empty = plan_call(call({4, e, 1, 1, AT_EMPTY_PATH}), &row("fchownat"), m);
  EXPECT_EQ(empty.kind, CallPlan::Kind::kPerform);
  EXPECT_TRUE(empty.on_fd);
}

// A call the kernel runs (an exec continues), or a read that is only told, read from a
// caller that has left: the bytes may be another process's (a reused pid), so neither is
// recorded nor answered. A write vigil-init performs is performed on the bytes it read
// (its answer is what fails for a caller that left): no id check is spent on it.
TEST(CallPlan, ACallerThatLeftIsGoneUnlessTheCallIsPerformedHere) {
  FakeMemory m;
  const auto p = m.put(0x1000, "x\0"s);
  const auto v = m.put(0x2000, std::string(16, '\0'));
  m.valid = false;
  EXPECT_EQ(plan_call(call({p, v, 0}), &row("execve"), m).kind, CallPlan::Kind::kGone);
  EXPECT_EQ(plan_call(call({kCwdArg, p, O_RDONLY, 0}), &row("openat"), m).kind,
            CallPlan::Kind::kGone);
  EXPECT_EQ(plan_call(call({p}), &row("unlink"), m).kind, CallPlan::Kind::kPerform);
  EXPECT_EQ(plan_call(call({kCwdArg, p, O_WRONLY | O_CREAT, 0644}), &row("openat"), m).kind,
            CallPlan::Kind::kPerform);
}

TEST(CallPlan, ExecReadsArgvAndContinues) {
  FakeMemory m;
  const auto path = m.put(0x1000, "/bin/true\0"s);
  const auto a0 = m.put(0x2000, "true\0"s);
  const auto a1 = m.put(0x3000, "--x\0"s);
  std::uint64_t argv[3] = {a0, a1, 0};
  const auto v = m.put(0x4000, std::string(reinterpret_cast<char*>(argv), sizeof argv));
  CallPlan c = plan_call(call({path, v, 0}), &row("execve"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kContinue);
  EXPECT_EQ(c.target.path, "/bin/true");
  EXPECT_EQ(c.argv, (std::vector<std::string>{"true", "--x"}));
}

TEST(CallPlan, XattrsAndTimes) {
  FakeMemory m;
  const auto p = m.put(0x1000, "f\0"s);
  const auto name = m.put(0x2000, "user.k\0"s);
  const auto value = m.put(0x3000, "v1");
  CallPlan s = plan_call(call({p, name, value, 2, 0}), &row("setxattr"), m);
  EXPECT_EQ(s.kind, CallPlan::Kind::kPerform);
  EXPECT_EQ(s.xattr_name, "user.k");
  EXPECT_EQ(s.xattr_value, "v1");
  std::uint64_t xa[2] = {value, 2};  // struct xattr_args {value, size 2, flags 0}
  const auto x = m.put(0x5000, std::string(reinterpret_cast<char*>(xa), sizeof xa));
  CallPlan at = plan_call(call({kCwdArg, p, 0, name, x, sizeof xa}), &row("setxattrat"), m);
  EXPECT_EQ(at.kind, CallPlan::Kind::kPerform);
  EXPECT_EQ(at.xattr_value, "v1");
  EXPECT_EQ(plan_call(call({kCwdArg, p, 0, name, x, 8}), &row("setxattrat"), m).error, EINVAL);
  std::int64_t tv[4] = {10, 5, 20, 6};  // struct timeval[2]
  const auto t = m.put(0x4000, std::string(reinterpret_cast<char*>(tv), sizeof tv));
  CallPlan u = plan_call(call({p, t}), &row("utimes"), m);
  EXPECT_EQ(u.times[0], 10);
  EXPECT_EQ(u.times[1], 5000);
  EXPECT_EQ(u.times[3], 6000);
}

TEST(CallPlan, ACallNotInTheTableContinues) {
  FakeMemory m;
  EXPECT_EQ(plan_call(call({}), nullptr, m).kind, CallPlan::Kind::kContinue);
}

TEST(RouteMagic, TheCallersOwnEntriesInEverySpelling) {
  using K = MagicRoute::Kind;
  struct Case {
    const char* path;
    K kind;
    int fd;
    const char* rest;
  };
  const Case cases[] = {
      {"/proc/self/fd/3", K::kCallerFd, 3, ""},
      {"/proc/./self/fd/3/x", K::kCallerFd, 3, "x"},
      {"//proc//self/fd/7", K::kCallerFd, 7, ""},
      {"/proc/self/fd/7/", K::kCallerFd, 7, ""},
      {"/dev/fd/7", K::kCallerFd, 7, ""},
      {"/dev/./fd/12/a/b", K::kCallerFd, 12, "a/b"},
      {"/dev/stdout", K::kCallerFd, 1, ""},
      {"/dev/stderr", K::kCallerFd, 2, ""},
      {"/dev/../proc/self/fd/2", K::kCallerFd, 2, ""},
      {"/proc/thread-self/fd/4", K::kCallerFd, 4, ""},
      {"/proc/42/fd/5", K::kCallerFd, 5, ""},
      {"/proc/self/fd/3/../x", K::kCallerFd, 3, "../x"},
      {"/proc/self/cwd/x", K::kCallerCwd, -1, "x"},
      {"/proc/self/oom_score_adj", K::kCallerProc, -1, "/proc/42/oom_score_adj"},
      {"/proc/self", K::kCallerProc, -1, "/proc/42"},
      {"/proc/43/fd/5", K::kNone, -1, "/proc/43/fd/5"},
      {"/home/x", K::kNone, -1, "/home/x"},
      {"relative/proc/self/fd/1", K::kNone, -1, "relative/proc/self/fd/1"},
      {"/dev/null", K::kNone, -1, "/dev/null"},
      {"/dev/fd/x", K::kNone, -1, "/dev/fd/x"},
  };
  for (const Case& c : cases) {
    const MagicRoute r = route_magic(c.path, 42);
    EXPECT_EQ(r.kind, c.kind) << c.path;
    EXPECT_EQ(r.fd, c.fd) << c.path;
    EXPECT_EQ(r.rest, c.rest) << c.path;
  }
}

TEST(Gatekeeper, KernelRelease) {
  EXPECT_TRUE(vigil::kernel_can_gatekeep("5.14.0-arch1"));
  EXPECT_TRUE(vigil::kernel_can_gatekeep("6.1.0-13-amd64"));
  EXPECT_TRUE(vigil::kernel_can_gatekeep("10.0"));
  EXPECT_FALSE(vigil::kernel_can_gatekeep("5.13.19"));
  EXPECT_FALSE(vigil::kernel_can_gatekeep("5.10.0-23-amd64"));
  EXPECT_FALSE(vigil::kernel_can_gatekeep("4.19"));
  EXPECT_FALSE(vigil::kernel_can_gatekeep("garbage"));
  EXPECT_FALSE(vigil::kernel_can_gatekeep(""));
}

TEST(Gatekeeper, TheResultIsTheVerdict) {
  const std::vector<Mount> none;
  struct Case {
    int error;
    const char* refused;
    WriteVerdict verdict;
  };
  const Case cases[] = {
      {0, "", WriteVerdict::kAllowed},
      {EEXIST, "", WriteVerdict::kAllowed},
      {ENOENT, "", WriteVerdict::kAllowed},
      {ENOTEMPTY, "", WriteVerdict::kAllowed},
      {EROFS, "", WriteVerdict::kDenied},
      {EACCES, "", WriteVerdict::kAllowed},  // an ordinary permission error, no mount
      {EPERM, "not dumpable", WriteVerdict::kDenied},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(judge_result(none, "/x/y", "", c.error, c.refused).verdict, c.verdict) << c.error;
  }
}

}  // namespace
}  // namespace vigil::init

namespace vigil::init {
namespace {

sockaddr_un unix_address(std::string_view path, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.data(), path.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  return a;
}

// bind() is a row of the write table (#39): an AF_UNIX path in the address read once is
// the call's target (cut at its first NUL, as the kernel cuts it); an abstract name,
// autobind or another family makes no name and is performed unrecorded; an address past
// a sockaddr_storage is EINVAL, as the kernel answers.
TEST(CallPlan, BindReadsTheAddressOnceAndNamesOnlyAUnixPath) {
  FakeMemory m;
  socklen_t len = 0;
  sockaddr_un a = unix_address(std::string_view(".mcp.json\0tail", 14), &len);
  const auto at = m.put(0x1000, std::string(reinterpret_cast<char*>(&a), sizeof a));
  CallPlan c = plan_call(call({5, at, len}), &row("bind"), m);
  EXPECT_EQ(c.kind, CallPlan::Kind::kPerform);
  EXPECT_TRUE(c.writes);
  EXPECT_EQ(c.target.path, ".mcp.json");
  EXPECT_EQ(c.target.dirfd, kCwd);
  EXPECT_EQ(c.address.size(), len);
  EXPECT_EQ(c.args[0], 5u);
  EXPECT_EQ(action_word("bind", 0), "mknod");

  sockaddr_un abstract = unix_address(std::string_view("\0name", 5), &len);
  const auto ab = m.put(0x2000, std::string(reinterpret_cast<char*>(&abstract), sizeof abstract));
  CallPlan c2 = plan_call(call({5, ab, len}), &row("bind"), m);
  EXPECT_EQ(c2.kind, CallPlan::Kind::kPerform);
  EXPECT_FALSE(c2.writes);
  CallPlan autobind = plan_call(call({5, ab, sizeof(sa_family_t)}), &row("bind"), m);
  EXPECT_FALSE(autobind.writes);

  sockaddr_in in{};
  in.sin_family = AF_INET;
  const auto ip = m.put(0x3000, std::string(reinterpret_cast<char*>(&in), sizeof in));
  CallPlan c3 = plan_call(call({5, ip, sizeof in}), &row("bind"), m);
  EXPECT_EQ(c3.kind, CallPlan::Kind::kPerform);
  EXPECT_FALSE(c3.writes);

  CallPlan big = plan_call(call({5, at, sizeof(sockaddr_storage) + 1}), &row("bind"), m);
  EXPECT_EQ(big.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(big.error, EINVAL);
  CallPlan bad = plan_call(call({5, 0x9000, len}), &row("bind"), m);
  EXPECT_EQ(bad.kind, CallPlan::Kind::kFail);
  EXPECT_EQ(bad.error, EFAULT);
}

// A trapped ioctl that makes a name (a btrfs subvolume or snapshot, named in a struct
// the kernel would read again) is refused, never continued; the others continue.
TEST(CallPlan, IoctlsThatMakeANameAreRefusedNotContinued) {
  FakeMemory m;
  for (unsigned long request : {BTRFS_IOC_SUBVOL_CREATE, BTRFS_IOC_SUBVOL_CREATE_V2,
                                BTRFS_IOC_SNAP_CREATE, BTRFS_IOC_SNAP_CREATE_V2}) {
    CallPlan c = plan_call(call({4, request, 0x1000}), &row("ioctl"), m);
    EXPECT_EQ(c.kind, CallPlan::Kind::kFail) << request;
    EXPECT_EQ(c.error, EPERM);
    EXPECT_NE(c.why.find("btrfs"), std::string::npos);
  }
  CallPlan flags = plan_call(call({4, FS_IOC_SETFLAGS, 0x1000}), &row("ioctl"), m);
  EXPECT_EQ(flags.kind, CallPlan::Kind::kContinue);
}

}  // namespace
}  // namespace vigil::init
