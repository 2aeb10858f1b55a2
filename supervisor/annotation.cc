#include "supervisor/annotation.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "supervisor/core/mandatory_denies.h"
#include "supervisor/core/path_expand.h"

namespace vigil {
namespace {

using ojson = nlohmann::ordered_json;

ojson bytes_json(const std::string& s) {
  if (events::is_valid_utf8(s)) return ojson(s);
  return ojson{{"b64", events::base64_encode(s)}};
}

std::string net_target(const std::string& host, std::uint16_t port) {
  // An IPv6 literal needs brackets, or its colons run into the port's.
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string line_for(const Violation& v, const char* word = "deny") {
  std::string line =
      std::string(word) + " " + escape_for_annotation(v.op) + " " + escape_for_annotation(v.target);
  if (!v.reason.empty()) line += " (" + escape_for_annotation(v.reason) + ")";
  if (v.count > 1) line += " (x" + std::to_string(v.count) + ")";
  return line;
}

ojson violation_json(const Violation& v) {
  ojson j;
  j["kind"] = v.kind == Violation::Kind::kFs ? "fs" : "net";
  j["op"] = bytes_json(v.op);
  j["target"] = bytes_json(v.target);
  j["reason"] = bytes_json(v.reason);
  j["count"] = v.count;
  j["first_seq"] = v.first_seq;
  if (v.kind == Violation::Kind::kFs) {
    j["path"] = bytes_json(v.path);
  } else {
    j["host"] = bytes_json(v.host);
    j["port"] = v.port;
    j["rule"] = bytes_json(v.rule);
  }
  return j;
}

}  // namespace

std::string escape_for_annotation(std::string_view bytes) {
  const std::string t = events::escape_for_terminal(bytes);
  std::string out;
  out.reserve(t.size());
  for (const char c : t) {
    if (c == '<') {
      out += "\\x3c";
    } else {
      out += c;
    }
  }
  return out;
}

void ViolationCollector::note(std::vector<Violation>& list, std::map<Key, std::size_t>& index,
                              Violation v, bool key_on_op) {
  Key key{static_cast<int>(v.kind), key_on_op ? v.op : std::string(), v.target};
  auto it = index.find(key);
  if (it != index.end()) {
    ++list[it->second].count;
    return;
  }
  if (list.size() >= kMaxTrackedTargets) {
    ++untracked_;
    return;
  }
  v.count = 1;
  index.emplace(std::move(key), list.size());
  list.push_back(std::move(v));
}

void ViolationCollector::add(const events::Event& e) { add(e.body, e.seq); }

namespace {

// What an unguarded line says: what the name makes run, and that it was not stopped.
std::string unguarded_reason(std::string_view relpath) {
  const MandatoryDeny* d = mandatory_deny_named(relpath);
  return "protected name " + std::string(relpath) + ": " + std::string(d ? d->why : "") +
         "; NOT stopped: no mount guarded this name (at launch it was missing below the top "
         "level, or a symlink); review or remove it before anything uses it";
}

// The path up to and including the leftmost whole-component occurrence of `relpath`
// ("/w/r/.git/hooks/pre-commit", ".git/hooks" -> "/w/r/.git/hooks"); `path` itself when
// there is none.
std::string protected_instance(const std::string& path, std::string_view relpath) {
  const std::string needle = "/" + std::string(relpath);
  for (std::size_t at = path.find(needle); at != std::string::npos;
       at = path.find(needle, at + 1)) {
    const std::size_t end = at + needle.size();
    if (end == path.size() || path[end] == '/') return path.substr(0, end);
  }
  return path;
}

}  // namespace

void ViolationCollector::add(const events::Body& body, std::uint64_t seq) {
  if (const auto* w = std::get_if<events::FsWrite>(&body)) {
    if (w->verdict == Verdict::kAllowed && w->unguarded.empty()) return;
    if (!w->ignored.empty()) {  // ignoreViolations: counted, kept out of the block
      ++ignored_attempts_;
      return;
    }
    Violation v;
    v.kind = Violation::Kind::kFs;
    v.op = w->syscall;
    v.target = w->resolved.empty() ? w->path : w->resolved;
    v.reason = w->reason;
    v.first_seq = seq;
    v.path = w->path;
    if (w->verdict == Verdict::kAllowed) {
      // One entry per protected instance (r/.git/hooks, not each hook file in it): what
      // the model must review is the name, however many writes went into it.
      v.target = protected_instance(v.target, w->unguarded);
      v.reason = unguarded_reason(w->unguarded);
      note(unguarded_, unguarded_index_, std::move(v), /*key_on_op=*/false);
    } else if (w->verdict == Verdict::kDenied) {
      ++denied_attempts_;
      note(denied_, denied_index_, std::move(v));
    } else {
      note(ephemeral_, ephemeral_index_, std::move(v));
    }
    return;
  }
  if (const auto* n = std::get_if<events::NetDecision>(&body)) {
    if (n->verdict != events::NetVerdict::kDenied) return;
    if (!n->ignored.empty()) {
      ++ignored_attempts_;
      return;
    }
    Violation v;
    v.kind = Violation::Kind::kNet;
    v.op = "network-outbound";
    v.target = net_target(n->host, n->port);
    v.reason = n->reason;
    v.first_seq = seq;
    v.host = n->host;
    v.port = n->port;
    v.rule = n->rule;
    ++denied_attempts_;
    note(denied_, denied_index_, std::move(v));
  }
}

std::string render_annotation(const ViolationCollector& c, const AnnotationOptions& o) {
  if (c.empty()) return {};
  std::string out = "<sandbox_violations>\n";
  const auto& list = c.denied();
  const auto& unguarded = c.unguarded();
  const std::size_t shown = std::min(list.size(), o.max_lines);
  for (std::size_t i = 0; i < shown; ++i) out += line_for(list[i]) + "\n";
  const std::size_t shown_unguarded = std::min(unguarded.size(), o.max_lines - shown);
  for (std::size_t i = 0; i < shown_unguarded; ++i)
    out += line_for(unguarded[i], "unguarded") + "\n";
  const std::size_t hidden = list.size() - shown + unguarded.size() - shown_unguarded;
  if (hidden > 0 || c.untracked_attempts() > 0) {
    out += std::to_string(hidden) + (c.untracked_attempts() > 0 ? "+" : "") + " more: ";
    out += o.log_path.empty() ? std::string("no session log was kept")
                              : "see " + escape_for_annotation(o.log_path);
    out += "\n";
  }
  out += "</sandbox_violations>\n";
  return out;
}

std::string annotation_from_events(std::span<const events::Event> evs, const AnnotationOptions& o) {
  ViolationCollector c;
  for (const auto& e : evs) c.add(e);
  return render_annotation(c, o);
}

std::string render_violations_json(const ViolationCollector& c, const AnnotationOptions& o,
                                   std::string_view session_id) {
  ojson j;
  j["v"] = 1;
  j["session"] = std::string(session_id);
  j["log"] = bytes_json(o.log_path);
  ojson denied = ojson::array();
  for (const auto& v : c.denied()) denied.push_back(violation_json(v));
  ojson eph = ojson::array();
  for (const auto& v : c.ephemeral()) eph.push_back(violation_json(v));
  ojson unguarded = ojson::array();
  for (const auto& v : c.unguarded()) unguarded.push_back(violation_json(v));
  j["denied"] = std::move(denied);
  j["ephemeral"] = std::move(eph);
  j["unguarded"] = std::move(unguarded);
  j["denied_attempts"] = c.denied_attempts();
  j["untracked_attempts"] = c.untracked_attempts();
  j["ignored_attempts"] = c.ignored_attempts();
  j["annotation"] = render_annotation(c, o);  // escaped, so valid UTF-8
  return j.dump(-1, ' ', true, ojson::error_handler_t::replace) + "\n";
}

std::string fs_denial_reason(const events::FsWrite& w, const Plan& plan) {
  if (w.verdict == Verdict::kAllowed || w.resolved.empty() || w.resolved[0] != '/') return w.reason;
  const Decision d = decide(plan, w.resolved, Access::kWrite);
  if (d.verdict == w.verdict && !d.reason.empty()) return d.reason;
  return w.reason;
}

std::string unguarded_protected_name(const events::FsWrite& w, const FilesystemPolicy& fs) {
  if (w.verdict != Verdict::kAllowed || w.resolved.empty() || w.resolved[0] != '/') return {};
  if (w.syscall == "unlink" || w.syscall == "unlinkat" || w.syscall == "rmdir") return {};
  const PathRule* root = nullptr;
  for (const auto& r : fs.allow_write) {
    if (!path_is_under(w.resolved, r.resolved)) continue;
    if (root == nullptr || r.resolved.size() > root->resolved.size()) root = &r;
  }
  if (root == nullptr || root->session_temp) return {};
  const std::string_view rel = std::string_view(w.resolved).substr(root->resolved.size());
  const MandatoryDeny* d = mandatory_deny_within(rel, fs.allow_git_config);
  return d == nullptr ? std::string() : std::string(d->relpath);
}

}  // namespace vigil
