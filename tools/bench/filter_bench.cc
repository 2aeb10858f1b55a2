// What the worker filters cost, measured in forked children (installing is irreversible).
// Skipped unless VIGIL_BENCH=1, so the unit run stays fast and noise-free:
//   VIGIL_BENCH=1 build/tests/vigil_unit_tests --gtest_filter='FilterBench.*'
// Figures: compile time (parent, before fork), install time (no_new_privs + the three
// seccomp() calls, in the child), and ns per syscall with and without the stack, for
// getppid (allowed whatever its arguments: the kernel's per-syscall action cache, 5.11+,
// skips the filters entirely) and unshare(0) (the namespaces filter reads its flags, so
// every filter in the stack really runs).
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool bench_enabled() {
  const char* v = std::getenv("VIGIL_BENCH");
  return v != nullptr && std::string(v) == "1";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

enum class Work { kInstallOnly, kGetppid, kUnshareZero };
constexpr long kIterations = 1000000;

// Runs in a child: optionally installs `stack`, then times `work`; writes ns to `out`.
double measure(const std::vector<sock_fprog>* stack, Work work) {
  auto pipe = make_pipe();
  if (!pipe) return -1;
  UniqueFd rd = std::move(pipe->read), wr = std::move(pipe->write);
  const pid_t pid = ::fork();
  if (pid == 0) {
    rd.reset();
    std::int64_t t0 = now_ns();
    if (stack != nullptr) {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(1);
      for (const sock_fprog& p : *stack) {
        if (install_raw(p, 0) != 0) ::_exit(1);
      }
    }
    if (work != Work::kInstallOnly) {
      t0 = now_ns();
      for (long i = 0; i < kIterations; ++i) {
        if (work == Work::kGetppid) {
          ::syscall(SYS_getppid);
        } else {
          ::syscall(SYS_unshare, 0);
        }
      }
    }
    const std::int64_t dt = now_ns() - t0;
    ::_exit(::write(wr.get(), &dt, sizeof dt) == sizeof dt ? 0 : 1);
  }
  wr.reset();
  std::int64_t dt = -1;
  if (pid < 0 || ::read(rd.get(), &dt, sizeof dt) != sizeof dt) dt = -1;
  int st = 0;
  if (pid > 0) ::waitpid(pid, &st, 0);
  return static_cast<double>(dt);
}

TEST(FilterBench, CompileInstallAndPerSyscallCost) {
  if (!bench_enabled()) GTEST_SKIP() << "set VIGIL_BENCH=1 to measure";
  std::vector<double> compile_us;
  std::vector<CompiledFilter> compiled;
  for (int i = 0; i < 51; ++i) {
    const std::int64_t t0 = now_ns();
    auto c = compile_filters(worker_filters());
    compile_us.push_back(static_cast<double>(now_ns() - t0) / 1000);
    ASSERT_TRUE(c.ok());
    compiled = std::move(*c);
  }
  std::vector<sock_fprog> stack;
  for (const auto& c : compiled) stack.push_back(as_fprog(c.program));
  auto combined = compile_combined(worker_filters());
  ASSERT_TRUE(combined.ok());
  const std::vector<sock_fprog> one{as_fprog(*combined)};
  // The floor: any filter at all moves syscalls onto the kernel's slow entry path.
  static const sock_filter kAllowAll[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  const std::vector<sock_fprog> trivial{sock_fprog{1, const_cast<sock_filter*>(kAllowAll)}};

  struct Layout {
    const char* name;
    const std::vector<sock_fprog>* progs;
    std::vector<double> install_us, ppid_ns, unshare_ns;
  };
  Layout layouts[] = {{"no filter", nullptr, {}, {}, {}},
                      {"1 trivial ret ALLOW", &trivial, {}, {}, {}},
                      {"3 tables, stacked", &stack, {}, {}, {}},
                      {"3 tables, combined", &one, {}, {}, {}}};
  for (int i = 0; i < 61; ++i) {  // interleaved, so drift hits every layout alike
    for (Layout& l : layouts) l.install_us.push_back(measure(l.progs, Work::kInstallOnly) / 1000);
  }
  for (int i = 0; i < 7; ++i) {
    for (Layout& l : layouts) {
      l.ppid_ns.push_back(measure(l.progs, Work::kGetppid) / kIterations);
      l.unshare_ns.push_back(measure(l.progs, Work::kUnshareZero) / kIterations);
    }
  }
  std::printf("compile 3 tables (parent, before fork): median %.1f us (51 runs)\n",
              median(compile_us));
  std::printf("%-22s %14s %16s %16s\n", "layout", "install (us)", "getppid (ns)",
              "unshare(0) (ns)");
  for (const Layout& l : layouts) {
    std::printf("%-22s %14.1f %16.1f %16.1f\n", l.name, median(l.install_us), median(l.ppid_ns),
                median(l.unshare_ns));
    EXPECT_GT(median(l.install_us), 0) << "a measurement child failed";
    EXPECT_GT(median(l.ppid_ns), 0) << "a measurement child failed";
  }
  std::printf("(install: median of 61 forked children; per call: median of 7 x 1M calls)\n");
}

}  // namespace
}  // namespace vigil
