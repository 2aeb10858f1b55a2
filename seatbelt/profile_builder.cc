#include "seatbelt/profile_builder.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "supervisor/core/path_expand.h"

namespace vigil {
namespace {

// macOS PATH_MAX: the kernel refuses longer paths, so no rule needs one.
constexpr std::size_t kMaxPathBytes = 1024;
constexpr std::size_t kMaxServiceNameBytes = 256;

// ---- fixed tables: what a shell and the common runtimes need, each with its reason ----

struct Named {
  std::string_view name;
  std::string_view why;
};

// Mach services reachable from inside. Named one by one: a wildcard (or any service not
// listed) can be a door to a process outside the sandbox that acts on our behalf.
constexpr std::array kMachServices = {
    Named{"com.apple.system.logger", "syslog(3) / asl"},
    Named{"com.apple.logd", "os_log, which every system library uses"},
    Named{"com.apple.system.notification_center", "notify(3): libc and CoreFoundation"},
    Named{"com.apple.system.opendirectoryd.libinfo", "getpwuid/getgrgid: ~, id, prompts"},
    Named{"com.apple.system.opendirectoryd.membership", "group membership checks"},
    Named{"com.apple.bsd.dirhelper", "confstr(_CS_DARWIN_USER_TEMP_DIR)"},
};

// sysctl names read at startup by shells, libc and language runtimes.
constexpr std::array kSysctlNames = {
    Named{"hw.ncpu", "thread pools size themselves (make, node, go)"},
    Named{"hw.activecpu", "thread pools"},
    Named{"hw.logicalcpu", "thread pools"},
    Named{"hw.logicalcpu_max", "thread pools"},
    Named{"hw.physicalcpu", "thread pools"},
    Named{"hw.physicalcpu_max", "thread pools"},
    Named{"hw.nperflevels", "Apple silicon core types (runtimes' schedulers)"},
    Named{"hw.pagesize", "allocators"},
    Named{"hw.pagesize_compat", "allocators"},
    Named{"hw.memsize", "runtimes size their heaps"},
    Named{"hw.cachelinesize", "allocators"},
    Named{"hw.machine", "uname -m"},
    Named{"hw.model", "hardware model, read by build tools"},
    Named{"hw.cputype", "architecture detection (Rosetta)"},
    Named{"hw.cpusubtype", "architecture detection"},
    Named{"hw.cpufamily", "architecture detection"},
    Named{"hw.byteorder", "architecture detection"},
    Named{"hw.tbfrequency", "mach_absolute_time conversion"},
    Named{"sysctl.proc_cputype", "is this process translated (Rosetta)"},
    Named{"kern.ostype", "uname"},
    Named{"kern.osrelease", "uname"},
    Named{"kern.osversion", "uname, sw_vers"},
    Named{"kern.osproductversion", "OS version checks"},
    Named{"kern.iossupportversion", "read by libsystem at nearly every start"},
    Named{"kern.version", "uname -v"},
    Named{"kern.hostname", "hostname, prompts"},
    Named{"kern.argmax", "xargs and shells size argument lists"},
    Named{"kern.maxfiles", "descriptor limits"},
    Named{"kern.maxfilesperproc", "descriptor limits"},
    Named{"kern.maxproc", "process limits"},
    Named{"kern.ngroups", "getgroups"},
    Named{"kern.usrstack64", "runtimes locate the main stack"},
    Named{"kern.secure_kernel", "libsystem start-up probe"},
    Named{"kern.osvariant_status", "libsystem start-up probe"},
    Named{"kern.tcsm_available", "V8 (node) probes cache-side-channel mitigation"},
    Named{"kern.tcsm_enable", "V8 (node)"},
    Named{"machdep.ptrauth_enabled", "arm64e pointer authentication"},
    Named{"security.mac.lockdown_mode_state", "libsystem start-up probe"},
    Named{"vm.loadavg", "uptime, make -l"},
};
constexpr std::array kSysctlPrefixes = {
    Named{"hw.optional.", "CPU feature probes (SIMD, arm64 extensions)"},
    Named{"hw.perflevel", "per core-type counts on Apple silicon"},
    Named{"machdep.cpu.", "CPU brand and features"},
};

// IORegistry properties. srt allows every property (the serial number and the platform
// UUID among them); a shell needs none of those.
constexpr std::array kIokitProperties = {
    Named{"IOClassNameOverride", "IOKit's own class lookups"},
    Named{"model", "hardware model"},
    Named{"compatible", "hardware model"},
};

// Devices every shell opens. ioctl is allowed on the harmless ones only (never on a
// terminal: TIOCSTI would type into the user's shell).
constexpr std::array kIoctlDevices = {
    Named{"/dev/null", ""},
    Named{"/dev/zero", ""},
    Named{"/dev/random", ""},
    Named{"/dev/urandom", ""},
    Named{"/dev/dtracehelper", "dyld registers probes through it at every exec"},
};
constexpr std::array kWritableDevices = {
    Named{"/dev/null", ""},
    Named{"/dev/zero", ""},
    Named{"/dev/dtracehelper", ""},
};

// ---- small pure helpers ----

bool is_ascii_printable(char c) { return c >= 0x20 && c < 0x7f; }

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1fu;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0fu;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

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

// ---- the writer: lines of fixed text, and the parameter table ----

class Writer {
 public:
  explicit Writer(std::string tag_literal) : tag_literal_(std::move(tag_literal)) {}

