// network.httpProxyPort / socksProxyPort on Linux: which bridge of vigil-init leads to
// the user's own proxy (through the session proxy's relay, proxy/external_relay.h)
// instead of to vigil's. Pure: the socket paths, vigil-init's options and the binds.
#pragma once

#include <string>
#include <vector>

#include "supervisor/core/policy/policy.h"

namespace vigil {

// <dir of proxy.sock>/proxy-http.sock and /proxy-socks.sock.
std::string external_http_socket(const std::string& proxy_socket);
std::string external_socks_socket(const std::string& proxy_socket);

struct ExternalBridges {
  std::vector<std::string> init_args;  // --http-socket PATH, --socks-socket PATH
  std::vector<std::string> binds;      // the relay sockets, bound read-only into the sandbox
};
ExternalBridges external_bridges(const NetworkPolicy& net, const std::string& proxy_socket);

// explain's lines for the external ports (none when both are 0).
std::vector<std::string> external_proxy_lines(const NetworkPolicy& net);

}  // namespace vigil
