// `vigil undo LOG [--command N] [--dry-run] [--force] [PATH...]` (issues 17, 32): puts
// back what a session (or one command of an agent session) changed, from its log and its
// content stores. The shell only: the plan is supervisor/backstop/undo_plan.h (pure,
// checked whole before anything is done), the host side supervisor/backstop/undo_apply.h.
// This file checks the seal, prints the plan (the dry run prints the same), acts, and
// logs what it did.
//
// Safety: the log must verify and be sealed with this user's key (a forged log could name
// any path; --unsealed opts in, loudly); only paths in the session's host scope (its
// writable roots, recorded in its session.start) that the session's own allowed writes
// named are touched; a plan with any step that cannot be done is refused whole.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "supervisor/backstop/change_capture.h"
#include "supervisor/backstop/undo_apply.h"
#include "supervisor/backstop/undo_plan.h"
#include "supervisor/backstop/quarantine.h"
#include "supervisor/cli/undo_quarantine.h"
#include "supervisor/core/events/content_store.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/log/log_key.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/replay/replay_command.h"  // has_command()
#include "supervisor/replay/replay_feed.h"
#include "supervisor/orchestrator/session_record.h"

namespace vigil {
namespace {

using events::escape_for_terminal;

struct UndoArgs {
  std::string log;
  std::vector<std::string> paths;
  bool dry_run = false;
  bool force = false;
  bool unsealed = false;  // act on a log this user's key did not seal (the user's risk)
  bool quarantined = false;  // put back what the backstop took out, not the session's changes
  std::optional<std::uint64_t> command;  // --command N: only what command N changed
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

// What the undo log says of a step: the call it made (or refused), as an fs.write.
events::FsWrite step_record(const undo::Step& s, const std::string& result, const std::string& why) {
  events::FsWrite w;
  w.pid = ::getpid();
  static const char* const kCall[] = {"unlinkat", "unlinkat", "renameat2", "mkdirat", "renameat2"};
  w.syscall = kCall[static_cast<int>(s.op)];
  w.flags = s.op == undo::Op::kRemoveDir ? AT_REMOVEDIR : s.op == undo::Op::kRenameBack ? RENAME_NOREPLACE : 0;
  w.path = w.resolved = s.op == undo::Op::kRenameBack ? s.to : s.path;
  if (s.op == undo::Op::kRenameBack) w.from = w.from_resolved = s.path;
  w.verdict = result.empty() ? Verdict::kDenied : Verdict::kAllowed;
  w.reason = "undo: " + std::string(to_string(s.op)) + (why.empty() ? "" : ": " + why);
  w.result = result;
  return w;
}

// The seal check: only a log vigil sealed with this user's key is acted on (--unsealed
// opts in, loudly). Returns an exit code to stop with, or nothing to go on.
std::optional<int> check_seal(const UndoArgs& a) {
  std::optional<std::string> key;
  std::string kp_text;
  if (auto kp = log_key_path(); kp) {
    kp_text = *kp;
    if (auto k = load_log_key(*kp); k) key = std::move(k).value();
  }
  auto verify = verify_log(a.log, key ? std::optional<std::string_view>(*key) : std::nullopt);
  if (!verify) return fail(verify.error().message);
  if (!verify->ok || !verify->complete || (!verify->key_id.empty() && !verify->sealed && !a.unsealed)) {
    return fail("undo: refusing " + a.log + ": it does not verify (" + verify->why +
                "); `vigil replay --verify " + a.log + "` says more");
  }
  // Only a seal proves vigil wrote the log: an unkeyed chain anyone can compute, and a
  // command that can write in its workspace can leave one naming any host file it can
  // read as "created" (issue 31). Such a log is refused unless the person opts in.
  if (!verify->sealed) {
    const std::string why = verify->key_id.empty()
                                ? "it is not sealed (no key id): anyone, the sandboxed command "
                                  "included, can write such a log"
                                : "it is sealed with key " + verify->key_id +
                                      ", not with this user's key";
    if (!a.unsealed) {
      return fail("undo: refusing " + a.log + ": " + why +
                  ". Undo only acts on logs vigil sealed with your key (" +
                  (kp_text.empty() ? std::string("log.key") : kp_text) +
                  "); if you know where this log came from, run again with --unsealed");
    }
    print_warning("undo: --unsealed: acting on " + a.log + " although " + why +
                  ". Every path it names is treated as yours to change: check the plan with "
                  "--dry-run first");
  }
  return std::nullopt;
}

std::vector<std::string> absolute(const std::vector<std::string>& paths) {
  std::vector<std::string> only;
  for (const std::string& p : paths) {
    std::string abs = p;
    if (abs.empty() || abs[0] != '/') {
      char cwd[4096];
      abs = (::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string()) + "/" + p;
    }
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    only.push_back(abs);
  }
  return only;
}

// The plan as both the dry run and the real run print it, before anything is done: the
// dry run's output is the real run's first part, byte for byte (issue 32).
void print_plan(const undo::Plan& plan) {
  std::printf("plan: %zu step(s)\n", plan.steps.size());
  for (const undo::Step& s : plan.steps) {
    // display-safe: escape_for_terminal() of the step's text
    std::printf("  %s%s\n", escape_for_terminal(undo::step_text(s)).c_str(),
                s.conflict.empty() ? "" : escape_for_terminal("  (forced over: " + s.conflict + ")").c_str());
  }
  if (plan.times_only > 0)
    std::printf("(%zu path(s) had only their times set: times are not put back)\n", plan.times_only);
  if (plan.ok()) return;
  std::printf("refused: nothing will be changed; %zu step(s) cannot be done as planned:\n",
              plan.refused.size());
  for (const undo::Refusal& r : plan.refused) {
    // display-safe: escape_for_terminal() of each piece
    std::printf("  %s: %s\n    what you can do: %s\n", escape_for_terminal(r.path).c_str(),
                escape_for_terminal(r.why).c_str(), escape_for_terminal(r.fix).c_str());
  }
}

std::unique_ptr<SessionRecord> open_undo_record(const UndoArgs& a) {
  SessionRecord::Start st;
  st.id = new_session_id();
  const std::string base = a.log.size() > 6 && a.log.ends_with(".jsonl") ? a.log.substr(0, a.log.size() - 6) : a.log;
  st.log_path = base + ".undo-" + st.id + ".jsonl";
  st.backend = "none";
  st.argv = {"vigil", "undo", a.log};
  if (a.command) st.argv.insert(st.argv.end(), {"--command", std::to_string(*a.command)});
  st.argv.insert(st.argv.end(), a.paths.begin(), a.paths.end());
  char cwd[4096];
  st.cwd = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/";
  auto opened = SessionRecord::open(std::move(st));
  if (!opened) {
    print_error("undo: cannot write its log: " + opened.error().message);
    return nullptr;
  }
  return std::move(opened).value();
}

// Carries out a checked plan, step by step, logging each call and the result.
int act(const UndoArgs& a, const undo::Plan& plan, const StoredContentFn& read) {
  std::unique_ptr<SessionRecord> rec = open_undo_record(a);
  if (!rec) return to_int(ExitCode::kUsage);
  std::size_t done = 0, failed = 0;
  ContentStore hash_only(-1, CaptureCaps{});
  for (const undo::Step& s : plan.steps) {
    auto r = undo::apply_step(s, read);
    rec->append(events::Source::kSupervisor, step_record(s, r ? "0" : "EIO", r ? s.conflict : r.error().message));
    const std::string& now = s.op == undo::Op::kRenameBack ? s.to : s.path;
    rec->append(events::Source::kSupervisor, to_event("post", now, hash_only.take_image_at(AT_FDCWD, now.c_str())));
    const std::string what = escape_for_terminal(undo::step_text(s));
    if (r) {
      ++done;
      // display-safe: escape_for_terminal() of the step's text
      std::printf("done    %s\n", what.c_str());
    } else {
      ++failed;
      // display-safe: escape_for_terminal() of the step's text and of the error
      std::printf("FAILED  %s  (%s)\n", what.c_str(), escape_for_terminal(r.error().message).c_str());
    }
  }
  const int code = failed == 0 ? 0 : 1;
  std::printf("%zu step(s) done, %zu failed\n", done, failed);
  rec->count("undo.done", done);
  rec->count("undo.failed", failed);
  const std::string path = rec->path();
  if (auto e = rec->end(code); !e) print_warning("undo: its log: " + e.error().message);
  print_error("undo log: " + path);
  return code;
}

int run_undo(const UndoArgs& a) {
  if (auto stop = check_seal(a)) return *stop;
  auto fd = open_session_log(a.log);
  if (!fd) return fail(fd.error().message);
  replay::Feed feed = replay::feed_of_fd(fd->get());
  if (a.command) {
    auto one = replay::command_feed(std::move(feed), *a.command, a.log);
    if (!one) return fail("undo: " + one.error().message);
    feed = std::move(one).value();
  }
  auto cs = replay::change_set_of(feed);
  if (!cs) return fail(cs.error().message);
  if (a.quarantined) {
    auto qdir = quarantine_dir_for(cs->session, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
    if (!qdir) return fail(qdir.error().message);
    return undo_quarantined(feed, cs->session, cs->scope, *qdir, a.dry_run);
  }
  if (!cs->capture_seen) {
    return fail("undo: " + a.log + " has no change capture (fs.image records): nothing to restore "
                "from. Capture is on by default (vigil.capture.enabled)");
  }
  // Every store of the session: `vigil run` has one, an agent session one per command.
  auto stores = capture_dirs_for(cs->session, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!stores) return fail(stores.error().message);
  const StoredContentFn read = stored_content_reader(*stores, undo::kMaxRestoreBytes);
  if (!cs->scope_recorded) {
    print_warning("undo: " + a.log + " does not record where the session could write (an "
                  "older log): acting only outside the sandbox's own trees (/dev, /proc, "
                  "session temp dirs)");
  }
  const undo::Plan plan = undo::make_plan(*cs, absolute(a.paths), undo::look_on_host,
                                          undo::store_check(read), a.force);
  print_plan(plan);
  if (!plan.ok()) return 1;
  if (plan.steps.empty()) {
    std::printf("nothing to undo\n");
    return 0;
  }
  if (a.dry_run) {
    std::printf("dry run: nothing was changed\n");
    return 0;
  }
  return act(a, plan, read);
}

}  // namespace

std::function<int()> add_undo_command(CLI::App& app) {
  auto args = std::make_shared<UndoArgs>();
  auto* cmd = app.add_subcommand("undo", "put back what a session changed (from its log and content store)");
  cmd->add_option("log", args->log, "the session log (.jsonl)")->required();
  cmd->add_option("paths", args->paths, "only these paths (a directory: everything below it)");
  cmd->add_flag("--dry-run", args->dry_run, "print what would be done, change nothing");
  cmd->add_flag("--force", args->force,
                "also put back paths changed on the host since the session (conflicts)");
  cmd->add_option("--command", args->command,
                  "only what command N of an agent session changed (its id: command.start's "
                  "cmd; `vigil replay LOG` lists them)");
  cmd->add_flag("--quarantined", args->quarantined,
                "put back what the post-run check took out in that session (the removed "
                "config lines, the moved items) instead of undoing the session's changes");
  cmd->add_flag("--unsealed", args->unsealed,
                "act on a log not sealed with your key (anyone can write such a log: check "
                "it first)");
  return [args] { return run_undo(*args); };
}

}  // namespace vigil
