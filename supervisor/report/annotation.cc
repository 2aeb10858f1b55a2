#include "supervisor/report/annotation.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "proxy/domain_matcher.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/events/syscall_table.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/report/denial_groups.h"
#include "supervisor/report/write_hint.h"

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

// One variable part of a line: escaped, and cut with a marker past the part cap.
std::string part(std::string_view raw, std::size_t cap = kAnnotationMaxPartBytes) {
  return escape_text(raw, TextSink::kAnnotation, cap);
}

std::string reason_part(std::string_view raw) { return part(raw, kAnnotationMaxReasonBytes); }

std::string verb(const Violation& v) {
  return v.kind == Violation::Kind::kFs ? plain_actions(v.actions) : v.op;
}

std::string count_suffix(std::uint64_t n) { return n > 1 ? " (x" + std::to_string(n) + ")" : ""; }

// A network refusal by the default rule says which allowedDomains entry would allow it.
std::string net_fix(const Violation& v) {
  if (v.kind != Violation::Kind::kNet || !v.rule.empty() ||
      v.reason.rfind(proxy::kReasonNotAllowed, 0) != 0)
    return {};
  return "; to allow it, add \"" + part(v.target) + "\" to network.allowedDomains";
}

// A request refused inside a terminated tunnel: its reason names the rule to add (request
// rules) or the setting that refused it. One line per method and path.
Violation request_violation(const events::NetRequest& q, std::uint64_t seq) {
  Violation v;
  v.kind = Violation::Kind::kNet;
  // The method is part of the target: a refused DELETE and a refused GET of one path
  // are two causes, two lines.
  v.op = "network-request";
  v.target = q.method + " " + net_target(q.host, q.port) + q.path;
  v.reason = q.reason;
  v.first_seq = seq;
  v.host = q.host;
  v.port = q.port;
  v.rule = q.rule;
  return v;
}

std::string line_for(const Violation& v, const char* word) {
  std::string line = std::string(word) + " " + verb(v) + " " + part(v.target);
  if (!v.reason.empty()) line += " (" + reason_part(v.reason) + net_fix(v) + ")";
  return line + count_suffix(v.count);
}

ojson violation_json(const Violation& v) {
  ojson j;
  j["kind"] = v.kind == Violation::Kind::kFs ? "fs" : v.kind == Violation::Kind::kNet ? "net" : "unix";
  j["op"] = bytes_json(v.op);
  if (v.kind == Violation::Kind::kFs) j["actions"] = plain_actions(v.actions);
  j["target"] = bytes_json(v.target);
  j["reason"] = bytes_json(v.reason);
  j["count"] = v.count;
  j["first_seq"] = v.first_seq;
  if (v.kind != Violation::Kind::kNet) {
    j["path"] = bytes_json(v.spelling());
  } else {
    j["host"] = bytes_json(v.host);
    j["port"] = v.port;
    j["rule"] = bytes_json(v.rule);
  }
  return j;
}

// What an unguarded line says: what the name makes run, that it was not stopped, and
// what to do, in words a model can act on without harm: a `git init` or `git clone`
// writes .git/hooks as a matter of course, and "remove it" would break the repository.
std::string unguarded_reason(std::string_view relpath) {
  const MandatoryDeny* d = mandatory_deny_named(relpath);
  return "protected name " + std::string(relpath) + ": " + std::string(d ? d->why : "") +
         "; not stopped: it did not exist when the sandbox started, so nothing guarded it; "
         "the user is told of it. Nothing to do if a tool you ran made it (git init and "
         "git clone do); do not add anything there yourself";
}

