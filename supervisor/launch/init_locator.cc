#include "supervisor/launch/init_locator.h"

#include <unistd.h>

#include <array>
#include <vector>

#include "supervisor/core/policy/path_expand.h"

namespace vigil {

namespace {

Result<std::string> locate_next_to_vigil(const std::string& name, const char* build_dir) {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return system_error("readlink /proc/self/exe");
  const std::string exe(buf.data(), static_cast<size_t>(n));
  const std::string dir = exe.substr(0, exe.rfind('/'));
  std::vector<std::string> candidates = {dir + "/" + name, dir + "/../libexec/vigil/" + name};
  if (build_dir != nullptr) candidates.push_back(dir + "/../" + build_dir + "/" + name);
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return resolve_symlinks(candidate);
  }
  return make_error(Errc::kNotFound, name + " not found next to " + exe +
                                         " (nor in ../libexec/vigil/); reinstall vigil");
}

}  // namespace

Result<std::string> locate_vigil_init() { return locate_next_to_vigil("vigil-init", "observer"); }

Result<std::string> locate_vigil_helper(const std::string& name) {
  return locate_next_to_vigil(name, nullptr);
}

Result<void> check_not_writable(const Plan& plan, const std::string& binary) {
  const std::string parent = binary.substr(0, binary.rfind('/'));
  for (const std::string& p : {binary, parent.empty() ? std::string("/") : parent}) {
    const Decision d = decide(plan, p, Access::kWrite);
    // The writable root that holds it: decide() names the innermost op, which may be a
    // pin made for a deny below (its origin is that deny's), not why it is writable.
    std::string root = d.rule;
    for (const auto& op : plan.ops) {
      if (op.kind == OpKind::kWritable && path_is_under(p, op.path)) root = op.origin;
    }
    if (d.verdict != Verdict::kDenied && root == "default: the working directory") {
      // Run from / (or from a directory above the installation): the cause is where vigil
      // was started, not where it is installed.
      return make_error(Errc::kRefused,
                        "the working directory holds " + binary +
                            " and would be writable inside the sandbox (vigil makes the "
                            "working directory writable by default): a command could replace "
                            "what runs as PID 1 of the next session. Run vigil from the "
                            "project's directory, or pass --settings with a narrower "
                            "filesystem.allowWrite");
    }
    if (d.verdict != Verdict::kDenied) {
      return make_error(Errc::kRefused,
                        binary + " is writable inside the sandbox (" + p + " is under " + root +
                            "): a command could replace what runs as PID 1 of the next session. "
                            "Install vigil outside the directories it makes writable");
    }
  }
  return {};
}

}  // namespace vigil
