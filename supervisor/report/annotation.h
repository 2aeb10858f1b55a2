// Feedback to the model (DESIGN.md §8, docs/annotation.md): the <sandbox_violations>
// block appended to the command's stderr after it ends, and the same as JSON for
// `--violations json`.
//
// The block is a pure function of the session's events (and the log path it names), so
// `vigil replay --annotate` recomputes it from the log and compares it byte for byte
// with the `annotation` record of what the model received. Anything that must appear in
// it (the sanctioned alternative for a write) has to be in the event's `reason` before
// the event is logged: see fs_denial_reason().
//
// ViolationCollector is a plain value (not thread-safe); feed it from the one place that
// appends to the session log (e.g. SessionLog's listener) and it sees exactly what the
// log holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/report/violation.h"

namespace vigil {

// Denial lines shown; writes that were not stopped (unguarded, quarantined) have as many
// slots again of their own, so no number of denials can push one out of the block.
inline constexpr std::size_t kAnnotationMaxLines = 30;
// Per part of a line (a target, a name listed in a group; a reason has more room): past it
// the part is
// cut with a " [cut: N more bytes]" marker, so a line stays under kAnnotationMaxLineBytes.
inline constexpr std::size_t kAnnotationMaxPartBytes = 200;
inline constexpr std::size_t kAnnotationMaxReasonBytes = 400;  // vigil's hints are ~330
inline constexpr std::size_t kAnnotationMaxLineBytes = 1024;
// Names a grouped line lists before "and N more".
inline constexpr std::size_t kAnnotationGroupNames = 3;
// Distinct targets remembered per list, and their bytes (target + spelling + reason);
// attempts beyond either are still counted.
inline constexpr std::size_t kMaxTrackedTargets = 100000;
inline constexpr std::size_t kMaxTrackedBytes = 32U << 20;

// "create, change times": the plain words of a Violation's actions, in WriteAction order.
std::string plain_actions(std::uint16_t actions);

class ViolationCollector {
 public:
  ViolationCollector() = default;
  // The index views the entries' own targets: a copy would view the original's.
  ViolationCollector(const ViolationCollector&) = delete;
  ViolationCollector& operator=(const ViolationCollector&) = delete;
  ViolationCollector(ViolationCollector&&) = default;  // a deque's move keeps its elements
  ViolationCollector& operator=(ViolationCollector&&) = default;

  // Takes fs.write (denied -> a violation, ephemeral -> the ephemeral list, allowed ->
  // ignored unless unguarded) and net.decision (denied -> a violation). Other kinds are
  // ignored.
  void add(const events::Event& e);
  void add(const events::Body& body, std::uint64_t seq);

  // In order of first occurrence; one entry per target (every action on it merged: a
  // `touch` is one entry, its open and its utimensat). Deques: an entry never moves, so
  // the index keys on the entry's own target (one copy per target).
  const std::deque<Violation>& denied() const { return denied_.list; }
  const std::deque<Violation>& ephemeral() const { return ephemeral_.list; }
  // Allowed writes that created or changed a protected name no mount could guard
  // (FsWrite::unguarded): not stopped, but the model and the user must hear of them. One
  // entry per protected instance (".../r/.git/hooks"), counting every write into it; its
  // op is the first write's.
  const std::deque<Violation>& unguarded() const { return unguarded_.list; }
  // The same for the names inside a repository's own .git (.git/hooks, .git/config): what
  // `git init` and `git clone` make as a matter of course. Allowed and only worth knowing,
  // so never in the block (docs/annotation.md, "What goes in the block"): the log, replay,
  // --violations json and annotation_note() tell them. What breaks the git rules there is
  // quarantined by the post-run backstop, and a quarantined line is in the block. One
  // entry per repository (".../r/.git").
  const std::deque<Violation>& repositories() const { return repositories_.list; }
  // What the post-run backstop moved out of the workspace (events::FsQuarantine): one
  // entry per path; op is the rule it broke, reason says where it went.
  const std::deque<Violation>& quarantined() const { return quarantined_.list; }
  // The resource caps vigil ended the command at (events::LimitReached), in order.
  const std::vector<events::LimitReached>& limits() const { return limits_; }
  // Output bytes the log left out between head and tail (events::LogTruncated).
  std::uint64_t output_cut_bytes() const { return output_cut_; }
  std::uint64_t denied_attempts() const { return denied_attempts_; }
  // Attempts on targets past kMaxTrackedTargets / kMaxTrackedBytes.
  std::uint64_t untracked_attempts() const { return untracked_; }
  std::size_t tracked_bytes() const { return bytes_; }
  bool empty() const {
    return denied_attempts_ == 0 && unguarded().empty() && quarantined().empty() &&
           limits_.empty();
  }
  // Denials an ignoreViolations entry kept out of the block (marked `ignored` in the log).
  std::uint64_t ignored_attempts() const { return ignored_attempts_; }

