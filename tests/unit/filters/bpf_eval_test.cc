// The exported filters, run through tests/unit/filters/bpf_interpreter.h: tables of
// (arch, syscall, args) -> the action the stack of worker filters returns, plus checks
// derived from the filter tables themselves (every row fires, every filter alone kills a
// foreign ABI). Nothing here installs a filter.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/notify_filter.h"
#include "filters/syscall_names.h"
#include "tests/unit/filters/bpf_interpreter.h"

namespace vigil {
namespace {

using bpf_test::run_bpf;
using bpf_test::run_stack;

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr std::uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;
constexpr std::uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr std::uint64_t kHigh32 = 0xffffffff00000000ULL;

seccomp_data call(std::uint32_t arch, int nr, std::array<std::uint64_t, 6> args = {}) {
  seccomp_data d{};
  d.arch = arch;
  d.nr = nr;
  for (std::size_t i = 0; i < 6; ++i) d.args[i] = args[i];
  return d;
}

seccomp_data native(int nr, std::array<std::uint64_t, 6> args = {}) {
  return call(native_audit_arch(), nr, args);
}

std::vector<std::vector<sock_filter>> compile_stack() {
  std::vector<std::vector<sock_filter>> stack;
  for (const FilterSpec* spec : worker_filters()) {
    auto prog = compile_filter(*spec);
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().message);
    if (prog.ok()) stack.push_back(std::move(*prog));
  }
  return stack;
}

int nr_of(const char* name) {
  auto nr = native_syscall_number(name);
  EXPECT_TRUE(nr.has_value()) << name;
  return nr.value_or(-1);
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// ---- the interpreter itself, on hand-written programs ---------------------------------

TEST(BpfInterpreter, RunsTheSubsetSeccompUses) {
  const sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x10, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 1),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, 2),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0x40, 0, 1),
      BPF_STMT(BPF_RET | BPF_A, 0),
      BPF_STMT(BPF_RET | BPF_K, 4),
  };
  EXPECT_EQ(run_bpf(prog, call(0, 0x13)), 1u);
  EXPECT_EQ(run_bpf(prog, call(0, 0x2f)), 2u);
  EXPECT_EQ(run_bpf(prog, call(0, 0x4f)), 4u);
  EXPECT_EQ(run_bpf(prog, call(0, 0x8f)), 0x80u);
}

TEST(BpfInterpreter, RefusesWhatTheKernelRefuses) {
  const sock_filter misaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
                                    BPF_STMT(BPF_RET | BPF_K, 0)};
  const sock_filter past_end[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(seccomp_data)),
                                  BPF_STMT(BPF_RET | BPF_K, 0)};
  const sock_filter falls_off[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
  const sock_filter jumps_out[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
                                   BPF_STMT(BPF_RET | BPF_K, 0)};
  const sock_filter packet_load[] = {BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
                                     BPF_STMT(BPF_RET | BPF_K, 0)};
  EXPECT_FALSE(run_bpf(misaligned, call(0, 0)));
  EXPECT_FALSE(run_bpf(past_end, call(0, 0)));
  EXPECT_FALSE(run_bpf(falls_off, call(0, 0)));
  EXPECT_FALSE(run_bpf(jumps_out, call(0, 0)));
  EXPECT_FALSE(run_bpf(packet_load, call(0, 0)));
}

TEST(BpfInterpreter, StackedFiltersStrictestWinsNewestOnTies) {
  auto ret = [](std::uint32_t v) { return std::vector<sock_filter>{BPF_STMT(BPF_RET | BPF_K, v)}; };
  EXPECT_EQ(run_stack({ret(kAllow), ret(kEperm), ret(kAllow)}, call(0, 0)), kEperm);
  EXPECT_EQ(run_stack({ret(kEperm), ret(kKill)}, call(0, 0)), kKill);
  EXPECT_EQ(run_stack({ret(SECCOMP_RET_USER_NOTIF), ret(kEnosys)}, call(0, 0)), kEnosys);
  EXPECT_EQ(run_stack({ret(kEperm), ret(kEnosys)}, call(0, 0)), kEnosys);  // newest of equals
  EXPECT_EQ(run_stack({ret(SECCOMP_RET_KILL_THREAD), ret(kKill)}, call(0, 0)), kKill);
}

