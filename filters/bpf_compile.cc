#include "filters/bpf_compile.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "filters/syscall_names.h"

namespace vigil {
namespace {

// seccomp_ret() speaks the kernel ABI; libseccomp must agree, or a table would compile
// to something other than what the disassembler and tests read back.
static_assert(SCMP_ACT_ALLOW == SECCOMP_RET_ALLOW);
static_assert(SCMP_ACT_KILL_PROCESS == SECCOMP_RET_KILL_PROCESS);
static_assert(SCMP_ACT_NOTIFY == SECCOMP_RET_USER_NOTIF);
static_assert(SCMP_ACT_ERRNO(1) == (SECCOMP_RET_ERRNO | 1));

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

// One row to add, and the table it came from (for error messages).
struct RowRef {
  const FilterSpec* spec;
  std::size_t index;
  const FilterRule& rule() const { return spec->rules[index]; }
};

Error row_error(const RowRef& row, const std::string& what) {
  return make_error(Errc::kInternal, "seccomp filter " + std::string(row.spec->name) + ", row " +
                                         std::to_string(row.index + 1) + " (" +
                                         describe(row.rule()) + "): " + what);
}

Result<void> add_row(const Ctx& ctx, const RowRef& row) {
  const FilterRule& r = row.rule();
  const std::optional<int> nr = native_syscall_number(r.syscall);
  if (!nr) return row_error(row, "no such syscall on " + arch_name(native_audit_arch()));
  scmp_arg_cmp cmps[kMaxArgTests];
  unsigned n = 0;
  for (const ArgTest& t : r.when) {
    if (!t.used()) continue;
    if (t.arg > 5) return row_error(row, "argument index out of range");
    cmps[n++] = scmp_arg_cmp{static_cast<unsigned>(t.arg), SCMP_CMP_MASKED_EQ, t.mask, t.value};
  }
  // _exact: libseccomp must not rewrite a rule (e.g. into socketcall) behind our back.
  const int rc = seccomp_rule_add_exact_array(ctx.get(), seccomp_ret(r.action), *nr, n, cmps);
  if (rc < 0) return row_error(row, std::string("libseccomp: ") + std::strerror(-rc));
  return {};
}

Result<std::vector<sock_filter>> export_bpf(const Ctx& ctx, std::string_view name) {
  // libseccomp 2.5 exports only to an fd (seccomp_export_bpf_mem is 2.6).
  UniqueFd mem(::memfd_create("vigil-seccomp-bpf", MFD_CLOEXEC));
  if (!mem) return system_error("memfd_create");
  const int rc = seccomp_export_bpf(ctx.get(), mem.get());
  if (rc < 0) {
    return make_error(Errc::kInternal,
                      "seccomp filter " + std::string(name) + ": export: " + std::strerror(-rc));
  }
  const off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size < 0) return system_error("lseek on the BPF memfd");
  const auto bytes = static_cast<std::size_t>(size);
  if (bytes == 0 || bytes % sizeof(sock_filter) != 0 ||
      bytes / sizeof(sock_filter) > BPF_MAXINSNS) {
    return make_error(Errc::kInternal, "seccomp filter " + std::string(name) +
                                           ": exported BPF has an impossible size " +
                                           std::to_string(bytes));
  }
  std::vector<sock_filter> program(bytes / sizeof(sock_filter));
  if (::pread(mem.get(), program.data(), bytes, 0) != size) return system_error("pread BPF");
  return program;
}

// `rows` into one program with `def` for calls no row matches.
Result<std::vector<sock_filter>> compile_rows(std::string_view name, FilterAction def,
                                              FilterAction bad_arch, std::span<const RowRef> rows) {
  Ctx ctx(seccomp_init(seccomp_ret(def)));
  if (!ctx) return make_error(Errc::kInternal, "seccomp_init failed");
  // The arch check is per program, so each filter stands alone even if another is
  // dropped. libseccomp's x86_64 arch block also sends every x32 number (bit 30 set)
  // here: the golden disassembly shows the jge #0x40000000.
  const int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, seccomp_ret(bad_arch));
  if (rc < 0) {
    return make_error(Errc::kInternal, "seccomp filter " + std::string(name) +
                                           ": bad-arch action: " + std::strerror(-rc));
  }
  for (const RowRef& row : rows) {
    auto added = add_row(ctx, row);
    VIGIL_TRY(added);
  }
  return export_bpf(ctx, name);
}

}  // namespace