  void line(std::string_view s) {
    text_ += s;
    text_ += '\n';
  }
  void blank() { text_ += '\n'; }
  void comment(std::string_view s) {
    text_ += "; ";
    text_ += s;
    text_ += '\n';
  }

  // One rule, one filter per line. Every deny carries the session's message, so that
  // its violations can be told from every other process's.
  void rule(bool allow, std::string_view ops, const std::vector<std::string>& filters) {
    std::string out = allow ? "(allow " : "(deny ";
    out += ops;
    for (const auto& f : filters) {
      out += "\n  ";
      out += f;
    }
    if (!allow) out += "\n  (with message " + tag_literal_ + ")";
    out += ")";
    line(out);
  }
  void rule(bool allow, std::string_view ops, std::string filter) {
    rule(allow, ops, std::vector<std::string>{std::move(filter)});
  }

  // `(param "PREFIX_N")` for a value; the same (prefix, value) reuses its name.
  std::string param(const std::string& prefix, const std::string& value,
                    const std::string& origin) {
    const auto key = std::make_pair(prefix, value);
    auto it = names_.find(key);
    if (it == names_.end()) {
      const std::string name = prefix + "_" + std::to_string(counters_[prefix]++);
      it = names_.emplace(key, name).first;
      params_.push_back(SeatbeltParam{name, value, origin});
    }
    return "(param \"" + it->second + "\")";
  }

  std::string take_text() { return std::move(text_); }
  std::vector<SeatbeltParam> take_params() { return std::move(params_); }

 private:
  std::string tag_literal_;
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

