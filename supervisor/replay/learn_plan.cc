#include "supervisor/replay/learn_plan.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "proxy/egress.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/rule_id.h"
#include "supervisor/report/policy_judge.h"
#include "supervisor/report/write_hint.h"

namespace vigil {
namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The longest run of hex digits and dashes holding at least one digit (a hash, a UUID).
std::size_t longest_hex_run(std::string_view s) {
  std::size_t best = 0, run = 0;
  bool digit = false;
  for (const char c : s) {
    if (is_hex(c) || (c == '-' && run > 0)) {
      ++run;
      digit = digit || is_digit(c);
      if (digit) best = std::max(best, run);
    } else {
      run = 0;
      digit = false;
    }
  }
  return best;
}

// A made-up suffix after '.', '-' or '_' (mktemp's XXXXXX: mixed case and digits).
bool has_random_suffix(std::string_view s) {
  const std::size_t sep = s.find_last_of(".-_");
  if (sep == std::string_view::npos) return false;
  const std::string_view tail = s.substr(sep + 1);
  if (tail.size() < 6) return false;
  bool upper = false, lower = false, digit = false;
  for (const char c : tail) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
    upper = upper || std::isupper(static_cast<unsigned char>(c));
    lower = lower || std::islower(static_cast<unsigned char>(c));
    digit = digit || is_digit(c);
  }
  return int{upper} + int{lower} + int{digit} >= 2 && (upper || digit);
}

std::string tilde(std::string_view path, std::string_view home) {
  if (!home.empty() && home != "/" && path_is_under(path, home))
    return "~" + std::string(path.substr(home.size()));
  return std::string(path);
}

// How many components below `root` name a tool's directory there.
std::size_t depth_below(std::string_view rel, bool in_home) {
  if (!in_home) return 1;
  if (rel.starts_with(".local/share/") || rel.starts_with(".local/state/")) return 3;
  if (rel.starts_with(".cache/") || rel.starts_with(".config/")) return 2;
  return 1;
}

std::string host_port(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

bool is_volatile_name(std::string_view name) {
  if (name.empty()) return true;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const std::string_view scratch : {"tmp", "temp", ".tmp", ".temp", "_tmp"}) {
    if (lower == scratch) return true;
  }
  if (lower.starts_with("tmp") || lower.starts_with(".tmp") || lower.find(".tmp") != std::string::npos)
    return true;
  if (longest_hex_run(name) >= 8) return true;
  std::size_t digits = 0;
  for (const char c : name) digits += is_digit(c) ? 1 : 0;
  if (digits >= 5 && digits * 2 >= name.size()) return true;  // a pid, a timestamp
  return has_random_suffix(name);
}

std::string stable_dir(std::string_view path, std::string_view home, bool is_dir) {
  std::string root = "/";
  if (!home.empty() && home != "/" && path_is_under(path, home)) {
    root = std::string(home);
  } else {
    for (const std::string_view scratch : {"/tmp", "/var/tmp"}) {
      if (path_is_under(path, scratch)) root = std::string(scratch);
    }
  }
  if (path.size() <= root.size()) return "";
  const std::string_view rel = path.substr(root == "/" ? 1 : root.size() + 1);
  // Outside $HOME three components: /var/cache and /var/log are every program's.
  const std::size_t want = root == "/" ? 3 : depth_below(rel, root == home);
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at <= rel.size();) {
    const std::size_t slash = std::min(rel.find('/', at), rel.size());
    parts.push_back(rel.substr(at, slash - at));
    at = slash + 1;
  }
  // The last component is the file being written, unless the call makes a directory.
  const std::size_t dirs = is_dir ? parts.size() : parts.size() - 1;
  std::size_t keep = 0;
  while (keep < std::min(want, dirs) && !is_volatile_name(parts[keep])) ++keep;
  // A directory of / one or two levels down (/srv, /var/cache) is never narrow enough.
  if (keep == 0 || (root == "/" && keep < 3)) return "";
  std::string out = root == "/" ? "" : root;
  for (std::size_t i = 0; i < keep; ++i) out += "/" + std::string(parts[i]);
  return out;
}

Learner::Learner(const Policy& current, const Plan& plan, const proxy::DomainMatcher& matcher,
                 std::string settings_file)
    : policy_(current),
      plan_(plan),
      matcher_(matcher),
      settings_file_(std::move(settings_file)),
      places_(code_places(current.home, {})) {}

