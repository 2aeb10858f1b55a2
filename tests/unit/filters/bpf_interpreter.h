// A classic-BPF interpreter for the tests, written from the kernel's rules
// (net/core/filter.c bpf_check_classic + kernel/seccomp.c seccomp_check_filter and
// seccomp_run_filters), independent of libseccomp and of filters/bpf_disasm.cc, so the
// exported filters are checked by code that shares nothing with what produced them.
// Header-only; test code only.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace vigil::bpf_test {

// The subset seccomp accepts: loads only of aligned 32-bit words of seccomp_data.
inline std::optional<std::uint32_t> load_word(const seccomp_data& d, std::uint32_t off) {
  if (off % 4 != 0 || off + 4 > sizeof(seccomp_data)) return std::nullopt;
  std::uint32_t w;
  std::memcpy(&w, reinterpret_cast<const unsigned char*>(&d) + off, sizeof w);
  return w;
}

// Runs one program; nullopt when the kernel would have refused it at load time or the
// run goes wrong (bad jump, unknown opcode, falling off the end, division by zero).
inline std::optional<std::uint32_t> run_bpf(std::span<const sock_filter> prog,
                                            const seccomp_data& d) {
  if (prog.empty() || prog.size() > BPF_MAXINSNS) return std::nullopt;
  std::uint32_t a = 0, x = 0;
  std::array<std::uint32_t, BPF_MEMWORDS> mem{};
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter& in = prog[pc];
    const std::uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (in.code) {
      case BPF_LD | BPF_W | BPF_ABS: {
        auto w = load_word(d, in.k);
        if (!w) return std::nullopt;
        a = *w;
        break;
      }
      case BPF_LD | BPF_W | BPF_LEN:
        a = sizeof(seccomp_data);
        break;
      case BPF_LDX | BPF_W | BPF_LEN:
        x = sizeof(seccomp_data);
        break;
      case BPF_LD | BPF_IMM:
        a = in.k;
        break;
      case BPF_LDX | BPF_IMM:
        x = in.k;
        break;
      case BPF_LD | BPF_MEM:
        if (in.k >= BPF_MEMWORDS) return std::nullopt;
        a = mem[in.k];
        break;
      case BPF_LDX | BPF_MEM:
        if (in.k >= BPF_MEMWORDS) return std::nullopt;
        x = mem[in.k];
        break;
      case BPF_ST:
        if (in.k >= BPF_MEMWORDS) return std::nullopt;
        mem[in.k] = a;
        break;
      case BPF_STX:
        if (in.k >= BPF_MEMWORDS) return std::nullopt;
        mem[in.k] = x;
        break;
      case BPF_ALU | BPF_ADD | BPF_K:
      case BPF_ALU | BPF_ADD | BPF_X:
        a += src;
        break;
      case BPF_ALU | BPF_SUB | BPF_K:
      case BPF_ALU | BPF_SUB | BPF_X:
        a -= src;
        break;
      case BPF_ALU | BPF_MUL | BPF_K:
      case BPF_ALU | BPF_MUL | BPF_X:
        a *= src;
        break;
      case BPF_ALU | BPF_DIV | BPF_K:
      case BPF_ALU | BPF_DIV | BPF_X:
        if (src == 0) return std::nullopt;
        a /= src;
        break;
      case BPF_ALU | BPF_MOD | BPF_K:
      case BPF_ALU | BPF_MOD | BPF_X:
        if (src == 0) return std::nullopt;
        a %= src;
        break;
      case BPF_ALU | BPF_AND | BPF_K:
      case BPF_ALU | BPF_AND | BPF_X:
        a &= src;
        break;
      case BPF_ALU | BPF_OR | BPF_K:
      case BPF_ALU | BPF_OR | BPF_X:
        a |= src;
        break;
      case BPF_ALU | BPF_XOR | BPF_K:
      case BPF_ALU | BPF_XOR | BPF_X:
        a ^= src;
        break;
      case BPF_ALU | BPF_LSH | BPF_K:
      case BPF_ALU | BPF_LSH | BPF_X:
        a = src < 32 ? a << src : 0;
        break;
      case BPF_ALU | BPF_RSH | BPF_K:
      case BPF_ALU | BPF_RSH | BPF_X:
        a = src < 32 ? a >> src : 0;
        break;
      case BPF_ALU | BPF_NEG:
        a = 0u - a;
        break;
      case BPF_MISC | BPF_TAX:
        x = a;
        break;
      case BPF_MISC | BPF_TXA:
        a = x;
        break;
      case BPF_JMP | BPF_JA:
        if (in.k >= prog.size() - pc - 1) return std::nullopt;
        pc += in.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
      case BPF_JMP | BPF_JEQ | BPF_X:
      case BPF_JMP | BPF_JGT | BPF_K:
      case BPF_JMP | BPF_JGT | BPF_X:
      case BPF_JMP | BPF_JGE | BPF_K:
      case BPF_JMP | BPF_JGE | BPF_X:
      case BPF_JMP | BPF_JSET | BPF_K:
      case BPF_JMP | BPF_JSET | BPF_X: {
        bool taken = false;
        switch (BPF_OP(in.code)) {
          case BPF_JEQ:
            taken = a == src;
            break;
          case BPF_JGT:
            taken = a > src;
            break;
          case BPF_JGE:
            taken = a >= src;
            break;
          default:
            taken = (a & src) != 0;
            break;
        }
        const std::size_t off = taken ? in.jt : in.jf;
        if (pc + 1 + off >= prog.size()) return std::nullopt;
        pc += off;
        break;
      }
      case BPF_RET | BPF_K:
        return in.k;
      case BPF_RET | BPF_A:
        return a;
      default:
        return std::nullopt;  // includes every packet-only load seccomp rejects
    }
  }
  return std::nullopt;  // fell off the end: the kernel rejects such a program
}

// The kernel's precedence between stacked filters: the action part compared as a signed
// value, lowest wins (KILL_PROCESS < KILL_THREAD < TRAP < ERRNO < USER_NOTIF < TRACE <
// LOG < ALLOW); on a tie the newest filter's answer (its errno) is kept.
inline std::int32_t action_rank(std::uint32_t ret) {
  return static_cast<std::int32_t>(ret & SECCOMP_RET_ACTION_FULL);
}

// `stack` in install order (oldest first), as vigil-init installs them.
inline std::optional<std::uint32_t> run_stack(const std::vector<std::vector<sock_filter>>& stack,
                                              const seccomp_data& d) {
  std::uint32_t ret = SECCOMP_RET_ALLOW;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    auto cur = run_bpf(*it, d);
    if (!cur) return std::nullopt;
    if (action_rank(*cur) < action_rank(ret)) ret = *cur;
  }
  return ret;
}

}  // namespace vigil::bpf_test
