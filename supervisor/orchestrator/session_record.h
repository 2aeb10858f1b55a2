// The record of one session, the same on every platform: the hash-chained session log
// (opened where the request or the default says), the violations collected from exactly
// what was logged, counters, the <sandbox_violations> block and its JSON form, and
// session.end.
//
// run_session()'s two backends (supervisor/orchestrator/bwrap_backend.cc and
// seatbelt_backend.cc) both keep their session through this. append() and
// count() are thread-safe (the proxy's thread logs its decisions); the rest is for the
// launching thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/report/annotation.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/command/sandboxed_command.h"
#include "supervisor/log/session_log.h"

namespace vigil {

class SessionRecord final : public CommandRecord {
 public:
  struct Start {
    std::optional<std::string> log_path;  // none: $XDG_STATE_HOME/vigil/sessions/<id>.jsonl
    std::string id;                       // new_session_id()
    std::string backend;                  // "bwrap", "seatbelt"
    const Policy* policy = nullptr;
    std::vector<std::string> argv;
    std::string cwd;
    // Called with every record as it is written, in order (the embedder's live stream).
    std::function<void(const events::Event&)> on_event;
    // The key that seals the log (supervisor/log/log_key.h); empty: this user's, loaded (or
    // created) by open().
    std::string log_key = {};
  };
  // Creates the log (the default location prepared, private) and logs session.start.
  static Result<std::unique_ptr<SessionRecord>> open(Start start);
  // The same in two steps, for a launcher that starts the sandbox in between: reserve()
  // resolves the path (a relative one is the workspace's) and creates the file, which
  // then exists for the sandbox's read-only bind; open(reserved, start) writes
  // session.start. Nothing is logged until the second step.
  static Result<SessionLog::Reserved> reserve(const Start& start);
  // Where reserve() puts the log: `start.log_path` (a relative one is the workspace's) or
  // the default location for `start.id`. Creates nothing.
  static Result<std::string> log_path_for(const Start& start);
  static Result<std::unique_ptr<SessionRecord>> open(SessionLog::Reserved reserved, Start start);

  // A failed append is counted (log.append_failed), never fatal: the command runs on.
  void append(events::Source src, events::Body body) override;
  void count(const std::string& name, std::uint64_t n = 1) override;
  void hold_writes(bool on) override;

  const std::string& id() const { return id_; }
  const std::string& path() const { return log_.path(); }

  // What the model is told: the block ("" when nothing was denied) and the same as JSON
  // (one line, newline included), from exactly what was logged so far.
  std::string annotation() const override;
  std::string note() const override;
  std::string violations_json() const override;
  // Logs the block as delivered after the command's stderr.
  void log_annotation(const std::string& block, bool newline_before) override;
  // session.end with `exit_code` (or the signal when it is 128+N) and the counters, then
  // the log is closed (its write-back started). Returns the counters.
  // `reason`: why vigil ended the command ("limit: timeout"), "" when it ended on its own.
  Result<std::map<std::string, std::uint64_t>> end(int exit_code, const std::string& reason = "");

  // The CLI's ending, for a launcher that does not capture output: the annotation to
  // `err` on a line of its own (after flushing stdout) when anything was denied, the JSON
  // to `violations_fd` when given, then end(); a log that cannot be closed is a warning.
  void finish(int exit_code, std::optional<int> violations_fd, std::FILE* err);

 private:
  SessionRecord(SessionLog log, std::string id) : log_(std::move(log)), id_(std::move(id)) {}

  SessionLog log_;
  std::string id_;
  ViolationCollector collector_;  // fed under the log's lock (its listener)
  std::mutex mu_;                 // counters_
  std::map<std::string, std::uint64_t> counters_;
};

}  // namespace vigil
