#include "supervisor/odd_mounts.h"

#include "supervisor/core/path_expand.h"

namespace vigil {
namespace {

// Why a mount is odd, or "" for an ordinary one.
std::string oddness(const init::Mount& m) {
  const std::string_view type = m.fstype;
  if (type == "proc" && m.mount_point != "/proc") return "another root's /proc";
  if (type == "sysfs" && m.mount_point != "/sys") return "another root's /sys";
  if (type == "overlay") return "an overlay (a container's root)";
  if (type.starts_with("fuse")) return "a FUSE filesystem (gvfs, sshfs, ...)";
  if (type == "squashfs") return "a squashfs image (a snap)";
  return "";
}

}  // namespace

std::vector<OddMount> find_odd_mounts(const std::vector<init::Mount>& host) {
  std::vector<OddMount> out;
  for (const auto& m : host) {
    bool folded = false;
    for (const auto& o : out) folded = folded || path_is_under(m.mount_point, o.mount_point);
    if (folded) continue;
    std::string what = oddness(m);
    if (!what.empty()) out.push_back({m.mount_point, m.fstype, std::move(what)});
  }
  return out;
}

}  // namespace vigil
