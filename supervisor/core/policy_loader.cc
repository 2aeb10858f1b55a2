#include "supervisor/core/policy_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <span>
#include <vector>

#include "supervisor/core/glob.h"
#include "supervisor/core/path_expand.h"
#include "supervisor/core/regular_file.h"
#include "supervisor/core/settings_json.h"
#include "supervisor/core/unique_fd.h"

namespace vigil {
namespace {

using nlohmann::json;

// Every key srt 0.0.83's schema accepts at each level vigil reads, plus "vigil". Order
// is irrelevant. A refusal says what to do instead (docs/srt-compatibility.md lists the
// same table; tests/data/srt_0.0.83_keys.txt is srt's key list it is checked against).
constexpr KeySpec kTopKeys[] = {
    {"network", Support::kHandled, "", ""},
    {"filesystem", Support::kHandled, "", ""},
    {"mandatoryDenySearchDepth", Support::kHandled, "", ""},
    {"bwrapPath", Support::kHandled, "", ""},
    {"enableWeakerNetworkIsolation", Support::kHandled, "", ""},
    {"allowAppleEvents", Support::kHandled, "", ""},
    {"allowPty", Support::kHandled, "", ""},
    {"ignoreViolations", Support::kHandled, "", ""},
    {"vigil", Support::kHandled, "", ""},
    {"credentials", Support::kUnsupported,
     "credential masking needs a proxy that rewrites request bodies and headers, and vigil "
     "does not terminate TLS",
     "keep a credential file from the command with filesystem.denyRead, and unset a secret "
     "environment variable before `vigil run`"},
    {"enableWeakerNestedSandbox", Support::kUnsupportedIfOn, "a weaker nested sandbox",
     "inside a container, let bwrap make user namespaces (`vigil doctor` names the fix), or run "
     "with --sandbox off, which says loudly that nothing is confined"},
    {"allowNestedUserNamespaces", Support::kUnsupportedIfOn,
     "nested user namespaces would let the command undo the write denies",
     "run a tool that needs its own namespaces (a browser sandbox, podman) outside vigil"},
    {"javaAgentJarPath", Support::kUnsupported, "vigil has no JVM proxy agent",
     "pass the proxy to Java yourself: JAVA_TOOL_OPTIONS=\"-Dhttps.proxyHost=127.0.0.1 "
     "-Dhttps.proxyPort=<port of $HTTPS_PROXY>\""},
    {"git", Support::kUnsupported, "injected git configuration",
     "set safe.directory with GIT_CONFIG_COUNT/GIT_CONFIG_KEY_0/GIT_CONFIG_VALUE_0 in the "
     "command's environment"},
    {"ripgrep", Support::kNotApplicable, "vigil scans for mandatory denies with its own walker",
     ""},
    {"seccomp", Support::kNotApplicable, "vigil installs its own seccomp filters", ""},
    {"socatPath", Support::kNotApplicable, "vigil bridges the proxy without socat", ""},
    {"windows", Support::kNotApplicable, "Windows-only settings", ""},
};

// Said by every TLS-termination key: what vigil filters on instead.
constexpr std::string_view kNoTls =
    "filter by host name with allowedDomains/deniedDomains (and ports with \"host:port\")";

constexpr KeySpec kNetworkKeys[] = {
    {"allowedDomains", Support::kHandled, "", ""},
    {"deniedDomains", Support::kHandled, "", ""},
    {"deniedDomainReasons", Support::kHandled, "", ""},
    {"deniedResolvedAddresses", Support::kHandled, "", ""},
    {"allowLocalBinding", Support::kHandled, "", ""},
    {"allowUnixSockets", Support::kHandled, "", ""},
    {"allowMachLookup", Support::kHandled, "", ""},
    {"strictAllowlist", Support::kHandled, "", ""},
    {"allowAllUnixSockets", Support::kHandled, "", ""},
    {"httpProxyPort", Support::kUnsupported,
     "an external HTTP proxy in place of vigil's (vigil's proxy decides every connection)",
     "remove the key: vigil starts its own proxy and reports what it refuses"},
    {"socksProxyPort", Support::kUnsupported,
     "an external SOCKS proxy in place of vigil's (vigil's proxy decides every connection)",
     "remove the key: vigil starts its own proxy and reports what it refuses"},
    {"mitmProxy", Support::kUnsupported, "routing through a MITM proxy's unix socket", kNoTls},
    {"filterRequest", Support::kUnsupported,
     "a JavaScript callback, which a settings file cannot hold", kNoTls},
    {"allowPlaintextHeaderSet", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"stripResponseHeaders", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"refuseOpaqueTunnels", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"requireHostMatch", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"ambiguousRequestTarget", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"tlsTerminate", Support::kUnsupported, "vigil does not terminate TLS", kNoTls},
    {"parentProxy", Support::kHandled, "", ""},
};

constexpr KeySpec kParentProxyKeys[] = {
    {"http", Support::kHandled, "", ""},
    {"https", Support::kHandled, "", ""},
    {"noProxy", Support::kHandled, "", ""},
};

constexpr KeySpec kFilesystemKeys[] = {
    {"denyRead", Support::kHandled, "", ""},
    {"allowRead", Support::kHandled, "", ""},
    {"allowWrite", Support::kHandled, "", ""},
    {"denyWrite", Support::kHandled, "", ""},
    {"allowGitConfig", Support::kHandled, "", ""},
    {"disabled", Support::kUnsupportedIfOn, "running without any filesystem policy",
     "run with --sandbox off, which says loudly that nothing is confined"},
};

// vigil's own keys (not srt's).
constexpr KeySpec kVigilKeys[] = {
    {"observer", Support::kHandled, "", ""},
    {"log", Support::kHandled, "", ""},
    {"network", Support::kHandled, "", ""},
    {"limits", Support::kHandled, "", ""},
    {"git", Support::kHandled, "", ""},
    {"capture", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilGitKeys[] = {
    {"writableRepository", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilNetworkKeys[] = {
    {"ask", Support::kHandled, "", ""},
    {"askTimeoutSeconds", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilLimitsKeys[] = {
    {"processes", Support::kHandled, "", ""},
    {"memoryBytes", Support::kHandled, "", ""},
    {"maxFileBytes", Support::kHandled, "", ""},
    {"timeoutSeconds", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilCaptureKeys[] = {
    {"enabled", Support::kHandled, "", ""},
    {"maxFileBytes", Support::kHandled, "", ""},
    {"maxSessionBytes", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilLogKeys[] = {
    {"maxOutputBytes", Support::kHandled, "", ""},
    {"keep", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilObserverKeys[] = {
    {"overflow", Support::kHandled, "", ""},
    {"syncWakeUp", Support::kHandled, "", ""},
};

struct KeyLevel {
  std::string_view prefix;
  std::span<const KeySpec> specs;
};
constexpr KeyLevel kLevels[] = {
    {"", kTopKeys},
    {"network", kNetworkKeys},
    {"network.parentProxy", kParentProxyKeys},
    {"filesystem", kFilesystemKeys},
    {"vigil", kVigilKeys},
    {"vigil.observer", kVigilObserverKeys},
    {"vigil.log", kVigilLogKeys},
    {"vigil.network", kVigilNetworkKeys},
    {"vigil.limits", kVigilLimitsKeys},
    {"vigil.git", kVigilGitKeys},
    {"vigil.capture", kVigilCaptureKeys},
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::null:
      return "null";
    default:
      return "something else";
  }
}

class Loader {
 public:
  Loader(const SettingsJson& doc, std::string_view source, const LoadContext& ctx, Policy* out)
      : doc_(doc), source_(source), ctx_(ctx), p_(out) {}

  Result<void> load() {
    const json& root = doc_.root;
    if (!root.is_object()) return type_error("", root, "an object");
    if (auto r = check_keys(root, "", kTopKeys); !r) return r;
    if (auto it = root.find("network"); it != root.end()) {
      if (auto r = load_network(*it); !r) return r;
    }
    if (auto it = root.find("filesystem"); it != root.end()) {
      if (auto r = load_filesystem(*it); !r) return r;
    }
    if (auto it = root.find("mandatoryDenySearchDepth"); it != root.end()) {
      if (!it->is_number_integer())
        return type_error("mandatoryDenySearchDepth", *it, "an integer");
      const auto depth = it->get<std::int64_t>();
      if (depth < 1 || depth > 10) {
        // dump(), not the int64 value: a huge unsigned number would print as negative.
        return fail("mandatoryDenySearchDepth", "must be between 1 and 10, got " + it->dump());
      }
      p_->fs.mandatory_deny_search_depth = static_cast<int>(depth);
    }
    if (auto it = root.find("bwrapPath"); it != root.end()) {
      if (!it->is_string()) return type_error("bwrapPath", *it, "a string");
      const auto& s = it->get_ref<const std::string&>();
      if (s.empty() || s[0] != '/') {
        return fail("bwrapPath", "must be an absolute path (a relative one could be hijacked)");
      }
      p_->bwrap_path = s;
    }
    if (auto r = read_bool(root, "", "enableWeakerNetworkIsolation",
                           &p_->macos.enable_weaker_network_isolation);
        !r)
      return r;
    if (auto r = read_bool(root, "", "allowAppleEvents", &p_->macos.allow_apple_events); !r)
      return r;
    if (auto r = read_bool(root, "", "allowPty", &p_->macos.allow_pty); !r) return r;
    if (auto it = root.find("vigil"); it != root.end()) {
      if (auto r = load_vigil(*it); !r) return r;
    }
    if (auto it = root.find("ignoreViolations"); it != root.end()) {
      if (auto r = load_ignore_violations(*it); !r) return r;
    }
    return {};
  }

 private:
  Error fail(const std::string& path, const std::string& what) const {
    auto pos = doc_.offsets.find(path);
    std::string msg(source_);
    if (pos != doc_.offsets.end()) {
      msg += ": " + line_column(doc_.text, pos->second > 0 ? pos->second - 1 : 0);
    }
    msg += ": " + (path.empty() ? std::string("(top level)") : path) + ": " + what;
    return make_error(Errc::kInvalidPolicy, msg);
  }

  Error type_error(const std::string& path, const json& v, std::string_view expected) const {
    return fail(path, "expected " + std::string(expected) + ", got " + type_name(v));
  }

  Result<void> check_keys(const json& obj, const std::string& path,
                          std::span<const KeySpec> specs) {
    for (const auto& [key, value] : obj.items()) {
      const KeySpec* spec = nullptr;
      for (const auto& s : specs) {
        if (s.key == key) spec = &s;
      }
      const std::string sub = json_path_key(path, key);
      if (spec == nullptr) {
        std::vector<std::string_view> names;
        for (const auto& s : specs) names.push_back(s.key);
        std::string msg = "unknown key " + sub;
        if (auto near = nearest_key(key, names); !near.empty())
          msg += "; did you mean " + near + "?";
        return fail(sub, msg);
      }
      switch (spec->support) {
        case Support::kHandled:
          break;
        case Support::kUnsupported:
          return fail(sub, refusal(*spec));
        case Support::kUnsupportedIfOn:
          if (!value.is_boolean()) return type_error(sub, value, "a boolean");
          if (value.template get<bool>()) return fail(sub, refusal(*spec) + " (false is accepted)");
          break;
        case Support::kNotApplicable:
          p_->warnings.push_back(std::string(source_) + ": " + sub +
                                 " has no effect: " + std::string(spec->what));
          break;
      }
    }
    return {};
  }

  Result<void> read_bool(const json& obj, const std::string& path, const char* key, bool* out) {
    auto it = obj.find(key);
    if (it == obj.end()) return {};
    if (!it->is_boolean()) return type_error(json_path_key(path, key), *it, "a boolean");
    *out = it->get<bool>();
    return {};
  }

  Result<void> read_strings(const json& obj, const std::string& path, const char* key,
                            std::vector<std::string>* out) {
    auto it = obj.find(key);
    if (it == obj.end()) return {};
    const std::string sub = json_path_key(path, key);
    if (!it->is_array()) return type_error(sub, *it, "an array of strings");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      if (!e.is_string()) return type_error(json_path_index(sub, i), e, "a string");
      out->push_back(e.get<std::string>());
    }
    return {};
  }

  Result<void> load_network(const json& net) {
    if (!net.is_object()) return type_error("network", net, "an object");
    if (auto r = check_keys(net, "network", kNetworkKeys); !r) return r;
    auto& n = p_->net;
    if (auto r = read_strings(net, "network", "allowedDomains", &n.allowed_domains); !r) return r;
    if (auto r = read_strings(net, "network", "deniedDomains", &n.denied_domains); !r) return r;
    if (auto r =
            read_strings(net, "network", "deniedResolvedAddresses", &n.denied_resolved_addresses);
        !r)
      return r;
    if (auto r = read_strings(net, "network", "allowUnixSockets", &n.allow_unix_sockets); !r)
      return r;
#if !defined(__APPLE__)
    // Linux: vigil-init compares canonical paths exactly (observer/unix_rules.h), so each
    // entry is a full path (~ and a relative spelling expanded as srt does) or "@name" for
    // an abstract socket.
    for (std::size_t i = 0; i < n.allow_unix_sockets.size(); ++i) {
      std::string& entry = n.allow_unix_sockets[i];
      if (!entry.empty() && entry[0] == '@') continue;
      auto expanded = expand_settings_path(entry, ctx_.cwd, ctx_.home);
      if (!expanded) {
        return fail(json_path_index("network.allowUnixSockets", i),
                    expanded.error().message + " (a socket's full path, or @name for an abstract one)");
      }
      entry = std::move(expanded).value();
    }
#endif
    if (auto r = read_bool(net, "network", "allowAllUnixSockets", &n.allow_all_unix_sockets); !r)
      return r;
    if (n.allow_all_unix_sockets) {
      p_->warnings.push_back(
          std::string(source_) +
          ": WARNING: network.allowAllUnixSockets=true: the command can connect to EVERY unix "
          "socket it can see (the Docker daemon, ssh-agent, the session bus: each one a way "
          "out of the sandbox, past the network namespace and the proxy); list only the "
          "sockets it needs in network.allowUnixSockets instead");
    }
    if (auto r = read_strings(net, "network", "allowMachLookup", &n.allow_mach_lookup); !r)
      return r;
    if (auto r = read_bool(net, "network", "allowLocalBinding", &n.allow_local_binding); !r)
      return r;
    bool strict = true;
    if (auto r = read_bool(net, "network", "strictAllowlist", &strict); !r) return r;
    if (!strict) {
      p_->warnings.push_back(std::string(source_) +
                             ": network.strictAllowlist=false has no effect: a host off the "
                             "allow list is refused (to be asked instead, set "
                             "vigil.network.ask and run an agent session)");
    }
    if (auto it = net.find("parentProxy"); it != net.end()) {
      const std::string sub = "network.parentProxy";
      if (!it->is_object()) return type_error(sub, *it, "an object");
      if (auto r = check_keys(*it, sub, kParentProxyKeys); !r) return r;
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
    if (auto it = net.find("deniedDomainReasons"); it != net.end()) {
      const std::string sub = "network.deniedDomainReasons";
      if (!it->is_object()) return type_error(sub, *it, "an object of strings");
      for (const auto& [k, v] : it->items()) {
        const std::string ks = json_path_key(sub, k);
        if (!v.is_string()) return type_error(ks, v, "a string");
        if (v.get_ref<const std::string&>().empty()) return fail(ks, "reason cannot be empty");
        n.denied_domain_reasons[k] = v.get<std::string>();
      }
    }
    return {};
  }

  // An entry is a path string, or {"path": "...", "literal": true} for a name that
  // contains glob characters but is meant literally.
  // A deny glob: every existing match becomes a rule of the list (the walk happens
  // now, at launch); the pattern is kept for explain and for a check at the call.
  Result<void> load_deny_glob(const std::string& written, const std::string& ep,
                              std::vector<GlobRule>* globs, std::vector<PathRule>* out) {
    if (written.back() == '/') {
      return fail(ep, json(written).dump() +
                          " ends in \"/\", so as a glob it matches nothing; drop the \"/\"");
    }
    auto expanded = expand_settings_path(written, ctx_.cwd, ctx_.home);
    if (!expanded) return fail(ep, expanded.error().message);
    GlobRule g{written, *expanded, ep, 0, false};
    const GlobExpansion found = expand_glob(g.pattern);
    g.truncated = found.truncated;
    g.matches = found.matches.size();
    if (found.truncated) {
      p_->warnings.push_back(std::string(source_) + ": " + ep + ": the walk for " +
                             json(written).dump() +
                             " hit its limit (depth 10 or 200000 entries): matches past it are "
                             "not hidden; write a narrower pattern");
    }
    for (const auto& m : found.matches) {
      PathRule rule;
      rule.written = written;
      rule.literal = m;
      rule.resolved = resolve_symlinks(m);
      rule.origin = ep + " (glob)";
      auto state = stat_path(rule.resolved);
      rule.kind = state.kind;
      out->push_back(std::move(rule));
    }
    globs->push_back(std::move(g));
    return {};
  }

  Result<void> load_paths(const json& fs, const char* key, bool is_allow,
                          std::vector<PathRule>* out, std::vector<GlobRule>* globs = nullptr) {
    auto it = fs.find(key);
    if (it == fs.end()) return {};
    const std::string sub = json_path_key("filesystem", key);
    if (!it->is_array()) return type_error(sub, *it, "an array of paths");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      const std::string ep = json_path_index(sub, i);
      std::string written;
      bool literal = false;
      if (e.is_string()) {
        written = e.get<std::string>();
      } else if (e.is_object()) {
        for (const auto& [k, v] : e.items()) {
          if (k != "path" && k != "literal") {
            return fail(json_path_key(ep, k),
                        "unknown key; an entry object has only \"path\" and \"literal\"");
          }
        }
        auto pit = e.find("path");
        auto lit = e.find("literal");
        if (pit == e.end() || !pit->is_string()) {
          return fail(ep, "expected {\"path\": \"<path>\", \"literal\": true}");
        }
        if (lit == e.end() || !lit->is_boolean() || !lit->get<bool>()) {
          return fail(ep, "expected {\"path\": \"<path>\", \"literal\": true}");
        }
        written = pit->get<std::string>();
        literal = true;
      } else {
        return type_error(ep, e, "a path string or {\"path\": ..., \"literal\": true}");
      }
      if (!literal && has_glob_chars(written)) {
        // JSON-quoted: a control character in the spelling must not break the one-line error.
        const std::string quoted = json(written).dump();
        if (is_allow) {
          return fail(ep, quoted + " is a glob pattern; " + key +
                              " takes directories, not patterns (list each one)");
        }
        if (auto r = load_deny_glob(written, ep, globs, out); !r) return r;
        continue;
      }
      auto expanded = expand_settings_path(written, ctx_.cwd, ctx_.home);
      if (!expanded) return fail(ep, expanded.error().message);
      PathRule rule;
      rule.written = written;
      rule.literal = *expanded;
      rule.resolved = resolve_symlinks(rule.literal);
      rule.origin = ep;
      auto state = stat_path(rule.resolved);
      rule.kind = state.kind;
      rule.first_missing = std::move(state.first_missing);
      rule.first_missing_exists = state.blocked_by_existing;
      out->push_back(std::move(rule));
    }
    return {};
  }

  Result<void> load_filesystem(const json& fs) {
    if (!fs.is_object()) return type_error("filesystem", fs, "an object");
    if (auto r = check_keys(fs, "filesystem", kFilesystemKeys); !r) return r;
    auto& f = p_->fs;
    if (auto r = load_paths(fs, "denyRead", false, &f.deny_read, &f.deny_read_globs); !r) return r;
    if (auto r = load_paths(fs, "allowRead", true, &f.allow_read); !r) return r;
    if (auto r = load_paths(fs, "allowWrite", true, &f.allow_write); !r) return r;
    if (auto r = load_paths(fs, "denyWrite", false, &f.deny_write, &f.deny_write_globs); !r)
      return r;
    return read_bool(fs, "filesystem", "allowGitConfig", &f.allow_git_config);
  }

  // {"<command substring>" or "*": ["<substring of the violation's target>", ...]}, as srt.
  Result<void> load_ignore_violations(const json& v) {
    const std::string sub = "ignoreViolations";
    if (!v.is_object()) return type_error(sub, v, "an object of string arrays");
    for (const auto& [pattern, paths] : v.items()) {
      const std::string ks = json_path_key(sub, pattern);
      if (pattern.empty()) return fail(ks, "command pattern cannot be empty (\"*\" is all)");
      if (!paths.is_array()) return type_error(ks, paths, "an array of strings");
      std::vector<std::string> list;
      for (std::size_t i = 0; i < paths.size(); ++i) {
        const json& e = paths[i];
        if (!e.is_string()) return type_error(json_path_index(ks, i), e, "a string");
        if (e.get_ref<const std::string&>().empty()) {
          return fail(json_path_index(ks, i), "an empty path would ignore every violation");
        }
        list.push_back(e.get<std::string>());
      }
      p_->ignore_violations.push_back({pattern, std::move(list)});
    }
    return {};
  }

  Result<void> load_vigil(const json& v) {
    if (!v.is_object()) return type_error("vigil", v, "an object");
    if (auto r = check_keys(v, "vigil", kVigilKeys); !r) return r;
    if (auto it = v.find("observer"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.observer", *it, "an object");
      if (auto r = check_keys(*it, "vigil.observer", kVigilObserverKeys); !r) return r;
      if (auto o = it->find("overflow"); o != it->end()) {
        if (!o->is_string())
          return type_error("vigil.observer.overflow", *o, "\"block\" or \"drop\"");
        const auto& s = o->get_ref<const std::string&>();
        if (s == "block") {
          p_->vigil.observer_overflow = VigilOptions::Overflow::kBlock;
        } else if (s == "drop") {
          p_->vigil.observer_overflow = VigilOptions::Overflow::kDrop;
        } else {
          return fail("vigil.observer.overflow",
                      "expected \"block\" or \"drop\", got " + o->dump());
        }
      }
      if (auto r = read_bool(*it, "vigil.observer", "syncWakeUp", &p_->vigil.observer_sync_wake_up);
          !r)
        return r;
    }
    if (auto it = v.find("network"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.network", *it, "an object");
      if (auto r = check_keys(*it, "vigil.network", kVigilNetworkKeys); !r) return r;
      if (auto r = read_bool(*it, "vigil.network", "ask", &p_->vigil.network_ask); !r) return r;
      if (auto t = it->find("askTimeoutSeconds"); t != it->end()) {
        // Fractions allowed (tests answer in well under a second); at most a day.
        if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > 86400) {
          return fail("vigil.network.askTimeoutSeconds",
                      "expected a number of seconds, > 0 and at most 86400, got " + t->dump());
        }
        p_->vigil.network_ask_timeout_ms =
            static_cast<std::uint64_t>(t->get<double>() * 1000.0 + 0.5);
      }
    }
    if (auto it = v.find("log"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.log", *it, "an object");
      if (auto r = check_keys(*it, "vigil.log", kVigilLogKeys); !r) return r;
      if (auto m = it->find("maxOutputBytes"); m != it->end()) {
        auto n = read_count(*m, "vigil.log.maxOutputBytes", 0);
        VIGIL_TRY(n);
        p_->vigil.log_max_output_bytes = *n;
      }
      if (auto k = it->find("keep"); k != it->end()) {
        auto n = read_count(*k, "vigil.log.keep", 1);
        VIGIL_TRY(n);
        p_->vigil.log_keep = *n;
      }
    }
    if (auto it = v.find("capture"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.capture", *it, "an object");
      if (auto r = check_keys(*it, "vigil.capture", kVigilCaptureKeys); !r) return r;
      if (auto r = read_bool(*it, "vigil.capture", "enabled", &p_->vigil.capture_enabled); !r)
        return r;
      CaptureCaps& caps = p_->vigil.capture_caps;
      struct Cap {
        const char* key;
        const char* path;
        std::uint64_t* field;
      };
      for (const Cap& c : {Cap{"maxFileBytes", "vigil.capture.maxFileBytes", &caps.max_file_bytes},
                           Cap{"maxSessionBytes", "vigil.capture.maxSessionBytes",
                               &caps.max_session_bytes}}) {
        if (auto m = it->find(c.key); m != it->end()) {
          auto n = read_count(*m, c.path, 0);
          VIGIL_TRY(n);
          *c.field = *n;
        }
      }
    }
    if (auto it = v.find("git"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.git", *it, "an object");
      if (auto r = check_keys(*it, "vigil.git", kVigilGitKeys); !r) return r;
      if (auto r = read_bool(*it, "vigil.git", "writableRepository",
                             &p_->vigil.git_writable_repository);
          !r)
        return r;
    }
    if (auto it = v.find("limits"); it != v.end()) return load_limits(*it);
    return {};
  }

  // vigil.limits: counts (0 = no cap) and a timeout in seconds (> 0).
  Result<void> load_limits(const json& l) {
    if (!l.is_object()) return type_error("vigil.limits", l, "an object");
    if (auto r = check_keys(l, "vigil.limits", kVigilLimitsKeys); !r) return r;
    auto& out = p_->vigil.limits;
    if (auto it = l.find("processes"); it != l.end()) {
      auto n = read_count(*it, "vigil.limits.processes", 0);
      VIGIL_TRY(n);
      if (*n != 0 && *n < kMinProcesses) {
        return fail("vigil.limits.processes", "must be 0 (no cap) or at least " +
                                                  std::to_string(kMinProcesses) + ", got " +
                                                  std::to_string(*n));
      }
      out.processes = *n;
    }
    if (auto it = l.find("memoryBytes"); it != l.end()) {
      auto n = read_count(*it, "vigil.limits.memoryBytes", 0);
      VIGIL_TRY(n);
      out.memory_bytes = *n;
    }
    if (auto it = l.find("maxFileBytes"); it != l.end()) {
      auto n = read_count(*it, "vigil.limits.maxFileBytes", 0);
      VIGIL_TRY(n);
      out.max_file_bytes = *n;
    }
    if (auto it = l.find("timeoutSeconds"); it != l.end()) {
      if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1e6) {
        return fail("vigil.limits.timeoutSeconds",
                    "must be a number of seconds above 0 (at most 1000000), got " + it->dump());
      }
      out.timeout_s = it->get<double>();
    }
    return {};
  }

  // A non-negative integer of at least `min`.
  Result<std::uint64_t> read_count(const json& v, const char* path, std::uint64_t min) {
    if (!v.is_number_integer()) return type_error(path, v, "an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() >= min) return v.get<std::uint64_t>();
    return fail(path,
                "must be an integer of at least " + std::to_string(min) + ", got " + v.dump());
  }

  const SettingsJson& doc_;
  std::string_view source_;
  const LoadContext& ctx_;
  Policy* p_;
};

}  // namespace

std::vector<SettingsKey> settings_key_table() {
  std::vector<SettingsKey> out;
  for (const auto& level : kLevels) {
    for (const auto& spec : level.specs)
      out.push_back({json_path_key(std::string(level.prefix), spec.key), spec});
  }
  return out;
}

std::string refusal(const KeySpec& spec) {
  return "not supported by vigil (" + std::string(spec.what) + "); instead, " +
         std::string(spec.instead);
}

std::string nearest_key(std::string_view key, const std::vector<std::string_view>& candidates) {
  std::string best;
  std::size_t best_d = 0;
  for (const auto c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (best.empty() || d < best_d) {
      best = std::string(c);
      best_d = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 3);
  return best_d <= limit ? best : std::string();
}

Result<Policy> parse_policy(std::string text, std::string_view source, const LoadContext& ctx) {
  auto doc = parse_settings_json(std::move(text), source);
  VIGIL_TRY(doc);
  Policy p = default_policy(ctx);
  p.source = std::string(source);
  // A settings file replaces the default's writable cwd: it says exactly what is writable.
  p.fs.allow_write.clear();
  Loader loader(*doc, source, ctx, &p);
  VIGIL_TRY_VOID(loader.load());
  return p;
}

Result<Policy> load_policy_fd(int fd, const std::string& source, const LoadContext& ctx) {
  auto text = read_fd_text(fd, kMaxSettingsBytes, "settings file " + source);
  VIGIL_TRY(text);
  return parse_policy(std::move(text).value(), source, ctx);  // it reports an oversize file
}

Result<UniqueFd> open_settings_file(const std::string& path) {
  // Checked before the open so that the open's errno needs no carrying through Result.
  if (struct stat st {}; ::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    return make_error(Errc::kInvalidPolicy, "settings file " + path + " does not exist");
  }
  return open_regular_file(path, "settings file");
}

Result<Policy> load_policy_file(const std::string& path, const LoadContext& ctx) {
  auto fd = open_settings_file(path);
  VIGIL_TRY(fd);
  return load_policy_fd(fd->get(), path, ctx);
}

Policy default_policy(const LoadContext& ctx) {
  Policy p;
  p.source = "<embedded default>";
  p.cwd = ctx.cwd;
  p.home = ctx.home;
  PathRule cwd;
  cwd.written = ".";
  cwd.literal = lexically_normal(ctx.cwd);
  cwd.resolved = resolve_symlinks(cwd.literal);
  cwd.origin = "default: the working directory";
  cwd.kind = PathKind::kDir;
  p.fs.allow_write.push_back(std::move(cwd));
  return p;
}

}  // namespace vigil
