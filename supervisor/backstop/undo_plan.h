// `vigil undo`'s plan (issues 17, 32): from a session's change set (supervisor/log/
// change_model.h, built by replay/change_set.h) and what each path is on the host now, the
// steps that put every path back as it was before the session (or before one command of
// it): restore pre-images, remove what the session made, re-make what it removed, move
// renamed things back. Pure: the host and the content store are functions; undo_apply.h
// looks and acts, cli/undo_command.cc is the shell.
//
// Plan first, then act (issue 32): make_plan() checks every step before anything is
// touched: each path normal and in the session's host scope, each pre-image to restore
// present in the store and matching its hash, each path as the session left it (else a
// conflict, refused unless forced), each parent reachable without a symlink. If any step
// fails a check the plan is refused whole: nothing is removed that could not be put back.
//
// Only paths an allowed, successful write of the session named are acted on (an image
// alone, which the sandbox's vigil-init sends, is not enough).
//
// A path that changed on the host since the session ended (what is there now is not the
// session's post-image) is a conflict: left alone unless forced. Steps run newest change
// first (by the log's seq), so a directory the session made is emptied before it is
// removed, and one it removed is back before what was in it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/log/change_model.h"

namespace vigil::undo {

// What is at a path now, taken without following any symlink on the way.
struct HostState {
  std::string type;  // "absent", "file", "symlink", "dir", "other", or "unreachable"
  std::string sha256;  // file
  std::string target;  // symlink
  std::string why;     // unreachable: why (a symlink on the way, EACCES)
};
using LookFn = std::function<HostState(const std::string& path)>;

enum class Op {
  kRemove,      // unlink `path` (file, symlink, other)
  kRemoveDir,   // rmdir `path` (fails if something not of the session is in it)
  kRestore,     // put `want` at `path` (a file from the store, a symlink), replacing
  kMakeDir,     // mkdir `path`
  kRenameBack,  // rename `path` to `to` (never over something)
};
const char* to_string(Op op);

struct Step {
  Op op = Op::kRestore;
  std::string path;
  std::string to;           // kRenameBack
  changes::State want;      // kRestore: the before image
  std::uint64_t order = 0;  // the change's last seq
  std::string conflict;     // not empty: why it is left alone (unless --force)
  std::string cannot;       // not empty: why it cannot be done at all (not captured)
};

// The steps, newest change first. `only`: absolute paths (a directory: what is below it)
// as replay's; empty = every change. `force`: conflicts are planned as steps too (their
// `conflict` still says why).
std::vector<Step> plan_undo(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                            const LookFn& look);

// Whether the store holds `image`'s content, whole and matching its hash: "" if so, else
// why not ("not in the store (...)", "the stored copy does not match its hash (...)").
using CheckFn = std::function<std::string(const events::FsImage& image)>;

// Refused: the whole plan is not carried out. Each says which path, why, and what the
// user can do.
struct Refusal {
  std::string path;
  std::string why;
  std::string fix;
};

struct Plan {
  std::vector<Step> steps;  // newest change first; all checked
  std::vector<Refusal> refused;  // not empty: nothing is to be done
  std::size_t times_only = 0;   // paths only touched (times): nothing to put back
  bool ok() const { return refused.empty(); }
};

// The checked plan. `force`: a conflict (the path changed on the host since) is planned
// over instead of refused. `check` reads each pre-image the plan would restore.
Plan make_plan(const changes::ChangeSet& cs, const std::vector<std::string>& only,
               const LookFn& look, const CheckFn& check, bool force);

// "restore /w/a" / "move back /w/b -> /w/a" (raw: escape when shown).
std::string step_text(const Step& s);

// Whether `now` is the session's `after` (files by hash, symlinks by target); "" if so,
// else why not.
std::string mismatch(const std::optional<changes::State>& after, const HostState& now);

}  // namespace vigil::undo
