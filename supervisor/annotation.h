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
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "supervisor/core/resolver.h"
#include "supervisor/event_schema.h"

namespace vigil {

inline constexpr std::size_t kAnnotationMaxLines = 30;
// Distinct targets remembered per list; attempts beyond that are still counted.
inline constexpr std::size_t kMaxTrackedTargets = 100000;

struct Violation {
  enum class Kind { kFs, kNet };
  Kind kind = Kind::kFs;
  std::string op;      // the syscall ("openat"), or "network-outbound"
  std::string target;  // fs: the resolved path (the path as passed if unresolved);
                       // net: host:port ([v6]:port). Raw bytes: escape to show.
  std::string reason;  // of the first attempt
  std::uint64_t count = 0;
  std::uint64_t first_seq = 0;
  // Detail for the JSON form.
  std::string path;  // fs: the path as the command passed it (first attempt)
  std::string host;  // net
  std::uint16_t port = 0;
  std::string rule;  // net: the settings entry that decided ("" = default deny)
};

class ViolationCollector {
 public:
  // Takes fs.write (denied -> a violation, ephemeral -> the ephemeral list, allowed ->
  // ignored) and net.decision (denied -> a violation). Other kinds are ignored.
  void add(const events::Event& e);
  void add(const events::Body& body, std::uint64_t seq);

  // In order of first occurrence; one entry per (op, target).
  const std::vector<Violation>& denied() const { return denied_; }
  const std::vector<Violation>& ephemeral() const { return ephemeral_; }
  // Allowed writes that created or changed a protected name no mount could guard
  // (FsWrite::unguarded): not stopped, but the model and the user must hear of them. One
  // entry per protected instance (".../r/.git/hooks"), counting every write into it; its
  // op is the first write's.
  const std::vector<Violation>& unguarded() const { return unguarded_; }
  std::uint64_t denied_attempts() const { return denied_attempts_; }
  std::uint64_t untracked_attempts() const { return untracked_; }  // past kMaxTrackedTargets
  // Denials an ignoreViolations entry kept out of the block (marked `ignored` in the log).
  std::uint64_t ignored_attempts() const { return ignored_attempts_; }
  bool empty() const { return denied_attempts_ == 0 && unguarded_.empty(); }

 private:
  using Key = std::tuple<int, std::string, std::string>;  // kind, op, target
  void note(std::vector<Violation>& list, std::map<Key, std::size_t>& index, Violation v,
            bool key_on_op = true);

  std::vector<Violation> denied_, ephemeral_, unguarded_;
  std::map<Key, std::size_t> denied_index_, ephemeral_index_, unguarded_index_;
  std::uint64_t denied_attempts_ = 0;
  std::uint64_t untracked_ = 0;
  std::uint64_t ignored_attempts_ = 0;
};

struct AnnotationOptions {
  std::size_t max_lines = kAnnotationMaxLines;
  std::string log_path;  // named by the "N more: see <log>" line; "" = no log kept
};

// The block, "<sandbox_violations>\n...</sandbox_violations>\n"; "" when nothing was
// denied and no protected name was written unguarded. Lines:
//   deny <op> <target> (<reason>)[ (xN)]
//   unguarded <op> <target> (<why it matters>; not stopped: ...)[ (xN)]
// (denials first), then, past max_lines, "N more: see <log>". Every variable part goes
// through escape_for_annotation().
std::string render_annotation(const ViolationCollector& c, const AnnotationOptions& o);

// The same, from a whole session's events (what replay recomputes).
std::string annotation_from_events(std::span<const events::Event> events,
                                   const AnnotationOptions& o);

// One JSON object (one line, ASCII, with a trailing newline) for `--violations json`:
// {"v":1,"session":..,"log":..,"denied":[...],"ephemeral":[...],"untracked_attempts":N,
//  "annotation":"<the text block or empty>"}. Not capped at max_lines: harnesses get all.
std::string render_violations_json(const ViolationCollector& c, const AnnotationOptions& o,
                                   std::string_view session_id);

// The annotation's one escaping function: escape_for_terminal() (controls, invalid
// UTF-8, bidi, backslash), plus '<' as \x3c, so no line of the block can contain a tag
// and end it early for a harness that matches <sandbox_violations>...</...> as text.
std::string escape_for_annotation(std::string_view bytes);

// The reason to log for an fs.write the observer reported: the resolver's, which says
// what to do instead ("add it to filesystem.allowWrite"), when the policy agrees with the
// observer's verdict; otherwise the observer's own (the mount table is the truth, and
// the policy can only explain it). Call before SessionLog::append.
std::string fs_denial_reason(const events::FsWrite& w, const Plan& plan);

// FsWrite::unguarded for an event the observer reported: for a write the kernel allowed
// (deletions aside: they plant nothing) whose resolved path, relative to the deepest
// writable root holding it (the session's own temp dir aside: it vanishes with the
// session), is or lies under a protected name (mandatory_deny_within). Such a name had
// no mount to stop it: it did not exist when the sandbox was built, or lies deeper than
// mandatoryDenySearchDepth. "" otherwise. Always assign it: a line from the sandbox never
// decides it.
std::string unguarded_protected_name(const events::FsWrite& w, const FilesystemPolicy& fs);

}  // namespace vigil
