#include "filters/filter_specs.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <vector>

#include "supervisor/core/events/syscall_table.h"

namespace vigil {
namespace {

// The kernel keeps a socket's type in the low 4 bits (SOCK_TYPE_MASK, not exported to
// userspace); the bits above are only SOCK_CLOEXEC / SOCK_NONBLOCK, anything else is
// EINVAL. Testing the low 4 bits therefore catches SOCK_DGRAM | SOCK_CLOEXEC as well.
constexpr std::uint64_t kSockTypeMask = 0xf;
constexpr std::uint64_t kLow32 = 0xffffffff;

// An int argument equal to `v`, whatever the upper 32 bits hold.
constexpr ArgTest int_is(int arg, std::uint64_t v, std::string_view text) {
  return {arg, kLow32, v, text};
}
// A flags argument with bit(s) `flag` set.
constexpr ArgTest has_flag(int arg, std::uint64_t flag, std::string_view text) {
  return {arg, flag, flag, text};
}
constexpr ArgTest sock_type_is(int arg, std::uint64_t type, std::string_view text) {
  return {arg, kSockTypeMask, type, text};
}

// clone()'s flags are its first argument everywhere but s390 (where the stack comes
// first); unshare() takes only flags.
#if defined(__s390__) || defined(__s390x__)
constexpr int kCloneFlagsArg = 1;
#else
constexpr int kCloneFlagsArg = 0;
#endif

constexpr FilterAction kEperm = errno_action(EPERM);

// ---------------------------------------------------------------------------------------
// unix-block: --unshare-net removes IP, not these. socketpair(AF_UNIX, SOCK_STREAM /
// SOCK_SEQPACKET) stays allowed: shells, Python multiprocessing and most event loops need
// it, and a connection-oriented pair is joined to its twin at birth: connect() gives
// EISCONN and sendto() ignores an address, so it can never reach a host socket path.
// Other types are refused by the kernel itself for AF_UNIX (ESOCKTNOSUPPORT).
constexpr FilterRule kUnixBlockRules[] = {
    {"socket",
     {int_is(0, AF_UNIX, "domain == AF_UNIX")},
     kEperm,
     "a unix socket connects to host services past the network namespace"},
    // From here on: the rows every mode keeps (kLocalSocketRows below).
    {"socketpair",
     {int_is(0, AF_UNIX, "domain == AF_UNIX"), sock_type_is(1, SOCK_DGRAM, "type == SOCK_DGRAM")},
     kEperm,
     "a datagram pair can sendto() any host socket path (srt 0.0.83 lets this through)"},
    {"socketpair",
     {int_is(0, AF_UNIX, "domain == AF_UNIX"), sock_type_is(1, SOCK_RAW, "type == SOCK_RAW")},
     kEperm,
     "AF_UNIX turns SOCK_RAW into SOCK_DGRAM: the same pair by another name"},
    // From here on: the rows allowAllUnixSockets keeps (kOpenRows below).
    {"socket",
     {int_is(0, AF_VSOCK, "domain == AF_VSOCK")},
     kEperm,
     "vsock reaches the hypervisor past the network namespace"},
    {"io_uring_setup", {}, kEperm, "IORING_OP_SOCKET (5.19) creates sockets without socket()"},
    {"io_uring_enter", {}, kEperm, "submits io_uring work; blocked with io_uring_setup"},
    {"io_uring_register", {}, kEperm, "configures an io_uring; blocked with io_uring_setup"},
};
// vsock, datagram pairs and io_uring: refused whatever network.allowUnixSockets says.
constexpr std::span<const FilterRule> kLocalSocketRows = std::span(kUnixBlockRules).subspan(1);
// allowAllUnixSockets: AF_UNIX left alone, but for the rest above (vsock, io_uring:
// never asked for). The datagram pair rows go too: every unix socket is allowed anyway.
constexpr std::span<const FilterRule> kOpenRows = kLocalSocketRows.subspan(2);

// unix-broker (network.allowUnixSockets lists paths): AF_UNIX stream and seqpacket
// sockets are made freely, and their connect() goes to vigil-init, which connects only
// to a listed path (observer/unix_broker.h). A datagram socket is refused by vigil-init
// with a line for the model, not by the filter: it could sendto() any path without ever
// calling connect(). The rest of the socket class: supervisor/core/events/syscall_table.cc.
constexpr FilterAction kNotify = notify_action();
constexpr FilterRule kBrokerSocketRules[] = {
    {"socket",
     {int_is(0, AF_UNIX, "domain == AF_UNIX"), sock_type_is(1, SOCK_DGRAM, "type == SOCK_DGRAM")},
     kNotify,
     "a datagram socket sends to any path without connect(): vigil-init refuses it"},
    {"socket",
     {int_is(0, AF_UNIX, "domain == AF_UNIX"), sock_type_is(1, SOCK_RAW, "type == SOCK_RAW")},
     kNotify,
     "AF_UNIX turns SOCK_RAW into SOCK_DGRAM: refused by vigil-init as datagram"},
};

std::vector<FilterRule> broker_rules() {
  std::vector<FilterRule> out(std::begin(kBrokerSocketRules), std::end(kBrokerSocketRules));
  for (const SocketSyscall& row : socket_syscalls()) {
    // The socket() rows are the two above (their type tests are not table facts).
    if (row.trap && row.handling == SocketHandling::kBrokered) out.push_back({row.name, {}, kNotify, row.why});
  }
  out.insert(out.end(), kLocalSocketRows.begin(), kLocalSocketRows.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// net-capture (vigil.network.capture): every connect() goes to vigil-init, which carries a
// TCP connection to anything but the sandbox's own loopback through the proxy
// (observer/inet_broker.h). The address lives in memory, which a filter cannot read, so
// the call is trapped whatever its family; vigil-init continues what is not TCP to a
// remote host. With the unix broker's table the connect() row is already there (one
// trap serves both: the tables must name disjoint calls).
constexpr FilterRule kNetCaptureRules[] = {
    {"connect",
     {},
     notify_action(),
     "a TCP connect() from a program that ignores the proxy settings: vigil-init hands it a "
     "socket connected through the proxy, decided by the same allowlist"},
};

constexpr FilterSpec kNetCapture{
    "net-capture",
    "vigil.network.capture: TCP connect() is carried through the proxy by vigil-init",
    allow_action(), kill_process_action(), kNetCaptureRules};

// ---------------------------------------------------------------------------------------
// namespaces: the mount table is the sandbox's boundary; these calls rearrange it. It is a
// seccomp filter, not a capability check, so it holds for root inside the sandbox too.
// CLONE_NEWNET/NEWPID/NEWIPC/NEWUTS/NEWCGROUP/NEWTIME stay allowed: without a user
// namespace they need CAP_SYS_ADMIN, which the worker lacks, and with it they only
// isolate the caller further; none of them touches the mount table.
constexpr FilterRule kNamespaceRules[] = {
    {"unshare",
     {has_flag(0, CLONE_NEWUSER, "flags & CLONE_NEWUSER")},
     kEperm,
     "a user namespace grants the capabilities that undo the mounts"},
    {"unshare",
     {has_flag(0, CLONE_NEWNS, "flags & CLONE_NEWNS")},
     kEperm,
     "a private mount namespace is where write denies get unmounted"},
    {"clone",
     {has_flag(kCloneFlagsArg, CLONE_NEWUSER, "flags & CLONE_NEWUSER")},
     kEperm,
     "a child in a new user namespace holds the capabilities that undo the mounts"},
    {"clone",
     {has_flag(kCloneFlagsArg, CLONE_NEWNS, "flags & CLONE_NEWNS")},
     kEperm,
     "a child in a private mount namespace can unmount write denies"},
    {"clone3",
     {},
     errno_action(ENOSYS),
     "its flags sit in memory seccomp cannot read; ENOSYS makes libc fall back to clone()"},
    {"setns", {}, kEperm, "joining another namespace (e.g. via /proc/PID/ns) leaves the sandbox's"},
    {"mount", {}, kEperm, "a remount or bind mount undoes read-only and masked paths"},
    {"umount2", {}, kEperm, "unmounting a deny uncovers what it hid"},
    {"pivot_root", {}, kEperm, "swaps the root the mount table is built on"},
    {"open_tree", {}, kEperm, "OPEN_TREE_CLONE copies a subtree to attach elsewhere"},
    {"open_tree_attr", {}, kEperm, "open_tree() that also changes mount attributes (6.15)"},
    {"move_mount", {}, kEperm, "attaches or moves a mount"},
    {"fsopen", {}, kEperm, "new mount API: starts a filesystem context"},
    {"fsconfig", {}, kEperm, "new mount API: configures or reconfigures a superblock"},
    {"fsmount", {}, kEperm, "new mount API: turns a context into a mount"},
    {"fspick", {}, kEperm, "new mount API: reopens an existing superblock for reconfiguration"},
    {"mount_setattr", {}, kEperm, "can clear MOUNT_ATTR_RDONLY on a read-only bind"},
    // A sibling: not a mount call, but it reaches past the mount table the same way.
    {"open_by_handle_at",
     {},
     kEperm,
     "opens any file of a mounted filesystem by handle, masks or not (the 'shocker' escape)"},
};

constexpr FilterSpec kArch{
    "arch",
    "kill any syscall from a non-native ABI: the other tables name native numbers only, and "
    "i386's socketcall() hides the socket domain from any rule",
    allow_action(),
    kill_process_action(),
    {}};

constexpr FilterSpec kNamespaces{"namespaces",
                                 "keep the command from undoing the mounts the sandbox is made of",
                                 allow_action(), kill_process_action(), kNamespaceRules};

constexpr FilterSpec kUnixBlock{
    "unix-block", "no local sockets past the network namespace: unix, vsock, io_uring",
    allow_action(), kill_process_action(), kUnixBlockRules};

constexpr FilterSpec kUnixOpen{
    "unix-open",
    "allowAllUnixSockets: every unix socket allowed; vsock and io_uring still refused",
    allow_action(), kill_process_action(), kOpenRows};

constexpr const FilterSpec* kWorkerFilters[] = {&kArch, &kNamespaces, &kUnixBlock};
constexpr const FilterSpec* kOpenWorkerFilters[] = {&kArch, &kNamespaces, &kUnixOpen};

}  // namespace

std::uint32_t seccomp_ret(FilterAction a) {
  switch (a.kind) {
    case ActionKind::kAllow:
      return SECCOMP_RET_ALLOW;
    case ActionKind::kErrno:
      return SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(a.err) & SECCOMP_RET_DATA);
    case ActionKind::kNotify:
      return SECCOMP_RET_USER_NOTIF;
    case ActionKind::kKillProcess:
      return SECCOMP_RET_KILL_PROCESS;
  }
  return SECCOMP_RET_KILL_PROCESS;  // unreachable; the strictest answer if it ever is
}

std::string describe(FilterAction a) {
  switch (a.kind) {
    case ActionKind::kAllow:
      return "ALLOW";
    case ActionKind::kErrno: {
      const char* name = ::strerrorname_np(a.err);
      return std::string("ERRNO(") + (name ? name : std::to_string(a.err)) + ")";
    }
    case ActionKind::kNotify:
      return "NOTIFY";
    case ActionKind::kKillProcess:
      return "KILL_PROCESS";
  }
  return "?";
}

std::string describe(const FilterRule& r) {
  std::string out(r.syscall);
  std::string args;
  for (const auto& t : r.when) {
    if (!t.used()) continue;
    args += (args.empty() ? "" : ", ");
    args += t.text;
  }
  if (!args.empty()) out += "(" + args + ")";
  return out;
}

const FilterSpec& arch_filter() { return kArch; }
const FilterSpec& namespaces_filter() { return kNamespaces; }
const FilterSpec& unix_block_filter() { return kUnixBlock; }
std::span<const FilterSpec* const> worker_filters() { return kWorkerFilters; }

const FilterSpec& unix_broker_filter() {
  // Built once, on first use (before any fork: the caller compiles the filter there).
  static const std::vector<FilterRule> rules = broker_rules();
  static const FilterSpec spec{
      "unix-broker",
      "unix sockets connect only to network.allowUnixSockets, through vigil-init; vsock, "
      "datagram and io_uring refused",
      allow_action(), kill_process_action(), rules};
  return spec;
}

const FilterSpec& unix_open_filter() { return kUnixOpen; }
const FilterSpec& net_capture_filter() { return kNetCapture; }

std::span<const FilterSpec* const> worker_filters(UnixSockets unix) {
  static const FilterSpec* const broker[] = {&kArch, &kNamespaces, &unix_broker_filter()};
  switch (unix) {
    case UnixSockets::kBlocked:
      return kWorkerFilters;
    case UnixSockets::kBrokered:
      return broker;
    case UnixSockets::kAll:
      return kOpenWorkerFilters;
  }
  return kWorkerFilters;
}

}  // namespace vigil