// ---- the worker's stack: what each call gets ------------------------------------------

struct Case {
  const char* what;
  seccomp_data in;
  std::uint32_t expect;
};

std::vector<Case> stack_cases() {
  std::vector<Case> c = {
      // unix-block
      {"socket(AF_UNIX, SOCK_STREAM)", native(SYS_socket, {AF_UNIX, SOCK_STREAM}), kEperm},
      {"socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC)",
       native(SYS_socket, {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC}), kEperm},
      {"socket(AF_UNIX | 1<<32)", native(SYS_socket, {AF_UNIX | (1ULL << 32), SOCK_STREAM}),
       kEperm},
      {"socket(AF_UNIX | all upper bits)", native(SYS_socket, {AF_UNIX | kHigh32, SOCK_STREAM}),
       kEperm},
      {"socket(AF_VSOCK)", native(SYS_socket, {AF_VSOCK, SOCK_STREAM}), kEperm},
      {"socket(AF_VSOCK | 1<<63)", native(SYS_socket, {AF_VSOCK | (1ULL << 63), SOCK_DGRAM}),
       kEperm},
      {"socket(AF_INET, SOCK_STREAM)", native(SYS_socket, {AF_INET, SOCK_STREAM}), kAllow},
      {"socket(AF_INET6, SOCK_DGRAM)", native(SYS_socket, {AF_INET6, SOCK_DGRAM}), kAllow},
      {"socket(AF_NETLINK)", native(SYS_socket, {AF_NETLINK, SOCK_RAW}), kAllow},
      {"socket(AF_INET | 1<<32): the kernel sees AF_INET",
       native(SYS_socket, {AF_INET | (1ULL << 32), SOCK_STREAM}), kAllow},
      {"socket(AF_UNIX + 256): not AF_UNIX in the low 32 bits",
       native(SYS_socket, {AF_UNIX + 256, SOCK_STREAM}), kAllow},
      {"socketpair(AF_UNIX, SOCK_DGRAM)", native(SYS_socketpair, {AF_UNIX, SOCK_DGRAM}), kEperm},
      {"socketpair(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC)",
       native(SYS_socketpair, {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC}), kEperm},
      {"socketpair(AF_UNIX, SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC)",
       native(SYS_socketpair, {AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC}), kEperm},
      {"socketpair(AF_UNIX, SOCK_RAW): the kernel makes it a datagram pair",
       native(SYS_socketpair, {AF_UNIX, SOCK_RAW}), kEperm},
      {"socketpair(AF_UNIX | 1<<32, SOCK_DGRAM)",
       native(SYS_socketpair, {AF_UNIX | (1ULL << 32), SOCK_DGRAM}), kEperm},
      {"socketpair(AF_UNIX, SOCK_DGRAM | 1<<32)",
       native(SYS_socketpair, {AF_UNIX, SOCK_DGRAM | (1ULL << 32)}), kEperm},
      {"socketpair(AF_UNIX, SOCK_STREAM)", native(SYS_socketpair, {AF_UNIX, SOCK_STREAM}), kAllow},
      {"socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)",
       native(SYS_socketpair, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC}), kAllow},
      {"socketpair(AF_UNIX, SOCK_SEQPACKET)", native(SYS_socketpair, {AF_UNIX, SOCK_SEQPACKET}),
       kAllow},
      {"socketpair(AF_INET, SOCK_DGRAM)", native(SYS_socketpair, {AF_INET, SOCK_DGRAM}), kAllow},
      {"io_uring_setup", native(SYS_io_uring_setup, {1, 0}), kEperm},
      {"io_uring_enter", native(SYS_io_uring_enter, {3}), kEperm},
      {"io_uring_register", native(SYS_io_uring_register, {3}), kEperm},
      // namespaces
      {"unshare(CLONE_NEWUSER)", native(SYS_unshare, {CLONE_NEWUSER}), kEperm},
      {"unshare(CLONE_NEWUSER | 1<<40)", native(SYS_unshare, {CLONE_NEWUSER | (1ULL << 40)}),
       kEperm},
      {"unshare(CLONE_NEWNS)", native(SYS_unshare, {CLONE_NEWNS}), kEperm},
      {"unshare(CLONE_NEWNS | CLONE_NEWNET)", native(SYS_unshare, {CLONE_NEWNS | CLONE_NEWNET}),
       kEperm},
      {"unshare(all namespace flags)",
       native(SYS_unshare, {CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                            CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP}),
       kEperm},
      // Decision: the other namespaces stay allowed (they need CAP_SYS_ADMIN without a
      // user namespace, and never touch the mount table).
      {"unshare(CLONE_NEWNET)", native(SYS_unshare, {CLONE_NEWNET}), kAllow},
      {"unshare(CLONE_NEWPID|CLONE_NEWIPC|CLONE_NEWUTS)",
       native(SYS_unshare, {CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS}), kAllow},
      {"unshare(CLONE_FILES)", native(SYS_unshare, {CLONE_FILES}), kAllow},
      {"unshare(1<<40 alone)", native(SYS_unshare, {1ULL << 40}), kAllow},
      {"clone(SIGCHLD): fork", native(SYS_clone, {SIGCHLD}), kAllow},
      {"clone(thread flags)",
       native(SYS_clone,
              {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
               CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID}),
       kAllow},
      {"clone(CLONE_VM|CLONE_VFORK|SIGCHLD): posix_spawn",
       native(SYS_clone, {CLONE_VM | CLONE_VFORK | SIGCHLD}), kAllow},
      {"clone(CLONE_NEWUSER|SIGCHLD)", native(SYS_clone, {CLONE_NEWUSER | SIGCHLD}), kEperm},
      {"clone(CLONE_NEWNS|SIGCHLD)", native(SYS_clone, {CLONE_NEWNS | SIGCHLD}), kEperm},
      {"clone(CLONE_NEWUSER | 1<<40)", native(SYS_clone, {CLONE_NEWUSER | (1ULL << 40)}), kEperm},
      {"clone3", native(SYS_clone3, {0, 88}), kEnosys},
      {"setns", native(SYS_setns, {3, CLONE_NEWNS}), kEperm},
      {"setns(fd, 0)", native(SYS_setns, {3, 0}), kEperm},
      {"mount", native(SYS_mount), kEperm},
      {"umount2", native(SYS_umount2), kEperm},
      {"pivot_root", native(SYS_pivot_root), kEperm},
      {"open_tree", native(SYS_open_tree), kEperm},
      {"move_mount", native(SYS_move_mount), kEperm},
      {"fsopen", native(SYS_fsopen), kEperm},
      {"fsconfig", native(SYS_fsconfig), kEperm},
      {"fsmount", native(SYS_fsmount), kEperm},
      {"fspick", native(SYS_fspick), kEperm},
      {"mount_setattr", native(SYS_mount_setattr), kEperm},
      {"open_tree_attr", native(nr_of("open_tree_attr")), kEperm},
      {"open_by_handle_at", native(SYS_open_by_handle_at), kEperm},
      {"name_to_handle_at: harmless without open_by_handle_at", native(SYS_name_to_handle_at),
       kAllow},
      // the everyday calls pass
      {"read", native(SYS_read, {0, 0, 1}), kAllow},
      {"write", native(SYS_write, {1, 0, 1}), kAllow},
      {"openat", native(SYS_openat, {static_cast<std::uint64_t>(-100), 0, 0}), kAllow},
      {"getppid", native(SYS_getppid), kAllow},
      {"execve", native(SYS_execve), kAllow},
      {"seccomp: a command may add its own filter", native(SYS_seccomp, {1, 0, 0}), kAllow},
      {"chroot: not a mount-table change", native(SYS_chroot), kAllow},
      {"nr -1 (a tracer's skip): the kernel answers ENOSYS", native(-1), kAllow},
  };
