// The one place that decides what a path may be: a pure function of the policy (and of
// the protected paths the mandatory-deny scan found). It first turns the policy into a
// layered plan -- the ordered list of mask/bind operations that bubblewrap will perform --
// and then answers "may PATH be read / written, and why?" by finding the last operation
// that covers PATH. Because bwrap/, seatbelt/ and `vigil explain` all consume this same
// plan, what explain says is what the mount table does.
//
// Precedence (srt's, made exact):
//  * reads are open by default; denyRead hides a subtree; allowRead re-opens a path that
//    lies inside a hidden region; a writable root re-opens its subtree too.
//  * writes are closed by default; allowWrite opens a subtree; denyWrite and the mandatory
//    denies close it again and always win: a writable root under a denied one is dropped.
//  * inside a hidden (denyRead) directory, writes land on a throwaway tmpfs: "ephemeral".
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

// A mandatory-deny target found by the scan, or a missing one that must be blocked so it
// cannot be created (a placeholder). Absolute, symlink-resolved.
struct ProtectedPath {
  std::string path;
  const MandatoryDeny* rule = nullptr;
  bool exists = true;
  DenyShape shape = DenyShape::kFile;  // what to put there when it does not exist
  bool operator==(const ProtectedPath&) const = default;
};

enum class OpKind {
  kHide,        // denyRead: tmpfs over a directory, /dev/null over a file
  kReopenRead,  // allowRead inside a hidden region: read-only bind of the host path
  kWritable,    // allowWrite / session temp dir: read-write bind of the host path
  kPin,         // read-write self-bind of an ancestor of a write-denied path, so that the
                // ancestor is a mount point and cannot be renamed away (EBUSY)
  kDenyWrite,   // denyWrite / mandatory deny: read-only bind (or placeholder when missing)
};

struct PlanOp {
  OpKind kind;
  std::string path;    // absolute, symlink-resolved: where the mount goes
  std::string origin;  // "filesystem.denyWrite[0]", "mandatory: .git/hooks", "default: ..."
  std::string why;     // one line for explain and for violation reasons
  bool exists = true;  // false: a placeholder blocks creation of a missing deny target
  DenyShape shape = DenyShape::kDir;
  // A missing denyWrite target that vigil-init refuses to create at the call: no mount
  // (bwrap/argv_builder.h skips it) and no pins, but decide() and explain still see it.
  bool at_call = false;
  bool operator==(const PlanOp&) const = default;
};

struct Plan {
  std::vector<PlanOp> ops;         // in mount order (parents before children)
  std::vector<std::string> notes;  // rules that had no effect, and why
  bool operator==(const Plan&) const = default;
};

Plan build_plan(const Policy& policy, std::span<const ProtectedPath> protected_paths);

// The plan's order: shallower paths first; at equal depth hide < re-open < writable < pin
// < deny-write, so the more restrictive layer of the same path is applied last (and, in a
// Seatbelt profile, matched last). Shared with seatbelt/ so both platforms layer alike.
bool mount_order_less(std::string_view path_a, OpKind a, std::string_view path_b, OpKind b);

// A write's verdict, the one type for it: the plan's (decide()), vigil-init's mount table's
// (observer/mount_table.h: WriteVerdict is this type) and fs.write's. A connection's is
// NetVerdict (core/events/net.h), which says why it is another type.
enum class Verdict { kAllowed, kDenied, kEphemeral };
enum class Access { kRead, kWrite };

struct Decision {
  Verdict verdict;
  std::string rule;    // the origin of the deciding op, or "default"
  std::string reason;  // model-facing: why, and what to do instead where there is something
};

// `path` must be absolute; it is normalised lexically. Callers that start from a user's
// spelling should resolve symlinks first (resolve_symlinks) -- the mount table follows them.
Decision decide(const Plan& plan, std::string_view path, Access access);

// "allowed" | "denied" | "ephemeral": fs.write's verdict. Inline: vigil-init names its
// verdicts with it too (observer/mount_table.h) and links nothing else of this file.
inline const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kAllowed:
      return "allowed";
    case Verdict::kDenied:
      return "denied";
    case Verdict::kEphemeral:
      return "ephemeral";
  }
  return "?";
}
const char* to_string(OpKind k);

}  // namespace vigil
