#include "supervisor/command/net_capture.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {

Result<std::optional<NetCaptureSetup>> prepare_net_capture(SessionProxy& proxy,
                                                           const std::string& session_dir,
                                                           const std::string& stub) {
  // bwrap binds over the host's /etc/resolv.conf (the root is read-only: a missing one
  // cannot be made a mount point).
  struct stat st {};
  if (::stat("/etc/resolv.conf", &st) != 0 || !S_ISREG(st.st_mode)) {
    print_warning("vigil.network.capture is off for this command: this host has no "
                  "/etc/resolv.conf to point the sandbox at its DNS stub (create one, or set "
                  "vigil.network.capture to false to silence this)");
    return std::optional<NetCaptureSetup>();
  }
  NetCaptureSetup s;
  const std::string socket = session_dir + "/capture.sock";
  VIGIL_TRY_VOID(proxy.listen_captured(socket));
  s.listener.reset(::open(socket.c_str(), O_PATH | O_CLOEXEC));
  if (!s.listener) return system_error("open " + socket);
  s.resolv_conf = session_dir + "/resolv.conf";
  UniqueFd f(::open(s.resolv_conf.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!f) return system_error("create " + s.resolv_conf);
  // no-aaaa (glibc 2.36; other resolvers skip an option they do not know): glibc's
  // getaddrinfo asks for A only. With an A and an AAAA answer it would connect a UDP
  // socket to each to sort them, two more trapped calls per lookup (about a tenth of a
  // captured connection's set-up: tools/bench/net_capture_bench.sh); an IPv6-only lookup
  // of a name (curl -6) finds nothing, where without capture it had no network at all.
  // The stub still answers AAAA (Go's own resolver asks for both).
  VIGIL_TRY_VOID(write_all(f.get(), "nameserver " + stub + "\noptions no-aaaa\n",
                           "the sandbox's resolv.conf"));
  return std::optional<NetCaptureSetup>(std::move(s));
}

}  // namespace vigil
