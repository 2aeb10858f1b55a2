#include "supervisor/core/policy/code_places.h"

#include <algorithm>

#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

struct HomePlace {
  std::string_view rel;  // below $HOME
  std::string_view why;
};

// Below $HOME. A directory here is listed when a file in it runs without anyone asking:
// started at login or on a timer, sourced by a shell, loaded by an editor, an agent or
// an interpreter. Their parents (~/.config, ~/.local) are covered by the "never above"
// rule, not listed. A tool's bin that only some users put on PATH (~/.cargo/bin,
// ~/go/bin) is judged by the PATH in force, so that a tool's home stays proposable
// where it runs nothing.
constexpr HomePlace kHomePlaces[] = {
    {"bin", "on PATH in most shells' profiles"},
    {".local/bin", "on PATH in most shells' profiles"},
    {".local/lib", "Python's user site-packages (its .pth files run at every start)"},
    {".local/share/applications", "desktop launchers"},
    {".local/share/systemd", "systemd user units"},
    {".local/share/autostart", "desktop autostart"},
    {".local/share/nvim", "editor plugins"},
    {".local/share/bash-completion", "sourced by interactive shells"},
    {".local/share/fish", "sourced by fish"},
    {".local/share/gh", "gh extensions"},
    {".local/share/JetBrains", "IDE plugins"},
    {".local/share/direnv", "direnv's allowed .envrc files"},
    {".config/autostart", "desktop autostart"},
    {".config/systemd", "systemd user units"},
    {".config/environment.d", "the session environment (LD_PRELOAD, PATH)"},
    {".config/plasma-workspace", "desktop startup scripts"},
    {".config/lxsession", "desktop autostart"},
    {".config/openbox", "desktop autostart"},
    {".config/i3", "window manager startup"},
    {".config/sway", "window manager startup"},
    {".config/hypr", "window manager startup"},
    {".config/fish", "sourced by fish"},
    {".config/bash", "sourced by bash"},
    {".config/zsh", "sourced by zsh"},
    {".config/nvim", "editor configuration"},
    {".config/emacs", "editor configuration"},
    {".config/helix", "editor configuration"},
    {".config/zed", "editor settings and tasks"},
    {".config/Code", "VS Code settings, tasks and extensions"},
    {".config/Code - OSS", "VS Code settings, tasks and extensions"},
    {".config/VSCodium", "VSCodium settings, tasks and extensions"},
    {".config/Cursor", "Cursor settings and extensions"},
    {".config/JetBrains", "IDE settings"},
    {".config/claude", "coding agent settings and hooks"},
    {".config/git", "git's global config and hooks"},
    {".config/direnv", "direnv's configuration"},
    {".vscode", "VS Code extensions"},
    {".vscode-server", "VS Code server extensions"},
    {".vscode-oss", "VS Code extensions"},
    {".cursor", "Cursor extensions and agent settings"},
    {".claude", "coding agent settings, hooks and commands"},
    {".codex", "coding agent settings"},
    {".gemini", "coding agent settings"},
    {".continue", "coding agent settings"},
    {".vim", "editor plugins"},
    {".emacs.d", "editor configuration"},
    {".ssh", "ssh's rc and config (ProxyCommand)"},
    {".gnupg", "gpg's agent configuration"},
    {".bashrc.d", "sourced by bash"},
    {".profile.d", "sourced at login"},
    {".zshrc.d", "sourced by zsh"},
    {".oh-my-zsh", "sourced by zsh"},
    {".bash_completion.d", "sourced by interactive shells"},
    {".ipython", "IPython startup scripts"},
    {".npm-global", "npm's global packages and their bin (on PATH)"},
    {".kde/Autostart", "desktop autostart"},
};

// Outside $HOME (the system's own trees, /usr, /etc, /var/lib, are refused before).
constexpr HomePlace kSystemPlaces[] = {
    {"/var/spool/cron", "cron tables"},
    {"/var/spool/anacron", "cron tables"},
    {"/etc", "system configuration (cron.d, profile.d, systemd)"},
};

std::string tilde(std::string_view path, std::string_view home) {
  if (!home.empty() && home != "/" && path_is_under(path, home))
    return "~" + std::string(path.substr(home.size()));
  return std::string(path);
}

}  // namespace

std::size_t path_depth(std::string_view path) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (path[i] == '/' && i + 1 < path.size() && path[i + 1] != '/') ++n;
  return n;
}

std::vector<std::string> path_dirs_of(std::string_view path_value) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= path_value.size()) {
    const std::size_t colon = std::min(path_value.find(':', at), path_value.size());
    std::string d(path_value.substr(at, colon - at));
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (!d.empty() && d[0] == '/') out.push_back(std::move(d));
    at = colon + 1;
  }
  return out;
}

std::vector<CodePlace> code_places(std::string_view home, const std::vector<std::string>& path_dirs) {
  std::vector<CodePlace> out;
  if (!home.empty() && home != "/") {
    for (const auto& p : kHomePlaces)
      out.push_back({std::string(home) + "/" + std::string(p.rel), std::string(p.why)});
  }
  for (const auto& p : kSystemPlaces) out.push_back({std::string(p.rel), std::string(p.why)});
  for (const auto& d : path_dirs) {
    if (d != "/") out.push_back({d, "a directory on PATH"});
  }
  return out;
}

Narrowed narrow_past_code(const std::string& candidate, std::string_view path, bool is_dir,
                          const std::vector<CodePlace>& places, std::string_view home) {
  Narrowed out;
  for (const auto& p : places) {
    if (path_is_under(path, p.dir)) {
      out.why = tilde(p.dir, home) + " runs code later (" + p.why +
                "): vigil never proposes making it writable";
      return out;
    }
  }
  // The deepest directory that may be named: the file's own directory, or the path
  // itself when it is a directory being made.
  const std::size_t slash = path.rfind('/');
  const std::string_view limit = is_dir ? path : path.substr(0, slash == 0 ? 1 : slash);
  std::string dir = candidate;
  for (;;) {
    const CodePlace* held = nullptr;
    for (const auto& p : places) {
      if (path_is_under(p.dir, dir)) {
        held = &p;
        break;
      }
    }
    if (held == nullptr) {
      out.dir = dir;
      return out;
    }
    if (dir.size() >= limit.size() || !path_is_under(limit, dir)) {
      out.why = tilde(dir, home) + " holds " + tilde(held->dir, home) + ", which runs code later (" +
                held->why + "): vigil never proposes it, and no narrower directory holds the file";
      return out;
    }
    // One component deeper along `path`.
    const std::size_t next = limit.find('/', dir.size() + 1);
    dir = std::string(limit.substr(0, next == std::string_view::npos ? limit.size() : next));
  }
}

}  // namespace vigil
