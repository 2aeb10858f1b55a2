// `vigil undo LOG [--dry-run] [--force] [PATH...]` (issue 17): puts back what a session
// changed, from its log and its content store. The plan is pure (supervisor/replay/undo_plan.h);
// this file looks at the host, acts, and logs what it did.
//
// Safety: the log must verify and be sealed with this user's key (a forged log could name
// any path; --unsealed opts in, loudly); only paths in the session's host scope (its
// writable roots, recorded in its session.start: never the sandbox's own /dev, /proc or
// temp dir) that the session's own allowed writes named are touched (they are what the change set holds);
// every path is reached without following a symlink on the way (openat2
// RESOLVE_NO_SYMLINKS on its parent, then *at calls on the last name, which never follow
// it), so a link planted after the session cannot send a restore elsewhere. Files are
// written to a fresh name beside the target and renamed over it.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "supervisor/backstop/change_capture.h"
#include "supervisor/backstop/quarantine.h"
#include "supervisor/cli/undo_quarantine.h"
#include "supervisor/core/events/content_store.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/log/log_key.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/orchestrator/session_record.h"
#include "supervisor/replay/undo_plan.h"

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
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

std::string errno_name(int err) {
  const char* n = ::strerrorname_np(err);
  return n != nullptr ? n : "E" + std::to_string(err);
}

UniqueFd open_beneath(const std::string& path, std::uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
}

struct Parent {
  UniqueFd fd;
  std::string last;
};
Result<Parent> parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size())
    return make_error(Errc::kRefused, "not an absolute path to a name: " + path);
  Parent p;
  p.last = path.substr(slash + 1);
  p.fd = open_beneath(slash == 0 ? "/" : path.substr(0, slash), O_PATH | O_DIRECTORY);
  if (!p.fd) {
    return make_error(Errc::kSystem, errno == ELOOP ? "a symlink on the way to it"
                                                    : "its directory: " + errno_name(errno));
  }
  return p;
}

undo::HostState look(const std::string& path) {
  undo::HostState s;
  UniqueFd fd = open_beneath(path, O_PATH | O_NOFOLLOW);
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      s.type = "absent";
    } else {
      s.type = "unreachable";
      s.why = errno == ELOOP ? "a symlink on the way to it" : errno_name(errno);
    }
    return s;
  }
  ContentStore hash_only(-1, CaptureCaps{});
  const Image img = hash_only.take_image(fd.get());
  s.type = to_string(img.type);
  s.sha256 = img.sha256;
  s.target = img.target;
  return s;
}

// Owners are put back only by root, and never the overflow id a user namespace shows for
// an owner it does not map (the pre-image was taken inside the sandbox).
bool restore_owner(const events::FsImage& img) {
  return ::geteuid() == 0 && img.uid != 65534 && img.gid != 65534;
}

