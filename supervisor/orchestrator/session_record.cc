#include "supervisor/orchestrator/session_record.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/command/block_delivery.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>

#include "supervisor/launch/session_base.h"
#include "supervisor/log/log_key.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil {

Result<std::string> SessionRecord::log_path_for(const Start& start) {
  // A relative --log is the workspace's, as the user meant it, and absolute from here on
  // (it is also what the sandbox's read-only bind must name).
  if (!start.log_path) {
    return default_log_path(start.id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  }
  const std::string& p = *start.log_path;
  return p.empty() || p[0] == '/' || start.cwd.empty() ? p : start.cwd + "/" + p;
}

Result<SessionLog::Reserved> SessionRecord::reserve(const Start& start) {
  auto log_path = log_path_for(start);
  VIGIL_TRY(log_path);
  if (!start.log_path) {
    VIGIL_TRY_VOID(prepare_log_dir(*log_path));
  }
  return SessionLog::reserve(*log_path);
}

Result<std::unique_ptr<SessionRecord>> SessionRecord::open(Start start) {
  auto reserved = reserve(start);
  VIGIL_TRY(reserved);
  return open(std::move(reserved).value(), std::move(start));
}

Result<std::unique_ptr<SessionRecord>> SessionRecord::open(SessionLog::Reserved reserved,
                                                           Start start) {
  if (start.log_key.empty()) {
    auto path = log_key_path();
    VIGIL_TRY(path);
    auto key = load_or_create_log_key(*path);
    VIGIL_TRY(key);
    start.log_key = std::move(key).value();
  }
  auto log = SessionLog::create(std::move(reserved), start.id);
  VIGIL_TRY(log);
  log->set_key(start.log_key);
  std::unique_ptr<SessionRecord> rec(new SessionRecord(std::move(log).value(), start.id));
  SessionRecord* self = rec.get();
  rec->log_.set_listener(
      [self, on_event = std::move(start.on_event)](const events::Event& e, const std::string&) {
        self->collector_.add(e);
        if (on_event) on_event(e);
      });
  events::SessionStart first;
  first.argv = std::move(start.argv);
  first.backend = start.backend;
  if (start.policy != nullptr) first.policy_digest = policy_digest(*start.policy);
  first.versions.vigil = "0.1.0";
  first.log = rec->log_.path();
  if (first.backend == "bwrap") {
    utsname u{};
    first.witness = ::uname(&u) == 0 && kernel_can_gatekeep(u.release) ? "gatekeeper" : "best-effort";
  }
  first.cwd = std::move(start.cwd);
  first.key_id = log_key_id(start.log_key);
  // What the sandbox could write on the host, fixed now: undo acts only inside it.
  if (start.policy != nullptr && first.backend != "none")
    first.scope = host_scope_of(*start.policy, session_base_dir());
  rec->append(events::Source::kSupervisor, std::move(first));
  return rec;
}

void SessionRecord::append(events::Source src, events::Body body) {
  if (auto r = log_.append(src, std::move(body)); !r) count("log.append_failed");
}

void SessionRecord::hold_writes(bool on) {
  if (on) {
    log_.hold_writes();
  } else if (auto r = log_.release_writes(); !r) {
    count("log.append_failed");
  }
}

void SessionRecord::count(const std::string& name, std::uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_[name] += n;
}

std::string SessionRecord::annotation() const {
  return render_annotation(collector_, {kAnnotationMaxLines, log_.path()});
}

std::string SessionRecord::note() const { return annotation_note(collector_); }

std::string SessionRecord::violations_json() const {
  return render_violations_json(collector_, {kAnnotationMaxLines, log_.path()}, id_);
}

void SessionRecord::log_annotation(const std::string& block, bool newline_before) {
  append(events::Source::kSupervisor, events::Annotation{block, newline_before});
}

Result<std::map<std::string, std::uint64_t>> SessionRecord::end(int exit_code,
                                                                const std::string& reason) {
  events::SessionEnd last;
  last.reason = reason;
  if (exit_code > 128 && exit_code < 128 + 65) {
    last.signal = exit_code - 128;
  } else {
    last.exit_code = exit_code;
  }
  last.duration_ns = log_.elapsed_ns();
  {
    std::lock_guard<std::mutex> lock(mu_);
    last.counters = counters_;
  }
  auto counters = last.counters;
  append(events::Source::kSupervisor, std::move(last));
  VIGIL_TRY_VOID(log_.close());
  return counters;
}

void SessionRecord::finish(int exit_code, std::optional<int> violations_fd, std::FILE* err) {
  // The command wrote to the terminal itself (nothing captured): a newline goes first.
  deliver_block(*this, annotation(), block_needs_newline(/*captured=*/false, false),
                [err](std::string_view text) {
                  std::fflush(stdout);
                  // display-safe: render_annotation() escapes every variable part
                  std::fwrite(text.data(), 1, text.size(), err);
                  std::fflush(err);
                });
  if (violations_fd) {
    const std::string json = violations_json();
    (void)!::write(*violations_fd, json.data(), json.size());
  }
  if (auto r = end(exit_code); !r)
    print_warning(r.error().message);
}

}  // namespace vigil
