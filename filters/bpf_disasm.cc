#include "filters/bpf_disasm.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>

#include "filters/bpf_compile.h"
#include "filters/syscall_names.h"

namespace vigil {
namespace {

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

// A jump decided on a path: (field & mask) == value, or != value.
struct Fact {
  std::uint32_t off, mask, value;
  bool equal;
};

struct PathState {
  Acc acc;
  std::vector<Fact> facts;
};

bool has_fact(const PathState& s, std::uint32_t off, std::uint32_t mask, std::uint32_t value) {
  for (const Fact& f : s.facts) {
    if (f.equal && f.off == off && f.mask == mask && f.value == value) return true;
  }
  return false;
}

// A jeq whose answer this path already knows (libseccomp tests nr again after a miss).
std::optional<bool> decided_jeq(const PathState& s, std::uint32_t k) {
  for (const Fact& f : s.facts) {
    if (f.off != s.acc.off || f.mask != s.acc.mask) continue;
    if (f.equal) return f.value == k;
    if (f.value == k) return false;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> known_value(const PathState& s) {
  for (const Fact& f : s.facts) {
    if (f.equal && f.off == s.acc.off && f.mask == s.acc.mask) return f.value;
  }
  return std::nullopt;
}

// ---- one pass over every path, collecting rows per instruction ------------------------

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

constexpr std::size_t kMaxPaths = 1 << 16;

bool row_matches(const Analysis& a, const PathState& s, std::size_t r) {
  if (!a.row_nr[r] || !has_fact(s, kNrOff, 0xffffffff, static_cast<std::uint32_t>(*a.row_nr[r]))) {
    return false;
  }
  for (const ArgTest& t : a.rows->rule[r]->when) {
    if (!t.used()) continue;
    const auto lo_mask = static_cast<std::uint32_t>(t.mask);
    const auto hi_mask = static_cast<std::uint32_t>(t.mask >> 32);
    if (lo_mask != 0 && !has_fact(s, lo_off(t.arg), lo_mask, static_cast<std::uint32_t>(t.value))) {
      return false;
    }
    if (hi_mask != 0 &&
        !has_fact(s, hi_off(t.arg), hi_mask, static_cast<std::uint32_t>(t.value >> 32))) {
      return false;
    }
  }
  return true;
}

void note_return(Analysis& a, const PathState& s, std::size_t pc, std::uint32_t k) {
  bool any = false;
  for (std::size_t r = 0; r < a.rows->rule.size(); ++r) {
    if (!row_matches(a, s, r)) continue;
    any = true;
    a.rows_at[pc].insert(r);
    if (seccomp_ret(a.rows->rule[r]->action) == k) a.returned[r] = true;
  }
  if (any) return;
  if (!has_fact(s, kArchOff, 0xffffffff, a.arch)) {
    a.why_at[pc].insert("the call is from a non-native ABI");
  } else if (a.arch == AUDIT_ARCH_X86_64 && k == a.bad_arch) {
    a.why_at[pc].insert("an x32 syscall number (bit 30 set)");
  } else {
    a.why_at[pc].insert("no row matched: the default action");
  }
}

// A compare of an argument half: the rows, on this path's syscall, that test exactly it.
void note_arg_compare(Analysis& a, const PathState& s, std::size_t pc, std::uint32_t k) {
  for (std::size_t r = 0; r < a.rows->rule.size(); ++r) {
    if (!a.row_nr[r] ||
        !has_fact(s, kNrOff, 0xffffffff, static_cast<std::uint32_t>(*a.row_nr[r]))) {
      continue;
    }
    for (const ArgTest& t : a.rows->rule[r]->when) {
      if (!t.used()) continue;
      if ((s.acc.off == lo_off(t.arg) && s.acc.mask == static_cast<std::uint32_t>(t.mask) &&
           k == static_cast<std::uint32_t>(t.value)) ||
          (s.acc.off == hi_off(t.arg) && s.acc.mask == static_cast<std::uint32_t>(t.mask >> 32) &&
           k == static_cast<std::uint32_t>(t.value >> 32))) {
        a.rows_at[pc].insert(r);
      }
    }
  }
}

void walk(Analysis& a, std::size_t pc, PathState s);

void branch(Analysis& a, const PathState& s, std::size_t target, std::optional<Fact> fact) {
  PathState next = s;
  if (fact) next.facts.push_back(*fact);
  walk(a, target, std::move(next));
}

void walk(Analysis& a, std::size_t pc, PathState s) {
  while (pc < a.prog.size()) {
    if (a.paths >= kMaxPaths) {
      a.truncated = true;
      return;
    }
    const sock_filter& in = a.prog[pc];
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        s.acc = (BPF_MODE(in.code) == BPF_ABS && BPF_SIZE(in.code) == BPF_W) ? Acc{in.k, 0xffffffff}
                                                                             : Acc{};
        break;
      case BPF_ALU:
        if (BPF_OP(in.code) == BPF_AND && BPF_SRC(in.code) == BPF_K && s.acc.off != kUnknown) {
          s.acc.mask &= in.k;
        } else {
          s.acc = Acc{};
        }
        break;
      case BPF_RET:
        ++a.paths;
        if (BPF_RVAL(in.code) == BPF_K) note_return(a, s, pc, in.k);
        return;
      case BPF_JMP: {
        const std::size_t next = pc + 1;
        if (BPF_OP(in.code) == BPF_JA) {
          pc = next + in.k;
          continue;
        }
        const std::size_t t = next + in.jt, f = next + in.jf;
        if (BPF_SRC(in.code) != BPF_K || s.acc.off == kUnknown) {
          branch(a, s, t, std::nullopt);
          pc = f;
          continue;
        }
        if (s.acc.off >= kArgsOff) note_arg_compare(a, s, pc, in.k);
        if (BPF_OP(in.code) == BPF_JEQ) {
          if (auto d = decided_jeq(s, in.k)) {
            pc = *d ? t : f;
            continue;
          }
          branch(a, s, t, Fact{s.acc.off, s.acc.mask, in.k, true});
          s.facts.push_back(Fact{s.acc.off, s.acc.mask, in.k, false});
          pc = f;
          continue;
        }
        if (auto v = known_value(s)) {
          bool taken = false;
          if (BPF_OP(in.code) == BPF_JGT) taken = *v > in.k;
          if (BPF_OP(in.code) == BPF_JGE) taken = *v >= in.k;
          if (BPF_OP(in.code) == BPF_JSET) taken = (*v & in.k) != 0;
          pc = taken ? t : f;
          continue;
        }
        branch(a, s, t, std::nullopt);
        pc = f;
        continue;
      }
      default:  // ST/LDX/MISC: libseccomp does not emit them; A's meaning is lost
        s.acc = Acc{};
        break;
    }
    ++pc;
  }
}

// ---- rendering -------------------------------------------------------------------------

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
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

std::string row_ref(const Rows& rows, std::size_t r) {
  return rows.label[r] + " " + describe(*rows.rule[r]);
}

// The compare's meaning, when A's contents are known statically at this instruction.
std::string jump_note(const Analysis& a, const Acc& acc, const sock_filter& in, std::size_t pc) {
  const char* op = BPF_OP(in.code) == BPF_JEQ   ? "=="
                   : BPF_OP(in.code) == BPF_JGE ? ">="
                   : BPF_OP(in.code) == BPF_JGT ? ">"
                                                : "&";
  if (acc.off == kArchOff && BPF_OP(in.code) == BPF_JEQ) {
    return fmt("arch == %s? else the bad-arch action", arch_name(in.k).c_str());
  }
  if (acc.off == kNrOff) {
    if (a.arch == AUDIT_ARCH_X86_64 && BPF_OP(in.code) == BPF_JGE && in.k == kX32Bit) {
      return "nr >= 0x40000000: an x32 syscall, the bad-arch action unless nr is -1";
    }
    if (BPF_OP(in.code) == BPF_JEQ && in.k == 0xffffffff) {
      return "nr == -1: a call a tracer skipped (the kernel answers ENOSYS)";
    }
    std::string name = syscall_name(a.arch, static_cast<int>(in.k));
    std::string s = fmt("nr %s %s", op, name.empty() ? fmt("%u", in.k).c_str() : name.c_str());
    if (BPF_OP(in.code) == BPF_JEQ) {
      std::string rows;
      for (std::size_t r = 0; r < a.rows->rule.size(); ++r) {
        if (a.row_nr[r] && static_cast<std::uint32_t>(*a.row_nr[r]) == in.k) {
          rows += " " + a.rows->label[r];
        }
      }
      if (!rows.empty()) s += (rows.find(' ', 1) == std::string::npos ? ": row" : ": rows") + rows;
    }
    return s;
  }
  if (acc.off == kUnknown) return {};
  std::string s = fmt("%s & 0x%x %s 0x%x", field_name(acc.off).c_str(), acc.mask, op, in.k);
  if (acc.mask == 0 && in.k == 0 && BPF_OP(in.code) == BPF_JEQ) {
    return s + ": always true, the rows compare only the low 32 bits";
  }
  std::string rows;
  for (std::size_t r : a.rows_at[pc]) rows += (rows.empty() ? ": " : ", ") + row_ref(*a.rows, r);
  return s + rows;
}

// A's contents at each instruction, when every path agrees (for the ld/and/jump notes).
std::vector<std::optional<Acc>> static_acc(std::span<const sock_filter> prog) {
  std::vector<std::optional<Acc>> in(prog.size());
  std::vector<bool> reached(prog.size(), false), conflict(prog.size(), false);
  auto flow = [&](std::size_t to, const std::optional<Acc>& acc) {
    if (to >= prog.size()) return;
    if (!reached[to]) {
      reached[to] = true;
      in[to] = acc;
    } else if (!acc || !in[to] || in[to]->off != acc->off || in[to]->mask != acc->mask) {
      conflict[to] = true;
    }
  };
  if (!prog.empty()) flow(0, Acc{});
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    if (conflict[pc]) in[pc] = std::nullopt;
    std::optional<Acc> acc = in[pc];
    const sock_filter& i = prog[pc];
    switch (BPF_CLASS(i.code)) {
      case BPF_LD:
        acc = (BPF_MODE(i.code) == BPF_ABS && BPF_SIZE(i.code) == BPF_W) ? Acc{i.k, 0xffffffff}
                                                                         : Acc{};
        flow(pc + 1, acc);
        break;
      case BPF_ALU:
        if (acc && BPF_OP(i.code) == BPF_AND && BPF_SRC(i.code) == BPF_K) {
          acc->mask &= i.k;
        } else {
          acc = Acc{};
        }
        flow(pc + 1, acc);
        break;
      case BPF_RET:
        break;
      case BPF_JMP:
        if (BPF_OP(i.code) == BPF_JA) {
          flow(pc + 1 + i.k, acc);
        } else {
          flow(pc + 1 + i.jt, acc);
          flow(pc + 1 + i.jf, acc);
        }
        break;
      default:
        flow(pc + 1, Acc{});
        break;
    }
  }
  return in;
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

// Everything but the header line: the table, the instructions, the warnings.
Disassembly render(const Rows& rows, std::string_view title, FilterAction def,
                   FilterAction bad_arch, std::span<const sock_filter> program) {
  Analysis a;
  a.rows = &rows;
  a.bad_arch = seccomp_ret(bad_arch);
  a.prog = program;
  a.arch = native_audit_arch();
  for (const FilterRule* r : rows.rule) a.row_nr.push_back(native_syscall_number(r->syscall));
  a.rows_at.resize(program.size());
  a.why_at.resize(program.size());
  a.returned.assign(rows.rule.size(), false);
  walk(a, 0, PathState{});
  const auto acc_at = static_acc(program);

  const scmp_version* v = seccomp_version();
  std::string out(title);
  out += fmt("# libseccomp %u.%u.%u, %s, %zu instructions; default %s; non-native ABI %s\n",
             v->major, v->minor, v->micro, arch_name(a.arch).c_str(), program.size(),
             describe(def).c_str(), describe(bad_arch).c_str());
  for (std::size_t r = 0; r < rows.rule.size(); ++r) {
    const FilterRule& row = *rows.rule[r];
    out += fmt("# %3s %s -> %s: %.*s\n", rows.label[r].c_str(), describe(row).c_str(),
               describe(row.action).c_str(), static_cast<int>(row.why.size()), row.why.data());
  }
  for (std::size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& in = program[pc];
    std::string note;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS) note = "A = " + field_name(in.k);
        break;
      case BPF_ALU:
        if (acc_at[pc] && acc_at[pc]->off != kUnknown && BPF_OP(in.code) == BPF_AND) {
          note = fmt("A = %s & 0x%x", field_name(acc_at[pc]->off).c_str(), acc_at[pc]->mask & in.k);
        }
        break;
      case BPF_JMP:
        if (BPF_OP(in.code) != BPF_JA && BPF_SRC(in.code) == BPF_K && acc_at[pc]) {
          note = jump_note(a, *acc_at[pc], in, pc);
        }
        break;
      case BPF_RET:
        if (BPF_RVAL(in.code) == BPF_K) note = action_name(in.k);
        break;
      default:
        break;
    }
    std::string line = fmt("%04zu: %s", pc, mnemonic(in, pc).c_str());
    if (!note.empty()) line = fmt("%-48s ; %s", line.c_str(), note.c_str());
    out += line + "\n";
    if (BPF_CLASS(in.code) != BPF_RET) continue;
    // A return's rows, each with its rationale: why the call ends here.
    for (const std::string& why : a.why_at[pc]) out += fmt("%48s ;   <- %s\n", "", why.c_str());
    for (std::size_t r : a.rows_at[pc]) {
      const FilterRule& row = *rows.rule[r];
      const bool own = seccomp_ret(row.action) == in.k;
      out += fmt("%48s ;   <- %s: %.*s%s\n", "", row_ref(rows, r).c_str(),
                 static_cast<int>(row.why.size()), row.why.data(),
                 own ? "" : " (overridden: the row asks for another action)");
    }
  }
  Disassembly d;
  for (std::size_t r = 0; r < rows.rule.size(); ++r) {
    if (!a.returned[r]) d.rows_never_returned.push_back(r);
  }
  if (a.truncated) out += fmt("# row notes incomplete: more than %zu paths\n", kMaxPaths);
  for (std::size_t r : d.rows_never_returned) {
    out += "# WARNING: no path returns " + row_ref(rows, r) + " with its action\n";
  }
  d.text = std::move(out);
  return d;
}

std::string sv(std::string_view s) { return std::string(s); }

}  // namespace