#if defined(__x86_64__)
  const auto i386 = [](const char* name) {
    return seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, name);
  };
  const auto x32 = [](const char* name) {
    return seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, name);
  };
  const std::vector<Case> foreign = {
      {"i386 getpid (int 0x80)", call(AUDIT_ARCH_I386, i386("getpid")), kKill},
      {"i386 read", call(AUDIT_ARCH_I386, i386("read")), kKill},
      {"i386 socketcall(SYS_SOCKET, ...)", call(AUDIT_ARCH_I386, i386("socketcall"), {1}), kKill},
      {"i386 unshare(CLONE_NEWUSER)", call(AUDIT_ARCH_I386, i386("unshare"), {CLONE_NEWUSER}),
       kKill},
      {"x32 read", call(AUDIT_ARCH_X86_64, x32("read")), kKill},
      {"x32 getpid", call(AUDIT_ARCH_X86_64, x32("getpid")), kKill},
      {"x32 socket(AF_UNIX)", call(AUDIT_ARCH_X86_64, x32("socket"), {AF_UNIX}), kKill},
      {"x32 unshare(CLONE_NEWUSER)", call(AUDIT_ARCH_X86_64, x32("unshare"), {CLONE_NEWUSER}),
       kKill},
      {"x86_64 number | bit 30 (socket)", native(SYS_socket | 0x40000000, {AF_INET}), kKill},
      {"aarch64 arch value", call(AUDIT_ARCH_AARCH64, SYS_read), kKill},
      {"arch 0", call(0, SYS_read), kKill},
  };
  c.insert(c.end(), foreign.begin(), foreign.end());
