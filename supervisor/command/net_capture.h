// vigil.network.capture for one command (observer/inet_broker.h, observer/dns_stub.h): the
// proxy's capture listener and what the sandbox is launched with for it.
#pragma once

#include <optional>
#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/command/session_proxy.h"

namespace vigil {

struct NetCaptureSetup {
  // The proxy's capture socket, O_PATH: handed to vigil-init (--net-capture-fd), whose
  // /proc/self/fd/N is the only way to it (it is never bound into the sandbox).
  UniqueFd listener;
  // The sandbox's /etc/resolv.conf: vigil-init's DNS stub on 127.0.0.1.
  std::string resolv_conf;
};

// Binds the capture listener in `session_dir` and writes the resolv.conf there. nullopt
// (said on stderr) when this host has no /etc/resolv.conf to bind over: the command then
// runs as without capture.
// `stub`: the address of vigil-init's DNS stub (an agent session's command: its own).
Result<std::optional<NetCaptureSetup>> prepare_net_capture(SessionProxy& proxy,
                                                           const std::string& session_dir,
                                                           const std::string& stub = "127.0.0.1");

}  // namespace vigil
