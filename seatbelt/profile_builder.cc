#include "seatbelt/profile_builder.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "seatbelt/base_profile_text.h"  // generated from seatbelt/base_profile.sb
#include "seatbelt/sbpl_text.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

using namespace sbpl_literals;

constexpr std::size_t kMaxServiceNameBytes = 256;

// ---- small pure helpers ----

bool has_op(const Plan& plan, OpKind kind) {
  return std::any_of(plan.ops.begin(), plan.ops.end(),
                     [&](const PlanOp& o) { return o.kind == kind; });
}

// `op` lies strictly inside (or on) the path of another op of one of `kinds`.
template <class Pred>
bool under_other(const Plan& plan, const PlanOp& op, Pred pred) {
  for (const auto& other : plan.ops) {
    if (&other == &op || !pred(other.kind)) continue;
    if (path_is_under(op.path, other.path)) return true;
  }
  return false;
}
bool is_writable_kind(OpKind k) { return k == OpKind::kWritable || k == OpKind::kPin; }
bool is_hide_kind(OpKind k) { return k == OpKind::kHide; }

// ---- the writer: lines of Sbpl text (sbpl_text.h), and the parameter table ----

class Writer {
 public:
  explicit Writer(Sbpl tag) : tag_(std::move(tag)) {}

  void line(const Sbpl& s) {
    text_ += s.text();
    text_ += '\n';
  }
  void blank() { text_ += '\n'; }
  void comment(SbplLiteral s) { line(Sbpl("; "_sbpl) + s); }

  // One rule, one filter per line. Every deny carries the session's message, so that
  // its violations can be told from every other process's.
  void rule(bool allow, SbplLiteral ops, const std::vector<Sbpl>& filters) {
    Sbpl out = allow ? "(allow "_sbpl : "(deny "_sbpl;
    out += ops;
    for (const auto& f : filters) out += "\n  "_sbpl + f;
    if (!allow) out += "\n  (with message "_sbpl + tag_ + ")"_sbpl;
    line(out + ")"_sbpl);
  }
  void rule(bool allow, SbplLiteral ops, Sbpl filter) {
    rule(allow, ops, std::vector<Sbpl>{std::move(filter)});
  }

  // `(param "PREFIX_N")` for a value; the same (prefix, value) reuses its name.
  Sbpl param(std::string_view prefix, const std::string& value, const std::string& origin) {
    const auto key = std::make_pair(std::string(prefix), value);
    auto it = names_.find(key);
    if (it == names_.end()) {
      const std::string name =
          std::string(prefix) + "_" + std::to_string(counters_[std::string(prefix)]++);
      it = names_.emplace(key, name).first;
      params_.push_back(SeatbeltParam{name, value, origin});
    }
    // The prefixes are this file's own [A-Z_] words: a name is always valid.
    return Sbpl::param(it->second).value();
  }

  std::string take_text() { return std::move(text_); }
  std::vector<SeatbeltParam> take_params() { return std::move(params_); }

 private:
  Sbpl tag_;
  std::string text_;
  std::map<std::pair<std::string, std::string>, std::string> names_;
  std::map<std::string, int> counters_;
  std::vector<SeatbeltParam> params_;
};

// Consecutive rules with the same action and operations become one rule with several
// filters: shorter, and no change in meaning (filters of one rule are alternatives).
class RuleRun {
 public:
  explicit RuleRun(Writer* w) : w_(w) {}
  ~RuleRun() { flush(); }
  RuleRun(const RuleRun&) = delete;
  RuleRun& operator=(const RuleRun&) = delete;

  void add(bool allow, SbplLiteral ops, Sbpl filter) {
    if (!filters_.empty() && (allow != allow_ || ops.view() != ops_.view())) flush();
    allow_ = allow;
    ops_ = ops;
    if (std::find(filters_.begin(), filters_.end(), filter) == filters_.end()) {
      filters_.push_back(std::move(filter));
    }
  }
  void flush() {
    if (filters_.empty()) return;
    w_->rule(allow_, ops_, filters_);
    filters_.clear();
  }

 private:
  Writer* w_;
  bool allow_ = true;
  SbplLiteral ops_ = ""_sbpl;
  std::vector<Sbpl> filters_;
};