void Learner::set_path_dirs(const std::vector<std::string>& dirs) {
  places_ = code_places(policy_.home, dirs);
}

void Learner::leave(const std::string& target, const std::string& why) {
  const auto key = std::make_pair(target, why);
  auto it = left_.find(key);
  if (it != left_.end()) {
    ++it->second;
  } else if (left_.size() >= kMaxLeftDenied) {
    ++left_unlisted_;
  } else {
    left_.emplace(key, 1);
  }
}

void Learner::propose_dir(const std::string& dir, const std::string& example) {
  if (dirs_.size() >= kMaxProposals && dirs_.count(dir) == 0) {
    ++dropped_;
    return;
  }
  Proposal& p = dirs_[dir];
  if (p.count++ == 0) {
    p.entry = tilde(dir, policy_.home);
    p.path = dir;
    p.example = example;
  }
}

void Learner::take(const events::Event& e) {
  if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
    if (w->verdict != Verdict::kDenied) return;
    ++denials_;
    const FsJudged j = judge_write(policy_, plan_, *w);
    const std::string& path = w->resolved.empty() ? w->path : w->resolved;
    if (!j.verdict) return leave(path, j.rule_id + ": no settings entry decides it");
    if (*j.verdict == Verdict::kEphemeral)
      return leave(path, j.rule_id + " hides it (writes there land on a throwaway tmpfs): a "
                                     "denyRead path is never proposed");
    if (*j.verdict != Verdict::kDenied) {
      ++already_;
      return;
    }
    if (j.rule_id.starts_with("mandatory deny")) return leave(path, j.reason + " [" + j.rule_id + "]");
    if (j.rule_id != kDefaultWriteDenyId)
      return leave(path, j.rule_id + " denies it, and a deny wins over any allowWrite");
    if (is_system_path(path)) return leave(path, "a system directory: never made writable");
    const bool is_dir = w->syscall == "mkdir" || w->syscall == "mkdirat";
    const std::string stable = stable_dir(path, policy_.home, is_dir);
    if (stable.empty() || stable == "/")
      return leave(path, "no directory to allow short of $HOME, /tmp or / itself (or, outside "
                         "$HOME, one of its first two levels): write it in the workspace or "
                         "$TMPDIR instead");
    // Never a place that runs code later, nor one above it: the narrowest directory the
    // denial needs (~/.local/lib/x is Python's site-packages; ~/.local holds ~/.local/bin).
    const Narrowed narrowed = narrow_past_code(stable, path, is_dir, places_, policy_.home);
    if (narrowed.dir.empty()) return leave(path, narrowed.why);
    const std::string& dir = narrowed.dir;
    if (!settings_file_.empty() && path_is_under(settings_file_, dir))
      return leave(path, tilde(dir, policy_.home) + " holds the settings file (" +
                             tilde(settings_file_, policy_.home) +
                             "): a session must not be able to widen its own next launch");
    if (const MandatoryDeny* m = mandatory_deny_within(std::string_view(dir).substr(1),
                                                       policy_.fs.allow_git_config)) {
      return leave(path, "lies in the protected name " + std::string(m->relpath) + " [" +
                             mandatory_rule_id(m->relpath) + "]");
    }
    for (const auto* list : {&policy_.fs.deny_read, &policy_.fs.deny_write}) {
      for (const auto& r : *list) {
        if (path_is_under(dir, r.resolved) || path_is_under(r.resolved, dir)) {
          return leave(path, fs_rule_id(policy_, r.origin) + " covers " + tilde(dir, policy_.home) +
                                 ": a denied path is never proposed");
        }
      }
    }
    return propose_dir(dir, path);
  }
  if (const auto* d = std::get_if<events::NetDecision>(&e.body)) {
    if (d->verdict != events::NetVerdict::kDenied) return;
    ++denials_;
    const std::string target = host_port(d->host, d->port);
    // The user refused it on purpose (a deniedDomains entry of the session's policy):
    // never proposed, whatever settings learn now runs against (issue 38.7).
    if (d->refused_by == events::refused_by::kDeniedDomain) {
      return leave(target, shown_rule_id(*d) +
                               " refused it in the session: what the user denied is never "
                               "proposed");
    }
    const NetJudged j = judge_net(policy_.net, matcher_, *d);
    if (!j.verdict) return leave(target, j.rule_id + ": not the allowlist's to decide");
    if (*j.verdict == events::NetVerdict::kAllowed) {
      ++already_;
      return;
    }
    if (j.rule_id != kDefaultNetDenyId) return leave(target, j.rule_id + " refuses it");
    if (hosts_.size() >= kMaxProposals && hosts_.count(target) == 0) {
      ++dropped_;
      return;
    }
    Proposal& p = hosts_[target];
    if (p.count++ == 0) {
      p.entry = target;
      p.example = std::string(events::to_string(d->proto)) + " " + target;
    }
  }
}