  void add(bool allow, std::string_view ops, std::string filter) {
    if (!filters_.empty() && (allow != allow_ || ops != ops_)) flush();
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
  std::string ops_;
  std::vector<std::string> filters_;
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

std::string param_prefix(OpKind k) {
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

void emit_header(Writer& w, const std::string& tag_literal) {
  w.line("(version 1)");
  w.comment("vigil: generated Seatbelt profile. Every path is a parameter (-D NAME=VALUE):");
  w.comment("nothing below was spliced in from a settings file.");
  w.line("(deny default (with message " + tag_literal + "))");
  w.blank();
}

void emit_process(Writer& w) {
  w.comment("processes: run and fork; see and signal only this sandbox's own");
  w.line("(allow process-exec)");
  w.line("(allow process-fork)");
  w.line("(allow process-info* (target same-sandbox))");
  w.line("(allow signal (target same-sandbox))");
  w.line("(allow mach-priv-task-port (target same-sandbox))");
  w.line("(allow user-preference-read)");
  w.line("(allow ipc-posix-sem)");
  w.line("(allow ipc-posix-shm)");
  w.blank();
}

Result<void> emit_mach(Writer& w, const SeatbeltInputs& in, std::vector<std::string>* warnings) {
  const Policy& p = *in.policy;
  w.comment("Mach services, by name (no wildcard)");
  std::vector<std::string> filters;
  for (const auto& s : kMachServices)
    filters.push_back("(global-name \"" + std::string(s.name) + "\")");
  w.rule(true, "mach-lookup", filters);
  if (p.macos.enable_weaker_network_isolation) {
    warnings->push_back(
        "enableWeakerNetworkIsolation is on: the command can reach com.apple.trustd.agent "
        "(certificate checks for Go programs), a service outside the sandbox that makes "
        "network requests of its own: a potential data exfiltration path");
    w.comment("enableWeakerNetworkIsolation: trustd, for Go's TLS certificate checks");
    w.line("(allow mach-lookup (global-name \"com.apple.trustd.agent\"))");
  }
  if (p.macos.allow_apple_events) {
    warnings->push_back(
        "allowAppleEvents is on: the command can send Apple Events and ask Launch Services "
        "to open things; the apps that act on them run outside the sandbox, so this removes "
        "code-execution isolation, not just weakens it");
    w.comment("allowAppleEvents: open(1) and osascript reach apps outside the sandbox");
    w.line("(allow appleevent-send)");
    w.line("(allow lsopen)");
    w.rule(
        true, "mach-lookup",
        std::vector<std::string>{"(global-name \"com.apple.coreservices.appleevents\")",
                                 "(global-name \"com.apple.CoreServices.coreservicesd\")",
                                 "(global-name \"com.apple.coreservices.quarantine-resolver\")"});
  }
  if (!p.net.allow_mach_lookup.empty()) {
    w.comment("network.allowMachLookup");
    std::vector<std::string> user;
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
      user.push_back(std::string(prefix ? "(global-name-prefix " : "(global-name ") +
                     w.param("MACH_SERVICE", std::string(stem), origin) + ")");
    }
    w.rule(true, "mach-lookup", user);
  }
  w.blank();
  return {};
}

void emit_system(Writer& w) {
  w.comment("sysctl reads a shell and the common runtimes make at start-up");
  std::vector<std::string> filters;
  for (const auto& s : kSysctlNames)
    filters.push_back("(sysctl-name \"" + std::string(s.name) + "\")");
  for (const auto& s : kSysctlPrefixes)
    filters.push_back("(sysctl-name-prefix \"" + std::string(s.name) + "\")");
  w.rule(true, "sysctl-read", filters);
  w.comment("V8 turns cache-side-channel mitigation on for its own threads");
  w.line("(allow sysctl-write (sysctl-name \"kern.tcsm_enable\"))");
  w.comment("IORegistry: the hardware model only (not the serial number, not the platform UUID)");
  filters.clear();
  for (const auto& s : kIokitProperties)
    filters.push_back("(iokit-property \"" + std::string(s.name) + "\")");
  w.rule(true, "iokit-get-properties", filters);
  w.blank();
  w.comment("devices: ioctl on the harmless ones only (never a terminal)");
  filters.clear();
  for (const auto& d : kIoctlDevices)
    filters.push_back("(literal \"" + std::string(d.name) + "\")");
  w.rule(true, "file-ioctl", filters);
  filters.clear();
  for (const auto& d : kWritableDevices)
    filters.push_back("(literal \"" + std::string(d.name) + "\")");
  w.comment("/dev/fd/N re-opens a descriptor the process already holds, with at most its access");
  filters.push_back("(regex \"^/dev/fd/[0-9]+$\")");
  w.rule(true, "file-write-data", filters);
  w.blank();
}

Result<void> emit_network(Writer& w, const SeatbeltInputs& in, std::vector<std::string>* warnings) {
  const Policy& p = *in.policy;
  w.comment("network: out only to the session's proxy on loopback. (remote ip ...), never");
  w.comment("(local ip ...): a local filter on an outbound connect sees the unbound source");
  w.comment("address, which \"localhost\" matches, so it would admit every connection.");
  std::vector<std::uint16_t> ports = in.session.proxy_ports;
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  for (const auto port : ports) {
    if (port == 0) return make_error(Errc::kInternal, "seatbelt: proxy port 0");
    w.line("(allow network-outbound (remote ip \"localhost:" + std::to_string(port) + "\"))");
  }
  if (p.net.allow_local_binding) {
    warnings->push_back(
        "network.allowLocalBinding on macOS: the command may listen on any port, and may "
        "connect to every service listening on this machine's loopback (macOS has no network "
        "namespace to keep the host's services apart)");
    w.comment("network.allowLocalBinding. \"*:*\": a dual-stack socket bound to 127.0.0.1 is");
    w.comment("::ffff:127.0.0.1, which \"localhost\" does not match");
    w.line("(allow network-bind (local ip \"*:*\"))");
    w.line("(allow network-inbound (local ip \"*:*\"))");
    w.line("(allow network-outbound (remote ip \"localhost:*\"))");
  }
  if (!p.net.allow_unix_sockets.empty()) {
    w.comment("network.allowUnixSockets");
    w.line("(allow system-socket (socket-domain AF_UNIX))");
    std::vector<std::string> bind, connect;
    for (std::size_t i = 0; i < p.net.allow_unix_sockets.size(); ++i) {
      const std::string origin = "network.allowUnixSockets[" + std::to_string(i) + "]";
      const std::string& path = p.net.allow_unix_sockets[i];
      if (auto r = check_named(origin, path); !r) return r;
      warnings->push_back(
          origin + ": " + path +
          " is reachable from inside; whatever listens there acts outside the sandbox");
      for (const auto& s : private_twins(lexically_normal(path))) {
        const std::string name = w.param("UNIX_SOCKET", s, origin);
        bind.push_back("(local unix-socket (subpath " + name + "))");
        connect.push_back("(remote unix-socket (subpath " + name + "))");
      }
    }
    w.rule(true, "network-bind", bind);
    w.rule(true, "network-outbound", connect);
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

  w.comment("files: read everything, write nothing; then the plan's layers, shallow to deep");
  w.line("(allow file-read*)");
  {
    RuleRun run(&w);
    for (const auto& e : entries) {
      const PlanOp& op = *e.op;
      const std::string name = w.param(param_prefix(op.kind), e.spelling, op.origin);
      const std::string filter = "(subpath " + name + ")";
      switch (op.kind) {
        case OpKind::kHide:
          // Outside every writable root, writes are denied by default already.
          run.add(false,
                  under_other(plan, op, is_writable_kind) ? "file-read* file-write*" : "file-read*",
                  filter);
          break;
        case OpKind::kReopenRead:
          run.add(true, "file-read*", filter);  // always inside a hidden region: writes stay denied
          break;
        case OpKind::kWritable:
          // A writable root re-opens reads too, but only a hidden region had closed them.
          run.add(true,
                  under_other(plan, op, is_hide_kind) ? "file-read* file-write*" : "file-write*",
                  filter);
          break;
        case OpKind::kDenyWrite:
          run.add(false, "file-write*", filter);
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
    w.comment("realpath() of a re-opened path must stat the hidden directories above it");
    w.line("(allow file-read-metadata (vnode-type DIRECTORY))");
  }
  if (std::any_of(plan.ops.begin(), plan.ops.end(),
                  [](const PlanOp& op) { return op.kind == OpKind::kHide && op.path == "/"; })) {
    w.comment("dyld aborts if it cannot read the root directory itself");
    w.line("(allow file-read* (literal \"/\"))");
  }
  w.blank();
  return {};
}

void emit_mandatory(Writer& w, const Policy& policy) {
  w.comment("mandatory denies (the list the Linux scan uses), by name at any depth and in any");
  w.comment("letter case: there is no scan here, and a name survives a rename of its parent");
  std::vector<std::string> filters;
  for (const auto& d : mandatory_denies()) {
    if (d.git_config && policy.fs.allow_git_config) continue;
    filters.push_back("(regex " + sbpl_string(mandatory_deny_regex(d)).value() + ")");
  }
  w.rule(false, "file-write*", filters);
  w.comment("the directory holding a protected entry (.git, .claude) can be neither renamed away");
  w.comment("nor created: `mv prepared .git` would bring hooks along that no rule above sees");
  filters.clear();
  for (const auto& re : mandatory_head_regexes())
    filters.push_back("(regex " + sbpl_string(re).value() + ")");
  w.rule(false, "file-write*", filters);
  w.blank();
}

// Rename is checked as an unlink of the source, so a deny on a path alone does not stop
// `mv parent parent2`, after which the path no longer matches. bwrap gets this for free
// (a mount point cannot be renamed); here each protected path and each ancestor the
// command could otherwise write is guarded.
Result<void> emit_unlink_guards(Writer& w, const SeatbeltInputs& in) {
  const Policy& policy = *in.policy;
  const Plan& plan = *in.plan;
  std::vector<std::string> subtree, dirs;
  std::set<std::string> seen_dirs;
  for (const auto& op : plan.ops) {
    if (op.kind != OpKind::kHide && op.kind != OpKind::kDenyWrite) continue;
    if (!under_other(plan, op, is_writable_kind)) continue;  // nothing writable around it
    const char* prefix = op.kind == OpKind::kHide ? "DENY_READ" : "DENY_WRITE";
    for (const auto& s : spellings_of(policy, op)) {
      const std::string f = "(subpath " + w.param(prefix, s, op.origin) + ")";
      if (std::find(subtree.begin(), subtree.end(), f) == subtree.end()) subtree.push_back(f);
    }
    for (std::string dir = op.path.substr(0, op.path.rfind('/')); !dir.empty();
         dir = dir.substr(0, dir.rfind('/'))) {
      if (decide(plan, dir, Access::kWrite).verdict != Verdict::kAllowed) continue;
      if (!seen_dirs.insert(dir).second) continue;
      for (const auto& s : private_twins(dir)) {
        if (auto r = check_named(op.origin, s); !r) return r;
        dirs.push_back("(literal " + w.param("GUARD_DIR", s, "ancestor of " + op.origin) + ")");
      }
    }
  }
  if (subtree.empty() && dirs.empty()) return {};
  w.comment("protected paths, and the writable directories above them, stay where they are");
  if (!subtree.empty()) w.rule(false, "file-write-unlink", subtree);
  if (!dirs.empty()) w.rule(false, "file-write-unlink", dirs);
  w.blank();
  return {};
}

void emit_pty(Writer& w, const Policy& policy) {
  if (!policy.macos.allow_pty) return;
  w.comment("allowPty: the command may open pseudo-terminals of its own");
  w.line("(allow pseudo-tty)");
  const std::vector<std::string> ptys{"(literal \"/dev/ptmx\")", "(regex \"^/dev/ttys[0-9]+$\")"};
  w.rule(true, "file-ioctl file-read* file-write-data", ptys);
  w.blank();
}

}  // namespace

bool valid_log_tag(std::string_view tag) {
  if (tag.size() < 8 || tag.size() > 64) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Result<std::string> regex_escape(std::string_view literal, bool fold_case) {
  // ']' and '}' are ordinary outside a bracket or a bound, and POSIX leaves a backslash
  // before an ordinary character undefined (libstdc++'s ERE rejects "\\]"): they stay
  // bare, which both ERE and ECMAScript read as themselves.
  static constexpr std::string_view kMeta = ".[(){*+?^$|\\";
  std::string out;
  for (char c : literal) {
    if (!is_ascii_printable(c)) {
      return make_error(Errc::kInvalidPolicy, "regex_escape: control or non-ASCII byte");
    }
    if (kMeta.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else if (fold_case && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      const char lower = static_cast<char>(c | 0x20);
      const char upper = static_cast<char>(lower & ~0x20);
      out += '[';
      out += lower;
      out += upper;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::string> sbpl_string(std::string_view fixed) {
  std::string out = "\"";
  for (char c : fixed) {
    if (!is_ascii_printable(c)) {
      return make_error(Errc::kInternal, "sbpl_string: control or non-ASCII byte in a fixed token");
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

Result<void> check_path_value(std::string_view value) {
  if (value.empty() || value[0] != '/')
    return make_error(Errc::kInvalidPolicy, "not an absolute path");
  if (value.find('\0') != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy, "the path contains a NUL byte");
  }
  if (value.size() > kMaxPathBytes) {
    return make_error(Errc::kInvalidPolicy, "the path is " + std::to_string(value.size()) +
                                                " bytes long; macOS paths are at most " +
                                                std::to_string(kMaxPathBytes));
  }
  if (!valid_utf8(value)) {
    return make_error(Errc::kInvalidPolicy,
                      "the path is not valid UTF-8 (macOS file names always are)");
  }
  return {};
}

std::string mandatory_deny_regex(const MandatoryDeny& deny) {
  // The list is ours and plain ASCII: escaping cannot fail (a table test holds it to that).
  return "^.*/" + regex_escape(deny.relpath, true).value() + "(/.*)?$";
}

std::vector<std::string> mandatory_head_regexes() {
  std::vector<std::string> out;
  for (const auto& d : mandatory_denies()) {
    const auto slash = d.relpath.find('/');
    if (slash == std::string_view::npos) continue;
    std::string re = "^.*/" + regex_escape(d.relpath.substr(0, slash), true).value() + "$";
    if (std::find(out.begin(), out.end(), re) == out.end()) out.push_back(std::move(re));
  }
  return out;
}

std::vector<std::string> private_twins(std::string_view path) {
  static constexpr std::array<std::string_view, 3> kLinked = {"/tmp", "/var", "/etc"};
  std::vector<std::string> out{std::string(path)};
  for (const auto top : kLinked) {
    const std::string priv = "/private" + std::string(top);
    if (path_is_under(path, top)) {
      out.push_back(priv + std::string(path.substr(top.size())));
    } else if (path_is_under(path, priv)) {
      out.push_back(std::string(top) + std::string(path.substr(priv.size())));
    }
  }
  return out;
}

Result<SeatbeltProfile> build_seatbelt_profile(const SeatbeltInputs& in) {
  if (in.policy == nullptr || in.plan == nullptr) {
    return make_error(Errc::kInternal, "seatbelt: no policy or plan");
  }
  if (!valid_log_tag(in.session.log_tag)) {
    return make_error(Errc::kInternal, "seatbelt: the log tag must be 8..64 of [A-Za-z0-9_]");
  }
  auto tag_literal = sbpl_string(in.session.log_tag);
  if (!tag_literal) return std::move(tag_literal).error();

  SeatbeltProfile out;
  Writer w(*tag_literal);
  emit_header(w, *tag_literal);
  emit_process(w);
  if (auto r = emit_mach(w, in, &out.warnings); !r) return r.error();
  emit_system(w);
  if (auto r = emit_network(w, in, &out.warnings); !r) return r.error();
  if (auto r = emit_files(w, in); !r) return r.error();
  emit_mandatory(w, *in.policy);
  if (auto r = emit_unlink_guards(w, in); !r) return r.error();
  emit_pty(w, *in.policy);
  out.text = w.take_text();
  out.params = w.take_params();
  return out;
}

}  // namespace vigil
