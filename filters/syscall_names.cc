#include "filters/syscall_names.h"

#include <linux/audit.h>
#include <seccomp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace vigil {
namespace {

// The one table of syscall numbers in vigil: calls newer than Debian 12's libseccomp
// 2.5.4. Since Linux 5.1 (nr 424) every architecture but alpha shares one numbering, so
// the number is the same on each row; it is still keyed by arch so a port has to add its
// row on purpose. A libseccomp that knows the name wins over this table.
struct UnnamedSyscall {
  std::string_view name;
  std::uint32_t audit_arch;
  int nr;
};
constexpr UnnamedSyscall kUnnamedSyscalls[] = {
    // Linux 6.13: the *at forms of setxattr and removexattr (a dirfd, a path, AT_ flags).
    {"setxattrat", AUDIT_ARCH_X86_64, 463},
    {"setxattrat", AUDIT_ARCH_AARCH64, 463},
    {"removexattrat", AUDIT_ARCH_X86_64, 466},
    {"removexattrat", AUDIT_ARCH_AARCH64, 466},
    // Linux 6.15: open_tree() plus mount attributes (include/uapi/asm-generic/unistd.h).
    {"open_tree_attr", AUDIT_ARCH_X86_64, 467},
    {"open_tree_attr", AUDIT_ARCH_AARCH64, 467},
    // Linux 6.17: an inode's fsxattr flags (project id, extent sizes, ...) by path; the
    // getter only so that a test can set back exactly what it read.
    {"file_getattr", AUDIT_ARCH_X86_64, 468},
    {"file_getattr", AUDIT_ARCH_AARCH64, 468},
    {"file_setattr", AUDIT_ARCH_X86_64, 469},
    {"file_setattr", AUDIT_ARCH_AARCH64, 469},
};

struct ArchName {
  std::uint32_t audit_arch;
  std::string_view name;
};
constexpr ArchName kArchNames[] = {
    {AUDIT_ARCH_X86_64, "x86_64"},   {AUDIT_ARCH_I386, "x86"}, {SCMP_ARCH_X32, "x32"},
    {AUDIT_ARCH_AARCH64, "aarch64"}, {AUDIT_ARCH_ARM, "arm"},  {AUDIT_ARCH_RISCV64, "riscv64"},
};

}  // namespace

std::uint32_t native_audit_arch() { return seccomp_arch_native(); }

std::string arch_name(std::uint32_t audit_arch) {
  for (const auto& a : kArchNames) {
    if (a.audit_arch == audit_arch) return std::string(a.name);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "arch 0x%08x", audit_arch);
  return buf;
}

std::optional<int> native_syscall_number(std::string_view name) {
  const std::uint32_t arch = native_audit_arch();
  const int nr = seccomp_syscall_resolve_name_arch(arch, std::string(name).c_str());
  if (nr >= 0) return nr;
  if (nr != __NR_SCMP_ERROR) return std::nullopt;  // a pseudo-number: not on this arch
  for (const auto& u : kUnnamedSyscalls) {
    if (u.name == name && u.audit_arch == arch) return u.nr;
  }
  return std::nullopt;
}

std::string syscall_name(std::uint32_t audit_arch, int nr) {
  // libseccomp hands back a malloc'd string the caller frees.
  std::unique_ptr<char, decltype(&std::free)> name(seccomp_syscall_resolve_num_arch(audit_arch, nr),
                                                   &std::free);
  if (name) return name.get();
  for (const auto& u : kUnnamedSyscalls) {
    if (u.nr == nr && u.audit_arch == audit_arch) return std::string(u.name);
  }
  return {};
}

}  // namespace vigil
