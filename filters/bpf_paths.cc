#include "filters/bpf_paths.h"

#include <linux/audit.h>

#include "filters/bpf_compile.h"
#include "filters/syscall_names.h"

namespace vigil::bpf {
namespace {

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

}  // namespace

Analysis analyze(const Rows& rows, FilterAction bad_arch, std::span<const sock_filter> program) {
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
  return a;
}

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

}  // namespace vigil::bpf
