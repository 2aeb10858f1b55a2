// `vigil serve` and `vigil mcp`: an agent session (supervisor/agent/agent_session.h) driven by
// JSON-RPC on stdio (supervisor/agent/rpc_stdio.h). The method tables are
// supervisor/agent/serve_methods.h and supervisor/agent/mcp_methods.h; docs/protocol.md.
#include "supervisor/cli/serve_command.h"

#include <signal.h>
#include <unistd.h>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/mcp_methods.h"
#include "supervisor/agent/rpc_stdio.h"
#include "supervisor/agent/serve_methods.h"
#include "supervisor/agent/wire_json.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"

namespace vigil {

int cmd_serve(const SessionArgs& args, bool mcp) {
  using json = nlohmann::json;
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
  if (mcp) {
    McpServer server(**session);
    rpc::serve(STDIN_FILENO, out, server.methods(), server.hooks());
  } else {
    ServeServer server(**session, asks);
    rpc::serve(STDIN_FILENO, out, server.methods(), server.hooks(STDOUT_FILENO));
  }
  if (auto r = (*session)->end(); !r) return report(r.error());
  return 0;
}

}  // namespace vigil
