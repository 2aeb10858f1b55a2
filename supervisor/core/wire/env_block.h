// The command's environment on its way into the sandbox (vigil-init's --env-fd N): bwrap
// and vigil-init run with vigil's own minimal environment, so nothing the caller put in
// the command's environment (LD_PRELOAD, LD_LIBRARY_PATH, GCONV_PATH, ...) is seen by a
// process on the host side or by the sandbox's PID 1; vigil-init reads the block from a
// sealed memfd and makes it the worker's environment just before the command's exec.
//
// The block: each "NAME=value" entry followed by a NUL.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::wire {

// At most this many bytes (far above what execve(2) takes).
inline constexpr std::size_t kMaxEnvBlock = std::size_t{16} << 20;

// Pure. Entries without '=' or with a NUL inside are left out (execve could not pass them).
std::string encode_env_block(const std::vector<std::string>& env);
// Pure: refuses a last entry without its NUL and an entry without '=' or with an empty name.
Result<std::vector<std::string>> decode_env_block(std::string_view block);

// What bwrap itself and vigil-init run with: vigil's own, nothing of the caller's.
std::vector<std::string> host_helper_environment();

}  // namespace vigil::wire
