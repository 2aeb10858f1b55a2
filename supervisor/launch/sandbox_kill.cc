#include "supervisor/launch/sandbox_kill.h"

#include <signal.h>

#include <fstream>
#include <string>

namespace vigil {

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string p = std::to_string(pid);
  std::ifstream in("/proc/" + p + "/task/" + p + "/children");
  for (pid_t c = 0; in >> c;) out.push_back(c);
  return out;
}

void kill_sandbox_tree(pid_t bwrap, pid_t sandbox) {
  if (sandbox > 0) ::kill(sandbox, SIGKILL);
  if (bwrap <= 0) return;
  ::kill(bwrap, SIGSTOP);  // clones no more: the list below is every child it will have
  for (const pid_t child : children_of(bwrap)) ::kill(child, SIGKILL);  // wherever in its start
  ::kill(-bwrap, SIGKILL);  // its group: that process before its setsid()
  ::kill(bwrap, SIGKILL);
}

}  // namespace vigil
