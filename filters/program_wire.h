// How the sandbox's seccomp program travels from the supervisor to vigil-init
// (filters/sandbox_program.h says why): one message, one direction, then EOF.
//
// Wire format: the 8 bytes "VIGILBPF", a 32-bit little-endian instruction count, then that
// many struct sock_filter in host order (the supervisor and vigil-init are built together,
// for one machine). Nothing else.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil {

// The kernel's own limit on a classic BPF program.
inline constexpr std::size_t kMaxProgramInstructions = BPF_MAXINSNS;
inline constexpr std::size_t kMaxProgramWireBytes = 12 + 8 * kMaxProgramInstructions;

// Pure. encode_program refuses an empty program or one over the limit.
Result<std::string> encode_program(std::span<const sock_filter> program);
// Pure: the exact bytes of one message, or a one-line reason (short, long, bad magic,
// count of zero or over the limit, a length that disagrees with the count).
Result<std::vector<sock_filter>> decode_program(std::string_view bytes);

// Reads `fd` to EOF (at most kMaxProgramWireBytes + 1 bytes) and decodes it. Blocks until
// the writer closes its end.
Result<std::vector<sock_filter>> read_program(int fd);

}  // namespace vigil
