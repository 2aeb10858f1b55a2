#include "bwrap/argv_builder.h"

namespace vigil {
namespace {

BwrapArg mount_for(const PlanOp& op) {
  const std::string rule = op.origin + ": " + op.why;
  switch (op.kind) {
    case OpKind::kHide:
      if (op.shape == DenyShape::kDir) return {{"--tmpfs", op.path}, rule};
      return {{"--ro-bind", "/dev/null", op.path}, rule};
    case OpKind::kReopenRead:
      return {{"--ro-bind", op.path, op.path}, rule};
    case OpKind::kWritable:
    case OpKind::kPin:
      return {{"--bind", op.path, op.path}, rule};
    case OpKind::kDenyWrite:
      if (op.exists) return {{"--ro-bind", op.path, op.path}, rule};
      // A missing target gets a placeholder so it cannot be created; bwrap makes the
      // mount point on the host, and the supervisor removes it after the session. Always a
      // file, even for a directory name: mkdir over it fails with EEXIST all the same, and
      // removing a directory that was a mount point waits for the sandbox's mount namespace
      // to be torn down (about 8 ms each, measured), an unlink does not.
      if (!placeholder_content(op.path).empty()) {
        // The supervisor writes it just before the spawn (supervisor/launch/sandbox_plan.h).
        return {{"--ro-bind", op.path, op.path},
                rule +
                    " (placeholder: does not exist yet; vigil writes \".\", the repository "
                    "itself)"};
      }
      return {{"--ro-bind", "/dev/null", op.path}, rule + " (placeholder: does not exist yet)"};
  }
  return {{}, "unreachable"};
}

void push_mask(const KernelMask& m, const std::string& empty_file, std::vector<BwrapArg>* out) {
  const std::string path(m.path);
  const std::string rule = "kernel mask: " + std::string(m.why);
  if (m.kind == MaskKind::kReadOnly) {
    out->push_back({{"--ro-bind", path, path}, rule});
  } else if (m.dir) {
    // Read-only too: a writable tmpfs would be a place to write outside the plan.
    out->push_back({{"--tmpfs", path, "--remount-ro", path}, rule});
  } else {
    out->push_back({{"--ro-bind", empty_file.empty() ? "/dev/null" : empty_file, path}, rule});
  }
}

}  // namespace

const std::vector<KernelMask>& kernel_masks() {
  static const std::vector<KernelMask> table = {
      {"/proc/sys", MaskKind::kReadOnly, true, "no sysctl of the host can be changed"},
      {"/proc/sysrq-trigger", MaskKind::kReadOnly, false, "no magic SysRq (reboot, crash)"},
      {"/proc/irq", MaskKind::kReadOnly, true, "no interrupt affinity changes"},
      {"/proc/bus", MaskKind::kReadOnly, true, "no PCI/USB device configuration"},
      {"/proc/fs", MaskKind::kReadOnly, true, "no filesystem tunables (nfsd, ...)"},
      {"/proc/kcore", MaskKind::kEmpty, false, "no kernel memory image"},
      {"/proc/keys", MaskKind::kEmpty, false, "no list of the keyrings"},
      {"/proc/timer_list", MaskKind::kEmpty, false, "no kernel timers (addresses, pids)"},
      {"/proc/sched_debug", MaskKind::kEmpty, false, "no scheduler state of every task"},
      {"/sys/firmware", MaskKind::kEmpty, true, "no firmware tables (ACPI, DMI, EFI vars)"},
  };
  return table;
}

std::vector<BwrapArg> build_bwrap_args(const BwrapInputs& in) {
  std::vector<BwrapArg> out;
  out.push_back({{"--die-with-parent"}, "the sandbox dies with vigil"});
  out.push_back(
      {{"--new-session"}, "no controlling terminal: TIOCSTI cannot type into the host shell"});
  out.push_back({{"--unshare-all"},
                 in.weaker_nested
                     ? "new user, pid, ipc, uts, cgroup and net namespaces; no fresh /proc "
                       "(enableWeakerNestedSandbox): the container's own, read-only, shows "
                       "every process of the container"
                     : "new user, pid, ipc, uts, cgroup and net namespaces"});
  if (!in.init.empty()) {
    out.push_back({{"--as-pid-1"}, "vigil-init is PID 1: no bwrap init beside the command"});
  }
  out.push_back({{"--cap-drop", "ALL"}, "root inside holds no capability"});
  out.push_back({{"--ro-bind", "/", "/"}, "default: everything is read-only"});
  out.push_back({{"--dev", "/dev"}, "a minimal /dev: no host device nodes"});
  if (!in.weaker_nested) {
    out.push_back({{"--proc", "/proc"}, "a fresh /proc for the new pid namespace"});
  }
  if (in.plan != nullptr) {
    for (const auto& op : in.plan->ops) {
      if (!op.at_call) out.push_back(mount_for(op));  // vigil-init refuses those itself
    }
  }
  for (const auto& f : in.masked_files) {
    out.push_back({{"--ro-bind", f.source, f.dest}, f.rule});
  }
  for (const auto& m : in.kernel_masks) push_mask(m, in.empty_file, &out);
  for (const auto& p : in.late_ro_binds) {
    out.push_back({{"--ro-bind", p, p}, "session: the proxy socket vigil-init bridges to"});
  }
  if (!in.resolv_conf.empty()) {
    out.push_back({{"--ro-bind", in.resolv_conf, "/etc/resolv.conf"},
                   "vigil.network.capture: names resolve through vigil-init's DNS stub"});
  }
  for (const auto& [name, value] : in.setenv) {
    out.push_back({{"--setenv", name, value}, "environment"});
  }
  if (in.json_status_fd >= 0) {
    out.push_back({{"--json-status-fd", std::to_string(in.json_status_fd)},
                   "how vigil tells the command's exit from a setup failure"});
  }
  if (in.block_fd >= 0) {
    out.push_back({{"--block-fd", std::to_string(in.block_fd)},
                   "nothing runs until vigil has checked the finished mount table"});
  }
  if (!in.cwd.empty()) out.push_back({{"--chdir", in.cwd}, "the working directory"});
  BwrapArg cmd{{"--"}, "the command"};
  if (!in.init.empty()) {
    cmd.tokens.push_back(in.init);
    cmd.tokens.insert(cmd.tokens.end(), in.init_args.begin(), in.init_args.end());
    cmd.tokens.push_back("--");
    cmd.rule = "vigil-init, which installs the seccomp filters and runs the command";
  }
  cmd.tokens.insert(cmd.tokens.end(), in.command.begin(), in.command.end());
  out.push_back(std::move(cmd));
  return out;
}

std::vector<std::string> flatten(const std::vector<BwrapArg>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) out.insert(out.end(), a.tokens.begin(), a.tokens.end());
  return out;
}

std::string serialize_options_for_args_fd(const std::vector<BwrapArg>& args) {
  std::string out;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    for (const auto& t : args[i].tokens) {
      out += t;
      out.push_back('\0');
    }
  }
  return out;
}

std::string bwrap_arg_count_problem(const std::vector<BwrapArg>& args) {
  std::size_t total = 2;  // --args FD
  for (const auto& a : args) total += a.tokens.size();
  if (total <= kBwrapMaxArgs) return {};
  const std::size_t own = total - (args.empty() ? 0 : args.back().tokens.size());
  const std::size_t room = kBwrapMaxArgs > own ? kBwrapMaxArgs - own : 0;
  return "the command has too many arguments for bubblewrap: with vigil's " +
         std::to_string(own) + " options it makes " + std::to_string(total) +
         ", and bwrap accepts at most " + std::to_string(kBwrapMaxArgs) +
         " in all (about " + std::to_string(room) +
         " are left for the command and vigil-init's own); pass the arguments in batches "
         "(xargs -n) or through a file";
}

std::vector<std::string> command_tokens(const std::vector<BwrapArg>& args) {
  if (args.empty()) return {};
  return args.back().tokens;
}

}  // namespace vigil
