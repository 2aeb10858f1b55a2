// SandboxedRun's launch (sandboxed_run.h): the callbacks launch_bwrap() calls at each stage
// (the launch check and release, the work while bwrap builds, the streams and the caps),
// the wait, and what the command's end leaves in the log and tells the caller.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "observer/dns_stub.h"  // the DNS stub's port
#include "supervisor/backstop/change_capture.h"
#include "supervisor/command/block_delivery.h"
#include "supervisor/command/command_backstop.h"
#include "supervisor/command/sandboxed_run.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/wire/env_block.h"
#include "supervisor/launch/sandbox_netns.h"

namespace vigil {

// Nothing of the sandbox runs before its mount table is the plan's (launch_check.h).
void SandboxedRun::set_release_check(LaunchIo& io) {
  planned_table_ = planned_mounts(bwrap_args_);
  io.release = &release_->write;
  io.before_release = [this](pid_t sandbox) -> Result<void> {
    release_->read.reset();
    // Into the command's cgroup v2 while bwrap builds the mounts and they are checked.
    caps_->begin_adopt(sandbox);
    // The DNS stub's port (supervisor/launch/sandbox_netns.h), lowered while the mounts are
    // checked, before vigil-init runs.
    std::optional<Result<PortLowering>> lowering;
    // (An agent session's namespace had it lowered when it was made: session_netns.h.)
    if (capture_ && !cmd_.netns) lowering.emplace(start_lowering(sandbox, init::kDnsPort));
    auto checked =
        check_sandbox_mounts(sandbox, planned_table_, identities_, std::chrono::seconds(10));
    auto adopted = caps_->end_adopt();
    if (checked && !adopted) checked = std::move(adopted);
    // Not lowered: vigil-init says names will not resolve, and connects are still captured.
    if (lowering) {
      auto low = *lowering ? finish_lowering(**lowering) : Result<void>(lowering->error());
      if (checked && !low) print_warning(low.error().message);
    }
    if (checked) {
      // The backstop's "during the session" starts before anything of the sandbox runs.
      // Without a floor stamp, waited for here, after the check, rather than before it:
      // the check takes about a clock tick itself, so the wait is mostly over.
      if (!spare_) wait_for_coarse_clock(snapshot_);
      return {};
    }
    // A sandbox vigil could not set up as planned (exit 125), like bwrap failing.
    return make_error(Errc::kUnsupported,
                      "refusing to run the command: " + checked.error().message);
  };
}

// While bwrap builds the sandbox (~10 ms): the seccomp program, the log and the proxy.
// The program goes last: its arrival starts the command (filters/sandbox_program.h).
void SandboxedRun::set_after_spawn(LaunchIo& io) {
  io.after_spawn = [this]() -> Result<void> {
    // Both ends closed on every way out: written, the program is vigil-init's go; closed
    // unwritten (any error below), vigil-init refuses to start the command.
    struct ClosePipe {
      Pipe& pipe;
      ~ClosePipe() {
        pipe.write.reset();
        pipe.read.reset();
      }
    } close_pipe{*program_pipe_};
    auto wire = compiled_program(unix_sockets_mode(prepared_->policy.net, gatekeeper_),
                                 init_opts_.traps_reads, init_opts_.captures);
    VIGIL_TRY(wire);
    if (!log_created_) {
      VIGIL_TRY_VOID(sink_.create_now());
    }
    // A spare's record opens at hand-off (SpareHandoff::take_command), when it learns its
    // command; until then record_ stays null and nothing is logged.
    if (!spare_) {
      auto opened = sink_.open(*prepared_);
      VIGIL_TRY(opened);
      record_ = *opened;
    }
    proxy_->serve();
    // The pipe holds the whole program (far below its capacity): this never blocks.
    if (auto w = write_all(program_pipe_->write.get(), *wire, "vigil-init's seccomp program"); !w)
      return std::move(w).error();
    return {};
  };
}

void SandboxedRun::set_streams_and_caps(LaunchIo& io) {
  io.hold_records = [this](bool on) {
    if (record_ != nullptr) record_->hold_writes(on);
  };
  io.on_event_line = [this](std::string_view line) { streams_->on_event_line(line); };
  io.capture_output = cmd_.capture_output;
  io.interrupted_fd = cmd_.interrupted_fd;
  io.merge_output = cmd_.merge_output;
  io.on_output = [this](OutputStream s, std::string_view bytes) {
    return streams_->on_output(s, bytes);
  };
  if (limits_.timeout_s) io.timeout_ms = static_cast<int>(*limits_.timeout_s * 1000.0);
  io.enter_caps = [this] { return caps_->enter(); };
  io.leave_caps = [this] { caps_->leave(); };
  io.check_limits = [this](pid_t init_pid) { return caps_->check(init_pid); };
  io.check_every_ms = caps_->check_every_ms();
}

Result<SandboxedOutcome> SandboxedRun::launch_and_finish() {
  LaunchIo io;
  io.events = &*events_;
  io.pass_fds.push_back(program_pipe_->read.get());
  io.pass_fds.push_back(release_->read.get());
  set_release_check(io);
  if (store_) io.pass_fds.push_back(store_->fd.get());
  if (capture_) io.pass_fds.push_back(capture_->listener.get());
  // bwrap's own environment: vigil's minimal one, whatever the command's is.
  static const std::vector<std::string> host_env = wire::host_helper_environment();
  io.env = &host_env;
  if (env_block_) io.pass_fds.push_back(env_block_->get());
  io.stdio = cmd_.stdio;
  if (cmd_.netns) io.join = cmd_.netns->join();
  io.on_spawned = [this](pid_t pid) {
    bwrap_pid_ = pid;
    if (cmd_.on_spawned) cmd_.on_spawned(pid);
  };
  if (handoff_) handoff_->prepare(io);
  set_after_spawn(io);
  set_streams_and_caps(io);
  if (handoff_) {
    io.before_wait = [this]() -> Result<void> {
      SpareHandoff::Launched l;
      l.wait = cmd_.spare;
      l.built = std::move(*spare_built_);
      l.session_tmp = session_->tmp();
      l.bwrap = bwrap_pid_;
      l.prepared = &*prepared_;
      l.setenv = in_.setenv;
      l.proxy_setenv = proxy_setenv_count_;
      l.capture_output = cmd_.capture_output;
      return handoff_->take_command(std::move(l), store_, snapshot_, sink_, record_, owner_);
    };
  }
  auto launched = launch_bwrap(bwrap_, bwrap_args_, std::move(*status_), io);
  settle();
  VIGIL_TRY(launched);
  // The null-record path, explicit: a launch that returned without an error opened the
  // record (after_spawn, or the spare's hand-off in before_wait).
  if (record_ == nullptr) return make_error(Errc::kInternal, "the command ran without a record");
  return outcome(*launched);
}

void SandboxedRun::settle() {
  // The output is over: the tail of a long one goes to the log now (vigil.log.maxOutputBytes).
  streams_->finish();
  // A spare never handed a command leaves no store behind (nothing wrote to it).
  if (spare_ && owner_.handed == nullptr && store_) ::rmdir(store_->dir.c_str());
  proxy_->stop();
  // Only those no other session may have capped as existing files (session_dir.h).
  session_->finish(placeholders_);
  // Every sandbox process is gone: nothing can race the check. (A launch error after the
  // command may have run is checked all the same.)
  if (record_ != nullptr) {
    const DebugPhase timed("backstop");
    run_backstop(prepared_->policy, snapshot_, std::move(streams_->written), placeholders_,
                 owner_.quarantine_id, *record_);
  }
  if (record_ != nullptr && store_) {
    const DebugPhase timed("capture");
    CaptureCaps left = prepared_->policy.vigil.capture_caps;
    left.max_session_bytes = budget_.left;
    ContentStore post(store_->fd.get(), left);
    post.count_used(streams_->changed.pre_image_bytes());
    const std::size_t capped = streams_->changed.take_post_images(
        post, [this](events::FsImage e) { streams_->append(events::Source::kSupervisor, std::move(e)); });
    // A cap that stopped capture is said in the log and in the block: what it left out
    // cannot be undone.
    if (capped + streams_->changed.capped_pre_images() > 0) {
      streams_->append(events::Source::kSupervisor,
                       capture_cap_record(budget_, prepared_->policy.vigil.capture_caps,
                                          capped + streams_->changed.capped_pre_images()));
    }
  }
  // A store nothing was kept in is not left behind (rmdir fails on one that holds files):
  // the caps' accounting walks every store at each launch.
  if (store_) ::rmdir(store_->dir.c_str());
}

SandboxedOutcome SandboxedRun::outcome(const LaunchResult& launched) {
  // A cap vigil ended the command at goes in the block, first (cap_plan.h). A process
  // killed by SIGXFSZ is the file-size cap: no other sender is plausible in a sandbox.
  std::string limit = launched.limit;
  if (limit.empty() && cap_plan_.max_file_bytes > 0 &&
      launched.exit_code == exit_code_for_signal(SIGXFSZ)) {
    limit = "file size";
  }
  if (!limit.empty()) {
    streams_->append(events::Source::kSupervisor,
                     events::LimitReached{limit, limit_detail(limit, cap_plan_)});
  }
  // Tell the model what was stopped, after everything the command printed.
  SandboxedOutcome out;
  out.exit_code = launched.exit_code;
  out.annotation = record_->annotation();
  if (cmd_.violations_json) out.violations_json = record_->violations_json();
  // Outside the block: a harness reading the block as "something was stopped" must not
  // see what was allowed (git init's own hooks).
  if (const std::string n = record_->note(); !n.empty()) print_debug(n);
  auto to_stderr = [this](std::string_view text) {
    if (cmd_.capture_output) {
      forward_(OutputStream::kStderr, text);
    } else {
      std::fflush(stdout);
      write_all_to(owner_.stdio[2], text);
    }
  };
  if (cmd_.annotate_stderr) {
    deliver_block(*record_, out.annotation,
                  block_needs_newline(cmd_.capture_output, streams_->stderr_ends_line()),
                  to_stderr);
  } else if (!out.annotation.empty()) {
    // The block goes to the model in the caller's result (`serve`, `mcp`): the log records
    // it all the same, so that replay --annotate shows what the model was told, in every
    // mode.
    record_->log_annotation(out.annotation, false);
  }
  if (!limit.empty()) {
    out.limit = "limit: " + limit;
    to_stderr("vigil: the command was ended (" + out.limit + ": " +
              limit_detail(limit, cap_plan_) + ")\n");
  }
  return out;
}

}  // namespace vigil
