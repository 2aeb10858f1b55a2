#include "supervisor/command/command_args.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "filters/sandbox_program.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/wire/env_block.h"
#include "supervisor/core/wire/init_args.h"
#include "supervisor/launch/deny_at_call.h"
#include "supervisor/launch/launch_pipes.h"
#include "supervisor/command/log_guard.h"
#include "supervisor/command/spare_sandbox.h"

extern char** environ;

namespace vigil {

Result<UniqueFd> command_env_block(const std::optional<std::vector<std::string>>& env,
                                   const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> inherited;
  if (!env) {
    for (char** e = environ; *e != nullptr; ++e) inherited.emplace_back(*e);
  }
  return sealed_memfd(wire::encode_env_block(handed_environment(env, inherited, set)),
                      "the command's environment");
}

std::vector<std::string> writable_mounts(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kWritable || op.kind == OpKind::kPin) out.push_back(op.path);
  }
  return out;
}

PathRule session_rule(const std::string& resolved, const std::string& origin) {
  PathRule r;
  r.written = r.literal = r.resolved = resolved;
  r.origin = origin;
  const PathState state = stat_path(resolved);
  r.kind = state.kind;
  r.first_missing = state.first_missing;
  r.first_missing_exists = state.blocked_by_existing;
  return r;
}

std::optional<std::string> log_bind(const PreparedSandbox& prepared, const std::string& log_path) {
  auto guard = log_guard(prepared.plan, prepared.policy.fs.allow_write, resolve_symlinks(log_path));
  if (!guard) return std::nullopt;
  return guard->path;
}

UnixSockets unix_sockets_mode(const NetworkPolicy& net, bool gatekeeper) {
  if (net.allow_all_unix_sockets) return UnixSockets::kAll;
  if (!net.allow_unix_sockets.empty() || gatekeeper) return UnixSockets::kBrokered;
  return UnixSockets::kBlocked;
}

Result<std::string> compiled_program(UnixSockets unix, bool reads, bool capture) {
  auto compile = [](UnixSockets mode, bool r, bool c) -> Result<std::string> {
    auto program = sandbox_program(/*observe=*/true, mode, r, c);
    VIGIL_TRY(program);
    return encode_program(*program);
  };
  static std::mutex mu;
  static std::map<std::tuple<UnixSockets, bool, bool>, Result<std::string>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(unix, reads, capture);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, compile(unix, reads, capture)).first;
  return it->second;
}

InitOptions vigil_init_options(const InitArgsInputs& in) {
  const Policy& policy = *in.policy;
  wire::InitArgs opts;
  opts.events_fd = in.events_fd;
  opts.program_fd = in.program_fd;
  opts.command_fd = in.command_fd;
  opts.env_fd = in.env_fd;
  opts.proxy_socket = in.proxy_socket;
  opts.loopback = in.loopback;
  opts.overflow_drop = policy.vigil.observer_overflow == VigilOptions::Overflow::kDrop;
  opts.no_sync_wake_up = !policy.vigil.observer_sync_wake_up;
  opts.outer_proc = in.outer_proc;
  if (in.capture_fd >= 0) {
    opts.capture_fd = in.capture_fd;
    const auto& cc = policy.vigil.capture_caps;
    opts.capture_caps =
        wire::CaptureCaps{cc.max_file_bytes, std::min(cc.max_session_bytes, in.capture_left)};
    for (const auto& t : in.capture_skip) opts.capture_skip.push_back({t, "the sandbox's own"});
  }
  // network.allowUnixSockets: brokered by vigil-init (observer/unix_broker.h). The mode
  // goes to vigil-init explicitly: it must handle the broker's traps whatever the list.
  opts.unix_broker = unix_sockets_mode(policy.net, in.gatekeeper) == UnixSockets::kBrokered;
  if (!policy.net.allow_all_unix_sockets) opts.unix_sockets = policy.net.allow_unix_sockets;
  opts.net_capture_fd = in.net_capture_fd;
  InitOptions out;
  out.captures = in.net_capture_fd >= 0;
  out.args = wire::option_args(opts);
  auto add = [&out](const std::vector<std::string>& more) {
    out.args.insert(out.args.end(), more.begin(), more.end());
  };
  add(in.external);
  add(in.caps);
  add(refuse_create_args(*in.plan));
  if (in.gatekeeper) add(refuse_glob_args(policy.fs));
  // Reads are trapped only when there is something hidden to tell of.
  if (policy.vigil.observer_reads) {
    const auto hidden = hidden_read_args(*in.plan);
    out.traps_reads = !hidden.empty();
    add(hidden);
  }
  return out;
}

}  // namespace vigil
