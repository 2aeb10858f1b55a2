#include "supervisor/launch/odd_mounts.h"

#include <nlohmann/json.hpp>

#include "supervisor/core/policy/path_expand.h"

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

bool harmless_when_writable(std::string_view type) {
  return type == "tmpfs" || type == "devtmpfs" || type == "proc" || type == "devpts" ||
         type == "mqueue";
}

void judge_in_trial(const std::vector<init::Mount>& host, const std::vector<init::Mount>& trial,
                    std::vector<OddMount>* odd) {
  auto writable_at_or_under = [&](const std::string& point, bool* seen) {
    bool writable = false;
    for (const auto& t : trial) {
      if (!path_is_under(t.mount_point, point)) continue;
      if (t.mount_point == point) *seen = true;
      writable = writable || (!t.read_only && !harmless_when_writable(t.fstype));
    }
    return writable;
  };
  for (auto& o : *odd) {
    bool seen = false;
    const bool writable = writable_at_or_under(o.mount_point, &seen);
    if (seen) o.trial = writable ? OddMount::Trial::kWritable : OddMount::Trial::kReadOnly;
  }
  for (const auto& t : trial) {
    if (t.read_only || t.mount_point == "/" || harmless_when_writable(t.fstype)) continue;
    // bwrap's own: its /dev, its fresh /proc (the kernel masks are vigil's, not here).
    if (path_is_under(t.mount_point, "/dev") || path_is_under(t.mount_point, "/proc")) continue;
    bool from_host = false;
    for (const auto& h : host) from_host = from_host || h.mount_point == t.mount_point;
    bool listed = false;
    for (const auto& o : *odd) listed = listed || path_is_under(t.mount_point, o.mount_point);
    if (!from_host || listed) continue;
    odd->push_back({t.mount_point, t.fstype, "a host mount", OddMount::Trial::kWritable});
  }
}

std::string writable_mount_fix(const std::string& mount_point) {
  return "bwrap left it writable in a trial sandbox, so `vigil run` refuses to start while it "
         "is mounted: add " +
         nlohmann::json(mount_point).dump() +
         " to filesystem.denyRead (a tmpfs hides it), or unmount it (sudo umount -R " +
         mount_point + ")";
}

}  // namespace vigil
