// One BPF instruction as text for the disassembler (filters/bpf_disasm.h): its mnemonic,
// the seccomp_data field an offset names, the action a return value means.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace vigil::bpf {

// printf into a string (at most 511 bytes: the disassembler's lines are short).
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

// "syscall number", "arch", "arg1 low 32 bits", ...
std::string field_name(std::uint32_t off);
// "ALLOW", "NOTIFY", "ERRNO(EPERM)", ...
std::string action_name(std::uint32_t k);
// "jeq   #0x101       jt 0005  jf 0007": jump targets as absolute instruction numbers.
std::string mnemonic(const sock_filter& in, std::size_t pc);

}  // namespace vigil::bpf
