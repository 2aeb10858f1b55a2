// The grouping of a <sandbox_violations> block's denials (annotation.cc): one line per
// cause and directory tree, coarsened until the lines fit the block. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "supervisor/report/violation.h"

namespace vigil {

// Denials of one cause in one directory tree: one line of the block.
struct DenialGroup {
  const Violation* first = nullptr;  // the earliest; its reason is the group's
  std::string_view dir;              // "" = not grouped (a net target, a relative path)
  std::vector<const Violation*> members;
  std::uint64_t attempts = 0;
  std::uint16_t actions = 0;
};

// Groups of the denials by (kind, reason, directory), at most `slots` of them where the
// directories allow (a group never climbs to "/"). The groups point into `denied`.
std::vector<DenialGroup> group_denials(const std::deque<Violation>& denied, std::size_t slots);

}  // namespace vigil
