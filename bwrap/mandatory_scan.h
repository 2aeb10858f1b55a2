// The mandatory-deny scan: finds, below one writable root, the existing entries that
// must stay write-denied (see supervisor/core/policy/mandatory_denies.h), so the bwrap argv
// builder can cap each with a read-only mount.
//
// It is its own small walker rather than ripgrep or std::filesystem: it never follows
// a symlink below the root, never descends into .git, ignores .gitignore (nothing may
// hide an entry from it), is bounded in depth and entry count, and reports every
// failure as a value.
//
// The scan is a snapshot taken on the host before the sandbox starts: an entry created
// after it (by anyone) is not covered by its hits.
//
// Thread safety: scan_mandatory_denies() is reentrant (no shared mutable state) and may
// run on several roots at once. It allocates, so it is not for a forked child or PID 1.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/base/result.h"

namespace vigil {

struct ScanHit {
  enum class Type { kFile, kDir, kSymlink, kOther };

  // Absolute path of the entry that exists: "/w/a/.git/hooks". When the way to a
  // two-component rule's target passes a symlink (".git" -> elsewhere), the hit is that
  // symlink ("/w/a/.git", Type::kSymlink): what lies behind it was not verified.
  std::string path;
  // The list entry it matched; points into mandatory_denies() (static storage).
  const MandatoryDeny* rule = nullptr;
  Type type = Type::kOther;  // lstat type of `path`
  int depth = 0;             // depth of the rule's first component: 1 = directly in root
};

struct ScanResult {
  std::vector<ScanHit> hits;                 // sorted by path, then list order: deterministic
  std::vector<std::string> git_files;        // ".git" regular files (worktree/submodule
                                             // "gitdir: ..." pointers), sorted
  std::vector<std::string> unreadable_dirs;  // dirs we could not open or search (EACCES/EPERM),
                                             // sorted; reported, not fatal
  std::size_t entries_visited = 0;           // directory entries read ("." and ".." excluded)
};

struct ScanLimits {
  int max_depth = 3;  // srt's mandatoryDenySearchDepth; 0 scans nothing
  std::size_t max_entries = 2'000'000;
};

// Deepest max_depth accepted: the walk holds one fd per level, and no project needs more.
inline constexpr int kMaxScanDepth = 64;

// `root` must be an absolute path to a directory; symlinks in `root` itself are followed
// (it comes from the policy, and bwrap resolves it the same way), nothing below it is.
// Errors: root relative (kInternal), missing (kNotFound), not a directory or max_depth
// out of [0, kMaxScanDepth] (kInvalidPolicy), more than max_entries entries (kRefused:
// the scan never truncates silently), any other syscall failure (kSystem).
Result<ScanResult> scan_mandatory_denies(const std::string& root, const ScanLimits& limits = {});

// "file", "dir", "symlink", "other": for logs and `vigil explain`.
const char* to_string(ScanHit::Type type);

}  // namespace vigil
