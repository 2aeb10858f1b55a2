// Exported seccomp BPF -> text a reviewer can check against the table: every instruction,
// each syscall compare named, each argument compare and each return annotated with the
// table row(s) it came from (and the row's rationale). `vigil explain --filters` prints
// it, and tests/data/filters/*.txt hold it as golden files, so a filter change is a diff.
// Pure apart from libseccomp's name lookups; thread-safe; allocates (never after fork).
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "filters/filter_specs.h"
#include "supervisor/core/base/result.h"

namespace vigil {

struct Disassembly {
  std::string text;
  // Rows (0-based) that no path through the program returns from with the row's own
  // action: a row the BPF lost. Empty for a sound compile; tests assert so.
  std::vector<std::size_t> rows_never_returned;
};

// Reads `program` as compiled from `spec` for the native architecture.
Disassembly disassemble(const FilterSpec& spec, std::span<const sock_filter> program);

// Reads `program` as compile_combined(specs) made it; rows are labelled "unix-block#3",
// and rows_never_returned indexes the specs' rows in order, concatenated.
Disassembly disassemble_combined(std::span<const FilterSpec* const> specs,
                                 std::span<const sock_filter> program);

// Every worker filter compiled and disassembled, the way vigil-init installs them: one
// program per table (kStack), or all tables in one program (kCombined).
enum class FilterLayout { kStack, kCombined };
Result<std::string> explain_filters(FilterLayout layout = FilterLayout::kStack);

}  // namespace vigil
