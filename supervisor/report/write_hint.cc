#include "supervisor/report/write_hint.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>

#include "supervisor/core/policy/code_places.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

// A directory under $HOME that a tool writes, and how to point the tool elsewhere.
struct ToolDir {
  std::string_view dir;  // relative to $HOME
  std::string_view what;
  std::string_view workaround;
};
constexpr std::array<ToolDir, 12> kToolDirs = {{
    {".npm", "npm's cache", "set npm_config_cache=$TMPDIR/npm-cache"},
    {".cargo", "cargo's home", "set CARGO_HOME=$TMPDIR/cargo"},
    {".rustup", "rustup's home", "set RUSTUP_HOME=$TMPDIR/rustup"},
    {".cache/pip", "pip's cache", "pass --no-cache-dir or set PIP_CACHE_DIR=$TMPDIR/pip"},
    {".cache/go-build", "go's build cache", "set GOCACHE=$TMPDIR/go-build"},
    {"go", "go's module cache", "set GOPATH=$TMPDIR/go"},
    {".gradle", "gradle's home", "set GRADLE_USER_HOME=$TMPDIR/gradle"},
    {".yarn", "yarn's cache", "set YARN_CACHE_FOLDER=$TMPDIR/yarn"},
    {".cache/yarn", "yarn's cache", "set YARN_CACHE_FOLDER=$TMPDIR/yarn"},
    {".local/share/pnpm", "pnpm's store", "set npm_config_store_dir=$TMPDIR/pnpm"},
    {".cache", "a cache", "set XDG_CACHE_HOME=$TMPDIR/cache"},
    {".config", "a tool's settings", ""},
}};

// The system's own trees: never worth widening the policy for.
constexpr std::array<std::string_view, 10> kSystemDirs = {
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/boot", "/var/lib", "/srv"};

// Scratch places outside the session: $TMPDIR is the sandbox's own.
constexpr std::array<std::string_view, 3> kScratchDirs = {"/tmp", "/var/tmp", "/dev/shm"};

std::string tilde(std::string_view path, const std::string& home) {
  if (!home.empty() && home != "/" && path_is_under(path, home))
    return "~" + std::string(path.substr(home.size()));
  return std::string(path);
}

// The allowWrite entry whose path is `dir` or holds `path`, if one lists it.
const PathRule* listed(const FilesystemPolicy& fs, std::string_view path) {
  for (const auto& r : fs.allow_write) {
    if (r.session_temp) continue;
    if (path_is_under(path, r.resolved) || path_is_under(path, r.literal)) return &r;
  }
  return nullptr;
}

// allowWrite takes existing directories only (a missing one mounts nothing), so the hint
// says to make it: applied as written, it works.
std::string add_to_allow_write(std::string_view dir, const Policy& p) {
  const std::string d = tilde(dir, p.home);
  return "add " + d + " to filesystem.allowWrite (mkdir -p " + d + " first if it is missing)";
}

// The stable directory to name for `path` under $HOME: the tool's top directory
// (~/.npm, not ~/.npm/_cacache/tmp/x); two levels for ~/.cache, ~/.config, ~/.local/share.
std::string stable_home_dir(std::string_view rel, const std::string& home) {
  std::size_t keep = 1;
  if (rel.starts_with(".cache/") || rel.starts_with(".config/")) keep = 2;
  if (rel.starts_with(".local/share/") || rel.starts_with(".local/state/")) keep = 3;
  std::size_t end = 0;
  for (std::size_t i = 0; i < keep; ++i) {
    const std::size_t slash = rel.find('/', end == 0 ? 0 : end + 1);
    if (slash == std::string_view::npos) {
      // The path itself is that deep: a file straight in $HOME names $HOME's own file,
      // which is what a dotfile is; a directory of that depth is the path.
      return i == 0 ? home : home + "/" + std::string(rel);
    }
    end = slash;
  }
  return home + "/" + std::string(rel.substr(0, end));
}

}  // namespace

bool is_system_path(std::string_view path) {
  return std::any_of(kSystemDirs.begin(), kSystemDirs.end(),
                     [&](std::string_view s) { return path_is_under(path, s); });
}

