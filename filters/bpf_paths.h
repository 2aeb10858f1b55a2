// The disassembler's reading of a seccomp program (filters/bpf_disasm.h): what the
// accumulator holds at each instruction, and which table rows each compare and each return
// belongs to, found by walking every path through the program. Internal to the
// disassembler; pure apart from libseccomp's name lookups.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "filters/filter_specs.h"

namespace vigil::bpf {

// ---- what the accumulator holds ------------------------------------------------------
// libseccomp reloads A from seccomp_data before every compare, so tracking "which field,
// ANDed with which mask" is enough to read each jump.

constexpr std::uint32_t kUnknown = UINT32_MAX;
constexpr std::uint32_t kNrOff = offsetof(seccomp_data, nr);
constexpr std::uint32_t kArchOff = offsetof(seccomp_data, arch);
constexpr std::uint32_t kArgsOff = offsetof(seccomp_data, args);
constexpr std::uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT, x86_64 only

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr std::uint32_t lo_off(int arg) { return kArgsOff + 8 * static_cast<std::uint32_t>(arg); }
constexpr std::uint32_t hi_off(int arg) { return lo_off(arg) + 4; }
#else
constexpr std::uint32_t hi_off(int arg) { return kArgsOff + 8 * static_cast<std::uint32_t>(arg); }
constexpr std::uint32_t lo_off(int arg) { return hi_off(arg) + 4; }
#endif

struct Acc {
  std::uint32_t off = kUnknown;  // seccomp_data offset A was loaded from
  std::uint32_t mask = 0xffffffff;
};

// The rows a program was compiled from: one table's, or several tables' (combined).
struct Rows {
  std::vector<const FilterRule*> rule;
  std::vector<std::string> label;  // "#3", or "unix-block#3" in a combined program
};

struct Analysis {
  const Rows* rows = nullptr;
  std::uint32_t bad_arch = 0;  // the bad-arch action's return value
  std::span<const sock_filter> prog;
  std::uint32_t arch = 0;
  std::vector<std::optional<int>> row_nr;      // each row's syscall number
  std::vector<std::set<std::size_t>> rows_at;  // rows each compare / return belongs to
  std::vector<std::set<std::string>> why_at;   // other reasons a return is reached
  std::vector<bool> returned;                  // row returned with its own action
  std::size_t paths = 0;
  bool truncated = false;
};

// The walk stops counting rows after this many paths (the notes say so).
constexpr std::size_t kMaxPaths = 1 << 16;

// Walks every path of `program` (compiled from `rows`, with `bad_arch` as the non-native
// ABI's action) and notes, per instruction, the rows it belongs to.
Analysis analyze(const Rows& rows, FilterAction bad_arch, std::span<const sock_filter> program);

// A's contents at each instruction, when every path agrees (for the ld/and/jump notes).
std::vector<std::optional<Acc>> static_acc(std::span<const sock_filter> prog);

}  // namespace vigil::bpf
