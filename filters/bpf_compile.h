// Filter table -> classic BPF, and the raw install. Compiling allocates and goes through
// libseccomp, so do it BEFORE fork; installing is one syscall on memory the caller owns,
// so the forked worker can do it without allocating:
//
//   auto prog = compile_filter(namespaces_filter());      // parent, before fork
//   ...fork...
//   prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);                // child
//   if (install_raw(as_fprog(*prog), 0) < 0) _exit(...);
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <span>
#include <vector>

#include "filters/filter_specs.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The BPF program libseccomp exports for `spec` on the native architecture: the arch
// check (with spec.bad_arch, which also covers x32 numbers on x86_64), then the rows.
// Fails (never skips a row) when a syscall name is unknown here or a row is malformed.
Result<std::vector<sock_filter>> compile_filter(const FilterSpec& spec);

// Every row of `specs` in ONE program: one seccomp() call instead of one per table, which
// on this VM saves ~90 us of kernel work (JIT + text_poke) per extra filter, and one
// program to run per syscall instead of several. The tables must agree on the default
// and bad-arch actions and name disjoint syscalls, so the one program gives every call
// exactly the answer the stack would (refused otherwise).
Result<std::vector<sock_filter>> compile_combined(std::span<const FilterSpec* const> specs);

struct CompiledFilter {
  const FilterSpec* spec = nullptr;
  std::vector<sock_filter> program;
};
// Each of `specs`, compiled, in the same order (e.g. compile_filters(worker_filters())).
Result<std::vector<CompiledFilter>> compile_filters(std::span<const FilterSpec* const> specs);

// A view of `program` for seccomp(); valid while `program` lives and is not resized.
sock_fprog as_fprog(const std::vector<sock_filter>& program);

// seccomp(SECCOMP_SET_MODE_FILTER, flags, prog). Returns the syscall's result (0, or the
// listener fd when flags has SECCOMP_FILTER_FLAG_NEW_LISTENER) or -errno. No allocation,
// no locks: async-signal-safe, for the worker between fork and exec. The caller must have
// set PR_SET_NO_NEW_PRIVS (or hold CAP_SYS_ADMIN). A filter, once in, stays for the life
// of the thread and everything it execs: never call this in a process that must go on
// unfiltered (tests do it in forked children).
long install_raw(const sock_fprog& prog, unsigned flags) noexcept;

// install_raw as a Result. Allocates only on failure (the message), so after fork use it
// in a single-threaded parent's child only; prefer install_raw otherwise.
Result<void> install(const std::vector<sock_filter>& program, unsigned flags);

// install with SECCOMP_FILTER_FLAG_NEW_LISTENER added: for a filter with notify rows.
Result<UniqueFd> install_with_listener(const std::vector<sock_filter>& program, unsigned flags);

}  // namespace vigil
