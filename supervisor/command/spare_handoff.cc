#include "supervisor/command/spare_handoff.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include "observer/command_handoff.h"
#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/launch/git_safe_env.h"
#include "supervisor/launch/launch_gate.h"
#include "supervisor/command/command_backstop.h"
#include "supervisor/command/command_types.h"

extern char** environ;

namespace vigil {

Result<SpareHandoff> SpareHandoff::open() {
  SpareHandoff h;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return system_error("socketpair");
  h.ours_.reset(sv[0]);
  h.theirs_.reset(sv[1]);
  h.dev_null_.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!h.dev_null_) return system_error("cannot open /dev/null");
  return h;
}

void SpareHandoff::prepare(LaunchIo& io) {
  io.stdio = {dev_null_.get(), dev_null_.get(), dev_null_.get()};
  io.env = &no_env_;
  io.pass_fds.push_back(theirs_.get());
}

Result<void> SpareHandoff::take_command(Launched launched, std::optional<CaptureStore>& store,
                                        BackstopSnapshot& snapshot, CommandLogSink& sink,
                                        CommandRecord*& record, CommandOwner& owner) {
  theirs_.reset();  // the sandbox's alone: its end closing is our EOF
  const PreparedSandbox& prepared = *launched.prepared;
  SpareShape shape;
  shape.prepared = std::move(launched.built);
  shape.session_tmp = std::move(launched.session_tmp);
  auto ids = host_identities(spare_identity_paths(shape.prepared.plan));
  VIGIL_TRY(ids);
  shape.identities = std::move(ids).value();
  const SpareCommand* handed = launched.wait->wait(std::move(shape));
  owner.handed = handed;
  if (handed == nullptr) return make_error(Errc::kNotFound, "the spare sandbox was discarded");
  // Still there? One that died meanwhile is not the command's failure: the session
  // launches afresh (nothing was recorded yet).
  pollfd alive{ours_.get(), POLLIN | POLLRDHUP, 0};
  if (::poll(&alive, 1, 0) != 0) return make_error(Errc::kNotFound, "the spare sandbox ended");
  owner.ignore_command = ignore_command_line(handed->command);
  owner.stdio = handed->stdio;
  owner.quarantine_id = handed->quarantine_id;
  if (handed->on_spawned) handed->on_spawned(launched.bwrap);
  if (store) VIGIL_TRY_VOID(rename_capture_store(*store, owner.quarantine_id));
  snapshot = take_backstop_snapshot(scanned_git_configs(prepared.plan));
  snapshot.start = handed->backstop_start;
  auto opened = sink.open(prepared);
  VIGIL_TRY(opened);
  record = *opened;
  std::vector<std::string> inherited;
  if (!handed->env) {
    for (char** e = environ; *e != nullptr; ++e) inherited.emplace_back(*e);
  }
  auto set = std::move(launched.setenv);
  set.resize(launched.proxy_setenv);
  for (auto& kv : git_safe_directory_env(prepared.policy.git_safe_directories,
                                         env_value(handed->env, "GIT_CONFIG_COUNT")))
    set.push_back(std::move(kv));
  init::HandedCommand what{handed->command, handed_environment(handed->env, inherited, set)};
  std::array<int, 3> fds = owner.stdio;
  if (launched.capture_output) fds[1] = fds[2] = -1;  // ours: the pipes bwrap was given
  // Nothing of the command runs before this: the record is open, and every change from
  // now on is stamped after the snapshot's start (a floor stamp; else the coarse clock
  // has passed it).
  wait_for_coarse_clock(snapshot);
  VIGIL_TRY_VOID(init::send_handed_command(ours_.get(), what, fds));
  ours_.reset();
  return {};
}

}  // namespace vigil
