#include "supervisor/core/policy_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <vector>

#include "supervisor/core/path_expand.h"
#include "supervisor/core/regular_file.h"
#include "supervisor/core/settings_json.h"
#include "supervisor/core/unique_fd.h"

namespace vigil {
namespace {

using nlohmann::json;

// How a key the schema knows is treated.
enum class Support {
  kHandled,          // read into the Policy
  kUnsupported,      // srt has it, vigil does not implement it yet: an error
  kUnsupportedIfOn,  // only a true/non-default value is unsupported (false is the default)
  kNotApplicable,    // vigil has no use for it on this platform: accepted, with a warning
};

struct KeySpec {
  std::string_view key;
  Support support;
  std::string_view note;  // for kNotApplicable warnings / kUnsupported errors
};

// Every key srt 0.0.83 accepts at each level, plus "vigil". Order is irrelevant.
constexpr KeySpec kTopKeys[] = {
    {"network", Support::kHandled, ""},
    {"filesystem", Support::kHandled, ""},
    {"mandatoryDenySearchDepth", Support::kHandled, ""},
    {"bwrapPath", Support::kHandled, ""},
    {"enableWeakerNetworkIsolation", Support::kHandled, ""},
    {"allowAppleEvents", Support::kHandled, ""},
    {"allowPty", Support::kHandled, ""},
    {"vigil", Support::kHandled, ""},
    {"credentials", Support::kUnsupported, "credential masking"},
    {"ignoreViolations", Support::kUnsupported, "per-command violation filters"},
    {"enableWeakerNestedSandbox", Support::kUnsupportedIfOn, "a weaker nested sandbox"},
    {"allowNestedUserNamespaces", Support::kUnsupportedIfOn,
     "nested user namespaces (they would undo the write denies)"},
    {"javaAgentJarPath", Support::kUnsupported, "the JVM proxy agent"},
    {"git", Support::kUnsupported, "injected git configuration"},
    {"ripgrep", Support::kNotApplicable, "vigil scans for mandatory denies with its own walker"},
    {"seccomp", Support::kNotApplicable, "vigil installs its own seccomp filters"},
    {"socatPath", Support::kNotApplicable, "vigil bridges the proxy without socat"},
    {"windows", Support::kNotApplicable, "Windows-only settings"},
};

constexpr KeySpec kNetworkKeys[] = {
    {"allowedDomains", Support::kHandled, ""},
    {"deniedDomains", Support::kHandled, ""},
    {"deniedDomainReasons", Support::kHandled, ""},
    {"deniedResolvedAddresses", Support::kHandled, ""},
    {"allowLocalBinding", Support::kHandled, ""},
    {"allowUnixSockets", Support::kHandled, ""},
    {"allowMachLookup", Support::kHandled, ""},
    {"strictAllowlist", Support::kHandled, ""},
    {"allowAllUnixSockets", Support::kUnsupportedIfOn, "dropping the unix-socket filter"},
    {"httpProxyPort", Support::kUnsupported, "an external HTTP proxy"},
    {"socksProxyPort", Support::kUnsupported, "an external SOCKS proxy"},
    {"mitmProxy", Support::kUnsupported, "an upstream MITM proxy"},
    {"filterRequest", Support::kUnsupported, "request filter callbacks"},
    {"allowPlaintextHeaderSet", Support::kUnsupported, "TLS-terminated header rules"},
    {"stripResponseHeaders", Support::kUnsupported, "TLS-terminated header rules"},
    {"refuseOpaqueTunnels", Support::kUnsupported, "TLS termination"},
    {"requireHostMatch", Support::kUnsupported, "TLS termination"},
    {"ambiguousRequestTarget", Support::kUnsupported, "TLS termination"},
    {"tlsTerminate", Support::kUnsupported, "TLS termination"},
    {"parentProxy", Support::kUnsupported, "a parent proxy"},
};

constexpr KeySpec kFilesystemKeys[] = {
    {"denyRead", Support::kHandled, ""},
    {"allowRead", Support::kHandled, ""},
    {"allowWrite", Support::kHandled, ""},
    {"denyWrite", Support::kHandled, ""},
    {"allowGitConfig", Support::kHandled, ""},
    {"disabled", Support::kUnsupportedIfOn, "running without any filesystem policy"},
};

constexpr KeySpec kVigilKeys[] = {
    {"observer", Support::kHandled, ""},
    {"log", Support::kHandled, ""},
    {"capture", Support::kHandled, ""},
};

constexpr KeySpec kVigilCaptureKeys[] = {
    {"enabled", Support::kHandled, ""},
    {"maxFileBytes", Support::kHandled, ""},
    {"maxSessionBytes", Support::kHandled, ""},
};

constexpr KeySpec kVigilLogKeys[] = {
    {"maxOutputBytes", Support::kHandled, ""},
    {"keep", Support::kHandled, ""},
};

constexpr KeySpec kVigilObserverKeys[] = {
    {"overflow", Support::kHandled, ""},
    {"syncWakeUp", Support::kHandled, ""},
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

  template <std::size_t N>
  Result<void> check_keys(const json& obj, const std::string& path, const KeySpec (&specs)[N]) {
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
          return fail(sub, "not supported yet by vigil (" + std::string(spec->note) +
                               "); remove the key to run under vigil");
        case Support::kUnsupportedIfOn:
          if (!value.is_boolean()) return type_error(sub, value, "a boolean");
          if (value.template get<bool>()) {
            return fail(sub, "not supported yet by vigil (" + std::string(spec->note) +
                                 "); only false is accepted");
          }
          break;
        case Support::kNotApplicable:
          p_->warnings.push_back(std::string(source_) + ": " + sub +
                                 " has no effect: " + std::string(spec->note));
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
    if (auto r = read_strings(net, "network", "allowMachLookup", &n.allow_mach_lookup); !r)
      return r;
    if (auto r = read_bool(net, "network", "allowLocalBinding", &n.allow_local_binding); !r)
      return r;
    bool strict = true;
    if (auto r = read_bool(net, "network", "strictAllowlist", &strict); !r) return r;
    if (!strict) {
      p_->warnings.push_back(std::string(source_) +
                             ": network.strictAllowlist=false has no effect: vigil never asks, "
                             "a host off the allow list is always refused");
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
  Result<void> load_paths(const json& fs, const char* key, bool is_allow,
                          std::vector<PathRule>* out) {
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
        return fail(ep, quoted +
                            " is a glob pattern; deny globs are not supported "
                            "yet (for a name that contains *, ? or [ write {\"path\": ..., "
                            "\"literal\": true})");
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
    if (auto r = load_paths(fs, "denyRead", false, &f.deny_read); !r) return r;
    if (auto r = load_paths(fs, "allowRead", true, &f.allow_read); !r) return r;
    if (auto r = load_paths(fs, "allowWrite", true, &f.allow_write); !r) return r;
    if (auto r = load_paths(fs, "denyWrite", false, &f.deny_write); !r) return r;
    return read_bool(fs, "filesystem", "allowGitConfig", &f.allow_git_config);
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
    if (auto it = v.find("log"); it != v.end()) {
      if (!it->is_object()) return type_error("vigil.log", *it, "an object");
      if (auto r = check_keys(*it, "vigil.log", kVigilLogKeys); !r) return r;
      if (auto m = it->find("maxOutputBytes"); m != it->end()) {
        auto n = read_count(*m, "vigil.log.maxOutputBytes", 0);
        if (!n) return std::move(n).error();
        p_->vigil.log_max_output_bytes = *n;
      }
      if (auto k = it->find("keep"); k != it->end()) {
        auto n = read_count(*k, "vigil.log.keep", 1);
        if (!n) return std::move(n).error();
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
          if (!n) return std::move(n).error();
          *c.field = *n;
        }
      }
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
  if (!doc) return std::move(doc).error();
  Policy p = default_policy(ctx);
  p.source = std::string(source);
  // A settings file replaces the default's writable cwd: it says exactly what is writable.
  p.fs.allow_write.clear();
  Loader loader(*doc, source, ctx, &p);
  if (auto r = loader.load(); !r) return std::move(r).error();
  return p;
}

Result<Policy> load_policy_fd(int fd, const std::string& source, const LoadContext& ctx) {
  auto text = read_fd_text(fd, kMaxSettingsBytes, "settings file " + source);
  if (!text) return std::move(text).error();
  return parse_policy(std::move(text).value(), source, ctx);  // it reports an oversize file
}

Result<Policy> load_policy_file(const std::string& path, const LoadContext& ctx) {
  auto fd = open_regular_file(path, "settings file");
  if (!fd) return std::move(fd).error();
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
