// Policy plan -> bubblewrap argv. Pure: no I/O, no shell, no string splicing: every
// argument is its own token, and the whole argv reaches bwrap through `--args FD` (a
// memfd), so a path with spaces, quotes or newlines is just a path.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "supervisor/core/fs/path_verdict.h"

namespace vigil {

// One logical bwrap option (a flag and its operands) and the rule that produced it, so
// `vigil explain` can print one mount per line with its reason.
struct BwrapArg {
  std::vector<std::string> tokens;
  std::string rule;
};

// Kernel interfaces masked in every sandbox, the way container runtimes mask them.
//
// Why masks and not a user namespace for root: bwrap as real root does make a user
// namespace, but it can only map root to root (uid 0 outside), so the sandbox's root
// still owns the host's /proc/sys files and, even with every capability dropped, may
// write a global sysctl (fs.lease-break-time) or open kernel.core_pattern. Mapping root
// to another uid needs a setuid helper vigil does not ship. A read-only bind over those
// paths holds for every uid, root included, and nothing in the sandbox can remount it
// (no capability, and the seccomp filters refuse the mount API). The same masks apply
// to unprivileged sessions: one plan for everyone, and /proc/keys would otherwise list
// the user's own keyrings.
enum class MaskKind {
  kReadOnly,  // bound read-only over itself
  kEmpty,     // a file: /dev/null bound over it; a directory: an empty read-only tmpfs
};
struct KernelMask {
  std::string_view path;
  MaskKind kind;
  bool dir;
  std::string_view why;
};
// The whole table; the I/O shell passes the rows whose path exists on this kernel
// (BwrapInputs::kernel_masks): bwrap cannot mount over a /proc entry that is missing.
const std::vector<KernelMask>& kernel_masks();

struct BwrapInputs {
  const Plan* plan = nullptr;
  std::string cwd;                                          // --chdir
  std::vector<std::pair<std::string, std::string>> setenv;  // --setenv NAME VALUE
  int json_status_fd = -1;                                  // --json-status-fd, when >= 0
  int block_fd = -1;  // --block-fd, when >= 0: nothing runs until the supervisor's check
  std::vector<std::string> command;                         // after "--"
  // vigil-init's path inside the sandbox: when set, it runs as PID 1 (--as-pid-1, no
  // bwrap init) and execs the command itself: "--" INIT "--" COMMAND...
  std::string init;
  std::vector<std::string> init_args;  // vigil-init's own options, before its "--"
  // Session files bound read-only at their own path after every policy mount, so no
  // denyRead can hide them (the proxy socket vigil-init bridges to).
  std::vector<std::string> late_ro_binds;
  // credentials.files with mode mask: a session file holding the sentinels (source),
  // bound read-only over the credential file's real path (dest), after every policy
  // mount, so the real bytes are under it wherever the policy put them.
  struct FileBind {
    std::string source, dest, rule;
  };
  std::vector<FileBind> masked_files;
  // vigil.network.capture: a file naming vigil-init's DNS stub, bound read-only over
  // /etc/resolv.conf ("" none).
  std::string resolv_conf;
  // Rows of kernel_masks() that exist here; mounted after every policy mount, so that no
  // setting (an allowWrite of /proc/sys, say) can undo one.
  std::vector<KernelMask> kernel_masks;
  // An empty regular file on the host, bound over the kEmpty files (they then read as
  // empty). Empty: /dev/null, which bwrap binds nodev, so those read as EACCES instead.
  std::string empty_file;
  // enableWeakerNestedSandbox: no --proc (a container whose /proc has masked entries
  // refuses a new one to a user namespace: bwrap "Can't mount proc on /newroot/proc").
  // The sandbox keeps the container's /proc from the read-only bind of /, with the kernel
  // masks over it; it shows every process of the container (see the loader's warning).
  bool weaker_nested = false;
};

std::vector<BwrapArg> build_bwrap_args(const BwrapInputs& in);

// The flat token list (what bwrap sees after expanding --args).
std::vector<std::string> flatten(const std::vector<BwrapArg>& args);

// NUL-terminated tokens of every option, the format `bwrap --args FD` reads. bwrap takes
// only options from that fd: the "--" and the command (the last BwrapArg) stay on its
// real argv, still as separate tokens, never through a shell.
std::string serialize_options_for_args_fd(const std::vector<BwrapArg>& args);
std::vector<std::string> command_tokens(const std::vector<BwrapArg>& args);

// bubblewrap refuses more than 9,000 arguments in all (its MAX_ARGS: "Exceeded maximum
// number of arguments"), counting what it reads from --args as well as its own argv.
inline constexpr std::size_t kBwrapMaxArgs = 9000;
// "" when bwrap will take `args` (launched as `bwrap --args FD COMMAND...`), else why not,
// naming the limit and how many arguments the command itself brought. Pure.
std::string bwrap_arg_count_problem(const std::vector<BwrapArg>& args);

}  // namespace vigil
