#include "supervisor/core/events/syscall_table.h"

#include <fcntl.h>

namespace vigil {
namespace {

using E = Emulation;
using A = events::WriteAction;

// Designated initialisers name every fact: a row reads as the call's signature.
constexpr WriteSyscall kTable[] = {
    {.name = "open", .path = 0, .flags = 1, .mode = 2, .follows = true,
     .emulation = E::kOpen, .trap = Trap::kOpenFlags, .action = A::kWrite,
     .why = "opens for writing"},
    {.name = "openat", .dirfd = 0, .path = 1, .flags = 2, .mode = 3, .follows = true,
     .emulation = E::kOpen, .trap = Trap::kOpenFlags, .action = A::kWrite,
     .why = "opens for writing"},
    {.name = "openat2", .dirfd = 0, .path = 1, .flags = 2, .follows = true, .open_how = true,
     .emulation = E::kOpen, .action = A::kWrite,
     .why = "flags live in struct open_how: read-only ones are run by vigil-init as asked"},
    {.name = "creat", .path = 0, .mode = 1, .follows = true, .emulation = E::kOpen,
     .action = A::kCreate, .why = "creates or truncates a file"},
    {.name = "truncate", .path = 0, .follows = true, .emulation = E::kTruncate,
     .action = A::kWrite, .why = "changes a file's size by path"},
    {.name = "unlink", .path = 0, .removes = true, .emulation = E::kUnlink, .action = A::kDelete,
     .why = "deletes a file"},
    {.name = "unlinkat", .dirfd = 0, .path = 1, .flags = 2, .at_flags = 2, .removes = true,
     .emulation = E::kUnlink, .action = A::kDelete, .why = "deletes a file or directory"},
    {.name = "rmdir", .path = 0, .removes = true, .emulation = E::kUnlink, .action = A::kDelete,
     .why = "deletes a directory"},
    {.name = "mkdir", .path = 0, .mode = 1, .emulation = E::kMkdir, .action = A::kCreate,
     .why = "creates a directory"},
    {.name = "mkdirat", .dirfd = 0, .path = 1, .mode = 2, .emulation = E::kMkdir,
     .action = A::kCreate, .why = "creates a directory"},
    {.name = "mknod", .path = 0, .mode = 1, .emulation = E::kMknod, .action = A::kCreate,
     .why = "creates a node"},
    {.name = "mknodat", .dirfd = 0, .path = 1, .mode = 2, .emulation = E::kMknod,
     .action = A::kCreate, .why = "creates a node"},
    {.name = "rename", .path = 0, .path2 = 1, .emulation = E::kRename, .action = A::kRename,
     .why = "moves a file"},
    {.name = "renameat", .dirfd = 0, .path = 1, .dirfd2 = 2, .path2 = 3,
     .emulation = E::kRename, .action = A::kRename, .why = "moves a file"},
    {.name = "renameat2", .dirfd = 0, .path = 1, .dirfd2 = 2, .path2 = 3, .flags = 4,
     .emulation = E::kRename, .action = A::kRename, .why = "moves or exchanges files"},
    {.name = "link", .path = 0, .path2 = 1, .emulation = E::kLink, .action = A::kLink,
     .why = "creates a hard link"},
    {.name = "linkat", .dirfd = 0, .path = 1, .dirfd2 = 2, .path2 = 3, .flags = 4,
     .at_flags = 4, .emulation = E::kLink, .action = A::kLink, .why = "creates a hard link"},
    // The first argument is the link's contents, not a path: it is never resolved.
    {.name = "symlink", .path2 = 1, .emulation = E::kSymlink, .action = A::kLink,
     .why = "creates a symlink"},
    {.name = "symlinkat", .dirfd2 = 1, .path2 = 2, .emulation = E::kSymlink,
     .action = A::kLink, .why = "creates a symlink"},
    {.name = "chmod", .path = 0, .mode = 1, .follows = true, .emulation = E::kChmod,
     .action = A::kChangeMode, .why = "changes permissions"},
    // The fd forms act on whatever the fd names, and an fd opened read-only (no event at
    // its open) is enough to change its file's permissions, owner and attributes.
    {.name = "fchmod", .fd_only = true, .action = A::kChangeMode,
     .why = "changes permissions through an fd"},
    {.name = "fchmodat", .dirfd = 0, .path = 1, .mode = 2, .follows = true,
     .emulation = E::kChmod, .action = A::kChangeMode, .why = "changes permissions"},
    {.name = "fchmodat2", .dirfd = 0, .path = 1, .flags = 3, .at_flags = 3, .mode = 2,
     .follows = true, .emulation = E::kChmod, .action = A::kChangeMode, .why = "changes permissions"},
    {.name = "chown", .path = 0, .follows = true, .emulation = E::kChown, .action = A::kChangeOwner,
     .why = "changes ownership"},
    {.name = "fchown", .fd_only = true, .action = A::kChangeOwner,
     .why = "changes ownership through an fd"},
    {.name = "lchown", .path = 0, .emulation = E::kChown, .action = A::kChangeOwner,
     .why = "changes ownership"},
    {.name = "fchownat", .dirfd = 0, .path = 1, .flags = 4, .at_flags = 4, .follows = true,
     .emulation = E::kChown, .action = A::kChangeOwner, .why = "changes ownership"},
    {.name = "utime", .path = 0, .follows = true, .emulation = E::kUtime, .action = A::kChangeTimes,
     .why = "changes timestamps"},
    {.name = "utimes", .path = 0, .follows = true, .emulation = E::kUtime, .action = A::kChangeTimes,
     .why = "changes timestamps"},
    {.name = "utimensat", .dirfd = 0, .path = 1, .flags = 3, .at_flags = 3, .follows = true,
     .null_path_is_fd = true, .emulation = E::kUtime, .action = A::kChangeTimes,
     .why = "changes timestamps"},
    {.name = "futimesat", .dirfd = 0, .path = 1, .follows = true, .null_path_is_fd = true,
     .emulation = E::kUtime, .action = A::kChangeTimes, .why = "changes timestamps"},
    {.name = "setxattr", .path = 0, .follows = true, .emulation = E::kSetxattr,
     .action = A::kChangeAttributes, .why = "sets an extended attribute"},
    {.name = "lsetxattr", .path = 0, .emulation = E::kSetxattr, .action = A::kChangeAttributes,
     .why = "sets an extended attribute"},
    {.name = "fsetxattr", .fd_only = true, .action = A::kChangeAttributes,
     .why = "sets an extended attribute"},
    {.name = "removexattr", .path = 0, .follows = true, .emulation = E::kRemovexattr,
     .action = A::kChangeAttributes, .why = "removes an extended attribute"},
    {.name = "lremovexattr", .path = 0, .emulation = E::kRemovexattr, .action = A::kChangeAttributes,
     .why = "removes an extended attribute"},
    {.name = "fremovexattr", .fd_only = true, .action = A::kChangeAttributes,
     .why = "removes an extended attribute"},
    {.name = "setxattrat", .dirfd = 0, .path = 1, .flags = 2, .at_flags = 2, .follows = true,
     .null_path_is_fd = true, .emulation = E::kSetxattr, .action = A::kChangeAttributes,
     .why = "sets an extended attribute (Linux 6.13)"},
    {.name = "removexattrat", .dirfd = 0, .path = 1, .flags = 2, .at_flags = 2,
     .follows = true, .null_path_is_fd = true, .emulation = E::kRemovexattr,
     .action = A::kChangeAttributes, .why = "removes an extended attribute (Linux 6.13)"},
    {.name = "file_setattr", .dirfd = 0, .path = 1, .flags = 4, .at_flags = 4,
     .follows = true, .emulation = E::kFileSetattr, .action = A::kChangeAttributes,
     .why = "sets an inode's fsxattr flags (Linux 6.17)"},
    // The address is a struct sockaddr, not a string: an AF_UNIX path in it makes a socket
    // file (its mode under the caller's umask) exactly as mknod(S_IFSOCK) would. Every
    // bind is trapped (the family is in memory, out of the filter's reach); vigil-init
    // performs each on the caller's own socket with the bytes it read, and records those
    // that name a path.
    {.name = "bind", .path = 1, .emulation = E::kBind, .action = A::kCreate,
     .why = "an AF_UNIX path makes a socket file: judged like mknod, performed by vigil-init"},
    // Only the requests that change a file, or make or remove a name, through an fd that
    // need not be open for writing (the list is in filters/notify_filter.cc).
    {.name = "ioctl", .fd_only = true, .trap = Trap::kIoctlRequests, .action = A::kWrite,
     .why = "changes a file through an fd"},
    {.name = "execve", .path = 0, .follows = true, .emulation = E::kExec, 
     .why = "the process record: what ran"},
    {.name = "execveat", .dirfd = 0, .path = 1, .at_flags = 4, .follows = true,
     .emulation = E::kExec,  .why = "the process record: what ran"},
};

// Calls that write through an fd already open for writing (write, ftruncate, fallocate,
// copy_file_range, ...) are not rows: that fd's open was the event.

// fcntl's commands as Linux numbers them (the same on every arch; <fcntl.h> on macOS,
// which shares this table, has none of them), checked against the headers where they exist.
constexpr std::uint32_t kFOfdGetlk = 36, kFOfdSetlk = 37, kFOfdSetlkw = 38, kFSetlease = 1024;
#if defined(__linux__)
static_assert(kFOfdGetlk == F_OFD_GETLK && kFOfdSetlk == F_OFD_SETLK &&
              kFOfdSetlkw == F_OFD_SETLKW && kFSetlease == F_SETLEASE);
#endif

// Plain fcntl (F_GETFL, F_SETFD, F_DUPFD, POSIX locks, ...) stays in the kernel: a POSIX
// lock belongs to the process and goes with its own close, whoever else holds the file.
constexpr OrderedCommand kFcntlCommands[] = {
    {kFOfdSetlk, "cmd == F_OFD_SETLK",
     "an OFD lock lives until the file's last close: vigil-init's copy of a file the caller "
     "locked and closed would refuse it"},
    {kFOfdSetlkw, "cmd == F_OFD_SETLKW", "as F_OFD_SETLK, waiting instead of failing"},
    {kFOfdGetlk, "cmd == F_OFD_GETLK", "would report a lock held only by vigil-init's copy"},
    {kFSetlease, "cmd == F_SETLEASE",
     "a lease is refused (EAGAIN) while another open of the file exists, vigil-init's copy "
     "included"},
};

constexpr OrderedSyscall kOrderedTable[] = {
    {.name = "flock",
     .why = "a flock lives until the file's last close: vigil-init's copy of a file the "
            "caller locked and closed would refuse LOCK_NB"},
    {.name = "fcntl", .command = 1, .commands = kFcntlCommands},
};

using SH = SocketHandling;

constexpr SocketSyscall kSocketTable[] = {
    {.name = "connect", .fd = 0, .addr = 1, .addrlen = 2, .handling = SH::kBrokered,
     .trap = true,
     .why = "the only way a stream or seqpacket socket reaches a path: vigil-init reads the "
            "address once, connects the caller's own socket (pidfd_getfd) and answers"},
    {.name = "socket", .handling = SH::kTypeChecked, .trap = true,
     .why = "AF_UNIX datagram (and raw, which the kernel makes datagram) is refused with a "
            "line: a datagram socket sends to any path with sendto() and is never connected"},
    {.name = "socketpair", .handling = SH::kPairOnly,
     .why = "stream and seqpacket pairs are connected to each other at birth (connect gives "
            "EISCONN); datagram pairs are refused by the filter"},
    {.name = "sendto", .fd = 0, .addr = 4, .addrlen = 5, .handling = SH::kAddressIgnored,
     .why = "stream sockets refuse an address (EOPNOTSUPP/EISCONN), seqpacket ignores it; "
            "only datagram sockets use it and none can be made"},
    {.name = "sendmsg", .fd = 0, .addr = 1, .handling = SH::kAddressIgnored,
     .why = "msg_name, as sendto's address"},
    {.name = "sendmmsg", .fd = 0, .addr = 1, .handling = SH::kAddressIgnored,
     .why = "msg_name of each message, as sendto's address"},
    {.name = "bind", .fd = 0, .addr = 1, .addrlen = 2, .handling = SH::kGated,
     .why = "makes a socket file: a row of the write table, so the gate judges the name "
            "(protected and refused names) and vigil-init binds the caller's socket itself; "
            "an abstract name lives in the sandbox's own network namespace"},
    {.name = "recvmsg", .fd = 0, .handling = SH::kPeersChoice,
     .why = "SCM_RIGHTS: a socket received over a listed connection is a capability that "
            "service chose to hand over (as it could relay anything itself); a datagram one "
            "still cannot connect() through vigil-init. Inherited descriptors: vigil-init "
            "closes every one but stdio before the command"},
    {.name = "io_uring_setup", .handling = SH::kBlocked,
     .why = "IORING_OP_CONNECT/SOCKET would bypass the trap: io_uring stays refused"},
};

}  // namespace

std::span<const SocketSyscall> socket_syscalls() { return kSocketTable; }

std::span<const OrderedSyscall> ordered_syscalls() { return kOrderedTable; }

const SocketSyscall* find_socket_syscall(std::string_view name) {
  for (const auto& row : kSocketTable) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::span<const WriteSyscall> write_syscalls() { return kTable; }

const WriteSyscall* find_write_syscall(std::string_view name) {
  for (const auto& row : kTable) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::string_view action_word(std::string_view syscall, std::uint64_t flags) {
  const WriteSyscall* row = find_write_syscall(syscall);
  if (row == nullptr) return "write";
  switch (row->emulation) {
    case E::kOpen:
      if ((flags & O_CREAT) != 0 || row->flags < 0) return "create";  // creat has no flags
      return (flags & O_TRUNC) != 0 ? "truncate" : "write";
    case E::kTruncate:
      return "truncate";
    case E::kMkdir:
      return "mkdir";
    case E::kMknod:
    case E::kBind:
      return "mknod";
    case E::kUnlink:
      return row->name == "rmdir" || (row->at_flags >= 0 && (flags & AT_REMOVEDIR) != 0)
                 ? "rmdir"
                 : "delete";
    case E::kRename:
      return "rename";
    case E::kLink:
      return "link";
    case E::kSymlink:
      return "symlink";
    case E::kExec:
      return "exec";
    default:
      break;
  }
  switch (row->action) {  // the fd forms and the attribute calls
    case A::kChangeMode:
      return "chmod";
    case A::kChangeOwner:
      return "chown";
    case A::kChangeTimes:
      return "touch";
    case A::kChangeAttributes:
      return "xattr";
    default:
      return "write";
  }
}

bool kernel_can_gatekeep(std::string_view release) {
  int major = 0, minor = 0;
  std::size_t i = 0;
  auto number = [&](int* out) {
    const std::size_t start = i;
    while (i < release.size() && release[i] >= '0' && release[i] <= '9' && i - start < 6)
      *out = *out * 10 + (release[i++] - '0');
    return i > start;
  };
  if (!number(&major) || i >= release.size() || release[i++] != '.' || !number(&minor))
    return false;
  return major > 5 || (major == 5 && minor >= 14);
}

bool removes_name(std::string_view syscall) {
  const WriteSyscall* row = find_write_syscall(syscall);
  return row != nullptr && row->removes;
}

}  // namespace vigil
