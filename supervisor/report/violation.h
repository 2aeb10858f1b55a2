// One entry of the <sandbox_violations> block (annotation.h): what was refused (or let
// through unguarded), how often, and why. A plain value the collector (annotation.h) and
// the grouping of its lines (denial_groups.h) share.
#pragma once

#include <cstdint>
#include <string>

namespace vigil {

struct Violation {
  enum class Kind { kFs, kNet, kUnix };
  Kind kind = Kind::kFs;
  std::string op;      // the first attempt's syscall ("openat"), "network-outbound" or
                       // "socket AF_UNIX"
  std::uint16_t actions = 0;  // fs: bit (1 << WriteAction) of every attempt's action
  std::string target;  // fs: the resolved path (the path as passed if unresolved);
                       // net: host:port ([v6]:port); unix: the socket's path, or its
                       // type when socket() itself was refused. Raw bytes: escape to show.
  std::string reason;  // of the first attempt
  std::uint64_t count = 0;
  std::uint64_t first_seq = 0;
  // Detail for the JSON form.
  std::string path;  // fs: the path as the command passed it (first attempt); "" = target
  std::string host;  // net
  std::uint16_t port = 0;
  std::string rule;  // net: the settings entry that decided ("" = default deny)
  // net: the program whose connect() vigil-init captured (vigil.network.capture): it
  // ignored the proxy settings. "" = a client of the proxy.
  std::string program;
  const std::string& spelling() const { return path.empty() ? target : path; }
};

}  // namespace vigil
