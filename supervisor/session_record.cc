#include "supervisor/session_record.h"

#include <unistd.h>

#include <cstdlib>

#include "supervisor/sandbox_plan.h"

namespace vigil {

Result<std::unique_ptr<SessionRecord>> SessionRecord::open(const RunArgs& args,
                                                           const std::string& id,
                                                           const std::string& backend,
                                                           const Policy& policy) {
  Result<std::string> log_path =
      args.log ? Result<std::string>(*args.log)
               : default_log_path(id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!log_path) return std::move(log_path).error();
  if (!args.log) {
    if (auto r = prepare_log_dir(*log_path); !r) return std::move(r).error();
  }
  auto log = SessionLog::create(*log_path, id);
  if (!log) return std::move(log).error();
  std::unique_ptr<SessionRecord> rec(new SessionRecord(std::move(log).value(), id));
  SessionRecord* self = rec.get();
  rec->log_.set_listener(
      [self](const events::Event& e, const std::string&) { self->collector_.add(e); });
  events::SessionStart start;
  start.argv = args.command;
  start.backend = backend;
  start.policy_digest = policy_digest(policy);
  start.versions.vigil = "0.1.0";
  start.log = rec->log_.path();
  auto here = current_dir();
  start.cwd = here ? *here : "";
  rec->append(events::Source::kSupervisor, std::move(start));
  return rec;
}

void SessionRecord::append(events::Source src, events::Body body) {
  if (auto r = log_.append(src, std::move(body)); !r) count("log.append_failed");
}

void SessionRecord::count(const std::string& name, std::uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_[name] += n;
}

void SessionRecord::finish(int exit_code, std::optional<int> violations_fd, std::FILE* err) {
  const AnnotationOptions opts{kAnnotationMaxLines, log_.path()};
  const std::string block = render_annotation(collector_, opts);
  if (!block.empty()) {
    // After everything the command printed.
    std::fflush(stdout);
    std::fputs("\n", err);
    std::fputs(block.c_str(), err);
    std::fflush(err);
    append(events::Source::kSupervisor, events::Annotation{block, true});
  }
  if (violations_fd) {
    // One line, newline included.
    const std::string json = render_violations_json(collector_, opts, id_);
    (void)!::write(*violations_fd, json.data(), json.size());
  }
  events::SessionEnd end;
  if (exit_code > 128 && exit_code < 128 + 65) {
    end.signal = exit_code - 128;
  } else {
    end.exit_code = exit_code;
  }
  end.duration_ns = log_.elapsed_ns();
  {
    std::lock_guard<std::mutex> lock(mu_);
    end.counters = counters_;
  }
  append(events::Source::kSupervisor, std::move(end));
  if (auto r = log_.close(); !r)
    std::fprintf(err, "vigil: warning: %s\n", r.error().message.c_str());
}

}  // namespace vigil
