#include "filters/bpf_disasm.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "filters/bpf_compile.h"
#include "filters/bpf_mnemonic.h"
#include "filters/bpf_paths.h"
#include "filters/syscall_names.h"

namespace vigil {
namespace {

using bpf::Acc;
using bpf::action_name;
using bpf::analyze;
using bpf::Analysis;
using bpf::field_name;
using bpf::fmt;
using bpf::kArchOff;
using bpf::kMaxPaths;
using bpf::kNrOff;
using bpf::kUnknown;
using bpf::kX32Bit;
using bpf::mnemonic;
using bpf::Rows;
using bpf::static_acc;

// ---- rendering: the table, then each instruction with what it means --------------------

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

// Everything but the header line: the table, the instructions, the warnings.
Disassembly render(const Rows& rows, std::string_view title, FilterAction def,
                   FilterAction bad_arch, std::span<const sock_filter> program) {
  const Analysis a = analyze(rows, bad_arch, program);
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
