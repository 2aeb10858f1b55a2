// The settings loader's state machine (policy_loader.h is the interface): one Loader
// walks a parsed settings file level by level, checks each object against its row of the
// key table (policy_keys.cc) and fills the Policy. Split over policy_loader.cc and, by
// level, policy_loader_network.cc, policy_loader_credentials.cc, policy_loader_export.cc
// and policy_loader_vigil.cc; not for use outside them.
#pragma once

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
#include "supervisor/core/policy/load_context.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/policy/policy_keys.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/policy/settings_json.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::detail {

using nlohmann::json;

// enableWeakerNestedSandbox, said at every launch and in explain (bwrap/argv_builder.h).
inline constexpr std::string_view kWeakerNestedWarning =
    "enableWeakerNestedSandbox weakens the sandbox: it keeps the container's /proc (read-only) "
    "instead of mounting its own, so the command sees every process of the container, can read "
    "their command lines and, for those of its own user that are dumpable, their environment "
    "and (through /proc/PID/root and /proc/PID/cwd) their view of the files, which the mounts "
    "do not confine; use it only inside a container that is itself the boundary, and prefer "
    "letting the container mount /proc (`vigil doctor` says how)";

// "an object", "a string", ...: a JSON value's type, for an error message.
const char* type_name(const json& v);

class Loader {
 public:
  Loader(const SettingsJson& doc, std::string_view source, const LoadContext& ctx, Policy* out)
      : doc_(doc), source_(source), ctx_(ctx), p_(out) {}

  Result<void> load() {
    const json& root = doc_.root;
    if (!root.is_object()) return type_error("", root, "an object");
    check_keys(root, "", keys_at(""));
    if (auto it = root.find("network"); it != root.end()) ok(load_network(*it));
    if (auto it = root.find("filesystem"); it != root.end()) ok(load_filesystem(*it));
    if (auto it = root.find("credentials"); it != root.end()) ok(load_credentials(*it));
    if (auto it = root.find("mandatoryDenySearchDepth"); it != root.end()) ok(load_depth(*it));
    if (auto it = root.find("bwrapPath"); it != root.end()) ok(load_bwrap_path(*it));
    ok(read_bool(root, "", "enableWeakerNetworkIsolation", &p_->macos.enable_weaker_network_isolation));
    ok(read_bool(root, "", "allowAppleEvents", &p_->macos.allow_apple_events));
    ok(read_bool(root, "", "allowPty", &p_->macos.allow_pty));
    ok(read_bool(root, "", "enableWeakerNestedSandbox", &p_->weaker_nested_sandbox));
    if (p_->weaker_nested_sandbox) {
#if defined(__APPLE__)
      p_->warnings.push_back(std::string(source_) +
                             ": enableWeakerNestedSandbox has no effect on macOS (Linux only)");
#else
      p_->warnings.push_back(std::string(source_) + ": " + std::string(kWeakerNestedWarning));
#endif
    }
    if (auto it = root.find("vigil"); it != root.end()) ok(load_vigil(*it));
    if (auto it = root.find("ignoreViolations"); it != root.end()) ok(load_ignore_violations(*it));
    if (auto it = root.find("git"); it != root.end()) ok(load_git(*it));
    return finish();
  }

 private:
  // Notes a problem and lets the load go on: a file is reported whole, every problem at
  // once, rather than one fix-and-retry per key (issue 38.3). False on a problem.
  bool ok(const Result<void>& r) {
    if (r) return true;
    problems_.push_back(r.error().message);
    return false;
  }

  // The load's verdict: its one problem as it was, or all of them in one error.
  Result<void> finish() const {
    if (problems_.empty()) return {};
    if (problems_.size() == 1) return make_error(Errc::kInvalidPolicy, problems_.front());
    const std::string prefix = std::string(source_) + ": ";
    std::string msg = prefix + std::to_string(problems_.size()) + " problems";
    for (std::size_t i = 0; i < problems_.size(); ++i) {
      std::string_view one = problems_[i];
      if (one.starts_with(prefix)) one.remove_prefix(prefix.size());
      msg += (i == 0 ? ": (1) " : "; (" + std::to_string(i + 1) + ") ") + std::string(one);
    }
    return make_error(Errc::kInvalidPolicy, msg);
  }

  Result<void> load_depth(const json& v) {
    if (!v.is_number_integer()) return type_error("mandatoryDenySearchDepth", v, "an integer");
    const auto depth = v.get<std::int64_t>();
    if (depth < 1 || depth > 10) {
      // dump(), not the int64 value: a huge unsigned number would print as negative.
      return fail("mandatoryDenySearchDepth", "must be between 1 and 10, got " + v.dump());
    }
    p_->fs.mandatory_deny_search_depth = static_cast<int>(depth);
    return {};
  }

