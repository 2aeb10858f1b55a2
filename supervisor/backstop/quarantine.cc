#include "supervisor/backstop/quarantine.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/policy/git_config_edit.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/backstop/remove_tree.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

nlohmann::ordered_json bytes_json(const std::string& s) {
  if (events::is_valid_utf8(s)) return s;
  return {{"b64", events::base64_encode(s)}};
}

// Copies the entry `name` of `from_dir` to `name` in `to_dir`: regular files, directories
// and symlinks (as links); other types are left out. Never follows a symlink.
Result<void> copy_entry(int from_dir, const char* name, int to_dir, const std::string& where) {
  struct stat st {};
  if (::fstatat(from_dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return system_error("cannot stat " + where);
  if (S_ISLNK(st.st_mode)) {
    std::string target(4096, '\0');
    const ssize_t n = ::readlinkat(from_dir, name, target.data(), target.size());
    if (n < 0) return system_error("cannot read link " + where);
    target.resize(static_cast<std::size_t>(n));
    if (::symlinkat(target.c_str(), to_dir, name) != 0) return system_error("cannot copy " + where);
    return {};
  }
  if (S_ISREG(st.st_mode)) {
    UniqueFd in(::openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    UniqueFd out(::openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          st.st_mode & 0700));
    if (!in || !out) return system_error("cannot copy " + where);
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(in.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return system_error("cannot read " + where);
      if (n == 0) return {};
      if (auto w = write_all(out.get(), std::string_view(buf, static_cast<std::size_t>(n)), where);
          !w)
        return w;
    }
  }
  if (!S_ISDIR(st.st_mode)) return {};
  if (::mkdirat(to_dir, name, 0700) != 0) return system_error("cannot copy " + where);
  UniqueFd src(::openat(from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd dst(::openat(to_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!src || !dst) return system_error("cannot copy " + where);
  UniqueFd lister(::dup(src.get()));
  DIR* d = lister ? ::fdopendir(lister.get()) : nullptr;
  if (d == nullptr) return system_error("cannot list " + where);
  (void)lister.release();
  Result<void> r;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    r = copy_entry(src.get(), e->d_name, dst.get(), where + "/" + std::string(n));
    if (!r) break;
  }
  ::closedir(d);
  return r;
}

// Moves `path` to `dir`/`name`: a rename, or across filesystems a copy and a removal.
Result<void> move_out(const std::string& path, int dir_fd, const std::string& name) {
  const auto slash = path.rfind('/');
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = path.substr(slash + 1);
  // The parent may itself be a symlink the command left (it is a path the walk reached
  // without following one, so only a swap after the walk could make it one: nothing
  // runs any more).
  UniqueFd pfd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!pfd) return system_error("cannot open " + parent);
  if (::renameat(pfd.get(), base.c_str(), dir_fd, name.c_str()) == 0) return {};
  if (errno != EXDEV) return system_error("cannot move " + path);
  if (auto c = copy_entry(pfd.get(), base.c_str(), dir_fd, path); !c) return c;
  return remove_tree(path);
}

// A config bigger than this is moved whole: git's own are a few hundred bytes, and the
// removed lines must fit in one log record.
constexpr std::size_t kMaxEdited = 256 * 1024;
constexpr std::size_t kMaxRestore = 32 * 1024;

Result<std::string> read_config(int parent, const std::string& base) {
  UniqueFd fd(::openat(parent, base.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return system_error("cannot read " + base);
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxEdited)
    return make_error(Errc::kRefused, "not a small regular file");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error("cannot read " + base);
    got += static_cast<std::size_t>(n);
  }
  return text;
}

// Takes `keys` out of the config at `path`, keeping the rest: the removed lines go to
// `dir_fd`/`name`, the rest is written beside the config and renamed over it (same mode).
Result<git::KeyRemoval> take_keys_out(const std::string& path, const std::vector<std::string>& keys,
                                      int dir_fd, const std::string& name) {
  const auto slash = path.rfind('/');
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = path.substr(slash + 1);
  UniqueFd pfd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!pfd) return system_error("cannot open " + parent);
  auto text = read_config(pfd.get(), base);
  VIGIL_TRY(text);
  auto cut = git::remove_config_keys(*text, keys);
  VIGIL_TRY(cut);
  if (cut->restore.size() > kMaxRestore) return make_error(Errc::kRefused, "too many lines to take out");
  struct stat st {};
  if (::fstatat(pfd.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return system_error("cannot stat " + path);
  {
    UniqueFd kept(::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!kept) return system_error("cannot write the removed lines");
    VIGIL_TRY_VOID(write_all(kept.get(), cut->restore, "the removed lines"));
  }
  const std::string tmp = "." + base + ".vigil-kept." + std::to_string(::getpid());
  ::unlinkat(pfd.get(), tmp.c_str(), 0);
  UniqueFd out(::openat(pfd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        st.st_mode & 0777));
  if (!out) return system_error("cannot write beside " + path);
  auto w = write_all(out.get(), cut->kept, path);
  if (w && ::fchmod(out.get(), st.st_mode & 0777) != 0) w = system_error("cannot set the mode of " + path);
  if (w && ::renameat(pfd.get(), tmp.c_str(), pfd.get(), base.c_str()) != 0)
    w = system_error("cannot put " + path + " back in place");
  if (!w) {
    ::unlinkat(pfd.get(), tmp.c_str(), 0);
    ::unlinkat(dir_fd, name.c_str(), 0);
    return std::move(w).error();
  }
  return cut;
}

}  // namespace

Result<std::string> quarantine_dir_for(const std::string& id, const char* xdg_state_home,
                                       const char* home) {
  auto log = default_log_path(id, xdg_state_home, home);
  VIGIL_TRY(log);
  // <state>/vigil/sessions/<id>.jsonl -> <state>/vigil/quarantine/<id>
  const std::string& p = *log;
  const auto sessions = p.rfind("/sessions/");
  return p.substr(0, sessions) + "/quarantine/" + id;
}

std::vector<QuarantineResult> quarantine(const std::vector<Offender>& offenders,
                                         const std::string& dir) {
  std::vector<QuarantineResult> out;
  if (offenders.empty()) return out;
  // The same checks as the log's directory: every component ours, the last two private.
  auto ready = prepare_log_dir(dir + "/manifest.jsonl");
  UniqueFd dir_fd;
  if (ready) dir_fd = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd manifest;
  if (dir_fd) {
    manifest = UniqueFd(::openat(dir_fd.get(), "manifest.jsonl",
                                 O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
  }
  const std::string setup_error =
      !ready ? ready.error().message : (!dir_fd || !manifest) ? "cannot open " + dir : "";
  std::size_t n = 0;
  for (const auto& o : offenders) {
    QuarantineResult r{o, {}, setup_error};
    if (setup_error.empty()) {
      const std::string name = std::to_string(++n);
      // A config keeps everything but the offending keys; when that cannot be done
      // exactly (text git cannot parse, a key on a header's line), it is moved whole.
      if (!o.keys.empty()) {
        if (auto cut = take_keys_out(o.path, o.keys, dir_fd.get(), name); cut) {
          r.moved_to = dir + "/" + name;
          r.removed = std::move(cut->lines);
          r.restore = std::move(cut->restore);
          nlohmann::ordered_json j;
          j["n"] = n;
          j["path"] = bytes_json(o.path);
          j["rule"] = bytes_json(o.rule);
          j["reason"] = bytes_json(o.reason);
          j["moved_to"] = bytes_json(r.moved_to);
          nlohmann::ordered_json lines = nlohmann::ordered_json::array();
          for (const auto& l : r.removed) lines.push_back(bytes_json(l));
          j["removed"] = std::move(lines);
          (void)write_all(manifest.get(), j.dump() + "\n", "quarantine manifest");
          out.push_back(std::move(r));
          continue;
        }
      }
      if (auto m = move_out(o.path, dir_fd.get(), name); m) {
        r.moved_to = dir + "/" + name;
        nlohmann::ordered_json j;
        j["n"] = n;
        j["path"] = bytes_json(o.path);
        j["rule"] = bytes_json(o.rule);
        j["reason"] = bytes_json(o.reason);
        j["moved_to"] = bytes_json(r.moved_to);
        (void)write_all(manifest.get(), j.dump() + "\n", "quarantine manifest");
      } else {
        r.error = m.error().message;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace vigil
