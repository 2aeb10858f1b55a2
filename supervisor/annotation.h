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
  std::uint64_t denied_attempts() const { return denied_attempts_; }
  std::uint64_t untracked_attempts() const { return untracked_; }  // past kMaxTrackedTargets
  bool empty() const { return denied_attempts_ == 0; }

 private:
  using Key = std::tuple<int, std::string, std::string>;  // kind, op, target
  void note(std::vector<Violation>& list, std::map<Key, std::size_t>& index, Violation v);

  std::vector<Violation> denied_, ephemeral_;
  std::map<Key, std::size_t> denied_index_, ephemeral_index_;
  std::uint64_t denied_attempts_ = 0;
  std::uint64_t untracked_ = 0;
};

struct AnnotationOptions {
  std::size_t max_lines = kAnnotationMaxLines;
  std::string log_path;  // named by the "N more: see <log>" line; "" = no log kept
};

// The block, "<sandbox_violations>\n...</sandbox_violations>\n"; "" when nothing was
// denied. Lines:  deny <op> <target> (<reason>)[ (xN)]   then, past max_lines,
// "N more: see <log>". Every variable part goes through escape_for_annotation().
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

}  // namespace vigil