// ---- path spellings ----

// Every spelling of `op`'s path: the plan's (resolved), the settings file's literal one
// when a rule of the same origin resolved to it, and the /private twin of each.
std::vector<std::string> spellings_of(const Policy& policy, const PlanOp& op) {
  std::vector<std::string> out;
  auto add = [&](std::string_view p) {
    for (auto& s : private_twins(p)) {
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    }
  };
  add(op.path);
  for (const auto* list : {&policy.fs.deny_read, &policy.fs.allow_read, &policy.fs.allow_write,
                           &policy.fs.deny_write}) {
    for (const auto& r : *list) {
      if (r.origin == op.origin && r.resolved == op.path && !r.literal.empty() &&
          r.literal[0] == '/') {
        add(lexically_normal(r.literal));
      }
    }
  }
  return out;
}

std::string_view param_prefix(OpKind k) {
  switch (k) {
    case OpKind::kHide:
      return "DENY_READ";
    case OpKind::kReopenRead:
      return "ALLOW_READ";
    case OpKind::kWritable:
      return "WRITE_ROOT";
    case OpKind::kPin:
      return "WRITE_ROOT";
    case OpKind::kDenyWrite:
      return "DENY_WRITE";
  }
  return "PATH";
}

Result<void> check_named(std::string_view origin, std::string_view value) {
  if (auto r = check_path_value(value); !r) {
    return make_error(
        Errc::kInvalidPolicy,
        std::string(origin) + ": cannot be passed to sandbox-exec: " + r.error().message);
  }
  return {};
}

// ---- the sections ----

void emit_header(Writer& w, const Sbpl& tag) {
  w.line("(version 1)"_sbpl);
  w.comment("vigil: generated Seatbelt profile. Every path is a parameter (-D NAME=VALUE):"_sbpl);
  w.comment("nothing below was spliced in from a settings file."_sbpl);
  w.line("(deny default (with message "_sbpl + tag + "))"_sbpl);
  w.blank();
}

// The fixed allowances every session gets: seatbelt/base_profile.sb, built in as text.
void emit_base(Writer& w) {
  w.line(SbplLiteral(kSeatbeltBaseProfile));
  // base_profile.sb ends with its last rule's newline; line() adds the blank after it.
}

Result<void> emit_mach(Writer& w, const SeatbeltInputs& in, std::vector<std::string>* warnings) {
  const Policy& p = *in.policy;
  const bool any = p.macos.enable_weaker_network_isolation || p.macos.allow_apple_events ||
                   !p.net.allow_mach_lookup.empty();
  if (!any) return {};
  if (p.macos.enable_weaker_network_isolation) {
    warnings->push_back(
        "enableWeakerNetworkIsolation is on: the command can reach com.apple.trustd.agent "
        "(certificate checks for Go programs), a service outside the sandbox that makes "
        "network requests of its own: a potential data exfiltration path");
    w.comment("enableWeakerNetworkIsolation: trustd, for Go's TLS certificate checks"_sbpl);
    w.line("(allow mach-lookup (global-name \"com.apple.trustd.agent\"))"_sbpl);
  }
  if (p.macos.allow_apple_events) {
    warnings->push_back(
        "allowAppleEvents is on: the command can send Apple Events and ask Launch Services "
        "to open things; the apps that act on them run outside the sandbox, so this removes "
        "code-execution isolation, not just weakens it");
    w.comment("allowAppleEvents: open(1) and osascript reach apps outside the sandbox"_sbpl);
    w.line("(allow appleevent-send)"_sbpl);
    w.line("(allow lsopen)"_sbpl);
    w.rule(true, "mach-lookup"_sbpl,
           std::vector<Sbpl>{"(global-name \"com.apple.coreservices.appleevents\")"_sbpl,
                             "(global-name \"com.apple.CoreServices.coreservicesd\")"_sbpl,
                             "(global-name \"com.apple.coreservices.quarantine-resolver\")"_sbpl});
  }
  if (!p.net.allow_mach_lookup.empty()) {
    w.comment("network.allowMachLookup"_sbpl);
    std::vector<Sbpl> user;
    for (std::size_t i = 0; i < p.net.allow_mach_lookup.size(); ++i) {
      const std::string& name = p.net.allow_mach_lookup[i];
      const std::string origin = "network.allowMachLookup[" + std::to_string(i) + "]";
      const bool prefix = !name.empty() && name.back() == '*';
      const std::string_view stem =
          prefix ? std::string_view(name).substr(0, name.size() - 1) : name;
      // launchd names are reverse-DNS-like; anything else is a typo or an attack.
      const bool printable = std::all_of(stem.begin(), stem.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '-' || c == '_' || c == '@' || c == ':';
      });
      if (stem.empty() || stem.size() > kMaxServiceNameBytes || !printable) {
        return make_error(Errc::kInvalidPolicy,
                          origin + ": expected a Mach service name ([A-Za-z0-9._@:-], at most " +
                              std::to_string(kMaxServiceNameBytes) +
                              " bytes, '*' only at the end)");
      }
      if (prefix) {
        warnings->push_back(origin + ": \"" + name +
                            "\" allows every Mach service whose name starts with \"" +
                            std::string(stem) + "\"; each is a process outside the sandbox");
      }
      user.push_back((prefix ? "(global-name-prefix "_sbpl : "(global-name "_sbpl) +
                     w.param("MACH_SERVICE", std::string(stem), origin) + ")"_sbpl);
    }
    w.rule(true, "mach-lookup"_sbpl, user);
  }
  w.blank();
  return {};
}

