// An agent session's own network namespace (`vigil session`, `serve`, `mcp`): one for the
// whole session, which every command's sandbox joins, so that loopback is shared across
// its commands as in a developer's shell (a server one command starts in the background
// is reachable from the next). `vigil run` keeps a namespace of its own per command
// (bwrap's --unshare-net).
//
// The namespace has only `lo`, up: nothing in it reaches the host or the network; the
// only way out is still each command's vigil-init bridges to that command's proxy
// socket. Nothing runs to hold it: the supervisor keeps a descriptor of it (and, when
// unprivileged, of the user namespace that owns it), and it ends when the session
// releases them and the last sandbox in it has ended.
//
// Each command gets a loopback address of its own (127.86.X.Y) for its bridges
// (3128, 1080, the external proxies' ports) and capture's DNS stub (:53): two commands
// running at once do not collide, and a command's proxy records stay its own (each
// vigil-init splices to its own command's proxy socket). 127.0.0.1 stays the
// commands' own.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The namespaces a spawn joins before it execs bwrap (supervisor/launch/joined_spawn.h).
struct NetnsJoin {
  int user_fd = -1;  // the owning user namespace to join first; -1: none (root)
  int net_fd = -1;
};

// Pure: the loopback address of a session's `n`th command (n from 0): 127.86.X.Y with Y
// in 1..254, so that no address is a network or broadcast one, and 127.0.0.1 never.
std::string session_loopback_address(std::uint32_t n);

class SessionNetns {
 public:
  // A new network namespace with `lo` up. Unprivileged (or root without CAP_SYS_ADMIN),
  // under a new user namespace that maps only this process's uid and gid to themselves.
  static Result<std::shared_ptr<SessionNetns>> create();

  NetnsJoin join() const { return {user_.get(), net_.get()}; }
  // The namespace's inode (as in /proc/PID/ns/net's "net:[N]").
  std::uint64_t inode() const { return inode_; }
  // The next command's own loopback address (session_loopback_address). Thread-safe.
  std::string next_loopback() { return session_loopback_address(next_.fetch_add(1)); }

 private:
  SessionNetns() = default;
  // One try: with a user namespace of its own, or (root) without.
  static Result<std::shared_ptr<SessionNetns>> attempt(bool own_user);
  UniqueFd user_, net_;
  std::uint64_t inode_ = 0;
  std::atomic<std::uint32_t> next_{0};
};

}  // namespace vigil