Disassembly disassemble(const FilterSpec& spec, std::span<const sock_filter> program) {
  Rows rows;
  for (std::size_t r = 0; r < spec.rules.size(); ++r) {
    rows.rule.push_back(&spec.rules[r]);
    // Not "#" + std::to_string(...): gcc 12 at -O3 reports a false -Wrestrict on a literal
    // prepended to a temporary string (GCC PR 105329).
    rows.label.push_back(std::string("#").append(std::to_string(r + 1)));
  }
  const std::string title = "# filter \"" + sv(spec.name) + "\": " + sv(spec.purpose) + "\n";
  return render(rows, title, spec.default_action, spec.bad_arch, program);
}

Disassembly disassemble_combined(std::span<const FilterSpec* const> specs,
                                 std::span<const sock_filter> program) {
  Rows rows;
  std::string names;
  for (const FilterSpec* spec : specs) {
    names += (names.empty() ? "" : " + ") + sv(spec->name);
    for (std::size_t r = 0; r < spec->rules.size(); ++r) {
      rows.rule.push_back(&spec->rules[r]);
      rows.label.push_back(sv(spec->name) + "#" + std::to_string(r + 1));
    }
  }
  if (specs.empty()) return render(rows, "# no filters\n", allow_action(), allow_action(), program);
  const std::string title = "# combined filter: " + names + " as one program\n";
  return render(rows, title, specs[0]->default_action, specs[0]->bad_arch, program);
}

Result<std::string> explain_filters(FilterLayout layout) {
  std::string out = "# the seccomp filters vigil-init's worker installs";
  if (layout == FilterLayout::kCombined) {
    auto prog = compile_combined(worker_filters());
    VIGIL_TRY(prog);
    return out + ", as one program\n\n" + disassemble_combined(worker_filters(), *prog).text;
  }
  auto compiled = compile_filters(worker_filters());
  VIGIL_TRY(compiled);
  out += ", in order; the kernel runs all of them and the strictest answer wins\n";
  for (const CompiledFilter& c : *compiled) {
    out += '\n';  // appended apart: see the -Wrestrict note in disassemble()
    out += disassemble(*c.spec, c.program).text;
  }
  return out;
}

}  // namespace vigil
