// What a session changed, per path, from its log alone (issue 17): the net result
// (created, modified, deleted, renamed), what the path was before the session and after
// it (the fs.image records: sizes, hashes, mode, owner, symlink target), the process that
// last changed it and every step on the way. `vigil replay --changes`, `--diff`, the
// HTML report's Changes section and `vigil undo` all read this one model.
//
// Pure: ChangeSetBuilder takes records in log order and keeps bounded state (kMaxPaths
// paths, kMaxSteps steps each, kMaxNamedProcesses process names), so a log of any size is
// read in bounded memory; what it could not keep is counted, never silently dropped.
//
// How "before" is known: the first record of a path in the log decides. A `pre` image
// (vigil-init takes one just before it changes or removes an existing name) is the
// session's before. A successful call that can only make a new name (O_CREAT without a
// pre image, mkdir, symlink, link, mknod, a rename onto a name that had no pre image) says
// it was absent. rmdir says it was a directory. Anything else (a chmod of a file nothing
// else touched, the source of a rename) says it existed, contents not recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/fs/host_scope.h"
#include "supervisor/log/change_model.h"  // the types it builds

namespace vigil::changes {

class ChangeSetBuilder {
 public:
  static constexpr std::size_t kMaxPaths = 100'000;
  static constexpr std::size_t kMaxSteps = 32;        // per path
  static constexpr std::size_t kMaxAllSteps = 500'000;  // in all
  static constexpr std::size_t kMaxNamedProcesses = 65536;

  // `session_base`: where session directories live, for a log that recorded no scope.
  explicit ChangeSetBuilder(const std::string& session_base = "/nonexistent/vigil-sessions")
      : scope_(legacy_host_scope(session_base)) {}
  void take(const events::Event& e);
  ChangeSet finish() const;

 private:
  struct Track {
    std::optional<State> before;
    std::optional<events::FsImage> post;  // the last post image
    std::string sim;  // what the write records say it is now: absent, file, dir, ...
    // Whose pre-session thing is at this path now: none = its own (if it had one),
    // "" = something made in the session, "X" = what X was (moved here by a rename).
    std::optional<std::string> origin;
    bool changed_since_move = false;  // written, chmod'ed, ... after it was moved here
    std::vector<Step> steps;
    std::uint64_t more_steps = 0;
    std::uint64_t last_seq = 0;
    bool best_effort = false;
  };
  Track* track(const std::string& path);
  void on_write(const events::Event& e, const events::FsWrite& w);
  void add_step(Track* t, const events::Event& e, const events::FsWrite& w, std::string other);

  std::map<std::string, Track> tracks_;
  HostScope scope_;
  bool scope_recorded_ = false;
  std::set<std::string> sandbox_only_;
  std::uint64_t unlisted_ = 0;
  std::uint64_t all_steps_ = 0;
  bool capture_seen_ = false;
  std::string session_;
  std::map<std::pair<std::uint64_t, std::int64_t>, std::shared_ptr<const std::string>> argv_;  // (cmd, pid)
};

}  // namespace vigil::changes