LearnResult Learner::result() const {
  LearnResult r;
  for (const auto& [dir, p] : dirs_) {
    // A directory inside another proposed one adds nothing.
    bool inside = false;
    for (const auto& [other, q] : dirs_) inside = inside || (other != dir && path_is_under(dir, other));
    if (!inside) r.allow_write.push_back(p);
  }
  for (const auto& [h, p] : hosts_) r.allowed_domains.push_back(p);
  for (const auto& [key, n] : left_) r.left.push_back({key.first, key.second, n});
  r.left_unlisted = left_unlisted_;
  r.proposals_dropped = dropped_;
  r.denials = denials_;
  r.already_allowed = already_;
  return r;
}

std::vector<std::string> learn_report_lines(const LearnResult& r, bool from_default) {
  std::vector<std::string> out;
  if (from_default && !r.allow_write.empty()) {
    out.push_back("filesystem.allowWrite:");
    out.push_back("+ \".\"  # the working directory: writable by default, not in a settings file");
  } else if (!r.allow_write.empty()) {
    out.push_back("filesystem.allowWrite:");
  }
  for (const auto& p : r.allow_write) {
    out.push_back("+ " + quoted_entry(p.entry) + "  # " + std::to_string(p.count) +
                  " denied write(s), e.g. " + p.example);
  }
  if (!r.allowed_domains.empty()) out.push_back("network.allowedDomains:");
  for (const auto& p : r.allowed_domains) {
    out.push_back("+ " + quoted_entry(p.entry) + "  # " + std::to_string(p.count) +
                  " denied connection(s)");
  }
  if (r.allow_write.empty() && r.allowed_domains.empty()) out.push_back("(nothing to add)");
  if (r.proposals_dropped > 0) {
    out.push_back("# " + std::to_string(r.proposals_dropped) + " more denial(s) past " +
                  std::to_string(Learner::kMaxProposals) +
                  " distinct entries were not turned into entries: too many to be a policy");
  }
  if (!r.left.empty()) out.push_back("left denied, and why:");
  for (const auto& l : r.left) {
    out.push_back("- " + l.target + "  " + l.why +
                  (l.count > 1 ? "  (" + std::to_string(l.count) + " times)" : ""));
  }
  if (r.left_unlisted > 0)
    out.push_back("- (" + std::to_string(r.left_unlisted) + " more left denied, not listed)");
  return out;
}

Result<std::string> learned_settings(std::string_view text, const LearnResult& r) {
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  if (!text.empty()) {
    root = nlohmann::ordered_json::parse(text, nullptr, false);
    if (root.is_discarded() || !root.is_object())
      return make_error(Errc::kInvalidPolicy, "the current settings are not a JSON object");
  } else if (!r.allow_write.empty()) {
    root["filesystem"]["allowWrite"] = nlohmann::ordered_json::array({"."});
  }
  auto append = [&](const char* section, const char* key, const std::vector<Proposal>& add)
      -> Result<void> {
    if (add.empty()) return {};
    auto& s = root[section];
    if (s.is_null()) s = nlohmann::ordered_json::object();
    if (!s.is_object()) return make_error(Errc::kInvalidPolicy, std::string(section) + ": not an object");
    auto& list = s[key];
    if (list.is_null()) list = nlohmann::ordered_json::array();
    if (!list.is_array())
      return make_error(Errc::kInvalidPolicy, std::string(section) + "." + key + ": not an array");
    for (const auto& p : add) list.push_back(p.entry);
    return {};
  };
  VIGIL_TRY_VOID(append("filesystem", "allowWrite", r.allow_write));
  VIGIL_TRY_VOID(append("network", "allowedDomains", r.allowed_domains));
  return root.dump(2) + "\n";
}

}  // namespace vigil
