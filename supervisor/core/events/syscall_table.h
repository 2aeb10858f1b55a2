// The one table of write-intent syscalls: every fact vigil knows about a call it traps
// (which arguments are paths and dirfds, whether the last component is followed, how
// vigil-init performs it, the word the model reads, whether it removes a name). The
// observer's seccomp filter (filters/notify_filter.cc), vigil-init's emulator
// (observer/), the event schema's accepted names (supervisor/core/events/event_schema.cc), replay and
// the annotation all derive from this table; none keeps a list of its own. Pure data, no
// libseccomp, no syscall numbers (filters/syscall_names.h maps names to numbers), so the
// macOS build shares it too.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "supervisor/core/events/write_action.h"

namespace vigil {

// How vigil-init carries the call out for the caller (observer/emulate.h). Path-based
// calls are always performed by vigil-init on the bytes it read and judged, never
// answered CONTINUE: the kernel would read the caller's memory again after the answer.
enum class Emulation : std::uint8_t {
  kOpen,         // open/openat/openat2/creat with write intent: the fd is installed (ADDFD)
  kTruncate,     // truncate(path, length)
  kMkdir,        // mkdir/mkdirat(path, mode)
  kMknod,        // mknod/mknodat(path, mode, dev)
  kUnlink,       // unlink/unlinkat/rmdir
  kRename,       // rename/renameat/renameat2
  kLink,         // link/linkat
  kSymlink,      // symlink/symlinkat: `from` is the link's contents, not a path
  kChmod,        // chmod/fchmodat/fchmodat2
  kChown,        // chown/lchown/fchownat
  kUtime,        // utime/utimes/utimensat/futimesat
  kSetxattr,     // setxattr/lsetxattr/setxattrat
  kRemovexattr,  // removexattr/lremovexattr/removexattrat
  kFileSetattr,  // file_setattr (Linux 6.17)
  kBind,         // bind(fd, addr, len): an AF_UNIX path makes a socket file; vigil-init binds
                 // the caller's own socket (pidfd_getfd) to the address it read and judged
  kOnFd,         // fchmod/fchown/f*xattr/ioctl: the fd cannot change under the kernel, so
                 // the call continues; the record names the fd's target
  kExec,         // execve/execveat: continues; the record names what ran
};

// Which calls of a row reach vigil-init (the filter's argument tests).
enum class Trap : std::uint8_t {
  kAlways,
  kOpenFlags,      // only with a write bit in the flags register (O_WRONLY ... O_APPEND)
  kIoctlRequests,  // only the requests that change a file through any fd (notify_filter.cc)
};

struct WriteSyscall {
  std::string_view name;  // as libseccomp names it; also fs.write.syscall in the log
  // Argument indexes (-1: none). The primary target is (dirfd, path) (dirfd -1: relative
  // to the cwd); a second name (the new name of rename/link) is (dirfd2, path2).
  int dirfd = -1, path = -1, dirfd2 = -1, path2 = -1;
  int flags = -1;     // the flags argument (open flags, AT_*, RENAME_*) recorded as `flags`
  int at_flags = -1;  // AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH live here
  int mode = -1;      // the mode argument (open, mkdir, mknod, chmod)
  // The call acts on what a symlink in the last component points at (chmod, truncate)
  // rather than on the link itself (unlink, rename, lchown), unless at_flags says not to.
  bool follows = false;
  bool open_how = false;  // openat2: flags and resolve inside struct open_how at `flags`
  bool fd_only = false;   // the target is the fd in args[0]
  // utimensat/futimesat/*xattrat with a NULL path act on `dirfd`'s own file.
  bool null_path_is_fd = false;
  bool removes = false;  // deletes a name (never creates a protected one)
  Emulation emulation = Emulation::kOnFd;
  Trap trap = Trap::kAlways;
  // The word every view shows for the call (refined by its flags:
  // events::write_action()); execs have none (they are proc.exec records).
  events::WriteAction action = events::WriteAction::kWrite;
  std::string_view why;     // one line for the filter's explain output
};

// Every row, in the filter's order.
std::span<const WriteSyscall> write_syscalls();

// The row named `name`, or nullptr.
const WriteSyscall* find_write_syscall(std::string_view name);

// What kind of change a call makes, for the change set's bookkeeping (replay/change_set:
// a mkdir makes a directory, a symlink a link): open with O_CREAT "create", with O_TRUNC
// "truncate", else "write"; "mkdir", "mknod", "rmdir", "symlink", "chmod" ... Not a word
// any view shows for a write: they show to_string(events::write_action()).
std::string_view action_word(std::string_view syscall, std::uint64_t flags);

// Whether the call deletes a name (unlink*, rmdir).
bool removes_name(std::string_view syscall);

// Calls that can see that a file is still open somewhere. vigil-init answers an open it
// performed on the notify loop's thread with SECCOMP_ADDFD_FLAG_SEND: the install is the
// answer, and the caller runs on while vigil-init still holds its own copy of the file
// for a few microseconds more (it closes it next, before anything else). Nearly every call
// is blind to that copy; these are not: a flock or an OFD lock lives until the file's last
// close (a LOCK_NB / F_OFD_SETLK on a new open after the caller's close would fail), and
// a lease is refused while another open of the file exists (F_SETLEASE fails EAGAIN).
// They are trapped and answered CONTINUE by that same thread, which reads the next
// notification only after it closed its copy: each is run by the kernel only once every
// copy the loop made is gone. Nothing in them is read, judged or recorded. (An exec of a
// file just written, which fails ETXTBSY while any writer is open, is the fourth: execve
// and execveat are rows of the write table above, trapped always and continued by the
// same thread, so they are already in that order.) Opens that wait on a thread of their
// own keep the install-then-answer order: see observer/notify_loop.cc.
struct OrderedCommand {
  std::uint32_t value = 0;  // the command argument's value (Linux's, on every arch)
  std::string_view test;    // how the filter's explain output reads: "cmd == F_OFD_SETLK"
  std::string_view why;
};

struct OrderedSyscall {
  std::string_view name;  // as libseccomp names it
  // The argument holding the command, and the commands trapped (compared on its low 32
  // bits: the kernel reads an unsigned int); -1: every call.
  int command = -1;
  std::span<const OrderedCommand> commands = {};
  std::string_view why = {};  // for a row trapped always
};

std::span<const OrderedSyscall> ordered_syscalls();

// The socket calls that can reach a unix socket path (network.allowUnixSockets). The
// class is closed here, one row per call: each says how a path or a name could be reached
// through it and what vigil does about it. The filters (filters/filter_specs.cc) derive
// the broker's trap from `trap`, vigil-init (observer/unix_broker.h) reads the call's
// arguments at these indexes.
enum class SocketHandling : std::uint8_t {
  kBrokered,        // trapped: vigil-init decides on a copy and performs the call itself
  kTypeChecked,     // AF_UNIX: stream and seqpacket allowed, other types refused
  kPairOnly,        // joined to its twin at birth: never reaches a path
  kAddressIgnored,  // the address only matters for datagram sockets, which cannot exist
  kGated,           // creates a name in the filesystem: a row of the write table, judged
                    // by the gate like every other name-making call
  kBlocked,         // refused outright by the unix-block/broker filters
  kPeersChoice,     // fd passing: what crosses a connection is the two ends' business
};

struct SocketSyscall {
  std::string_view name;  // as libseccomp names it
  int fd = -1;            // the socket fd argument
  int addr = -1;          // the sockaddr pointer argument (or the msghdr's)
  int addrlen = -1;       // the address length argument
  SocketHandling handling = SocketHandling::kBlocked;
  bool trap = false;      // a USER_NOTIF row in the broker's filter
  std::string_view why;   // one line: how the class is closed for this call
};

// Every socket row (the broker's class), in a fixed order.
std::span<const SocketSyscall> socket_syscalls();
const SocketSyscall* find_socket_syscall(std::string_view name);

// Whether a Linux kernel of this uname release installs an fd as a call's answer
// (SECCOMP_ADDFD_FLAG_SEND, 5.14), which vigil-init needs to perform opens itself:
// "5.14.0-arch1" yes, "5.10.0-23-amd64" no.
bool kernel_can_gatekeep(std::string_view release);

}  // namespace vigil