 private:
  struct List {
    std::deque<Violation> list;
    std::unordered_map<std::string_view, std::size_t> index;  // keys view list[i].target
  };
  void note(List& l, Violation v, events::WriteAction action);

  List denied_, ephemeral_, unguarded_, repositories_, quarantined_;
  std::vector<events::LimitReached> limits_;
  std::uint64_t denied_attempts_ = 0;
  std::uint64_t untracked_ = 0;
  std::size_t bytes_ = 0;
  std::uint64_t ignored_attempts_ = 0;
  std::uint64_t output_cut_ = 0;
};

struct AnnotationOptions {
  std::size_t max_lines = kAnnotationMaxLines;
  std::string log_path;  // named by the "N more: see <log>" line; "" = no log kept
};

// The block, "<sandbox_violations>\n...</sandbox_violations>\n"; "" when nothing was
// denied, quarantined, written unguarded or ended at a cap. Lines, in this order:
//   limit <name>: <detail>                                                    always shown
//   quarantined <path> (<rule>: <why>; moved to <where>)                       own slots
//   unguarded <actions> <target> (<what it runs>; not stopped ...)[ (xN)]      own slots
//   deny <actions> <target> (<reason>)[ (xN)]
//   deny <actions> N paths in <dir>/ (<reason>): a, b, c and M more[ (xN)]
//   N more: see <log>
//   output: N bytes of the command's output are not in the log ...   (only in a block)
// Denials with one cause (reason) in one directory are one line; when they still do not
// fit max_lines, the groups climb to their parent directories, deepest first, before any
// line is dropped. Every variable part goes through escape_for_annotation(), cut at
// kAnnotationMaxPartBytes.
std::string render_annotation(const ViolationCollector& c, const AnnotationOptions& o);

// One informational line for what was allowed and is only worth knowing (the
// repositories git made: repositories()), "" when there is none. Never part of the
// block: the caller prints it as a diagnostic (at `vigil -v`), outside the block.
std::string annotation_note(const ViolationCollector& c);

// The same, from a whole session's events (what replay recomputes).
std::string annotation_from_events(std::span<const events::Event> events,
                                   const AnnotationOptions& o);

// One JSON object (one line, ASCII, with a trailing newline) for `--violations json`:
// {"v":1,"session":..,"log":..,"denied":[...],"ephemeral":[...],"untracked_attempts":N,
//  "annotation":"<the text block or empty>"}. Not capped at max_lines: harnesses get all.
// Rendered only when asked for (--violations json).
std::string render_violations_json(const ViolationCollector& c, const AnnotationOptions& o,
                                   std::string_view session_id);

// escape_text(bytes, TextSink::kAnnotation), the one escaping function
// (supervisor/core/base/display_text.h): controls, format and invisible characters, invalid
// UTF-8, backslash, and '<' as \x3c, so no line of the block can contain a tag and end
// it early for a harness that matches <sandbox_violations>...</...> as text.
std::string escape_for_annotation(std::string_view bytes);

// The reason to log for an fs.write the observer reported: the resolver's, which says
// what to do instead ("add it to filesystem.allowWrite"), when the policy agrees with the
// observer's verdict; otherwise the observer's own (the mount table is the truth, and
// the policy can only explain it). Call before SessionLog::append.
// With the policy, a write the default rule refused gets the fix that works for its path
// (default_deny_hint, supervisor/report/write_hint.h) instead of the generic advice.
std::string fs_denial_reason(const events::FsWrite& w, const Plan& plan,
                             const Policy* policy = nullptr);

// Whether `w` is a hard link the kernel refused with EXDEV because its source lies on a
// read-only mount (outside the writable roots): the kernel never links across mounts, and
// every tool that links (git clone of a local repository, cp -l, npm's cache) falls back
// to a copy. Nothing got out and nothing is to be done, so it is an ordinary result of
// the call, like EEXIST (docs/annotation.md, "What goes in the block"), not a denial.
// Pure.
bool is_cross_mount_link(const events::FsWrite& w);

// FsWrite::unguarded for an event the observer reported: for a write the kernel allowed
// (deletions aside: they plant nothing) whose resolved path, relative to the deepest
// writable root holding it (the session's own temp dir aside: it vanishes with the
// session), is or lies under a protected name (mandatory_deny_within). Such a name had
// no mount to stop it: it did not exist when the sandbox was built, or lies deeper than
// mandatoryDenySearchDepth. "" otherwise. Always assign it: a line from the sandbox never
// decides it.
std::string unguarded_protected_name(const events::FsWrite& w, const FilesystemPolicy& fs);

}  // namespace vigil
