#include "supervisor/orchestrator/session_orchestrator.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/log/log_retention.h"
#include "supervisor/log/session_log.h"
#include "supervisor/command/command_spec.h"
#include "supervisor/orchestrator/session_record.h"

namespace vigil {
namespace {

// `vigil run`'s log: a file of its own, session.start to session.end (SessionRecord).
class StandaloneSink final : public CommandLogSink {
 public:
  StandaloneSink(const SessionRequest& request, const SessionCallbacks& callbacks,
                 std::string session_id, std::string cwd, std::string_view sandbox)
      : start_{request.log_path, std::move(session_id), std::string(sandbox), nullptr,
               request.command,  std::move(cwd),        callbacks.on_event,   {}} {}
  // A file we created but never opened (a failure in between) is removed: no empty log
  // is left behind, and never one that was there before (reserve() creates with O_EXCL).
  ~StandaloneSink() override {
    if (reserved_ && !record_) ::unlink(reserved_->path.c_str());
  }

  Result<std::string> log_path(const PreparedSandbox& prepared) override {
    start_.policy = &prepared.policy;
    keep_ = prepared.policy.vigil.log_keep;
    auto path = SessionRecord::log_path_for(start_);
    if (path) path_ = *path;
    return path;
  }
  Result<void> create_now() override {
    auto r = SessionRecord::reserve(start_);
    VIGIL_TRY(r);
    reserved_ = std::move(r).value();
    return {};
  }
  Result<CommandRecord*> open(const PreparedSandbox&) override {
    if (!reserved_) {
      VIGIL_TRY_VOID(create_now());
    }
    auto opened = SessionRecord::open(std::move(*reserved_), std::move(start_));
    VIGIL_TRY(opened);
    record_ = std::move(opened).value();
    return record_.get();
  }

  SessionRecord* record() { return record_.get(); }
  const std::string& path() const { return path_; }
  // vigil.log.keep, for the default log directory only (a --log path is the caller's).
  std::optional<std::uint64_t> keep() const { return start_.log_path ? std::nullopt : keep_; }

 private:
  std::optional<std::uint64_t> keep_;
  SessionRecord::Start start_;
  std::string path_;
  std::optional<SessionLog::Reserved> reserved_;
  std::unique_ptr<SessionRecord> record_;
};

}  // namespace

Result<SessionOutcome> orchestrate_session(const SessionRequest& request,
                                           const SessionCallbacks& callbacks,
                                           SessionBackend& backend) {
  if (request.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  if (const char* nested = std::getenv("VIGIL_SANDBOX"); nested != nullptr && *nested != '\0') {
    return make_error(Errc::kRefused,
                      "vigil run inside a vigil sandbox is not supported: this command is "
                      "already confined by the outer session, and that sandbox denies what a "
                      "second one needs (a session directory outside the writable roots, new "
                      "mounts and namespaces). Run the inner command directly");
  }
  auto cwd = request.cwd ? Result<std::string>(*request.cwd) : current_dir();
  VIGIL_TRY(cwd);
  SessionOutcome outcome;
  outcome.session_id = new_session_id();
  SessionInputs session;
  session.settings = request.settings;
  session.allow_writable_settings = request.allow_writable_settings;
  session.proxy_test = request.proxy_test;
  CommandInputs one;
  one.argv = request.command;
  one.cwd = *cwd;
  one.capture_output = request.capture_output;
  one.annotate_stderr = request.annotate_stderr;
  one.violations_json = request.violations_json;
  one.timeout_s = request.timeout_s;
  one.quarantine_id = outcome.session_id;
  one.ask = request.ask;
  SandboxedCommand cmd = sandboxed_command(session, std::move(one));
  StandaloneSink sink(request, callbacks, outcome.session_id, *cwd, backend.name());
  auto ran = backend.run(cmd, sink, callbacks);
  VIGIL_TRY(ran);
  if (sink.record() == nullptr) {
    return make_error(Errc::kInternal, "the session ran without opening its log");
  }
  outcome.log_path = sink.path();
  outcome.exit_code = ran->exit_code;
  outcome.annotation = std::move(ran->annotation);
  outcome.violations_json = std::move(ran->violations_json);
  auto counters = sink.record()->end(outcome.exit_code, ran->limit);
  if (!counters) {
    print_warning(counters.error().message);
  } else {
    outcome.counters = std::move(counters).value();
  }
  if (const auto keep = sink.keep(); keep && !outcome.log_path.empty()) {
    const auto slash = outcome.log_path.rfind('/');
    std::size_t failed = 0;
    prune_logs(outcome.log_path.substr(0, slash), *keep, outcome.log_path.substr(slash + 1),
               &failed);
    if (failed != 0)
      print_warning("vigil.log.keep: " + std::to_string(failed) +
                    " old session logs could not be removed from " +
                    outcome.log_path.substr(0, slash));
  }
  return outcome;
}

}  // namespace vigil