#endif
  return c;
}

TEST(BpfFilterStack, EveryCaseGetsItsAction) {
  const auto stack = compile_stack();
  ASSERT_EQ(stack.size(), worker_filters().size());
  for (const Case& c : stack_cases()) {
    const auto got = run_stack(stack, c.in);
    ASSERT_TRUE(got.has_value()) << c.what << ": the interpreter refused the program";
    EXPECT_EQ(hex(*got), hex(c.expect)) << c.what;
  }
}

// The one-program layout answers every case exactly as the stack does.
TEST(BpfFilterStack, CombinedProgramAnswersLikeTheStack) {
  auto combined = compile_combined(worker_filters());
  ASSERT_TRUE(combined.ok()) << combined.error().message;
  for (const Case& c : stack_cases()) {
    const auto got = run_bpf(*combined, c.in);
    ASSERT_TRUE(got.has_value()) << c.what;
    EXPECT_EQ(hex(*got), hex(c.expect)) << c.what;
  }
}

// Each filter must stand alone against a foreign ABI: if one is ever dropped (e.g. a
// policy that allows unix sockets), the others still kill i386 and x32 calls.
TEST(BpfFilterStack, EachFilterAloneKillsForeignAbis) {
#if defined(__x86_64__)
  const int x32_read = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, "read");
  ASSERT_GE(x32_read, 0x40000000);
  for (const FilterSpec* spec : worker_filters()) {
    auto prog = compile_filter(*spec);
    ASSERT_TRUE(prog.ok());
    SCOPED_TRACE(std::string(spec->name));
    EXPECT_EQ(run_bpf(*prog, call(AUDIT_ARCH_I386, SYS_read)), kKill);
    EXPECT_EQ(run_bpf(*prog, call(AUDIT_ARCH_X86_64, x32_read)), kKill);
    EXPECT_EQ(run_bpf(*prog, native(SYS_getppid)), kAllow);
  }
#else
  GTEST_SKIP() << "foreign-ABI cases are written for x86_64";
#endif
}

// Derived from the tables: for every row, a call that satisfies it (upper bits set where
// the test only reads the low 32) gets the row's action from its own filter, and the same
// call with the tested bits cleared falls through to the default unless another row of
// that syscall claims it.
// Run against the table's own program and against the combined one.
TEST(BpfFilterRows, EveryRowFiresAndOnlyOnItsArguments) {
  auto combined = compile_combined(worker_filters());
  ASSERT_TRUE(combined.ok());
  for (const FilterSpec* spec : worker_filters()) {
    auto own = compile_filter(*spec);
    ASSERT_TRUE(own.ok());
    for (const auto* prog : {&*own, &*combined}) {
      SCOPED_TRACE(prog == &*own ? "its own program" : "the combined program");
      for (std::size_t r = 0; r < spec->rules.size(); ++r) {
        const FilterRule& row = spec->rules[r];
        SCOPED_TRACE(std::string(spec->name) + " #" + std::to_string(r + 1) + " " + describe(row));
        std::array<std::uint64_t, 6> args{};
        for (const ArgTest& t : row.when) {
          if (t.used()) args[t.arg] = (args[t.arg] & ~t.mask) | t.value | (~t.mask & kHigh32);
        }
        const int nr = nr_of(std::string(row.syscall).c_str());
        EXPECT_EQ(hex(*run_bpf(*prog, native(nr, args))), hex(seccomp_ret(row.action)));
        for (const ArgTest& t : row.when) {
          if (!t.used()) continue;
          auto miss = args;
          miss[t.arg] &= ~t.mask;
          if (t.value == 0) miss[t.arg] |= t.mask;  // never the case today; keep it a miss
          bool other_row = false;
          for (const FilterRule& o : spec->rules) {
            if (&o == &row || o.syscall != row.syscall) continue;
            bool all = true;
            for (const ArgTest& ot : o.when) {
              if (ot.used() && (miss[ot.arg] & ot.mask) != ot.value) all = false;
            }
            other_row = other_row || all;
          }
          if (other_row) continue;
          EXPECT_EQ(hex(*run_bpf(*prog, native(nr, miss))), hex(seccomp_ret(spec->default_action)))
              << "with " << t.text << " false";
        }
      }
    }
  }
}

}  // namespace
}  // namespace vigil

