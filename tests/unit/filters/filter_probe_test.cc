// The worker filters on the real kernel: each probe runs in a forked child that sets
// no_new_privs and installs the compiled stack (compiled in the parent, before the fork,
// as vigil-init does), then makes one call. The child reports through its exit status
// only: no gtest, no allocation after the fork. Where it proves something, the same call
// also runs in an unfiltered child (the control), to show the errno came from the filter.
#include <gtest/gtest.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/syscall_names.h"
#include "tests/support/bounded_wait.h"

namespace vigil {
namespace {

// Exit statuses a probe child uses besides errno values (all errno values are < 200).
constexpr int kOk = 0;
constexpr int kSetupFailed = 250;
constexpr int kWrongResult = 251;

struct Outcome {
  bool exited = false;
  int code = -1;   // exit status when exited
  int signal = 0;  // terminating signal otherwise
};

std::string show(const Outcome& o) {
  if (!o.exited) return "killed by signal " + std::to_string(o.signal);
  if (o.code == kOk) return "ok";
  if (o.code == kSetupFailed) return "filter setup failed";
  if (o.code == kWrongResult) return "wrong result";
  return std::string("errno ") + (strerrorname_np(o.code) ? strerrorname_np(o.code) : "?");
}

// A probe: returns kOk, an errno, or kWrongResult. Runs in the child.
using Probe = int (*)();

// errno of a failed call, else kOk. Reads errno immediately.
int result(long rc) { return rc < 0 ? errno : kOk; }

std::vector<sock_fprog> worker_stack(const std::vector<CompiledFilter>& compiled) {
  std::vector<sock_fprog> progs;
  for (const auto& c : compiled) progs.push_back(as_fprog(c.program));
  return progs;
}

// Forks; the child optionally installs `filters`, runs `probe`, _exits with its result.
Outcome run_child(const std::vector<sock_fprog>* filters, Probe probe) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A KILL_PROCESS is a core-dumping signal: keep the test from leaving core files.
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (filters != nullptr) {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(kSetupFailed);
      for (const sock_fprog& p : *filters) {
        if (install_raw(p, 0) != 0) ::_exit(kSetupFailed);
      }
    }
    ::_exit(probe());
  }
  Outcome o;
  if (pid < 0) return o;
  const auto status = test::wait_child_status(pid, std::chrono::seconds(30));  // a probe that hangs
  if (!status) return o;                                                       // fails, not stalls
  const int st = *status;
  o.exited = WIFEXITED(st);
  o.code = o.exited ? WEXITSTATUS(st) : -1;
  o.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  return o;
}

// ---- the probes ----------------------------------------------------------------------