namespace {

// The denials no setting should widen: git's global config, a repository's .git above a
// subdirectory's run, a hook, a protected name. nullopt: none of them.
std::optional<std::string> protected_name_hint(std::string_view path, std::string_view base,
                                               const Policy& p) {
  if (base == ".gitconfig" || base == ".gitconfig.lock" ||
      path.ends_with("/.config/git/config") || path.ends_with("/.config/git/config.lock")) {
    return "git config --global writes " + tilde(path, p.home) +
           ", outside the writable roots: use `git config --local` in the repository (with "
           "filesystem.allowGitConfig: true) or `git -c name=value`, or set "
           "GIT_CONFIG_GLOBAL=$TMPDIR/gitconfig";
  }
  // Run from a subdirectory of a repository: its .git is above the working directory.
  if (const auto at = path.find("/.git"); at != std::string_view::npos &&
                                          (at + 5 == path.size() || path[at + 5] == '/')) {
    const std::string repo = at == 0 ? "/" : std::string(path.substr(0, at));
    const std::string cwd = lexically_normal(p.cwd);
    if (!p.cwd.empty() && cwd != repo && path_is_under(cwd, repo)) {
      return "the repository's .git (" + tilde(path.substr(0, at + 5), p.home) +
             ") lies outside the writable roots: vigil runs in a subdirectory of the "
             "repository; set vigil.git.writableRepository: true to let git write its index, "
             "refs, objects and logs (its hooks and config stay protected), or run from " +
             tilde(repo, p.home);
    }
  }
  // A hook in any git directory (.git/hooks, .git/modules/NAME/hooks): vigil-init refuses
  // every one but git's own *.sample in every repository (issue 39), so no allowWrite
  // would help and none is named.
  if (const auto git = path.find("/.git/"); git != std::string_view::npos) {
    const auto hooks = path.find("/hooks/", git);
    if (hooks != std::string_view::npos && path.find('/', hooks + 7) == std::string_view::npos &&
        !base.ends_with(".sample")) {
      return "a git hook (git runs it on its own outside the sandbox): refused in every "
             "repository and no setting makes it writable; run the step as a command instead";
    }
  }
  // A protected name at any depth (a shell's startup file, ~/.vscode/settings.json): no
  // allowWrite makes it writable (vigil-init refuses it under every writable root), so the
  // hint never names one (issue 38.1). The names inside a .git are the git rules' (a new
  // repository's hooks and config are git's to write), so not said here; but a commondir,
  // which vigil-init refuses straight in any .git.
  if (const MandatoryDeny* d = mandatory_deny_within(path.substr(1), /*allow_git_config=*/true);
      d != nullptr && (!d->relpath.starts_with(".git/") || d->relpath == ".git/commondir")) {
    if (d->shape == DenyShape::kDir) {
      return "a protected directory, " + std::string(d->relpath) + " (" + std::string(d->why) +
             "): a sandboxed command may not change what is in it, and no setting makes it "
             "writable; write elsewhere";
    }
    const bool startup = base == ".bashrc" || base == ".bash_profile" || base == ".zshrc" ||
                         base == ".zprofile" || base == ".profile";
    return std::string(startup ? "a protected startup file (" : "a protected file (") +
           std::string(d->why) +
           "): a sandboxed command may not change it; set what you need in the command's own "
           "environment instead";
  }
  return std::nullopt;
}

}  // namespace

std::string default_deny_hint(std::string_view path, const Policy& p) {
  const std::string_view base = path.substr(path.rfind('/') + 1);
  if (auto hint = protected_name_hint(path, base, p)) return *hint;
  // What to name: the stable directory a tool owns, never the volatile file.
  std::string dir;
  std::string tool;
  const bool in_home = !p.home.empty() && p.home != "/" && path_is_under(path, p.home) &&
                       path.size() > p.home.size();
  if (in_home) {
    const std::string_view rel = path.substr(p.home.size() + 1);
    dir = stable_home_dir(rel, p.home);
    for (const auto& t : kToolDirs) {
      if (rel == t.dir || (rel.starts_with(t.dir) && rel[t.dir.size()] == '/')) {
        if (!t.workaround.empty()) {
          tool = std::string(t.what) + ": " + std::string(t.workaround);
          dir = p.home + "/" + std::string(t.dir);  // the tool's own directory, made or not
        }
        break;
      }
    }
  } else {
    const std::size_t slash = path.rfind('/');
    dir = slash == 0 ? std::string("/") : std::string(path.substr(0, slash));
    // A file straight in /tmp (scratch.txt, mktemp's tmp.qZzQjNkAu2) is scratch: $TMPDIR is
    // the session's own. Deeper, a directory someone made there is named like any other.
    for (const auto s : kScratchDirs) {
      if (dir == s) {
        return "outside the writable roots: for scratch files use $TMPDIR (writable, private "
               "to this session) instead of " +
               std::string(s);
      }
    }
    if (is_system_path(path)) {
      return "a system directory, outside the writable roots: write inside the workspace or "
             "$TMPDIR instead";
    }
  }
  if (const PathRule* r = listed(p.fs, path); r != nullptr && r->kind != PathKind::kDir) {
    return r->origin + " lists " + tilde(r->literal, p.home) + ", but it " +
           (r->kind == PathKind::kMissing ? "did not exist" : "was not a directory") +
           " when the sandbox started, so it is not writable: create the directory (mkdir -p " +
           tilde(r->literal, p.home) + ") before the run";
  }
  if (in_home && dir == p.home) {
    return "a file in your home directory, outside the writable roots; write it in the "
           "workspace instead, or add the directory that holds it to filesystem.allowWrite";
  }
  // A top-level directory itself (mkdir -p walking down from /): nothing sensible to widen.
  if (dir == "/" || std::any_of(kScratchDirs.begin(), kScratchDirs.end(),
                  [&](std::string_view s) { return path == s; })) {
    return "outside the writable roots: write inside the workspace or $TMPDIR instead";
  }
  // Outside $HOME never the first two levels (/var/cache, /var/log): every program's.
  const bool in_scratch = path_is_under(dir, "/tmp") || path_is_under(dir, "/var/tmp");
  if (!in_home && !in_scratch && path_depth(dir) < 3) {
    return "outside the writable roots, in " + dir +
           ", which every program shares: write inside the workspace or $TMPDIR instead";
  }
  // Never a place that runs code later, nor one above it (code_places.h): the command
  // chooses which denial comes first, so the hint must be safe for every one.
  const char* path_value = std::getenv("PATH");
  const Narrowed narrowed =
      narrow_past_code(dir, path, /*is_dir=*/false,
                       code_places(p.home, path_dirs_of(path_value != nullptr ? path_value : "")),
                       p.home);
  if (narrowed.dir.empty()) {
    return "outside the writable roots; " + narrowed.why +
           "; write inside the workspace or $TMPDIR instead";
  }
  dir = narrowed.dir;
  return "outside the writable roots; " + (tool.empty() ? "" : tool + ", or ") +
         add_to_allow_write(dir, p);
}

}  // namespace vigil
