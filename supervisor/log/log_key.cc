#include "supervisor/log/log_key.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

Result<std::string> read_key(const UniqueFd& fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + path);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      st.st_size != static_cast<off_t>(kLogKeyBytes)) {
    return make_error(Errc::kRefused,
                      "the session log key " + path +
                          " is not a private 32-byte file of ours (mode 0600); remove it and "
                          "vigil makes a new one (logs sealed with the old key then no longer "
                          "verify)");
  }
  std::string key(kLogKeyBytes, '\0');
  if (::pread(fd.get(), key.data(), key.size(), 0) != static_cast<ssize_t>(key.size()))
    return system_error("cannot read " + path);
  return key;
}

}  // namespace

Result<std::string> log_key_path(const char* xdg_state_home, const char* home) {
  auto dir = vigil_state_dir(xdg_state_home, home);
  if (!dir) return make_error(Errc::kNotFound, "no place for the session log key: " + dir.error().message);
  return *dir + "/log.key";
}

Result<std::string> log_key_path() {
  return log_key_path(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
}

Result<std::string> load_log_key(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return make_error(Errc::kNotFound, "no session log key at " + path);
    return system_error("cannot open " + path);
  }
  return read_key(fd, path);
}

Result<std::string> load_or_create_log_key(const std::string& path) {
  if (auto existing = load_log_key(path); existing || existing.error().code != Errc::kNotFound)
    return existing;
  const std::string dir = path.substr(0, path.rfind('/'));
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    if (::mkdir(dir.substr(0, pos).c_str(), 0700) != 0 && errno != EEXIST)
      return system_error("cannot create " + dir.substr(0, pos));
  }
  std::string key(kLogKeyBytes, '\0');
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size()))
    return system_error("getrandom");
  // Written under a temporary name and linked in whole: a reader never sees half a key,
  // and of two sessions creating it at once, one key wins and both use it.
  const std::string fresh = path + ".new." + std::to_string(::getpid());
  {
    UniqueFd fd(::open(fresh.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return system_error("cannot create " + fresh);
    if (auto w = write_all(fd.get(), key, fresh); !w) {
      ::unlink(fresh.c_str());
      return std::move(w).error();
    }
  }
  const int linked = ::link(fresh.c_str(), path.c_str());
  const int err = errno;
  ::unlink(fresh.c_str());
  if (linked != 0 && err != EEXIST) return system_error("cannot create " + path, err);
  return load_log_key(path);
}

std::string log_key_id(std::string_view key) { return sha256_hex(key).substr(0, 16); }

std::string log_seal(std::string_view key, std::string_view line) {
  return to_hex(hmac_sha256(key, line));
}

Result<std::string> vigil_state_dir(const char* xdg_state_home, const char* home) {
  std::string base;
  if (xdg_state_home != nullptr && xdg_state_home[0] == '/') {
    base = xdg_state_home;
  } else if (home != nullptr && home[0] == '/') {
    base = std::string(home) + "/.local/state";
  } else {
    return make_error(Errc::kNotFound, "neither XDG_STATE_HOME nor HOME is an absolute path");
  }
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base == "/") base.clear();
  return base + "/vigil";
}

}  // namespace vigil