Result<void> emit_network(Writer& w, const SeatbeltInputs& in, std::vector<std::string>* warnings) {
  const Policy& p = *in.policy;
  w.comment("network: out only to the session's proxy on loopback. (remote ip ...), never"_sbpl);
  w.comment("(local ip ...): a local filter on an outbound connect sees the unbound source"_sbpl);
  w.comment("address, which \"localhost\" matches, so it would admit every connection."_sbpl);
  std::vector<std::uint16_t> ports = in.session.proxy_ports;
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  for (const auto port : ports) {
    if (port == 0) return make_error(Errc::kInternal, "seatbelt: proxy port 0");
    w.line("(allow network-outbound (remote ip \"localhost:"_sbpl + Sbpl::number(port) +
           "\"))"_sbpl);
  }
  if (p.net.allow_local_binding) {
    warnings->push_back(
        "network.allowLocalBinding on macOS: the command may listen on any port, and may "
        "connect to every service listening on this machine's loopback (macOS has no network "
        "namespace to keep the host's services apart)");
    w.comment("network.allowLocalBinding. \"*:*\": a dual-stack socket bound to 127.0.0.1 is"_sbpl);
    w.comment("::ffff:127.0.0.1, which \"localhost\" does not match"_sbpl);
    w.line("(allow network-bind (local ip \"*:*\"))"_sbpl);
    w.line("(allow network-inbound (local ip \"*:*\"))"_sbpl);
    w.line("(allow network-outbound (remote ip \"localhost:*\"))"_sbpl);
  }
  if (!p.net.allow_unix_sockets.empty()) {
    w.comment("network.allowUnixSockets"_sbpl);
    w.line("(allow system-socket (socket-domain AF_UNIX))"_sbpl);
    std::vector<Sbpl> bind, connect;
    for (std::size_t i = 0; i < p.net.allow_unix_sockets.size(); ++i) {
      const std::string origin = "network.allowUnixSockets[" + std::to_string(i) + "]";
      const std::string& path = p.net.allow_unix_sockets[i];
      if (auto r = check_named(origin, path); !r) return r;
      warnings->push_back(
          origin + ": " + path +
          " is reachable from inside; whatever listens there acts outside the sandbox");
      for (const auto& s : private_twins(lexically_normal(path))) {
        const Sbpl name = w.param("UNIX_SOCKET", s, origin);
        bind.push_back("(local unix-socket (subpath "_sbpl + name + "))"_sbpl);
        connect.push_back("(remote unix-socket (subpath "_sbpl + name + "))"_sbpl);
      }
    }
    w.rule(true, "network-bind"_sbpl, bind);
    w.rule(true, "network-outbound"_sbpl, connect);
  }
  w.blank();
  return {};
}