Result<std::vector<sock_filter>> compile_filter(const FilterSpec& spec) {
  std::vector<RowRef> rows;
  for (std::size_t i = 0; i < spec.rules.size(); ++i) rows.push_back(RowRef{&spec, i});
  return compile_rows(spec.name, spec.default_action, spec.bad_arch, rows);
}

Result<std::vector<sock_filter>> compile_combined(std::span<const FilterSpec* const> specs) {
  if (specs.empty()) return make_error(Errc::kInternal, "no seccomp filters to combine");
  std::vector<RowRef> rows;
  std::string name;
  for (const FilterSpec* spec : specs) {
    // Appended piece by piece: `(cond ? "" : "+") + std::string(...)` makes gcc 12 at -O3
    // report a false -Wrestrict in the inlined string concatenation.
    if (!name.empty()) name += '+';
    name += spec->name;
    if (spec->default_action != specs[0]->default_action || spec->bad_arch != specs[0]->bad_arch) {
      return make_error(Errc::kInternal, "seccomp filters " + std::string(specs[0]->name) +
                                             " and " + std::string(spec->name) +
                                             " differ in default or bad-arch action: "
                                             "they cannot share one program");
    }
    for (std::size_t i = 0; i < spec->rules.size(); ++i) {
      for (const RowRef& seen : rows) {
        // Two tables on one syscall: the stack answers with the strictest of the two,
        // one program with whichever rule libseccomp orders first. Refuse the guess.
        if (seen.spec != spec && seen.rule().syscall == spec->rules[i].syscall) {
          return row_error(RowRef{spec, i}, "filter " + std::string(seen.spec->name) +
                                                " also has rows for this syscall; they "
                                                "cannot be combined");
        }
      }
      rows.push_back(RowRef{spec, i});
    }
  }
  return compile_rows(name, specs[0]->default_action, specs[0]->bad_arch, rows);
}

Result<std::vector<CompiledFilter>> compile_filters(std::span<const FilterSpec* const> specs) {
  std::vector<CompiledFilter> out;
  for (const FilterSpec* spec : specs) {
    auto prog = compile_filter(*spec);
    VIGIL_TRY(prog);
    out.push_back(CompiledFilter{spec, std::move(*prog)});
  }
  return out;
}

sock_fprog as_fprog(const std::vector<sock_filter>& program) {
  // seccomp() takes a non-const pointer but never writes through it.
  return sock_fprog{static_cast<unsigned short>(program.size()),
                    const_cast<sock_filter*>(program.data())};
}

long install_raw(const sock_fprog& prog, unsigned flags) noexcept {
  const long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  return rc < 0 ? -errno : rc;
}

Result<void> install(const std::vector<sock_filter>& program, unsigned flags) {
  const long rc = install_raw(as_fprog(program), flags);
  if (rc < 0) return system_error("seccomp(SECCOMP_SET_MODE_FILTER)", static_cast<int>(-rc));
  return {};
}

Result<UniqueFd> install_with_listener(const std::vector<sock_filter>& program, unsigned flags) {
  const long rc = install_raw(as_fprog(program), flags | SECCOMP_FILTER_FLAG_NEW_LISTENER);
  if (rc < 0) {
    return system_error("seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER)", static_cast<int>(-rc));
  }
  return UniqueFd(static_cast<int>(rc));
}

}  // namespace vigil
