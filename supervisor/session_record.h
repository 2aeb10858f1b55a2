// The record of one `vigil run` session, the same on every platform: the hash-chained
// session log (opened where --log or the default says), the violations collected from
// exactly what was logged, counters, and at the end the <sandbox_violations> block on
// stderr, the --violations-fd JSON and session.end.
//
// Used by the macOS launcher (supervisor/macos_launch.cc); Linux's run_command.cc does
// the same steps inline and can switch to this. append() and count() are thread-safe
// (the proxy's thread logs its decisions); the rest is for the launching thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "supervisor/annotation.h"
#include "supervisor/commands.h"
#include "supervisor/core/policy.h"
#include "supervisor/core/result.h"
#include "supervisor/event_schema.h"
#include "supervisor/session_log.h"

namespace vigil {

class SessionRecord {
 public:
  // Creates the log (default location prepared as for Linux) and logs session.start.
  static Result<std::unique_ptr<SessionRecord>> open(const RunArgs& args, const std::string& id,
                                                     const std::string& backend,
                                                     const Policy& policy);

  // A failed append is counted (log.append_failed), never fatal: the command runs on.
  void append(events::Source src, events::Body body);
  void count(const std::string& name, std::uint64_t n = 1);

  const std::string& id() const { return id_; }
  const std::string& path() const { return log_.path(); }

  // After the command: the annotation to `err` (after flushing stdout) when anything was
  // denied, the JSON to `violations_fd` when given, session.end with `exit_code` (or the
  // signal when it is 128+N), then the log is closed.
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
