// The per-session directory on the host: <base>/<random>/ with tmp/ (the command's
// TMPDIR, bound writable).
// <base> is $XDG_RUNTIME_DIR/vigil when that is ours, else /tmp/vigil-<uid>; it must be a
// real directory owned by us and closed to others, or we refuse (someone else could have
// planted it). It never lives under TMPDIR=/dev/shm, which bwrap's fresh /dev would hide.
#pragma once

#include <string>

#include "supervisor/core/result.h"

namespace vigil {

class SessionDir {
 public:
  static Result<SessionDir> create();
  SessionDir(SessionDir&& o) noexcept;
  SessionDir& operator=(SessionDir&&) = delete;
  SessionDir(const SessionDir&) = delete;
  ~SessionDir();  // removes the whole session directory (the temp dir goes with it)

  const std::string& path() const { return path_; }
  const std::string& tmp() const { return tmp_; }
  const std::string& id() const { return id_; }
  std::string proxy_socket() const { return path_ + "/proxy.sock"; }

 private:
  SessionDir() = default;
  std::string path_, tmp_, id_;
};

// Removes a tree without following symlinks or crossing mount points.
Result<void> remove_tree(const std::string& path);

}  // namespace vigil