// The same for a repository's own protected names (.git/hooks, .git/config,
// .git/commondir), told once per repository: `git init` and `git clone` make them all at
// once, and a long line for each was noise (issue 19.3).
std::string unguarded_repository_reason() {
  return "protected names of a repository (.git/hooks, .git/config, .git/commondir): git runs "
         "its hooks and the commands its config names; not stopped: they did not exist when "
         "the sandbox started, so nothing guarded them; the user is told of it. Nothing to do "
         "if a tool you ran made them (git init and git clone do); do not add anything there "
         "yourself";
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

std::string group_line(const DenialGroup& g) {
  if (g.members.size() == 1) return line_for(*g.first, "deny");
  std::string line = "deny " + plain_actions(g.actions) + " " + std::to_string(g.members.size()) +
                     " paths in " + part(g.dir) + (g.dir == "/" ? "" : "/");
  if (!g.first->reason.empty()) line += " (" + reason_part(g.first->reason) + ")";
  line += ": ";
  const std::size_t prefix = g.dir == "/" ? 1 : g.dir.size() + 1;
  const std::size_t named = std::min(g.members.size(), kAnnotationGroupNames);
  for (std::size_t i = 0; i < named; ++i) {
    line += (i == 0 ? "" : ", ") + escape_text(std::string_view(g.members[i]->target).substr(prefix),
                                               TextSink::kAnnotation, 64);
  }
  if (g.members.size() > named) line += " and " + std::to_string(g.members.size() - named) + " more";
  return line + count_suffix(g.attempts > g.members.size() ? g.attempts : 0);
}

// One block entry's first attempt: what every kind of record fills in the same way.
Violation first_attempt(Violation::Kind kind, std::string op, std::string target, std::string path,
                        std::string reason, std::uint64_t seq) {
  Violation v;
  v.kind = kind;
  v.op = std::move(op);
  v.target = std::move(target);
  v.path = std::move(path);
  v.reason = std::move(reason);
  v.first_seq = seq;
  return v;
}

// A quarantine entry's reason: why, and where the thing went (or which lines did).
std::string quarantine_reason(const events::FsQuarantine& q) {
  std::string reason = q.reason;
  if (!q.removed.empty()) {
    // Only the offending lines went; say how to have them back first (a long list of
    // lines is cut at the part cap), then exactly which.
    reason += "; only these lines were taken out, the rest of the file is kept (`vigil undo "
              "--quarantined LOG` puts them back, from " + q.moved_to + "): ";
    for (std::size_t i = 0; i < q.removed.size() && i < 8; ++i)
      reason += (i == 0 ? "`" : ", `") + q.removed[i] + "`";
    if (q.removed.size() > 8) reason += " and " + std::to_string(q.removed.size() - 8) + " more";
  } else if (q.moved_to.empty()) {
    reason += "; NOT moved: remove it by hand before any program uses it";
  } else {
    reason += "; moved to " + q.moved_to + " (its manifest.jsonl says how to restore)";
  }
  return reason;
}

}  // namespace

std::string plain_actions(std::uint16_t actions) {
  std::string out;
  for (int a = 0; a < events::kWriteActionCount; ++a) {
    if ((actions & (1U << a)) == 0) continue;
    if (!out.empty()) out += ", ";
    out += events::to_string(static_cast<events::WriteAction>(a));
  }
  return out.empty() ? std::string("write") : out;
}

std::string escape_for_annotation(std::string_view bytes) {
  return escape_text(bytes, TextSink::kAnnotation);
}

void ViolationCollector::note(List& l, Violation v, events::WriteAction action) {
  const auto bit = static_cast<std::uint16_t>(1U << static_cast<unsigned>(action));
  if (auto it = l.index.find(v.target); it != l.index.end()) {
    Violation& have = l.list[it->second];
    ++have.count;
    if (v.kind == Violation::Kind::kFs) have.actions |= bit;
    return;
  }
  const std::size_t bytes = v.target.size() + v.path.size() + v.reason.size();
  if (l.list.size() >= kMaxTrackedTargets || bytes_ + bytes > kMaxTrackedBytes) {
    ++untracked_;
    return;
  }
  bytes_ += bytes;
  v.count = 1;
  if (v.kind == Violation::Kind::kFs) v.actions = bit;
  if (v.path == v.target) v.path.clear();  // one copy: spelling() gives it back
  l.list.push_back(std::move(v));
  l.index.emplace(l.list.back().target, l.list.size() - 1);
}

void ViolationCollector::add(const events::Event& e) { add(e.body, e.seq); }