// The plan, op by op, in mount order. See the header for why this order reproduces
// decide(): for any path, the ops that cover it are its ancestors, all in one chain, so
// the last matching rule is the deepest op -- the one decide() picks.
Result<void> emit_files(Writer& w, const SeatbeltInputs& in) {
  const Policy& policy = *in.policy;
  const Plan& plan = *in.plan;

  struct Entry {
    const PlanOp* op;
    std::string spelling;
  };
  std::vector<Entry> entries;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kPin) continue;  // writable already; its job is the unlink guard below
    if (auto r = check_named(op.origin, op.path); !r) return r;
    for (auto& s : spellings_of(policy, op)) {
      if (auto r = check_named(op.origin, s); !r) return r;
      entries.push_back(Entry{&op, std::move(s)});
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return mount_order_less(a.spelling, a.op->kind, b.spelling, b.op->kind);
  });

  w.comment("files: read everything, write nothing; then the plan's layers, shallow to deep"_sbpl);
  w.line("(allow file-read*)"_sbpl);
  {
    RuleRun run(&w);
    for (const auto& e : entries) {
      const PlanOp& op = *e.op;
      const Sbpl filter =
          "(subpath "_sbpl + w.param(param_prefix(op.kind), e.spelling, op.origin) + ")"_sbpl;
      switch (op.kind) {
        case OpKind::kHide:
          // Outside every writable root, writes are denied by default already.
          run.add(false,
                  under_other(plan, op, is_writable_kind) ? "file-read* file-write*"_sbpl
                                                          : "file-read*"_sbpl,
                  filter);
          break;
        case OpKind::kReopenRead:
          run.add(true, "file-read*"_sbpl, filter);  // always inside a hidden region
          break;
        case OpKind::kWritable:
          // A writable root re-opens reads too, but only a hidden region had closed them.
          run.add(true,
                  under_other(plan, op, is_hide_kind) ? "file-read* file-write*"_sbpl
                                                      : "file-write*"_sbpl,
                  filter);
          break;
        case OpKind::kDenyWrite:
          run.add(false, "file-write*"_sbpl, filter);
          break;
        case OpKind::kPin:
          break;
      }
    }
  }
  const bool reopened_inside_hidden =
      has_op(plan, OpKind::kReopenRead) ||
      std::any_of(plan.ops.begin(), plan.ops.end(), [&](const PlanOp& op) {
        return op.kind == OpKind::kWritable && under_other(plan, op, is_hide_kind);
      });
  if (reopened_inside_hidden) {
    w.comment("realpath() of a re-opened path must stat the hidden directories above it"_sbpl);
    w.line("(allow file-read-metadata (vnode-type DIRECTORY))"_sbpl);
  }
  if (std::any_of(plan.ops.begin(), plan.ops.end(),
                  [](const PlanOp& op) { return op.kind == OpKind::kHide && op.path == "/"; })) {
    w.comment("dyld aborts if it cannot read the root directory itself"_sbpl);
    w.line("(allow file-read* (literal \"/\"))"_sbpl);
  }
  w.blank();
  return {};
}

// vigil's own table, escaped by regex_escape and quoted by sbpl_string: neither can fail
// on it (a table test holds it to that), so a failure here is a bug, reported as one.
Result<void> emit_mandatory(Writer& w, const Policy& policy) {
  w.comment(
      "mandatory denies (the list the Linux scan uses), by name at any depth and in any"_sbpl);
  w.comment("letter case: there is no scan here, and a name survives a rename of its parent"_sbpl);
  std::vector<Sbpl> filters;
  for (const auto& d : mandatory_denies()) {
    if (d.git_config && policy.fs.allow_git_config) continue;
    auto q = Sbpl::quoted(mandatory_deny_regex(d));
    VIGIL_TRY(q);
    filters.push_back("(regex "_sbpl + *q + ")"_sbpl);
  }
  w.rule(false, "file-write*"_sbpl, filters);
  w.comment(
      "the directory holding a protected entry (.git, .claude) can be neither renamed away"_sbpl);
  w.comment("nor created: `mv prepared .git` would bring hooks along that no rule above sees"_sbpl);
  filters.clear();
  for (const auto& re : mandatory_head_regexes()) {
    auto q = Sbpl::quoted(re);
    VIGIL_TRY(q);
    filters.push_back("(regex "_sbpl + *q + ")"_sbpl);
  }
  w.rule(false, "file-write*"_sbpl, filters);
  w.blank();
  return {};
}