  Result<void> load_bwrap_path(const json& v) {
    if (!v.is_string()) return type_error("bwrapPath", v, "a string");
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s[0] != '/') {
      return fail("bwrapPath", "must be an absolute path (a relative one could be hijacked)");
    }
    p_->bwrap_path = s;
    return {};
  }

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

  // Every key of `obj` against its level's row; each unknown or refused key is noted
  // (ok()), and the load goes on: what it does not know it does not read.
  void check_keys(const json& obj, const std::string& path, std::span<const KeySpec> specs) {
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
        ok(fail(sub, msg));
        continue;
      }
      switch (spec->support) {
        case Support::kHandled:
          break;
        case Support::kUnsupported:
          ok(fail(sub, refusal(*spec)));
          break;
        case Support::kUnsupportedIfOn:
          if (!value.is_boolean()) {
            ok(type_error(sub, value, "a boolean"));
          } else if (value.template get<bool>()) {
            ok(fail(sub, refusal(*spec) + " (false is accepted)"));
          }
          break;
        case Support::kNotApplicable:
          p_->warnings.push_back(std::string(source_) + ": " + sub +
                                 " has no effect: " + std::string(spec->what));
          break;
      }
    }
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

  // network.* (policy_loader_network.cc).
  Result<void> load_network(const json& net);
  Result<void> load_external_port(const json& net, const char* key, std::uint16_t* out);

  // credentials.*, network.tlsTerminate/mitmProxy/requireHostMatch/refuseOpaqueTunnels
  // and vigil.network.requestRules (policy_loader_credentials.cc).
  Result<void> load_tls_keys(const json& net);
  Result<void> load_mitm_proxy(const json& m);
  Result<void> load_credentials(const json& c);
  Result<void> load_credential_env(const json& e, const std::string& ep);
  Result<void> load_credential_file(const json& e, const std::string& ep);
  Result<void> load_credential_rule(const json& e, const std::string& ep, CredentialRule* r);
  Result<void> check_masked(const CredentialRule& r, const std::string& ep);
  Result<void> load_aws_pairs(const json& c);
  Result<void> load_request_rules(const json& v);

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
    for (std::size_t i = 0; i < it->size(); ++i)
      ok(load_path((*it)[i], json_path_index(sub, i), key, is_allow, out, globs));
    return {};
  }

  // One entry of a path list (load_paths).
  Result<void> load_path(const json& e, const std::string& ep, const char* key, bool is_allow,
                         std::vector<PathRule>* out, std::vector<GlobRule>* globs) {
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
      return load_deny_glob(written, ep, globs, out);
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
    return {};
  }

  Result<void> load_filesystem(const json& fs) {
    if (!fs.is_object()) return type_error("filesystem", fs, "an object");
    check_keys(fs, "filesystem", keys_at("filesystem"));
    auto& f = p_->fs;
    ok(load_paths(fs, "denyRead", false, &f.deny_read, &f.deny_read_globs));
    ok(load_paths(fs, "allowRead", true, &f.allow_read));
    ok(load_paths(fs, "allowWrite", true, &f.allow_write));
    ok(load_paths(fs, "denyWrite", false, &f.deny_write, &f.deny_write_globs));
    return read_bool(fs, "filesystem", "allowGitConfig", &f.allow_git_config);
  }

  // git.safeDirectories: directories, expanded as every settings path; a trailing "/"
  // is dropped (git compares the repository's top level exactly).
  Result<void> load_git(const json& g) {
    if (!g.is_object()) return type_error("git", g, "an object");
    check_keys(g, "git", keys_at("git"));
    std::vector<std::string> written;
    if (auto r = read_strings(g, "git", "safeDirectories", &written); !r) return r;
    for (std::size_t i = 0; i < written.size(); ++i) {
      const std::string ep = json_path_index("git.safeDirectories", i);
      if (written[i].empty()) return fail(ep, "an empty path (git would read it as a reset)");
      if (written[i] == "*") {
        return fail(ep, "\"*\" would trust every repository; list the directories instead");
      }
      auto expanded = expand_settings_path(written[i], ctx_.cwd, ctx_.home);
      if (!expanded) return fail(ep, expanded.error().message);
      std::string d = lexically_normal(*expanded);
      while (d.size() > 1 && d.back() == '/') d.pop_back();
      p_->git_safe_directories.push_back(std::move(d));
    }
    return {};
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

  // vigil.observer, .network, .log, .capture, .git, then .export and .limits
  // (policy_loader_vigil.cc).
  Result<void> load_vigil(const json& v);

  // vigil.export (policy_loader_export.cc).
  Result<void> load_export(const json& e);

  // vigil.limits: counts (0 = no cap) and a timeout in seconds (> 0)
  // (policy_loader_vigil.cc).
  Result<void> load_limits(const json& l);

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
  std::vector<std::string> problems_;  // every problem noted so far (ok())
};

}  // namespace vigil::detail
