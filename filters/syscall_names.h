// Syscall names <-> numbers for the architecture vigil runs on. Names resolve through
// libseccomp; the one table of literal numbers in the code base (syscall_names.cc) covers
// the calls Debian 12's libseccomp 2.5.4 cannot name. Pure lookups, thread-safe; they
// allocate, so call them before fork.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// The AUDIT_ARCH_* value seccomp_data.arch holds for this process's own syscalls.
std::uint32_t native_audit_arch();

// "x86_64", "x86" (i386), "x32", "aarch64", ...; "arch 0x..." for one we do not know.
std::string arch_name(std::uint32_t audit_arch);

// The native number of `name`, or nullopt when neither libseccomp nor our table knows it.
// A negative libseccomp pseudo-number (a call this architecture does not have, e.g.
// socketcall on x86_64) is also nullopt: a rule on it would silently match nothing.
std::optional<int> native_syscall_number(std::string_view name);

// The name of syscall `nr` on `audit_arch`, or "" when unknown.
std::string syscall_name(std::uint32_t audit_arch, int nr);

}  // namespace vigil