// The new thing is made under a fresh name beside the target, then renamed over it.
Result<void> restore(const undo::Step& s, const replay::ContentFn& read) {
  auto p = parent_of(s.path);
  VIGIL_TRY(p);
  const events::FsImage& img = s.want.image;
  const std::string tmp = ".vigil-undo." + std::to_string(::getpid()) + "." + p->last.substr(0, 32);
  ::unlinkat(p->fd.get(), tmp.c_str(), 0);  // a leftover of an interrupted undo of ours
  if (s.want.type == "symlink") {
    if (::symlinkat(img.target.c_str(), p->fd.get(), tmp.c_str()) != 0)
      return system_error("cannot make the symlink");
    if (restore_owner(img)) ::fchownat(p->fd.get(), tmp.c_str(), img.uid, img.gid, AT_SYMLINK_NOFOLLOW);
  } else {
    const replay::Content c = read(img);
    if (!c.ok) return make_error(Errc::kNotFound, c.why);
    UniqueFd out(::openat(p->fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return system_error("cannot write beside it");
    auto w = write_all(out.get(), c.bytes, s.path);
    if (w && restore_owner(img) && ::fchown(out.get(), img.uid, img.gid) != 0)
      w = system_error("cannot give it back its owner");
    if (w && ::fchmod(out.get(), img.mode & 07777) != 0) w = system_error("cannot set its mode");
    if (!w) {
      ::unlinkat(p->fd.get(), tmp.c_str(), 0);
      return w;
    }
  }
  if (::renameat(p->fd.get(), tmp.c_str(), p->fd.get(), p->last.c_str()) != 0) {
    const Error e = system_error("cannot put it in place");
    ::unlinkat(p->fd.get(), tmp.c_str(), 0);
    return e;
  }
  return {};
}

Result<void> make_dir(const undo::Step& s) {
  auto p = parent_of(s.path);
  VIGIL_TRY(p);
  const bool known = s.want.imaged();
  if (::mkdirat(p->fd.get(), p->last.c_str(), 0700) != 0) return system_error("cannot make it");
  UniqueFd d(::openat(p->fd.get(), p->last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d) return system_error("cannot open it");
  if (known && restore_owner(s.want.image)) ::fchown(d.get(), s.want.image.uid, s.want.image.gid);
  // Without an image (a log from before directories had them) the usual 0755.
  if (::fchmod(d.get(), known ? s.want.image.mode & 07777 : 0755) != 0)
    return system_error("cannot set its mode");
  return {};
}

Result<void> perform(const undo::Step& s, const replay::ContentFn& read) {
  switch (s.op) {
    case undo::Op::kRemove:
    case undo::Op::kRemoveDir: {
      auto p = parent_of(s.path);
      VIGIL_TRY(p);
      if (::unlinkat(p->fd.get(), p->last.c_str(), s.op == undo::Op::kRemoveDir ? AT_REMOVEDIR : 0) != 0)
        return system_error("cannot remove it");
      return {};
    }
    case undo::Op::kMakeDir:
      return make_dir(s);
    case undo::Op::kRestore:
      return restore(s, read);
    case undo::Op::kRenameBack: {
      auto from = parent_of(s.path);
      VIGIL_TRY(from);
      auto to = parent_of(s.to);
      VIGIL_TRY(to);
      if (::syscall(SYS_renameat2, from->fd.get(), from->last.c_str(), to->fd.get(), to->last.c_str(),
                    RENAME_NOREPLACE) != 0)
        return system_error("cannot move it back");
      return {};
    }
  }
  return {};
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

int run_undo(const UndoArgs& a) {
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
  auto fd = open_session_log(a.log);
  if (!fd) return fail(fd.error().message);
  auto cs = replay::change_set_of(replay::feed_of_fd(fd->get()));
  if (!cs) return fail(cs.error().message);
  if (a.quarantined) {
    auto qdir = quarantine_dir_for(cs->session, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
    if (!qdir) return fail(qdir.error().message);
    return undo_quarantined(a.log, cs->scope, *qdir, a.dry_run);
  }
  if (!cs->capture_seen) {
    return fail("undo: " + a.log + " has no change capture (fs.image records): nothing to restore "
                "from. Capture is on by default (vigil.capture.enabled)");
  }
  auto store = capture_dir_for(cs->session, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!store) return fail(store.error().message);
  const replay::ContentFn read = replay::store_reader(*store);
  std::vector<std::string> only;
  for (const std::string& p : a.paths) {
    std::string abs = p;
    if (abs.empty() || abs[0] != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) == nullptr) return fail("undo: cannot read the working directory");
      abs = std::string(cwd) + "/" + p;
    }
    while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    only.push_back(abs);
  }
  std::vector<undo::Step> plan = undo::plan_undo(*cs, only, look);
  // The change set already holds only names in the session's host scope (recorded in its
  // sealed session.start); every step is checked against it again before anything is
  // done, its second name too.
  if (!cs->scope_recorded && verify->sealed) {
    print_warning("undo: " + a.log + " does not record where the session could write (an "
                  "older log): acting only outside the sandbox's own trees (/dev, /proc, "
                  "session temp dirs)");
  }
  for (undo::Step& s : plan) {
    if (!in_host_scope(cs->scope, s.path) ||
        (s.op == undo::Op::kRenameBack && !in_host_scope(cs->scope, s.to))) {
      s.cannot = "outside the session's writable roots: not a name the session could write on "
                 "the host";
    }
  }

  std::unique_ptr<SessionRecord> rec;
  if (!a.dry_run && !plan.empty()) {
    SessionRecord::Start st;
    st.id = new_session_id();
    const std::string base = a.log.size() > 6 && a.log.ends_with(".jsonl") ? a.log.substr(0, a.log.size() - 6) : a.log;
    st.log_path = base + ".undo-" + st.id + ".jsonl";
    st.backend = "none";
    st.argv = {"vigil", "undo", a.log};
    st.argv.insert(st.argv.end(), a.paths.begin(), a.paths.end());
    char cwd[4096];
    st.cwd = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/";
    auto opened = SessionRecord::open(std::move(st));
    if (!opened) return fail("undo: cannot write its log: " + opened.error().message);
    rec = std::move(opened).value();
  }
  std::size_t done = 0, left = 0, failed = 0;
  for (const undo::Step& s : plan) {
    const std::string what = std::string(to_string(s.op)) + " " + escape_for_terminal(s.path) +
                             (s.op == undo::Op::kRenameBack ? " -> " + escape_for_terminal(s.to) : "");
    if (!s.cannot.empty() || (!s.conflict.empty() && !a.force)) {
      ++left;
      const std::string why = s.cannot.empty() ? "CONFLICT: " + s.conflict : "CANNOT: " + s.cannot;
      // display-safe: `what` is made of escape_for_terminal() pieces and words of ours
      std::printf("left    %s  (%s)\n", what.c_str(), escape_for_terminal(why).c_str());
      if (rec) rec->append(events::Source::kSupervisor, step_record(s, "", why));
      continue;
    }
    if (a.dry_run) {
      // display-safe: `what` is made of escape_for_terminal() pieces and words of ours
      std::printf("would   %s%s\n", what.c_str(),
                  s.conflict.empty() ? "" : escape_for_terminal("  (forced over: " + s.conflict + ")").c_str());
      ++done;
      continue;
    }
    auto r = perform(s, read);
    if (rec) rec->append(events::Source::kSupervisor, step_record(s, r ? "0" : "EIO", r ? s.conflict : r.error().message));
    if (rec) {
      ContentStore hash_only(-1, CaptureCaps{});
      rec->append(events::Source::kSupervisor,
                  to_event("post", s.op == undo::Op::kRenameBack ? s.to : s.path,
                           hash_only.take_image_at(AT_FDCWD, (s.op == undo::Op::kRenameBack ? s.to : s.path).c_str())));
    }
    if (r) {
      ++done;
      // display-safe: `what` is made of escape_for_terminal() pieces and words of ours
      std::printf("done    %s\n", what.c_str());
    } else {
      ++failed;
      // display-safe: `what` is made of escape_for_terminal() pieces and words of ours
      std::printf("FAILED  %s  (%s)\n", what.c_str(), escape_for_terminal(r.error().message).c_str());
    }
  }
  const int code = left + failed == 0 ? 0 : 1;
  std::printf("%zu step(s) %s, %zu left alone, %zu failed\n", done, a.dry_run ? "to do" : "done", left, failed);
  if (rec) {
    rec->count("undo.done", done);
    rec->count("undo.left", left);
    rec->count("undo.failed", failed);
    const std::string path = rec->path();
    if (auto e = rec->end(code); !e) print_warning("undo: its log: " + e.error().message);
    print_error("undo log: " + path);
  }
  if (plan.empty()) std::printf("nothing to undo\n");
  return code;
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
  cmd->add_flag("--quarantined", args->quarantined,
                "put back what the post-run check took out in that session (the removed "
                "config lines, the moved items) instead of undoing the session's changes");
  cmd->add_flag("--unsealed", args->unsealed,
                "act on a log not sealed with your key (anyone can write such a log: check "
                "it first)");
  return [args] { return run_undo(*args); };
}

}  // namespace vigil
