#include "supervisor/command/block_delivery.h"

namespace vigil {

bool block_needs_newline(bool captured, bool stderr_ends_line) {
  return !captured || !stderr_ends_line;
}

void deliver_block(CommandRecord& record, const std::string& block, bool newline_before,
                   const std::function<void(std::string_view)>& write) {
  if (block.empty()) return;
  write((newline_before ? "\n" : "") + block);
  record.log_annotation(block, newline_before);
}

}  // namespace vigil