int unix_stream() { return result(::socket(AF_UNIX, SOCK_STREAM, 0)); }
int unix_dgram() { return result(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)); }
int unix_upper_bits() {
  // The kernel reads the domain as an int: this is AF_UNIX to it.
  return result(::syscall(SYS_socket, AF_UNIX | (1UL << 32), SOCK_STREAM, 0));
}
int vsock() { return result(::socket(AF_VSOCK, SOCK_STREAM, 0)); }
int inet_tcp() { return result(::socket(AF_INET, SOCK_STREAM, 0)); }
int inet6_udp() { return result(::socket(AF_INET6, SOCK_DGRAM, 0)); }
int pair(int type) {
  int sv[2];
  return result(::socketpair(AF_UNIX, type, 0, sv));
}
int pair_dgram() { return pair(SOCK_DGRAM); }
int pair_dgram_cloexec() { return pair(SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK); }
int pair_raw() { return pair(SOCK_RAW); }
int pair_stream() { return pair(SOCK_STREAM); }
int pair_seqpacket() { return pair(SOCK_SEQPACKET); }
// Without a filter, a SOCK_RAW unix pair comes back as SOCK_DGRAM: why row #4 exists.
int pair_raw_is_dgram() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_RAW, 0, sv) != 0) return errno;
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len) != 0) return errno;
  return type == SOCK_DGRAM ? kOk : kWrongResult;
}
int uring_setup() {
  io_uring_params p{};
  return result(::syscall(SYS_io_uring_setup, 1, &p));
}
int uring_enter() { return result(::syscall(SYS_io_uring_enter, -1, 0, 0, 0, nullptr, 0)); }
int uring_register() { return result(::syscall(SYS_io_uring_register, -1, 0, nullptr, 0)); }
int unshare_user() { return result(::unshare(CLONE_NEWUSER)); }
int unshare_user_upper() { return result(::syscall(SYS_unshare, CLONE_NEWUSER | (1UL << 40))); }
int unshare_ns() { return result(::unshare(CLONE_NEWNS)); }
int clone_user() {
  // If the filter ever let this through, the child side returns 0 and exits at once.
  const long rc = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (rc == 0) ::_exit(kWrongResult);
  return result(rc);
}
int clone3_call() { return result(::syscall(SYS_clone3, nullptr, 0)); }
int setns_call() { return result(::setns(0, CLONE_NEWNS)); }
int mount_call() { return result(::syscall(SYS_mount, "", "", nullptr, 0, nullptr)); }
int umount2_call() { return result(::syscall(SYS_umount2, "/vigil-no-such-dir", 0)); }
int pivot_root_call() {
  return result(::syscall(SYS_pivot_root, "/vigil-no-such-dir", "/vigil-no-such-dir"));
}
int open_tree_call() { return result(::syscall(SYS_open_tree, -1, "/vigil-no-such-dir", 0)); }
int fsopen_call() { return result(::syscall(SYS_fsopen, "vigil-no-such-fs", 0)); }
int mount_setattr_call() {
  return result(::syscall(SYS_mount_setattr, -1, "/vigil-no-such-dir", 0, nullptr, 0));
}
int g_open_tree_attr_nr = -1;  // set before the fork; from the one table, not a literal
int open_tree_attr_call() {
  return result(::syscall(g_open_tree_attr_nr, -1, "/vigil-no-such-dir", 0, nullptr, 0));
}
int open_by_handle_call() { return result(::syscall(SYS_open_by_handle_at, -1, nullptr, 0)); }
int getppid_call() { return ::getppid() > 0 ? kOk : kWrongResult; }
int skipped_nr() { return result(::syscall(-1)); }
int fork_and_wait() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  int st = 0;
  if (p < 0 || ::waitpid(p, &st, 0) != p) return errno;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? kOk : kWrongResult;
}
int thread_roundtrip() {
  // glibc tries clone3 first and falls back to clone on ENOSYS.
  pthread_t t;
  const int rc = ::pthread_create(
      &t, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
  if (rc != 0) return rc;
  return ::pthread_join(t, nullptr);
}
int own_extra_filter() {
  // A command may stack a filter of its own (no_new_privs is already set).
  static const sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  const sock_fprog p{1, const_cast<sock_filter*>(allow)};
  return install_raw(p, 0) == 0 ? kOk : kWrongResult;
}

#if defined(__x86_64__)
int g_i386_getpid = -1;  // resolved through libseccomp before the fork
int g_x32_getpid = -1;
int i386_int80() {
  long rc;
  // The 32-bit entry point from 64-bit code: the kernel sees AUDIT_ARCH_I386.
  asm volatile("int $0x80"
               : "=a"(rc)
               : "a"(static_cast<long>(g_i386_getpid))
               : "memory", "cc", "r8", "r9", "r10", "r11");
  return rc > 0 ? kOk : static_cast<int>(-rc);
}
int x32_call() { return result(::syscall(g_x32_getpid)); }
#endif

// ---- the tests -----------------------------------------------------------------------

class FilterProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compiled = compile_filters(worker_filters());  // before any fork, like vigil-init
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    compiled_ = std::move(*compiled);
    stack_ = worker_stack(compiled_);
    auto combined = compile_combined(worker_filters());
    ASSERT_TRUE(combined.ok()) << combined.error().message;
    combined_ = std::move(*combined);
    one_ = {as_fprog(combined_)};
    g_open_tree_attr_nr = native_syscall_number("open_tree_attr").value_or(-1);
#if defined(__x86_64__)
    g_i386_getpid = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "getpid");
    g_x32_getpid = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, "getpid");
#endif
  }
  Outcome filtered(Probe p) { return run_child(&stack_, p); }
  static Outcome unfiltered(Probe p) { return run_child(nullptr, p); }

  std::vector<CompiledFilter> compiled_;
  std::vector<sock_fprog> stack_;  // one program per table
  std::vector<sock_filter> combined_;
  std::vector<sock_fprog> one_;  // every table in one program
};

Outcome err(int e) { return Outcome{true, e, 0}; }
Outcome ok() { return Outcome{true, kOk, 0}; }
Outcome killed(int sig) { return Outcome{false, -1, sig}; }

struct ProbeCase {
  const char* what;
  Probe probe;
  Outcome expect;
};