void ViolationCollector::add(const events::Body& body, std::uint64_t seq) {
  if (const auto* l = std::get_if<events::LimitReached>(&body)) {
    if (limits_.size() < 8) limits_.push_back(*l);  // one per command; bounded all the same
    return;
  }
  if (const auto* t = std::get_if<events::LogTruncated>(&body)) {
    output_cut_ += t->omitted_bytes;
    return;
  }
  if (const auto* q = std::get_if<events::FsQuarantine>(&body)) {
    note(quarantined_,
         first_attempt(Violation::Kind::kFs, q->rule, q->path, q->path, quarantine_reason(*q), seq),
         events::WriteAction::kCreate);
    return;
  }
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
    v.first_seq = seq;
    v.path = w->path;
    const events::WriteAction action = events::write_action(w->syscall, w->flags);
    if (w->verdict == Verdict::kAllowed) {
      // One entry per protected instance (r/.git/hooks, not each hook file in it): what
      // the user must review is the name, however many writes went into it; and one per
      // repository (r/.git) for the names inside a .git.
      const bool in_git = w->unguarded.starts_with(".git/");
      v.target = protected_instance(v.target, in_git ? ".git" : w->unguarded);
      v.reason = in_git ? unguarded_repository_reason() : unguarded_reason(w->unguarded);
      // A repository's own names are what git init and git clone make: only worth knowing
      // (the backstop judges them and quarantines what breaks the git rules, and that is
      // in the block). Anything else was planted and must be reviewed: the block.
      note(in_git ? repositories_ : unguarded_, std::move(v), action);
    } else if (w->verdict == Verdict::kDenied) {
      ++denied_attempts_;
      v.reason = w->reason;
      note(denied_, std::move(v), action);
    } else {
      v.reason = w->reason;
      note(ephemeral_, std::move(v), action);
    }
    return;
  }
  if (const auto* r = std::get_if<events::FsRead>(&body)) {
    // A read denyRead hid: one line like a denied write's, "deny read <path> (<reason>)".
    ++denied_attempts_;
    note(denied_, first_attempt(Violation::Kind::kFs, r->syscall, r->resolved, r->path, r->reason, seq),
         events::WriteAction::kRead);
    return;
  }
  if (const auto* u = std::get_if<events::NetUnix>(&body)) {
    if (u->verdict != events::NetVerdict::kDenied) return;
    // socket() refused has no path: its type names the entry (one line for all of them).
    const std::string& target = !u->resolved.empty() ? u->resolved
                                : !u->path.empty()   ? u->path
                                                     : u->type;
    ++denied_attempts_;
    note(denied_,
         first_attempt(Violation::Kind::kUnix, "socket AF_UNIX", target, u->path,
                       u->reason + "; " + std::string(kUnixSocketHint), seq),
         events::WriteAction::kWrite);
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
    if (n->captured) v.program = n->program.empty() ? "a program" : n->program;
    ++denied_attempts_;
    note(denied_, std::move(v), events::WriteAction::kWrite);
    return;
  }
  if (const auto* q = std::get_if<events::NetRequest>(&body);
      q != nullptr && q->verdict == events::NetVerdict::kDenied) {
    ++denied_attempts_;
    note(denied_, request_violation(*q, seq), events::WriteAction::kWrite);
  }
}

