#include "supervisor/core/policy/mandatory_denies.h"

#include <array>

namespace vigil {
namespace {

constexpr std::array kDenies = {
    MandatoryDeny{".bashrc", DenyShape::kFile, "bash sources it at startup"},
    MandatoryDeny{".bash_profile", DenyShape::kFile, "bash sources it at login"},
    MandatoryDeny{".zshrc", DenyShape::kFile, "zsh sources it at startup"},
    MandatoryDeny{".zprofile", DenyShape::kFile, "zsh sources it at login"},
    MandatoryDeny{".profile", DenyShape::kFile, "login shells source it"},
    MandatoryDeny{".gitconfig", DenyShape::kFile, "git runs commands named in it"},
    MandatoryDeny{".gitmodules", DenyShape::kFile, "git fetches and checks out what it names"},
    MandatoryDeny{".ripgreprc", DenyShape::kFile, "ripgrep reads options (pre-processors) from it"},
    MandatoryDeny{".mcp.json", DenyShape::kFile, "agent harnesses start the servers it names"},
    MandatoryDeny{".vscode", DenyShape::kDir, "the editor runs tasks from it outside the sandbox"},
    MandatoryDeny{".idea", DenyShape::kDir,
                  "the IDE runs configurations from it outside the sandbox"},
    MandatoryDeny{".claude/commands", DenyShape::kDir, "the agent runs these commands later"},
    MandatoryDeny{".claude/agents", DenyShape::kDir, "the agent loads these definitions later"},
    MandatoryDeny{".git/hooks", DenyShape::kDir, "git executes hooks on commit and checkout"},
    // Not lifted by allowGitConfig: it would hand over the hooks as well. git dies on an
    // empty commondir ("failed to read"), inside the sandbox and on the host while the
    // session runs, so its placeholder holds ".", the repository itself, which git reads
    // as no redirection at all.
    MandatoryDeny{".git/commondir", DenyShape::kFile,
                  "git takes the repository's config and hooks from the directory it names", false,
                  ".\n"},
    MandatoryDeny{".git/config", DenyShape::kFile,
                  "git runs commands named in it (core.fsmonitor, ...)", true},
};

}  // namespace

std::span<const MandatoryDeny> mandatory_denies() { return kDenies; }

bool is_mandatory_deny_head(std::string_view name) {
  for (const auto& d : kDenies) {
    const auto head = d.relpath.substr(0, d.relpath.find('/'));
    if (head == name) return true;
  }
  return false;
}

const MandatoryDeny* mandatory_deny_named(std::string_view relpath) {
  for (const auto& d : kDenies) {
    if (d.relpath == relpath) return &d;
  }
  return nullptr;
}

std::string_view placeholder_content(std::string_view path) {
  for (const auto& d : kDenies) {
    if (d.placeholder.empty() || !path.ends_with(d.relpath)) continue;
    if (path.size() > d.relpath.size() && path[path.size() - d.relpath.size() - 1] == '/')
      return d.placeholder;
  }
  return {};
}

const MandatoryDeny* mandatory_deny_within(std::string_view rel, bool allow_git_config) {
  // On the supervisor's per-event path: no allocation, and only components that start
  // with '.' (as every entry does) are compared at all.
  for (std::size_t at = 0; at < rel.size(); ++at) {
    if (rel[at] != '.' || (at > 0 && rel[at - 1] != '/')) continue;
    const std::string_view rest = rel.substr(at);
    for (const auto& d : kDenies) {
      if (d.git_config && allow_git_config) continue;
      if (!rest.starts_with(d.relpath)) continue;
      const std::size_t end = d.relpath.size();
      // The entry is the path's tail, or (a directory entry) lies above the rest of it.
      if (end == rest.size() || (rest[end] == '/' && d.shape == DenyShape::kDir)) return &d;
    }
  }
  return nullptr;
}

}  // namespace vigil
