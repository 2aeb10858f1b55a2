// The end of a command, said once for both platforms: the <sandbox_violations> block goes
// after everything the command printed, on its own line, and the log records it as
// delivered (with whether a newline went first, so that replay shows the exact bytes).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "supervisor/command/command_types.h"

namespace vigil {

// Whether a newline goes before the block. Output vigil did not capture (the command
// wrote to the terminal itself, as always on macOS) may end anywhere: always. Captured:
// only when its last stderr byte was not one.
bool block_needs_newline(bool captured, bool stderr_ends_line);

// Writes the block (after a newline when `newline_before`) in one piece through `write`,
// then logs it as delivered. Nothing when the block is empty.
void deliver_block(CommandRecord& record, const std::string& block, bool newline_before,
                   const std::function<void(std::string_view)>& write);

}  // namespace vigil
