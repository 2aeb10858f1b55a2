#include "supervisor/launch/external_proxy.h"

#include "supervisor/core/wire/init_args.h"

namespace vigil {
namespace {
std::string sibling(const std::string& proxy_socket, const char* name) {
  const auto slash = proxy_socket.rfind('/');
  return (slash == std::string::npos ? std::string() : proxy_socket.substr(0, slash + 1)) + name;
}
}  // namespace

std::string external_http_socket(const std::string& proxy_socket) {
  return sibling(proxy_socket, "proxy-http.sock");
}
std::string external_socks_socket(const std::string& proxy_socket) {
  return sibling(proxy_socket, "proxy-socks.sock");
}

ExternalBridges external_bridges(const NetworkPolicy& net, const std::string& proxy_socket) {
  ExternalBridges out;
  wire::InitArgs init;
  if (net.external_http_port != 0) {
    init.http_socket = external_http_socket(proxy_socket);
    out.binds.push_back(init.http_socket);
  }
  if (net.external_socks_port != 0) {
    init.socks_socket = external_socks_socket(proxy_socket);
    out.binds.push_back(init.socks_socket);
  }
  out.init_args = wire::option_args(init);
  return out;
}

std::vector<std::string> external_proxy_lines(const NetworkPolicy& net) {
  std::vector<std::string> out;
  auto line = [&](std::uint16_t port, const char* what, const char* key) {
    if (port == 0) return;
    out.push_back(std::string("network: ") + what + " goes to your proxy on the host's 127.0.0.1:" +
                  std::to_string(port) + " (network." + key +
                  "), which decides it: the allowed and refused hosts here do not apply to it, "
                  "and vigil logs each such connection as not decided by vigil");
  };
  line(net.external_http_port, "HTTP proxy traffic (HTTP_PROXY, HTTPS_PROXY)", "httpProxyPort");
  line(net.external_socks_port, "SOCKS5 traffic (ALL_PROXY)", "socksProxyPort");
  return out;
}

}  // namespace vigil
