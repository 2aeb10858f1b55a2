#include "supervisor/core/mandatory_denies.h"

#include <array>
#include <vector>

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

const MandatoryDeny* mandatory_deny_within(std::string_view rel, bool allow_git_config) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start <= rel.size();) {
    std::size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    if (end > start) parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const auto& d : kDenies) {
      if (d.git_config && allow_git_config) continue;
      // Match d.relpath's components against parts[i...].
      std::size_t k = i;
      std::string_view want = d.relpath;
      bool match = true;
      while (match && !want.empty()) {
        const std::size_t slash = want.find('/');
        const std::string_view head = want.substr(0, slash);
        match = k < parts.size() && parts[k] == head;
        ++k;
        want = slash == std::string_view::npos ? std::string_view() : want.substr(slash + 1);
      }
      if (!match) continue;
      if (d.shape == DenyShape::kDir || k == parts.size()) return &d;
    }
  }
  return nullptr;
}

}  // namespace vigil