std::string render_annotation(const ViolationCollector& c, const AnnotationOptions& o) {
  if (c.empty()) return {};
  std::string out = "<sandbox_violations>\n";
  std::uint64_t hidden = 0;
  // Why the command ended early, first: everything below happened before it.
  for (const auto& l : c.limits()) out += "limit " + part(l.limit) + ": " + reason_part(l.detail) + "\n";
  // What the backstop took away comes next: it is what the command managed to plant.
  const auto& quarantined = c.quarantined();
  const std::size_t shown_quarantined = std::min(quarantined.size(), o.max_lines);
  for (std::size_t i = 0; i < shown_quarantined; ++i) {
    const Violation& v = quarantined[i];
    out += "quarantined " + part(v.target) + " (" + reason_part(v.op + ": " + v.reason) + ")\n";
  }
  hidden += quarantined.size() - shown_quarantined;
  // Writes that were not stopped come next, in slots of their own.
  const auto& unguarded = c.unguarded();
  const std::size_t shown_unguarded = std::min(unguarded.size(), o.max_lines);
  for (std::size_t i = 0; i < shown_unguarded; ++i)
    out += line_for(unguarded[i], "unguarded") + "\n";
  hidden += unguarded.size() - shown_unguarded;
  const std::vector<DenialGroup> groups = group_denials(c.denied(), o.max_lines);
  const std::size_t shown = std::min(groups.size(), o.max_lines);
  for (std::size_t i = 0; i < shown; ++i) out += group_line(groups[i]) + "\n";
  for (std::size_t i = shown; i < groups.size(); ++i) hidden += groups[i].members.size();
  // Once: a refused connection came from a program that ignored the proxy settings, so
  // that setting the variables is not taken for the fix (the allowlist is).
  for (const Violation& v : c.denied()) {
    if (v.kind != Violation::Kind::kNet || v.program.empty()) continue;
    out += "note: " + part(v.program) +
           " ignored the proxy settings; vigil captured its connection and the allowlist "
           "decided it (vigil.network.capture)\n";
    break;
  }
  if (hidden > 0 || c.untracked_attempts() > 0) {
    out += std::to_string(hidden) + (c.untracked_attempts() > 0 ? "+" : "") + " more: ";
    out += o.log_path.empty() ? std::string("no session log was kept") : "see " + part(o.log_path);
    out += "\n";
  }
  // The block names the log: it says when the log lacks part of the output (never a
  // block of its own: nothing was stopped).
  if (c.output_cut_bytes() > 0) {
    out += "output: " + std::to_string(c.output_cut_bytes()) +
           " bytes of the command's output are not in the log, which keeps its head and tail "
           "(vigil.log.maxOutputBytes); the output itself was not cut\n";
  }
  out += "</sandbox_violations>\n";
  return out;
}

std::string annotation_note(const ViolationCollector& c) {
  const auto& repos = c.repositories();
  if (repos.empty()) return {};
  std::string line = "git wrote the protected names (hooks, config) of " +
                     std::to_string(repos.size()) +
                     (repos.size() == 1 ? " new repository: " : " new repositories: ") +
                     part(repos.front().target);
  if (repos.size() > 1) line += " and " + std::to_string(repos.size() - 1) + " more";
  return line + "; allowed, judged after the command (vigil replay --writes lists them)";
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
  ojson repositories = ojson::array();
  for (const auto& v : c.repositories()) repositories.push_back(violation_json(v));
  ojson quarantined = ojson::array();
  for (const auto& v : c.quarantined()) quarantined.push_back(violation_json(v));
  j["quarantined"] = std::move(quarantined);
  j["denied"] = std::move(denied);
  j["ephemeral"] = std::move(eph);
  j["unguarded"] = std::move(unguarded);
  j["repositories"] = std::move(repositories);
  j["denied_attempts"] = c.denied_attempts();
  j["untracked_attempts"] = c.untracked_attempts();
  j["ignored_attempts"] = c.ignored_attempts();
  j["annotation"] = render_annotation(c, o);  // escaped, so valid UTF-8
  return j.dump(-1, ' ', true, ojson::error_handler_t::replace) + "\n";
}

std::string fs_denial_reason(const events::FsWrite& w, const Plan& plan, const Policy* policy) {
  if (w.verdict == Verdict::kAllowed || w.resolved.empty() || w.resolved[0] != '/') return w.reason;
  const Decision d = decide(plan, w.resolved, Access::kWrite);
  if (d.verdict != w.verdict || d.reason.empty()) return w.reason;
  // The default rule's generic advice becomes the fix that works for this path.
  if (policy != nullptr && d.verdict == Verdict::kDenied && d.rule == "default")
    return default_deny_hint(w.resolved, *policy);
  return d.reason;
  return w.reason;
}

bool is_cross_mount_link(const events::FsWrite& w) {
  return (w.syscall == "link" || w.syscall == "linkat") && w.verdict == Verdict::kDenied &&
         w.result == "EXDEV" && w.reason.ends_with("(the source)");
}

std::string unguarded_protected_name(const events::FsWrite& w, const FilesystemPolicy& fs) {
  if (w.verdict != Verdict::kAllowed || w.resolved.empty() || w.resolved[0] != '/') return {};
  // A call the gatekeeper performed and that failed wrote nothing.
  if (!w.result.empty() && w.result != "0") return {};
  if (removes_name(w.syscall)) return {};
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
