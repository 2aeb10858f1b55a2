// The network section of a settings file (network.*, and network.parentProxy): the
// Loader's half that reads it (policy_loader_detail.h).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <span>
#include <vector>

#include "supervisor/core/policy/glob.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/policy/settings_json.h"
#include "supervisor/core/base/unique_fd.h"

#include "supervisor/core/policy/policy_loader_detail.h"

namespace vigil::detail {

Result<void> Loader::load_network(const json& net) {
  if (!net.is_object()) return type_error("network", net, "an object");
  check_keys(net, "network", keys_at("network"));
  auto& n = p_->net;
  ok(read_strings(net, "network", "allowedDomains", &n.allowed_domains));
  ok(read_strings(net, "network", "deniedDomains", &n.denied_domains));
  ok(read_strings(net, "network", "deniedResolvedAddresses", &n.denied_resolved_addresses));
  ok(read_strings(net, "network", "allowUnixSockets", &n.allow_unix_sockets));
#if !defined(__APPLE__)
  // Linux: vigil-init compares canonical paths exactly (observer/unix_rules.h), so each
  // entry is a full path (~ and a relative spelling expanded as srt does) or "@name" for
  // an abstract socket.
  for (std::size_t i = 0; i < n.allow_unix_sockets.size(); ++i) {
    std::string& entry = n.allow_unix_sockets[i];
    if (!entry.empty() && entry[0] == '@') continue;
    auto expanded = expand_settings_path(entry, ctx_.cwd, ctx_.home);
    if (!expanded) {
      ok(fail(json_path_index("network.allowUnixSockets", i),
              expanded.error().message + " (a socket's full path, or @name for an abstract one)"));
      continue;
    }
    entry = std::move(expanded).value();
  }
#endif
  ok(read_bool(net, "network", "allowAllUnixSockets", &n.allow_all_unix_sockets));
  if (n.allow_all_unix_sockets) {
    p_->warnings.push_back(
        std::string(source_) +
        ": WARNING: network.allowAllUnixSockets=true: the command can connect to EVERY unix "
        "socket it can see (the Docker daemon, ssh-agent, the session bus: each one a way "
        "out of the sandbox, past the network namespace and the proxy); list only the "
        "sockets it needs in network.allowUnixSockets instead");
  }
  ok(read_strings(net, "network", "allowMachLookup", &n.allow_mach_lookup));
  ok(read_bool(net, "network", "allowLocalBinding", &n.allow_local_binding));
  bool strict = true;
  ok(read_bool(net, "network", "strictAllowlist", &strict));
  if (!strict) {
    p_->warnings.push_back(std::string(source_) +
                           ": network.strictAllowlist=false has no effect: a host off the "
                           "allow list is refused (to be asked instead, set "
                           "vigil.network.ask and run an agent session)");
  }
  for (auto [key, out] : {std::pair{"httpProxyPort", &n.external_http_port},
                          std::pair{"socksProxyPort", &n.external_socks_port}}) {
    ok(load_external_port(net, key, out));
  }
  if (auto it = net.find("parentProxy"); it != net.end()) {
    const std::string sub = "network.parentProxy";
    if (!it->is_object()) return type_error(sub, *it, "an object");
    check_keys(*it, sub, keys_at("network.parentProxy"));
    auto& pp = n.parent_proxy;
    pp.origin = sub;
    for (auto [key, out] : {std::pair{"http", &pp.http}, std::pair{"https", &pp.https},
                            std::pair{"noProxy", &pp.no_proxy}}) {
      if (auto v = it->find(key); v != it->end()) {
        if (!v->is_string()) return type_error(json_path_key(sub, key), *v, "a string");
        *out = v->get<std::string>();
      }
    }
  }
  ok(load_tls_keys(net));
  if (auto it = net.find("deniedDomainReasons"); it != net.end()) {
    const std::string sub = "network.deniedDomainReasons";
    if (!it->is_object()) return type_error(sub, *it, "an object of strings");
    for (const auto& [k, v] : it->items()) {
      const std::string ks = json_path_key(sub, k);
      if (!v.is_string()) {
        ok(type_error(ks, v, "a string"));
        continue;
      }
      if (v.get_ref<const std::string&>().empty()) {
        ok(fail(ks, "reason cannot be empty"));
        continue;
      }
      n.denied_domain_reasons[k] = v.get<std::string>();
    }
  }
  return {};
}

// network.httpProxyPort / socksProxyPort: a port of the host's 127.0.0.1, where the
// user runs a proxy of their own. Said loudly: that proxy decides, not vigil's lists.
Result<void> Loader::load_external_port(const json& net, const char* key, std::uint16_t* out) {
  auto it = net.find(key);
  if (it == net.end()) return {};
  const std::string sub = json_path_key("network", key);
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() < 1 ||
      it->get<std::uint64_t>() > 65535) {
    return fail(sub, "expected a port number from 1 to 65535, got " + it->dump());
  }
#if defined(__APPLE__)
  return fail(sub,
              "not supported on macOS yet (the Seatbelt profile reaches only vigil's own "
              "proxy); instead, remove the key, or set network.parentProxy to chain vigil's "
              "proxy to yours");
#else
  *out = static_cast<std::uint16_t>(it->get<std::uint64_t>());
  const bool http = std::string_view(key) == "httpProxyPort";
  p_->warnings.push_back(
      std::string(source_) + ": " + sub + ": " + (http ? "HTTP" : "SOCKS5") +
      " traffic goes to your proxy on 127.0.0.1:" + std::to_string(*out) +
      ", which decides it: vigil's allowedDomains, deniedDomains and address guard do not "
      "apply to it; vigil records each connection it passes on as not decided by vigil");
  return {};
#endif
}

}  // namespace vigil::detail