// Rename is checked as an unlink of the source, so a deny on a path alone does not stop
// `mv parent parent2`, after which the path no longer matches. bwrap gets this for free
// (a mount point cannot be renamed); here each protected path and each ancestor the
// command could otherwise write is guarded.
Result<void> emit_unlink_guards(Writer& w, const SeatbeltInputs& in) {
  const Policy& policy = *in.policy;
  const Plan& plan = *in.plan;
  std::vector<Sbpl> subtree, dirs;
  std::set<std::string> seen_dirs;
  for (const auto& op : plan.ops) {
    if (op.kind != OpKind::kHide && op.kind != OpKind::kDenyWrite) continue;
    if (!under_other(plan, op, is_writable_kind)) continue;  // nothing writable around it
    const std::string_view prefix = op.kind == OpKind::kHide ? "DENY_READ" : "DENY_WRITE";
    for (const auto& s : spellings_of(policy, op)) {
      Sbpl f = "(subpath "_sbpl + w.param(prefix, s, op.origin) + ")"_sbpl;
      if (std::find(subtree.begin(), subtree.end(), f) == subtree.end()) {
        subtree.push_back(std::move(f));
      }
    }
    for (std::string dir = op.path.substr(0, op.path.rfind('/')); !dir.empty();
         dir = dir.substr(0, dir.rfind('/'))) {
      if (decide(plan, dir, Access::kWrite).verdict != Verdict::kAllowed) continue;
      if (!seen_dirs.insert(dir).second) continue;
      for (const auto& s : private_twins(dir)) {
        if (auto r = check_named(op.origin, s); !r) return r;
        dirs.push_back("(literal "_sbpl + w.param("GUARD_DIR", s, "ancestor of " + op.origin) +
                       ")"_sbpl);
      }
    }
  }
  if (subtree.empty() && dirs.empty()) return {};
  w.comment("protected paths, and the writable directories above them, stay where they are"_sbpl);
  if (!subtree.empty()) w.rule(false, "file-write-unlink"_sbpl, subtree);
  if (!dirs.empty()) w.rule(false, "file-write-unlink"_sbpl, dirs);
  w.blank();
  return {};
}

void emit_pty(Writer& w, const Policy& policy) {
  if (!policy.macos.allow_pty) return;
  w.comment("allowPty: the command may open pseudo-terminals of its own"_sbpl);
  w.line("(allow pseudo-tty)"_sbpl);
  w.rule(true, "file-ioctl file-read* file-write-data"_sbpl,
         std::vector<Sbpl>{"(literal \"/dev/ptmx\")"_sbpl, "(regex \"^/dev/ttys[0-9]+$\")"_sbpl});
  w.blank();
}

}  // namespace

Result<SeatbeltProfile> build_seatbelt_profile(const SeatbeltInputs& in) {
  if (in.policy == nullptr || in.plan == nullptr) {
    return make_error(Errc::kInternal, "seatbelt: no policy or plan");
  }
  if (!valid_log_tag(in.session.log_tag)) {
    return make_error(Errc::kInternal, "seatbelt: the log tag must be 8..64 of [A-Za-z0-9_]");
  }
  auto tag = Sbpl::quoted(in.session.log_tag);
  VIGIL_TRY(tag);

  SeatbeltProfile out;
  Writer w(*tag);
  emit_header(w, *tag);
  emit_base(w);
  VIGIL_TRY_VOID(emit_mach(w, in, &out.warnings));
  VIGIL_TRY_VOID(emit_network(w, in, &out.warnings));
  VIGIL_TRY_VOID(emit_files(w, in));
  VIGIL_TRY_VOID(emit_mandatory(w, *in.policy));
  VIGIL_TRY_VOID(emit_unlink_guards(w, in));
  emit_pty(w, *in.policy);
  out.text = w.take_text();
  out.params = w.take_params();
  return out;
}

}  // namespace vigil
