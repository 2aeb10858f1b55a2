#include "filters/bpf_mnemonic.h"

#include <linux/seccomp.h>

#include <cstdarg>
#include <cstdio>
#include <iterator>

#include "filters/bpf_compile.h"
#include "filters/bpf_paths.h"

namespace vigil::bpf {

std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string field_name(std::uint32_t off) {
  if (off == kNrOff) return "syscall number";
  if (off == kArchOff) return "arch";
  if (off == offsetof(seccomp_data, instruction_pointer)) return "instruction pointer (part)";
  if (off >= kArgsOff && off < kArgsOff + 6 * 8) {
    const int arg = static_cast<int>((off - kArgsOff) / 8);
    return fmt("arg%d %s 32 bits", arg, off == lo_off(arg) ? "low" : "high");
  }
  return fmt("seccomp_data[%u]", off);
}

std::string action_name(std::uint32_t k) {
  const std::uint32_t data = k & SECCOMP_RET_DATA;
  switch (k & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_KILL_PROCESS:
      return "KILL_PROCESS";
    case SECCOMP_RET_KILL_THREAD:
      return "KILL_THREAD";
    case SECCOMP_RET_TRAP:
      return "TRAP";
    case SECCOMP_RET_ERRNO:
      return describe(errno_action(static_cast<int>(data)));
    case SECCOMP_RET_USER_NOTIF:
      return "NOTIFY";
    case SECCOMP_RET_TRACE:
      return fmt("TRACE(%u)", data);
    case SECCOMP_RET_LOG:
      return "LOG";
    case SECCOMP_RET_ALLOW:
      return "ALLOW";
    default:
      return fmt("unknown action 0x%08x", k);
  }
}

std::string mnemonic(const sock_filter& in, std::size_t pc) {
  static const char* const kAlu[] = {"add", "sub", "mul", "div", "or", "and",
                                     "lsh", "rsh", "neg", "mod", "xor"};
  static const char* const kJmp[] = {"ja", "jeq", "jgt", "jge", "jset"};
  const char* src = BPF_SRC(in.code) == BPF_X ? "x" : "";
  switch (BPF_CLASS(in.code)) {
    case BPF_LD:
      if (BPF_MODE(in.code) == BPF_ABS) return fmt("ld    [%u]", in.k);
      if (BPF_MODE(in.code) == BPF_IMM) return fmt("ld    #0x%x", in.k);
      if (BPF_MODE(in.code) == BPF_MEM) return fmt("ld    M[%u]", in.k);
      break;
    case BPF_LDX:
      if (BPF_MODE(in.code) == BPF_IMM) return fmt("ldx   #0x%x", in.k);
      if (BPF_MODE(in.code) == BPF_MEM) return fmt("ldx   M[%u]", in.k);
      break;
    case BPF_ST:
      return fmt("st    M[%u]", in.k);
    case BPF_STX:
      return fmt("stx   M[%u]", in.k);
    case BPF_ALU: {
      const unsigned op = BPF_OP(in.code) >> 4;
      if (op < std::size(kAlu)) {
        return *src ? fmt("%-5s x", kAlu[op]) : fmt("%-5s #0x%x", kAlu[op], in.k);
      }
      break;
    }
    case BPF_JMP: {
      const unsigned op = BPF_OP(in.code) >> 4;
      if (op == 0) return fmt("ja    %04zu", pc + 1 + in.k);
      if (op < std::size(kJmp)) {
        const std::string operand = *src ? "x" : fmt("#0x%x", in.k);
        return fmt("%-5s %-12s jt %04zu  jf %04zu", kJmp[op], operand.c_str(), pc + 1 + in.jt,
                   pc + 1 + in.jf);
      }
      break;
    }
    case BPF_RET:
      if (BPF_RVAL(in.code) == BPF_K) return fmt("ret   #0x%08x", in.k);
      if (BPF_RVAL(in.code) == BPF_A) return "ret   a";
      break;
    case BPF_MISC:
      if (BPF_MISCOP(in.code) == BPF_TAX) return "tax";
      if (BPF_MISCOP(in.code) == BPF_TXA) return "txa";
      break;
  }
  return fmt("?     code=0x%04x jt=%u jf=%u k=0x%x", in.code, in.jt, in.jf, in.k);
}

}  // namespace vigil::bpf
