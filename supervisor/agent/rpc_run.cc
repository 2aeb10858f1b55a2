#include "supervisor/agent/rpc_run.h"

#include <unistd.h>

#include <mutex>
#include <thread>

#include "supervisor/agent/command_cwd.h"
#include "supervisor/agent/wire_json.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

using json = nlohmann::json;

using rpc::bad_params;

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

// Appends what fits under the cap; says whether anything was left out.
void append_capped(std::string& to, std::string_view bytes, bool& truncated) {
  const std::size_t room = to.size() < kResultOutputCap ? kResultOutputCap - to.size() : 0;
  to.append(bytes.substr(0, room));
  if (bytes.size() > room) truncated = true;
}

}  // namespace

std::variant<std::vector<std::string>, rpc::RpcError> env_entries(
    const json& env, const std::vector<std::string>& base) {
  const std::string what =
      "env: an object of NAME: value strings (a NAME without '=' or NUL, a value without NUL)";
  if (!env.is_object()) return bad_params(what);
  std::vector<std::string> out;
  for (const auto& entry : base) {
    const std::string name = entry.substr(0, entry.find('='));
    if (!env.contains(name)) out.push_back(entry);
  }
  for (auto it = env.begin(); it != env.end(); ++it) {
    if (!it->is_string() || it.key().empty() || it.key().find('=') != std::string::npos ||
        has_nul(it.key()) || has_nul(it->get_ref<const std::string&>())) {
      return bad_params(what);
    }
    out.push_back(it.key() + "=" + it->get<std::string>());
  }
  return out;
}

std::variant<RunParams, rpc::RpcError> run_params(const json& p, const std::string& workspace) {
  RunParams r;
  if (!p.is_object()) return bad_params("params must be an object");
  if (auto a = p.find("argv"); a != p.end() && a->is_array() && !a->empty()) {
    for (const auto& v : *a) {
      auto s = json_bytes_value(v);
      if (!s) return bad_params("argv: " + s.error().message);
      // A program's argument ends at its first NUL: the command would not be the one asked.
      if (has_nul(*s)) return bad_params("argv: an entry holds a NUL byte, which no program's argument can carry");
      r.argv.push_back(std::move(*s));
    }
  } else {
    return bad_params("argv: a non-empty array of strings is required");
  }
  r.cwd = workspace;
  if (auto c = p.find("cwd"); c != p.end()) {
    if (!c->is_string() || c->get<std::string>().empty() || c->get<std::string>()[0] != '/' ||
        has_nul(c->get_ref<const std::string&>()))
      return bad_params("cwd: an absolute path inside the session's workspace " + workspace);
    // The workspace is the session's, fixed at its start: a cwd only says where in it the
    // command starts (command_cwd.h). Checked again by AgentSession::run().
    auto in = command_cwd_in(c->get<std::string>(), workspace);
    if (!in) return bad_params(in.error().message);
    r.cwd = std::move(in).value();
  }
  if (auto e = p.find("env"); e != p.end()) {
    auto entries = env_entries(*e);
    if (auto* err = std::get_if<rpc::RpcError>(&entries)) return *err;
    r.env = std::get<std::vector<std::string>>(std::move(entries));
  }
  if (auto s = p.find("stdin"); s != p.end()) {
    auto b = json_bytes_value(*s);
    if (!b) return bad_params("stdin: " + b.error().message);
    r.stdin_data = std::move(*b);
  }
  if (auto t = p.find("timeout"); t != p.end()) {
    if (!t->is_number() || !(t->get<double>() > 0) || t->get<double>() > kMaxTimeoutS)
      return bad_params("timeout: seconds, > 0 and at most 30 days");
    r.timeout_s = t->get<double>();
  }
  return r;
}

Result<Ran> run_one(AgentSession& session, const RunParams& p, CommandStop& stop,
                    const std::function<void(std::uint64_t)>& on_id,
                    const std::function<void(OutputStream, std::string_view)>& on_output) {
  auto in = make_pipe();
  VIGIL_TRY(in);
  UniqueFd in_r = std::move(in->read), in_w = std::move(in->write);
  std::thread feeder([w = std::move(in_w), data = p.stdin_data]() mutable {
    (void)write_all_to(w.get(), data);  // EPIPE when the command does not read it all
  });
  Ran ran;
  std::mutex mu;  // ran's texts: stdout and stderr come from one thread, but be sure
  stop.start(p.timeout_s, [&session, grace = stop.grace()](std::uint64_t id, const CancelWhy& why) {
    session.log_cancel(id, why.by, why.via, why.reason, static_cast<std::uint64_t>(grace.count()));
  });
  CommandRun run;
  run.argv = p.argv;
  run.cwd = p.cwd;
  run.env = p.env;
  run.annotate_stderr = false;  // the block is the result's (one per result)
  run.stdio = {in_r.get(), STDERR_FILENO, STDERR_FILENO};  // 1, 2: captured
  run.on_id = [&](std::uint64_t id) {
    if (on_id) on_id(id);
    stop.identified(id);
  };
  run.on_spawned = [&](pid_t pid) { stop.spawned(pid); };
  run.on_output = [&](OutputStream s, std::string_view bytes) {
    {
      std::lock_guard lock(mu);
      bool& cut = s == OutputStream::kStdout ? ran.stdout_truncated : ran.stderr_truncated;
      append_capped(s == OutputStream::kStdout ? ran.stdout_text : ran.stderr_text, bytes, cut);
      bool ignored = false;
      append_capped(ran.combined, bytes, ignored);
    }
    on_output(s, bytes);
    return true;
  };
  auto outcome = session.run(run);
  stop.finished();
  ran.timed_out = stop.timed_out();
  ran.cancelled = stop.cancelled();
  in_r.reset();  // the feeder's write fails now if it is still blocked
  feeder.join();
  VIGIL_TRY(outcome);
  ran.outcome = std::move(*outcome);
  return ran;
}

}  // namespace vigil
