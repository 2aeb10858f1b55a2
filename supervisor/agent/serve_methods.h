// `vigil serve`'s JSON-RPC methods (docs/protocol.md): run (background: true too), output,
// wait, kill, list, cancel ($/cancelRequest too), policy.update, and ask mode's questions
// to the client (RpcAsks).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <nlohmann/json.hpp>
#include <string>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/background.h"
#include "supervisor/agent/command_stop.h"
#include "supervisor/agent/rpc_stdio.h"

namespace vigil {

// Ask mode over JSON-RPC: each question is a request from the server, id "ask-N", method
// "ask"; the client's reply's result is {"answer": "once" | "session" | "always" | "deny"}.
// A reply to a question no longer pending (answered, timed out) is ignored; an error
// reply, or a result without an answer, is a deny (recorded as such).
class RpcAsks {
 public:
  explicit RpcAsks(rpc::Out& out) : out_(out) {}
  void ask(const AskPrompt& p, AskReply reply);
  void on_reply(const nlohmann::json& msg);

 private:
  rpc::Out& out_;
  std::mutex mu_;
  std::map<std::string, AskReply> pending_;
};

class ServeServer {
 public:
  ServeServer(AgentSession& session, RpcAsks& asks)
      : session_(session), asks_(asks), background_(session) {}
  ~ServeServer();
  ServeServer(const ServeServer&) = delete;
  ServeServer& operator=(const ServeServer&) = delete;
  std::map<std::string, rpc::Method> methods();
  // `out_fd`: the client's end of the protocol; when it is gone at stdin's EOF, or goes
  // while the requests in flight are waited for, the client went away and what it started
  // ends (command.cancel, by "disconnect").
  rpc::ServeHooks hooks(int out_fd);

 private:
  rpc::Reply run(const nlohmann::json& params, rpc::Out& out, const nlohmann::json& id);
  void add_background_methods(std::map<std::string, rpc::Method>& m);
  AgentSession& session_;
  RpcAsks& asks_;
  RunningCommands running_;
  BackgroundCommands background_;
  std::atomic<bool> stop_watch_{false};
  std::thread watch_;  // after EOF: for the reader of our stdout going away
};

}  // namespace vigil
