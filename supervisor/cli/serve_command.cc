// `vigil serve` and `vigil mcp`: an agent session (supervisor/agent/agent_session.h) driven by
// JSON-RPC on stdio (supervisor/agent/rpc_stdio.h). Methods: docs/protocol.md.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/command_cwd.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/agent/rpc_stdio.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/cli/serve_command.h"
#include "supervisor/orchestrator/session_runner.h"
#include "supervisor/agent/wire_json.h"

namespace vigil {
namespace {

using json = nlohmann::json;

rpc::RpcError bad_params(const std::string& why) { return {rpc::kInvalidParams, why}; }

// Far above any real command, far below what a clock's duration can hold.
constexpr double kMaxTimeoutS = 30.0 * 24 * 3600;

// What one `run` (or MCP tools/call) asks for, checked.
struct RunParams {
  std::vector<std::string> argv;
  std::string cwd;
  std::optional<std::vector<std::string>> env;
  std::string stdin_data;
  double timeout_s = 0;  // 0: none
};

// `workspace`: the session's, resolved (AgentSession::workspace()); `cwd` must lie in it.
std::variant<RunParams, rpc::RpcError> run_params(const json& p, const std::string& workspace) {
  RunParams r;
  if (!p.is_object()) return bad_params("params must be an object");
  if (auto a = p.find("argv"); a != p.end() && a->is_array() && !a->empty()) {
    for (const auto& v : *a) {
      auto s = json_bytes_value(v);
      if (!s) return bad_params("argv: " + s.error().message);
      r.argv.push_back(std::move(*s));
    }
  } else {
    return bad_params("argv: a non-empty array of strings is required");
  }
  r.cwd = workspace;
  if (auto c = p.find("cwd"); c != p.end()) {
    if (!c->is_string() || c->get<std::string>().empty() || c->get<std::string>()[0] != '/')
      return bad_params("cwd: an absolute path inside the session's workspace " + workspace);
    // The workspace is the session's, fixed at its start: a cwd only says where in it the
    // command starts (command_cwd.h). Checked again by AgentSession::run().
    auto in = command_cwd_in(c->get<std::string>(), workspace);
    if (!in) return bad_params(in.error().message);
    r.cwd = std::move(in).value();
  }
  if (auto e = p.find("env"); e != p.end()) {
    if (!e->is_object()) return bad_params("env: an object of NAME: value strings");
    r.env.emplace();
    for (auto it = e->begin(); it != e->end(); ++it) {
      if (!it->is_string() || it.key().empty() || it.key().find('=') != std::string::npos)
        return bad_params("env: an object of NAME: value strings");
      r.env->push_back(it.key() + "=" + it->get<std::string>());
    }
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

struct Ran {
  CommandOutcome outcome;
  bool timed_out = false;
  std::string combined;  // stdout and stderr as they came (MCP's text)
};

// Runs one command: stdin from a pipe fed by a thread, output to `on_output`, a timer
// that kills the sandbox at the timeout.
Result<Ran> run_one(AgentSession& session, const RunParams& p,
                    const std::function<void(std::uint64_t)>& on_id,
                    const std::function<void(OutputStream, std::string_view)>& on_output) {
  auto in = make_pipe();
  VIGIL_TRY(in);
  UniqueFd in_r = std::move(in->read), in_w = std::move(in->write);
  std::thread feeder([w = std::move(in_w), data = p.stdin_data]() mutable {
    (void)write_all_to(w.get(), data);  // EPIPE when the command does not read it all
  });
  Ran ran;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::atomic<pid_t> bwrap{0};
  std::thread timer;
  if (p.timeout_s > 0) {
    timer = std::thread([&] {
      std::unique_lock lock(mu);
      if (!cv.wait_for(lock, std::chrono::duration<double>(p.timeout_s), [&] { return finished; })) {
        ran.timed_out = true;
        if (const pid_t pid = bwrap.load(); pid > 0) ::kill(pid, SIGKILL);
      }
    });
  }
  CommandRun run;
  run.argv = p.argv;
  run.cwd = p.cwd;
  run.env = p.env;
  run.stdio = {in_r.get(), STDERR_FILENO, STDERR_FILENO};  // 1, 2: captured
  run.on_id = on_id;
  run.on_spawned = [&](pid_t pid) {
    bwrap = pid;
    std::lock_guard lock(mu);
    if (ran.timed_out) ::kill(pid, SIGKILL);
  };
  run.on_output = [&](OutputStream s, std::string_view bytes) {
    ran.combined.append(bytes);
    on_output(s, bytes);
    return true;
  };
  auto outcome = session.run(run);
  {
    std::lock_guard lock(mu);
    finished = true;
  }
  cv.notify_all();
  if (timer.joinable()) timer.join();
  in_r.reset();  // the feeder's write fails now if it is still blocked
  feeder.join();
  VIGIL_TRY(outcome);
  ran.outcome = std::move(*outcome);
  return ran;
}

json violations_object(const std::string& line) {
  auto v = parse_json_object(line, 16);
  return v ? std::move(*v) : json::object();
}

std::map<std::string, rpc::Method> serve_methods(AgentSession& session) {
  const std::string cwd = session.workspace();
  std::map<std::string, rpc::Method> m;
  m["run"] = [&session, cwd](const json& params, rpc::Out& out,
                                          const json& request)
      -> std::variant<json, rpc::RpcError> {
    auto p = run_params(params, cwd);
    if (auto* e = std::get_if<rpc::RpcError>(&p)) return *e;
    std::uint64_t id = 0;
    auto ran = run_one(
        session, std::get<RunParams>(p), [&](std::uint64_t i) { id = i; },
        [&](OutputStream s, std::string_view bytes) {
          out.notify("output", {{"request", request},
                                {"command", id},
                                {"stream", s == OutputStream::kStdout ? "stdout" : "stderr"},
                                {"data", json_bytes(std::string(bytes))}});
        });
    if (!ran) return rpc::RpcError{rpc::kServerError, ran.error().message};
    return json{{"command", ran->outcome.id},
                {"exit_code", ran->outcome.exit_code},
                {"timed_out", ran->timed_out},
                {"annotation", ran->outcome.annotation},
                {"violations", violations_object(ran->outcome.violations_json)}};
  };
  m["policy.update"] = [&session](const json& params, rpc::Out&, const json&)
      -> std::variant<json, rpc::RpcError> {
    std::vector<std::string> add, remove;
    for (const auto& [key, list] : {std::pair{"add", &add}, std::pair{"remove", &remove}}) {
      auto it = params.find(key);
      if (it == params.end()) continue;
      if (!it->is_array()) return bad_params(std::string(key) + ": an array of domains");
      for (const auto& d : *it) {
        if (!d.is_string()) return bad_params(std::string(key) + ": an array of domains");
        list->push_back(d.get<std::string>());
      }
    }
    if (auto r = session.update_allowed_domains(add, remove); !r)
      return rpc::RpcError{rpc::kInvalidParams, r.error().message};
    return json{{"allowed_domains", session.allowed_domains()}};
  };
  return m;
}

// Ask mode over JSON-RPC (docs/protocol.md): each question is a request from the server,
// id "ask-N", method "ask"; the client's reply's result is {"answer": "once" | "session" |
// "always" | "deny"}. A reply to a question no longer pending (answered, timed out) is
// ignored; an error reply, or a result without an answer, is a deny (recorded as such).
class RpcAsks {
 public:
  explicit RpcAsks(rpc::Out& out) : out_(out) {}

  void ask(const AskPrompt& p, AskReply reply) {
    const std::string id = "ask-" + std::to_string(p.ask);
    {
      std::lock_guard lock(mu_);
      pending_[id] = std::move(reply);
    }
    json choices = {"once", "session"};
    if (p.can_always) choices.push_back("always");
    choices.push_back("deny");
    // From the proxy's thread: queued, never waited for (supervisor/agent/rpc_out.h).
    out_.post(json{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"method", "ask"},
                   {"params",
                    {{"ask", p.ask},
                     {"command", p.command},
                     {"proto", p.proto},
                     {"host", p.host},
                     {"port", p.port},
                     {"address", p.address},
                     {"entry", p.entry},
                     {"timeout", p.timeout_s},
                     {"choices", choices}}}});
  }

  void on_reply(const json& msg) {
    const json& id = msg["id"];
    if (!id.is_string()) return;
    AskReply reply;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(id.get<std::string>());
      if (it == pending_.end()) return;
      reply = std::move(it->second);
      pending_.erase(it);
    }
    std::string answer;
    if (auto r = msg.find("result"); r != msg.end()) {
      const auto a = r->is_object() ? r->find("answer") : r->end();
      answer = a != r->end() && a->is_string() ? a->get<std::string>() : r->dump();
    } else {
      answer = "an error reply: " + msg["error"].dump();
    }
    (void)reply(answer);
  }

 private:
  rpc::Out& out_;
  std::mutex mu_;
  std::map<std::string, AskReply> pending_;
};

// MCP (2024-11-05 and later): one tool, a sandboxed shell.
std::map<std::string, rpc::Method> mcp_methods(AgentSession& session) {
  const std::string cwd = session.workspace();
  std::map<std::string, rpc::Method> m;
  m["initialize"] = [](const json& params, rpc::Out&, const json&) -> std::variant<json, rpc::RpcError> {
    const std::string version = params.value("protocolVersion", "2024-11-05");
    return json{{"protocolVersion", version},
                {"capabilities", {{"tools", json::object()}}},
                {"serverInfo", {{"name", "vigil"}, {"version", "0.1.0"}}}};
  };
  m["notifications/initialized"] = [](const json&, rpc::Out&, const json&) -> std::variant<json, rpc::RpcError> {
    return json();
  };
  m["ping"] = [](const json&, rpc::Out&, const json&) -> std::variant<json, rpc::RpcError> {
    return json::object();
  };
  m["tools/list"] = [cwd](const json&, rpc::Out&, const json&) -> std::variant<json, rpc::RpcError> {
    json schema = {
        {"type", "object"},
        {"properties",
         {{"command", {{"type", "string"}, {"description", "shell command (bash -c)"}}},
          {"cwd",
           {{"type", "string"},
            {"description", "absolute working directory inside the workspace " + cwd +
                                " (the default)"}}},
          {"timeout", {{"type", "number"}, {"description", "seconds before it is killed"}}}}},
        {"required", json::array({"command"})}};
    return json{{"tools", json::array({{{"name", "run_command"},
                                        {"description",
                                         "Run a shell command in vigil's sandbox. The output "
                                         "ends with a <sandbox_violations> block when the "
                                         "sandbox stopped something."},
                                        {"inputSchema", schema}}})}};
  };
  m["tools/call"] = [&session, cwd](const json& params, rpc::Out&, const json&)
      -> std::variant<json, rpc::RpcError> {
    if (params.value("name", "") != "run_command") return bad_params("unknown tool");
    const json args = params.value("arguments", json::object());
    if (!args.contains("command") || !args["command"].is_string())
      return bad_params("run_command: command (a string) is required");
    json run = {{"argv", {"/bin/bash", "-c", args["command"]}}};
    if (args.contains("cwd")) run["cwd"] = args["cwd"];
    if (args.contains("timeout")) run["timeout"] = args["timeout"];
    auto p = run_params(run, cwd);
    // A tool's refusal is the tool's result (isError), which the model is shown; a
    // protocol error may be hidden from it.
    if (auto* e = std::get_if<rpc::RpcError>(&p)) {
      return json{{"content", {{{"type", "text"}, {"text", "vigil: " + e->message}}}},
                  {"isError", true}};
    }
    auto ran = run_one(session, std::get<RunParams>(p), {}, [](OutputStream, std::string_view) {});
    if (!ran) {
      return json{{"content", {{{"type", "text"}, {"text", "vigil: " + ran.error().message}}}},
                  {"isError", true}};
    }
    std::string text = ran->combined;
    const int code = ran->outcome.exit_code;
    if (ran->timed_out) text += "\n[killed: timed out]";
    if (code != 0) text += "\n[exit code " + std::to_string(code) + "]";
    return json{{"content", {{{"type", "text"}, {"text", text}}}}, {"isError", code != 0}};
  };
  return m;
}

}  // namespace

int cmd_serve(const SessionArgs& args, bool mcp) {
  auto opts = session_options(args);
  if (!opts) return report(opts.error());
  std::signal(SIGPIPE, SIG_IGN);
  // stdout is the protocol's: the events go there as notifications (serve), nothing else.
  rpc::Out out(STDOUT_FILENO);
  RpcAsks asks(out);
  if (!mcp) {
    opts->ask_client = [&asks](const AskPrompt& p, AskReply reply) { asks.ask(p, std::move(reply)); };
    opts->on_event = [&out](const events::Event& e) {
      if (e.kind() == events::Kind::kIoStdout || e.kind() == events::Kind::kIoStderr) return;
      auto record = parse_json_object(events::serialize(e), 16);
      // Under the log's lock: queued, never waited for.
      if (record) out.notify_now("event", {{"command", e.cmd ? json(*e.cmd) : json()}, {"record", *record}});
    };
  }
  auto session = AgentSession::open(std::move(*opts));
  if (!session) return report(session.error());
  print_notice("session log " + (*session)->log_path());
  rpc::serve(STDIN_FILENO, out, mcp ? mcp_methods(**session) : serve_methods(**session),
             [&asks](const json& reply) { asks.on_reply(reply); });
  if (auto r = (*session)->end(); !r) return report(r.error());
  return 0;
}

}  // namespace vigil
