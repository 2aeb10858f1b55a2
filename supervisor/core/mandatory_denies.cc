#include "supervisor/core/mandatory_denies.h"

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

}  // namespace vigil