TEST_F(FilterProbe, EachCallGetsItsAnswerFromTheKernel) {
  const ProbeCase cases[] = {
    {"socket(AF_UNIX, SOCK_STREAM)", unix_stream, err(EPERM)},
    {"socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC)", unix_dgram, err(EPERM)},
    {"socket(AF_UNIX | 1<<32)", unix_upper_bits, err(EPERM)},
    {"socket(AF_VSOCK)", vsock, err(EPERM)},
    {"socket(AF_INET, SOCK_STREAM)", inet_tcp, ok()},
    {"socket(AF_INET6, SOCK_DGRAM)", inet6_udp, ok()},
    {"socketpair(AF_UNIX, SOCK_DGRAM)", pair_dgram, err(EPERM)},
    {"socketpair(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK)", pair_dgram_cloexec, err(EPERM)},
    {"socketpair(AF_UNIX, SOCK_RAW)", pair_raw, err(EPERM)},
    {"socketpair(AF_UNIX, SOCK_STREAM)", pair_stream, ok()},
    {"socketpair(AF_UNIX, SOCK_SEQPACKET)", pair_seqpacket, ok()},
    {"io_uring_setup", uring_setup, err(EPERM)},
    {"io_uring_enter", uring_enter, err(EPERM)},
    {"io_uring_register", uring_register, err(EPERM)},
    {"unshare(CLONE_NEWUSER)", unshare_user, err(EPERM)},
    {"unshare(CLONE_NEWUSER | 1<<40)", unshare_user_upper, err(EPERM)},
    {"unshare(CLONE_NEWNS)", unshare_ns, err(EPERM)},
    {"clone(CLONE_NEWUSER|SIGCHLD)", clone_user, err(EPERM)},
    {"clone3", clone3_call, err(ENOSYS)},
    {"setns", setns_call, err(EPERM)},
    {"mount", mount_call, err(EPERM)},
    {"umount2", umount2_call, err(EPERM)},
    {"pivot_root", pivot_root_call, err(EPERM)},
    {"open_tree", open_tree_call, err(EPERM)},
    {"open_tree_attr", open_tree_attr_call, err(EPERM)},
    {"fsopen", fsopen_call, err(EPERM)},
    {"mount_setattr", mount_setattr_call, err(EPERM)},
    {"open_by_handle_at", open_by_handle_call, err(EPERM)},
    {"getppid", getppid_call, ok()},
    {"syscall(-1)", skipped_nr, err(ENOSYS)},
    {"fork + wait", fork_and_wait, ok()},
    {"pthread_create + join (clone3 falls back to clone)", thread_roundtrip, ok()},
    {"a filter of the command's own", own_extra_filter, ok()},
#if defined(__x86_64__)
    {"x32 getpid", x32_call, killed(SIGSYS)},
#endif
  };
  for (const ProbeCase& c : cases) {
    EXPECT_EQ(show(run_child(&stack_, c.probe)), show(c.expect)) << c.what << " (stack)";
    EXPECT_EQ(show(run_child(&one_, c.probe)), show(c.expect)) << c.what << " (combined)";
  }
}

// Unfiltered, the same calls do something else, so the answers above are the filter's.
TEST_F(FilterProbe, ControlsWithoutFiltersAnswerDifferently) {
  EXPECT_EQ(show(unfiltered(unix_stream)), "ok");
  EXPECT_EQ(show(unfiltered(unix_upper_bits)), "ok") << "the kernel ignores the upper bits";
  EXPECT_EQ(show(unfiltered(pair_dgram)), "ok");
  EXPECT_EQ(show(unfiltered(pair_raw_is_dgram)), "ok") << "SOCK_RAW unix pairs are datagram pairs";
  EXPECT_EQ(show(unfiltered(clone3_call)), "errno EINVAL");
  EXPECT_EQ(show(unfiltered(setns_call)), "errno EINVAL");
  if (::geteuid() == 0) {  // unprivileged, the kernel itself says EPERM to these
    EXPECT_EQ(show(unfiltered(unshare_user)), "ok");
    EXPECT_EQ(show(unfiltered(fsopen_call)), "errno ENODEV");
  }
#if defined(__x86_64__)
  // Kernels without the x32 ABI (CONFIG_X86_X32_ABI unset) fail the call with ENOSYS;
  // with it, the call runs. Either way the child lives: the SIGSYS above is the filter's.
  const Outcome x32 = unfiltered(x32_call);
  EXPECT_TRUE(x32.exited) << show(x32);
#endif
}

TEST_F(FilterProbe, I386IntEightyIsKilled) {
#if defined(__x86_64__)
  const Outcome control = unfiltered(i386_int80);
  const Outcome got = filtered(i386_int80);
  if (show(control) == "ok") {
    EXPECT_EQ(show(got), show(killed(SIGSYS)));
    return;
  }
  // IA-32 emulation is off (ia32_emulation=0, or a host that runs 64-bit code only):
  // int 0x80 faults before seccomp runs, so the filter cannot be seen acting here.
  EXPECT_EQ(show(got), show(control)) << "still fatal with the filters";
  std::fprintf(stderr,
               "note: IA-32 emulation is off on this kernel (int 0x80 -> %s before seccomp "
               "runs); BpfFilterStack covers the i386 arch check\n",
               show(control).c_str());
#else
  GTEST_SKIP() << "x86_64 only";
#endif
}

}  // namespace
}  // namespace vigil