// ---- the observer's filter: which calls reach the witness -----------------------------

namespace vigil {
namespace {

constexpr std::uint32_t kNotify = SECCOMP_RET_USER_NOTIF;

TEST(ObserverFilter, WriteIntentCallsNotifyAndReadsPass) {
  auto prog = compile_filter(notify_filter());
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  const std::uint64_t fd = 3;
  const std::uint64_t cwd = static_cast<std::uint64_t>(-100);
  const Case cases[] = {
      {"openat O_RDONLY", native(SYS_openat, {cwd, 0, O_RDONLY}), kAllow},
      {"openat O_WRONLY", native(SYS_openat, {cwd, 0, O_WRONLY}), kNotify},
      // An fd opened read-only is enough to change its file's mode, owner and flags.
      {"fchmod", native(SYS_fchmod, {fd, 0600}), kNotify},
      {"fchown", native(SYS_fchown, {fd, 0, 0}), kNotify},
      {"ioctl FS_IOC_SETFLAGS (chattr)", native(SYS_ioctl, {fd, FS_IOC_SETFLAGS}), kNotify},
      {"ioctl FS_IOC_SETFLAGS with bit 32 set: the kernel reads 32 bits",
       native(SYS_ioctl, {fd, FS_IOC_SETFLAGS | (1ULL << 32)}), kNotify},
      {"ioctl FS_IOC_SETFLAGS with every upper bit set",
       native(SYS_ioctl, {fd, FS_IOC_SETFLAGS | kHigh32}), kNotify},
      {"ioctl FS_IOC_FSSETXATTR", native(SYS_ioctl, {fd, FS_IOC_FSSETXATTR}), kNotify},
      {"ioctl FS_IOC_SETVERSION", native(SYS_ioctl, {fd, FS_IOC_SETVERSION}), kNotify},
      {"ioctl FS_IOC_ENABLE_VERITY", native(SYS_ioctl, {fd, FS_IOC_ENABLE_VERITY}), kNotify},
      {"ioctl FS_IOC_SET_ENCRYPTION_POLICY", native(SYS_ioctl, {fd, FS_IOC_SET_ENCRYPTION_POLICY}),
       kNotify},
      {"ioctl BTRFS_IOC_SUBVOL_CREATE", native(SYS_ioctl, {fd, BTRFS_IOC_SUBVOL_CREATE}), kNotify},
      {"ioctl BTRFS_IOC_SUBVOL_CREATE_V2", native(SYS_ioctl, {fd, BTRFS_IOC_SUBVOL_CREATE_V2}),
       kNotify},
      {"ioctl BTRFS_IOC_SNAP_CREATE", native(SYS_ioctl, {fd, BTRFS_IOC_SNAP_CREATE}), kNotify},
      {"ioctl BTRFS_IOC_SNAP_CREATE_V2", native(SYS_ioctl, {fd, BTRFS_IOC_SNAP_CREATE_V2}),
       kNotify},
      {"ioctl BTRFS_IOC_SNAP_DESTROY", native(SYS_ioctl, {fd, BTRFS_IOC_SNAP_DESTROY}), kNotify},
      {"ioctl BTRFS_IOC_SNAP_DESTROY_V2 | upper bits",
       native(SYS_ioctl, {fd, BTRFS_IOC_SNAP_DESTROY_V2 | kHigh32}), kNotify},
      {"ioctl BTRFS_IOC_SUBVOL_SETFLAGS", native(SYS_ioctl, {fd, BTRFS_IOC_SUBVOL_SETFLAGS}),
       kNotify},
      {"ioctl BTRFS_IOC_SET_RECEIVED_SUBVOL",
       native(SYS_ioctl, {fd, BTRFS_IOC_SET_RECEIVED_SUBVOL}), kNotify},
      {"ioctl FS_IOC_GETVERSION: a read", native(SYS_ioctl, {fd, FS_IOC_GETVERSION}), kAllow},
      {"ioctl FICLONE: its destination fd must be open for writing",
       native(SYS_ioctl, {fd, FICLONE}), kAllow},
      {"ioctl FS_IOC_GETFLAGS: a read", native(SYS_ioctl, {fd, FS_IOC_GETFLAGS}), kAllow},
      {"ioctl FS_IOC_FSGETXATTR: a read", native(SYS_ioctl, {fd, FS_IOC_FSGETXATTR}), kAllow},
      {"ioctl TCGETS: a terminal query", native(SYS_ioctl, {0, TCGETS}), kAllow},
      {"ioctl FIONREAD", native(SYS_ioctl, {fd, FIONREAD}), kAllow},
      // Newer than libseccomp 2.5.4: numbered from vigil's own table.
      {"setxattrat (6.13)", native(nr_of("setxattrat"), {cwd, 0, 0}), kNotify},
      {"removexattrat (6.13)", native(nr_of("removexattrat"), {cwd, 0, 0}), kNotify},
      {"file_setattr (6.17)", native(nr_of("file_setattr"), {cwd, 0, 0}), kNotify},
      {"file_getattr: a read", native(nr_of("file_getattr"), {cwd, 0, 0}), kAllow},
      {"fsetxattr", native(SYS_fsetxattr, {fd}), kNotify},
      {"read", native(SYS_read, {fd, 0, 1}), kAllow},
  };
  for (const Case& c : cases) {
    const auto got = run_bpf(*prog, c.in);
    ASSERT_TRUE(got.has_value()) << c.what;
    EXPECT_EQ(hex(*got), hex(c.expect)) << c.what;
  }
}

// vigil.observer.reads: every open reaches vigil-init, reads too; the stat family does not
// (observer/hidden_reads.h says why), and nothing else changes.
TEST(ObserverFilter, WithReadsEveryOpenNotifiesAndStatsPass) {
  auto prog = compile_filter(notify_filter(true));
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  const std::uint64_t cwd = static_cast<std::uint64_t>(-100);
  const std::uint64_t fd = 3;
  const Case cases[] = {
      {"openat O_RDONLY", native(SYS_openat, {cwd, 0, O_RDONLY}), kNotify},
      {"openat O_RDONLY|O_DIRECTORY", native(SYS_openat, {cwd, 0, O_RDONLY | O_DIRECTORY}),
       kNotify},
      {"openat O_PATH", native(SYS_openat, {cwd, 0, O_PATH}), kNotify},
      {"open O_RDONLY", native(SYS_open, {0, O_RDONLY}), kNotify},
      {"openat O_WRONLY", native(SYS_openat, {cwd, 0, O_WRONLY}), kNotify},
      {"openat2", native(SYS_openat2, {cwd, 0, 0, 24}), kNotify},
      {"newfstatat", native(SYS_newfstatat, {cwd, 0, 0, 0}), kAllow},
      {"statx", native(SYS_statx, {cwd, 0, 0, 0, 0}), kAllow},
      {"faccessat", native(SYS_faccessat, {cwd, 0, 0}), kAllow},
      {"read", native(SYS_read, {fd, 0, 1}), kAllow},
      {"fchmod", native(SYS_fchmod, {fd, 0600}), kNotify},
  };
  for (const Case& c : cases) {
    const auto got = run_bpf(*prog, c.in);
    ASSERT_TRUE(got.has_value()) << c.what;
    EXPECT_EQ(hex(*got), hex(c.expect)) << c.what;
  }
}

}  // namespace
}  // namespace vigil
