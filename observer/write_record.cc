#include "observer/write_record.h"

#include <cerrno>
#include <cstring>

#include "filters/syscall_names.h"
#include "observer/event_line.h"

namespace vigil::init {
namespace {

std::string errno_name(int err) {
  if (err == 0) return "0";
  const char* n = ::strerrorname_np(err);
  return n != nullptr ? n : "E" + std::to_string(err);
}

}  // namespace

// The verdict is the call's result: success is allowed (or ephemeral: a write that lands
// in a session-only mount); EROFS, and EACCES/EPERM where the mount table or vigil-init
// refused, are denied; every other failure (EEXIST, ENOENT, ENOTEMPTY, ...) is an
// ordinary result of the command's own making and never reaches the block.
Judgement judge_result(const std::vector<Mount>& mounts, const std::string& resolved,
                       const std::string& from_resolved, int error,
                       const std::string& refused_why) {
  if (!refused_why.empty()) return {WriteVerdict::kDenied, refused_why};
  auto classify = [&](const std::string& path) {
    return path.empty() || path[0] != '/'
               ? Classified{WriteVerdict::kAllowed, "not a path in the sandbox", {}}
               : classify_write(mounts, path);
  };
  Classified c = classify(resolved);
  if (error < 0) return {c.verdict, std::move(c.reason)};  // continued: the mount table's view
  if (error == 0) {
    if (c.verdict == WriteVerdict::kDenied)
      return {WriteVerdict::kAllowed, "the call succeeded (writable here)"};
    return {c.verdict, std::move(c.reason)};
  }
  // A refusal the mount layout makes: EROFS always; EACCES, EPERM, EXDEV (a link or
  // rename across the sandbox's mounts) and EBUSY (a rename onto, or unlink of, a
  // protected file's read-only bind: a mount point) when the target or the source is in
  // a read-only place.
  if (c.verdict != WriteVerdict::kDenied && !from_resolved.empty()) {
    Classified f = classify(from_resolved);
    if (f.verdict == WriteVerdict::kDenied) c = {f.verdict, f.reason + " (the source)", f.mount_point};
  }
  if (error == EROFS) {
    if (c.verdict != WriteVerdict::kDenied) c.reason = "read-only file system";
    return {WriteVerdict::kDenied, std::move(c.reason)};
  }
  if ((error == EACCES || error == EPERM || error == EXDEV || error == EBUSY) &&
      c.verdict == WriteVerdict::kDenied)
    return {WriteVerdict::kDenied, std::move(c.reason)};
  return {WriteVerdict::kAllowed, "the call failed with " + errno_name(error) +
                                      ": its own result, not the sandbox's refusal"};
}

// One fs.write line. `error`: the call's result (-1: it continued, the kernel's result is
// not seen); `refused`: why vigil-init refused it, if it did.
void record_write(std::string* out, const std::vector<Mount>& mounts, const Notification& n,
                  const CallPlan& plan, const Performed& done, int error,
                  const std::string& refused, bool witnessed) {
  const WriteSyscall* row = plan.row;
  const std::string fallback = row != nullptr ? std::string() : syscall_name(n.arch, n.nr);
  Judgement j =
      judge_result(mounts, done.resolved, done.from_resolved, witnessed ? -1 : error, refused);
  // A pipe, a socket or a memfd reached through /dev/fd/N: no name in the tree, so
  // `resolved` stays empty (it must be absolute) and the reason says what it was.
  const bool not_a_path = !done.resolved.empty() && done.resolved[0] != '/';
  if (not_a_path) j.reason = done.resolved + ": not a file in the sandbox's tree";
  const std::string path = plan.on_fd && plan.target.path.empty()
                               ? "fd " + std::to_string(plan.target.dirfd)
                               : plan.target.path;
  EventLine ev(out, "fs.write");
  ev.number("pid", n.pid)
      .bytes("syscall", row != nullptr ? row->name : std::string_view(fallback))
      .bytes("path", path)
      .unsigned_number("flags", plan.flags);
  if (plan.has_from) {
    ev.bytes("from", plan.from.path);
    if (!done.from_resolved.empty() && done.from_resolved[0] == '/')
      ev.bytes("from_resolved", done.from_resolved);
  }
  ev.bytes("resolved", not_a_path ? std::string_view() : std::string_view(done.resolved))
      .bytes("verdict", to_string(j.verdict))
      .bytes("reason", j.reason);
  if (!witnessed && error >= 0) ev.bytes("result", errno_name(error));
  ev.finish();
}

}  // namespace vigil::init
