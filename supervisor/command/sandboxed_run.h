// One command's run, from plan to outcome: the state its steps share, and the steps, each
// one job. run_sandboxed() (sandboxed_command.h) is its only user; the steps are in
// sandboxed_command.cc (plan, proxy, bwrap's arguments) and sandboxed_run_launch.cc (the
// launch's callbacks, the wait, the finish).
//
// The members are declared in the order the steps make them, which is the reverse of the
// order they must end in: the proxy (whose callbacks append to the streams) ends before
// the streams, the streams before the record's sink, everything before the session
// directory that holds the sockets and the temp dir.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bwrap/argv_builder.h"
#include "supervisor/backstop/backstop.h"
#include "supervisor/backstop/change_capture.h"
#include "supervisor/command/command_args.h"
#include "supervisor/command/command_streams.h"
#include "supervisor/command/command_types.h"
#include "supervisor/command/net_capture.h"
#include "supervisor/command/session_dir.h"
#include "supervisor/command/session_proxy.h"
#include "supervisor/command/spare_handoff.h"
#include "supervisor/command/tls_helper.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/launch/external_proxy.h"
#include "supervisor/launch/launch_check.h"
#include "supervisor/launch/launch_gate.h"
#include "supervisor/launch/launch_io.h"
#include "supervisor/launch/launch_pipes.h"
#include "supervisor/launch/resource_caps.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/sandbox_plan.h"

namespace vigil {

class SandboxedRun {
 public:
  SandboxedRun(const SandboxedCommand& cmd, CommandLogSink& sink,
             const CommandStreams::Forward& forward);
  SandboxedRun(const SandboxedRun&) = delete;
  SandboxedRun& operator=(const SandboxedRun&) = delete;

  // The plan: the session directory, the policy and mounts, the caps, bwrap and vigil-init
  // located, the log's path, the streams and the pipes. Nothing runs yet.
  Result<void> plan();
  // The command's proxy listener, its environment (proxy variables, masked credentials,
  // the session CA's bundle) and the binds it needs.
  Result<void> open_proxy();
  // The log and change store made where the sandbox must not reach them, vigil-init's and
  // bwrap's arguments, the placeholders, the backstop's snapshot.
  Result<void> build_args();
  // bwrap launched with the callbacks below, waited for, and the command's end recorded.
  Result<SandboxedOutcome> launch_and_finish();

 private:
  Result<void> place_placeholders();
  void set_release_check(LaunchIo& io);
  void set_after_spawn(LaunchIo& io);
  void set_streams_and_caps(LaunchIo& io);
  // After the sandbox is gone: the output's tail, the store's post-images, the backstop.
  void settle();
  SandboxedOutcome outcome(const LaunchResult& launched);

  const SandboxedCommand& cmd_;
  CommandLogSink& sink_;
  const CommandStreams::Forward& forward_;
  const bool spare_;

  std::optional<SessionDir> session_;
  std::optional<PreparedSandbox> prepared_;
  // What a spare is compared with at hand-off: the plan before the session's additions.
  std::optional<PreparedSandbox> spare_built_;
  LimitsOptions limits_;
  CapPlan cap_plan_;
  std::unique_ptr<CommandCaps> caps_;
  std::string bwrap_;
  std::string init_;
  std::string log_path_;
  Policy planned_;
  // Null until the log is open (never, for a spare not handed a command): the record's
  // absence is what every step checks, in one place each.
  CommandRecord* record_ = nullptr;
  CommandOwner owner_;
  HostScope scope_;  // what of the host the sandbox could write (host_scope.h)
  std::optional<CommandStreams> streams_;
  std::optional<Pipe> status_;
  std::optional<Pipe> events_;
  BwrapInputs in_;
  std::optional<CommandCredentials> masked_;
  ProxyTls tls_;
  ProxyAsk ask_;
  std::unique_ptr<SessionProxy> proxy_;
  std::size_t proxy_setenv_count_ = 0;
  ExternalBridges external_;
  bool log_created_ = false;
  std::optional<CaptureStore> store_;
  std::optional<Pipe> program_pipe_;
  std::optional<Pipe> release_;
  std::vector<ExpectedMount> identities_;
  std::optional<SpareHandoff> handoff_;
  std::optional<UniqueFd> env_block_;
  bool gatekeeper_ = false;
  std::optional<NetCaptureSetup> capture_;
  CaptureBudget budget_;
  InitOptions init_opts_;
  std::vector<BwrapArg> bwrap_args_;
  std::vector<std::string> placeholders_;
  BackstopSnapshot snapshot_;
  std::vector<PlannedMount> planned_table_;
  pid_t bwrap_pid_ = -1;
};

}  // namespace vigil
