#include "supervisor/launch/sandbox_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>

#include "proxy/domain_matcher.h"
#include "proxy/parent_proxy.h"

#if !defined(__APPLE__)
#include "bwrap/mandatory_scan.h"
#endif
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/events/syscall_table.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/missing_roots.h"
#include "supervisor/launch/workspace_checks.h"
#include "supervisor/core/wire/init_args.h"

namespace vigil {
namespace {

std::string join(const std::string& dir, std::string_view rel) {
  return dir == "/" ? "/" + std::string(rel) : dir + "/" + std::string(rel);
}

#if !defined(__APPLE__)
// A ".git" that is a file points git at another repository's config and hooks.
constexpr MandatoryDeny kGitPointer{".git", DenyShape::kFile,
                                    "git follows it to a repository's config and hooks"};

// What the scan found, as resolved paths the plan can mount over.
Result<void> scan_root(const Policy& policy, const PathRule& root, bool placeholders,
                       std::vector<ProtectedPath>* out, std::vector<std::string>* warnings) {
  ScanLimits limits;
  limits.max_depth = policy.fs.mandatory_deny_search_depth;
  auto scan = scan_mandatory_denies(root.resolved, limits);
  if (!scan) {
    return make_error(scan.error().code, root.origin + ": " + scan.error().message);
  }
  for (const auto& hit : scan->hits) {
    std::string target = hit.path;
    if (hit.type == ScanHit::Type::kSymlink) {
      // Protect what the link points at (the mount follows it). The link itself stays
      // replaceable: see the README's list of known limits.
      const std::string suffix = "/" + std::string(hit.rule->relpath);
      const bool full = target.size() > suffix.size() &&
                        target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0;
      const std::string base = full ? target.substr(0, target.size() - suffix.size())
                                    : target.substr(0, target.rfind('/'));
      target = resolve_symlinks(join(base, hit.rule->relpath));
      struct stat st {};
      if (::stat(target.c_str(), &st) != 0) continue;
    }
    out->push_back(ProtectedPath{target, hit.rule, true, hit.rule->shape});
  }
  for (const auto& g : scan->git_files)
    out->push_back(ProtectedPath{g, &kGitPointer, true, DenyShape::kFile});
  for (const auto& d : scan->unreadable_dirs) {
    warnings->push_back("mandatory-deny scan could not read " + d +
                        "; protected names inside it are not capped");
  }
  // Directly in the root, a missing protected name gets a placeholder so the command
  // cannot create it. Deeper down only what exists is capped (the directories below are
  // the command's to create). A missing .git is left alone so `git init` works.
  // Without placeholders, only a file standing where a directory of a protected name
  // would have to go is capped (it exists: binding it breaks nothing), and .git/commondir.
  std::set<std::string> planned;
  for (const auto& rule : mandatory_denies()) {
    const std::string path = join(root.resolved, rule.relpath);
    const std::string head = join(root.resolved, rule.relpath.substr(0, rule.relpath.find('/')));
    if (rule.relpath.starts_with(".git/")) {
      struct stat st {};
      if (::lstat(head.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    }
    const PathState state = stat_path(path);
    if (state.kind != PathKind::kMissing) continue;
    // A missing commondir in an existing .git keeps its placeholder (holding ".", inside
    // .git where no git command trips on it): that .git is a mount point, so the name
    // seen from its mount is "commondir" alone, which the gatekeeper cannot tell apart.
    if (!placeholders && !state.blocked_by_existing && rule.relpath != ".git/commondir") continue;
    if (!planned.insert(state.first_missing).second) continue;
    const bool whole = state.first_missing == path;
    out->push_back(ProtectedPath{state.first_missing, &rule, state.blocked_by_existing,
                                 whole ? rule.shape : DenyShape::kDir});
  }
  return {};
}
#endif  // !__APPLE__

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The sandbox must not be able to choose its own next policy. Whatever it can write, it
// can swap: the file, the directory holding it (a rename replaces it), and any symlink or
// directory on the way there (flipped between its own directory and the trusted one while
// vigil starts). So every directory the settings path passes through must be outside what
// the plan makes writable: the directory holding each component of the spelling (as it
// resolves now), and every directory above the file vigil actually opened (the fd's
// path, so what was checked is what was parsed). Directories the sandbox cannot write
// cannot change under it, so the first writable one on the way is always seen.
Result<void> check_settings_out_of_reach(const Plan& plan, const std::string& spelled,
                                         const std::string& opened, const std::string& shown) {
  std::vector<std::string> dirs;
  for (std::string p = opened;; p = parent_of(p)) {
    dirs.push_back(p);
    if (p == "/") break;
  }
  for (auto pos = spelled.find('/'); pos != std::string::npos; pos = spelled.find('/', pos + 1)) {
    // "." and ".." are no names a directory's writer can swap.
    const auto end = spelled.find('/', pos + 1);
    const std::string_view name = std::string_view(spelled).substr(
        pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    if (name == "." || name == ".." || name.empty()) continue;
    dirs.push_back(pos == 0 ? "/" : resolve_symlinks(spelled.substr(0, pos)));
  }
  for (const auto& d : dirs) {
    const Decision decision = decide(plan, d, Access::kWrite);
    if (decision.verdict == Verdict::kDenied) continue;
    // Named by the writable root it lies in and the entry that made it one: the op that
    // decided may be a pin, whose origin is a protected name (issue 38.3: "under
    // mandatory: .bashrc" said nothing a user could act on).
    const PlanOp* root = nullptr;
    for (const auto& op : plan.ops) {
      if (op.kind == OpKind::kWritable && path_is_under(d, op.path)) root = &op;
    }
    const std::string where =
        root == nullptr ? "writable (" + decision.rule + ")"
        : root->path == d
            ? "a writable root (" + root->origin + ")"
            : "inside the writable root " + root->path + " (" + root->origin + ")";
    return make_error(Errc::kRefused,
                      "settings file " + shown + " is refused: it is reachable through " + d +
                          ", which is " + where +
                          " of the sandbox it configures, so a command in the session could "
                          "rewrite it and widen its own next launch. Move the file to a "
                          "directory no writable root covers (and name it without symlinks), "
                          "or pass --allow-writable-settings if that is what you mean");
  }
  return {};
}

}  // namespace

Result<std::string> current_dir() {
  std::string buf(4096, '\0');
  if (::getcwd(buf.data(), buf.size()) == nullptr) return system_error("getcwd");
  buf.resize(std::char_traits<char>::length(buf.c_str()));
  return buf;
}

namespace {

// The settings file the request names (else srt's ~/.srt-settings.json when it exists),
// opened once: the fd is what is parsed and, after the plan, what is checked.
struct SettingsSource {
  std::optional<std::string> name;  // as given (or the home file's path)
  std::string spelled;              // absolute
  UniqueFd fd;
};

Result<SettingsSource> load_settings(const PlanRequest& req, const LoadContext& ctx,
                                     PreparedSandbox* out) {
  SettingsSource src;
  // Anything but "does not exist" (unreadable, invalid) is an error, never the default.
  src.name = req.settings_path;
  const std::string home_file = ctx.home.empty() ? "" : join(ctx.home, kHomeSettingsName);
  if (!src.name && req.use_home_settings && !home_file.empty()) {
    struct stat st {};
    // ENOTDIR: a HOME below a file has no such file either (the log directory's own
    // check then says what is wrong with HOME).
    if (::stat(home_file.c_str(), &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
      src.name = home_file;
  }
  if (!src.name) {
    out->policy = default_policy(ctx);
    out->settings_origin =
        "vigil's embedded default (no --settings, no ~/" + std::string(kHomeSettingsName) + ")";
    return src;
  }
  const std::string& given = *src.name;
  src.spelled = given.empty() || given[0] == '/' ? given : join(ctx.cwd, given);
  auto fd = open_settings_file(src.spelled);
  VIGIL_TRY(fd);
  src.fd = std::move(fd).value();
  auto p = load_policy_fd(src.fd.get(), src.spelled, ctx);
  VIGIL_TRY(p);
  out->policy = std::move(p).value();
  out->settings_origin = req.settings_path ? "--settings " + given
                                           : "~/" + std::string(kHomeSettingsName) +
                                                 " (no --settings given; srt's default file)";
  return src;
}

// srt's fallback: the user's proxy variables when the settings name no parent proxy.
void parent_proxy_from_environment(ParentProxySettings* pp) {
  if (!pp->origin.empty()) return;
  auto env = [](const char* upper, const char* lower) {
    const char* v = std::getenv(upper);
    if (v == nullptr || *v == '\0') v = std::getenv(lower);
    return std::string(v == nullptr ? "" : v);
  };
  pp->https = env("HTTPS_PROXY", "https_proxy");
  pp->http = env("HTTP_PROXY", "http_proxy");
  if (!pp->https.empty() || !pp->http.empty()) {
    pp->no_proxy = env("NO_PROXY", "no_proxy");
    pp->origin = "environment (HTTPS_PROXY/HTTP_PROXY)";
  }
}

// The writable roots as they will be mounted: one per directory, the missing ones under
// the user's home made (or, for explain, noted in `would_make`), and one warning naming
// those that mount nothing.
void settle_writable_roots(const PlanRequest& req, PreparedSandbox* out,
                           std::vector<std::string>* would_make) {
  // One directory named twice (or a million times: `"."` repeated) is one root: the scan
  // and the mounts run once per directory, not once per spelling.
  {
    std::set<std::string> seen;
    std::erase_if(out->policy.fs.allow_write,
                  [&](const PathRule& r) { return !seen.insert(r.resolved).second; });
  }
  // A missing allowWrite directory under the user's home whose parent is theirs is made
  // now (missing_roots.h), said once, the first time; explain says run would make it.
  for (auto& r : out->policy.fs.allow_write) {
    if (!makes_missing_root(r, out->policy.home, ::geteuid())) continue;
    if (!req.make_missing_roots) {
      would_make->push_back(r.origin + ": " + r.resolved +
                            " does not exist; vigil run makes it at launch (under your home, "
                            "in a directory of yours)");
      continue;
    }
    if (auto made = make_missing_root(r); !made) {
      out->warnings.push_back(made.error().message);
      continue;
    }
    print_notice("made " + r.resolved + " (" + r.origin +
                 " lists it; it did not exist): it is writable in this session");
    r.kind = PathKind::kDir;
    r.first_missing.clear();
  }
  // An allowWrite entry that is a file or does not exist mounts nothing: said at launch, in
  // one line, rather than discovered when a write there is refused.
  std::string skipped;
  for (const auto& r : out->policy.fs.allow_write) {
    if (r.kind == PathKind::kDir) continue;
    if (!req.make_missing_roots && makes_missing_root(r, out->policy.home, ::geteuid())) continue;
    skipped += (skipped.empty() ? "" : ", ") + r.written + " (" +
               (r.kind == PathKind::kMissing ? "missing" : "not a directory") + ")";
  }
  if (!skipped.empty()) {
    out->warnings.push_back("filesystem.allowWrite entries not writable in this session: " +
                            skipped + "; allowWrite takes existing directories (create them first)");
  }
}

// The allowlist is checked here, where every command (run, explain, both platforms) loads
// the policy, so that a bad pattern is refused before anything runs, naming the file and
// the entry; the proxy compiles the same lists again when it starts. Returns the plan's
// note on the parent proxy ("" without one).
Result<std::string> check_network_lists(const Policy& policy) {
  if (auto m = proxy::DomainMatcher::build(policy.net); !m) {
    return make_error(Errc::kInvalidPolicy, policy.source + ": " + m.error().message);
  }
  auto r = proxy::build_parent_route(policy.net.parent_proxy);
  if (!r) return make_error(Errc::kInvalidPolicy, policy.source + ": " + r.error().message);
  if (!*r) return std::string();
  return "allowed connections go out through the parent proxy " + (*r)->https->text() +
         " (from " + (*r)->origin +
         ") with CONNECT; vigil still decides each one, address guard included";
}

#if !defined(__APPLE__)
// The mandatory-deny scan of every writable root (macOS has none: the Seatbelt profile
// denies the mandatory names by regex at any depth, seatbelt/profile_builder.h).
Result<void> scan_writable_roots(const PlanRequest& req, PreparedSandbox* out) {
  if (req.before_scan) {
    std::vector<std::string> roots;
    for (const auto& root : out->policy.fs.allow_write) {
      if (!root.session_temp && root.kind == PathKind::kDir) roots.push_back(root.resolved);
    }
    VIGIL_TRY_VOID(req.before_scan(roots));
  }
  DebugPhase scan_timed("scan");
  for (const auto& root : out->policy.fs.allow_write) {
    if (root.session_temp || root.kind != PathKind::kDir) continue;
    if (auto r = scan_root(out->policy, root, req.placeholders, &out->protected_paths,
                           &out->warnings);
        !r)
      return r.error();
  }
  // After the scan: the repository's .git is not scanned as a root of its own (its
  // hooks, config and commondir are named directly; workspace_checks.h).
  add_writable_repository(&out->policy, &out->protected_paths);
  return {};
}
#endif

}  // namespace

Result<PreparedSandbox> prepare_sandbox(const PlanRequest& req) {
  DebugPhase timed("plan (policy, scan, mounts)");
  auto cwd = req.cwd.empty() ? current_dir() : Result<std::string>(req.cwd);
  VIGIL_TRY(cwd);
  if (cwd->empty() || (*cwd)[0] != '/') {
    return make_error(Errc::kInvalidPolicy, "the workspace directory must be an absolute path");
  }
  const char* home = std::getenv("HOME");
  LoadContext ctx{*cwd, home != nullptr ? home : ""};
  PreparedSandbox out;
  auto settings = load_settings(req, ctx, &out);
  VIGIL_TRY(settings);
  parent_proxy_from_environment(&out.policy.net.parent_proxy);
  out.warnings = out.policy.warnings;
  if (req.refuse_missing_at_call) {
    // (A file standing where a directory of the path would be keeps its read-only bind:
    // it exists, and binding it blocks nothing that could be made.)
    for (auto& r : out.policy.fs.deny_write)
      r.refuse_at_call = r.kind == PathKind::kMissing && !r.first_missing_exists;
  }
  std::vector<std::string> would_make;
  settle_writable_roots(req, &out, &would_make);
  auto parent_note = check_network_lists(out.policy);
  VIGIL_TRY(parent_note);
  if (!req.session_tmp.empty()) {
    PathRule tmp;
    tmp.written = "$TMPDIR";
    tmp.literal = req.session_tmp;
    tmp.resolved = req.resolve_session_tmp ? resolve_symlinks(req.session_tmp) : req.session_tmp;
    tmp.origin = "session temp dir";
    tmp.kind = PathKind::kDir;
    tmp.session_temp = true;
    out.policy.fs.allow_write.push_back(std::move(tmp));
  }
#if !defined(__APPLE__)
  VIGIL_TRY_VOID(scan_writable_roots(req, &out));
#endif
  for (auto& w : home_root_warnings(out.policy)) out.warnings.push_back(std::move(w));
  out.plan = build_plan(out.policy, out.protected_paths);
  if (!parent_note->empty()) out.plan.notes.push_back(*parent_note);
  for (auto& n : would_make) out.plan.notes.push_back(std::move(n));

  if (settings->name && !req.allow_writable_settings) {
    const std::string opened = fd_path(settings->fd.get());
    if (opened.empty())
      return system_error("cannot tell where settings file " + *settings->name + " is");
    if (auto r = check_settings_out_of_reach(out.plan, settings->spelled, opened,
                                             *settings->name);
        !r)
      return std::move(r).error();
  }
  return out;
}

#if !defined(__APPLE__)
std::vector<KernelMask> present_kernel_masks() {
  std::vector<KernelMask> out;
  for (const auto& m : kernel_masks()) {
    struct stat st {};
    if (::lstat(std::string(m.path).c_str(), &st) == 0) out.push_back(m);
  }
  return out;
}
#endif

std::vector<std::string> placeholder_paths(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kDenyWrite && !op.exists && !op.at_call) out.push_back(op.path);
  }
  return out;
}

std::vector<std::string> refuse_create_args(const Plan& plan) {
  wire::InitArgs init;
  for (const auto& op : plan.ops) {
    if (op.at_call) init.refuse_create.push_back({op.path, op.origin});
  }
  return wire::option_args(init);
}

bool gatekeeper_in_force() {
#if defined(__APPLE__)
  return false;
#else
  utsname u{};
  return ::uname(&u) == 0 && kernel_can_gatekeep(u.release);
#endif
}

Result<void> create_content_placeholders(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    const std::string_view content = placeholder_content(p);
    if (content.empty()) continue;
    UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444));
    if (!fd) return system_error("cannot create the placeholder " + p);
    if (auto w = write_all(fd.get(), content, p); !w) return w;
  }
  return {};
}

bool is_untouched_placeholder(const std::string& path, const struct stat& st) {
  const std::string_view content = placeholder_content(path);
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) != content.size()) return false;
  if (content.empty()) return true;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  char buf[16] = {};
  return fd && ::read(fd.get(), buf, sizeof buf) == static_cast<ssize_t>(content.size()) &&
         std::string_view(buf, content.size()) == content;
}

}  // namespace vigil
