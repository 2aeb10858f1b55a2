#include "filters/notify_filter.h"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>

namespace vigil {
namespace {

constexpr FilterAction kNotify = notify_action();

constexpr ArgTest flag(int arg, std::uint64_t bit, std::string_view text) {
  return {arg, bit, bit, text};
}

// ioctl's request is an `unsigned int` to the kernel: a caller can set the register's upper
// 32 bits and the kernel still runs the request. Only the low 32 bits are compared, so
// those bits cannot slip a request past the row.
constexpr ArgTest ioctl_request(std::uint32_t request, std::string_view text) {
  return {1, 0xffffffffu, request, text};
}

// One row per write bit: a row's tests are ANDed, rows for one syscall are ORed.
#define VIGIL_OPEN_ROWS(name, arg)                                                             \
  {name, {flag(arg, O_WRONLY, "flags & O_WRONLY")}, kNotify, "opens for writing"},             \
      {name, {flag(arg, O_RDWR, "flags & O_RDWR")}, kNotify, "opens for reading and writing"}, \
      {name, {flag(arg, O_CREAT, "flags & O_CREAT")}, kNotify, "may create the file"},         \
      {name, {flag(arg, O_TRUNC, "flags & O_TRUNC")}, kNotify, "truncates the file"}, {        \
    name, {flag(arg, O_APPEND, "flags & O_APPEND")}, kNotify, "opens for appending"            \
  }

constexpr FilterRule kRules[] = {
    VIGIL_OPEN_ROWS("open", 1),
    VIGIL_OPEN_ROWS("openat", 2),
    {"openat2",
     {},
     kNotify,
     "flags live in struct open_how: read-only ones are dropped in user space"},
    {"creat", {}, kNotify, "creates or truncates a file"},
    {"truncate", {}, kNotify, "changes a file's size by path"},
    {"unlink", {}, kNotify, "deletes a file"},
    {"unlinkat", {}, kNotify, "deletes a file or directory"},
    {"rmdir", {}, kNotify, "deletes a directory"},
    {"mkdir", {}, kNotify, "creates a directory"},
    {"mkdirat", {}, kNotify, "creates a directory"},
    {"mknod", {}, kNotify, "creates a node"},
    {"mknodat", {}, kNotify, "creates a node"},
    {"rename", {}, kNotify, "moves a file"},
    {"renameat", {}, kNotify, "moves a file"},
    {"renameat2", {}, kNotify, "moves or exchanges files"},
    {"link", {}, kNotify, "creates a hard link"},
    {"linkat", {}, kNotify, "creates a hard link"},
    {"symlink", {}, kNotify, "creates a symlink"},
    {"symlinkat", {}, kNotify, "creates a symlink"},
    {"chmod", {}, kNotify, "changes permissions"},
    // The fd forms act on whatever the fd names, and an fd opened read-only (no event at
    // its open) is enough to change its file's permissions, owner and attributes.
    {"fchmod", {}, kNotify, "changes permissions through an fd"},
    {"fchmodat", {}, kNotify, "changes permissions"},
    {"fchmodat2", {}, kNotify, "changes permissions"},
    {"chown", {}, kNotify, "changes ownership"},
    {"fchown", {}, kNotify, "changes ownership through an fd"},
    {"lchown", {}, kNotify, "changes ownership"},
    {"fchownat", {}, kNotify, "changes ownership"},
    {"utime", {}, kNotify, "changes timestamps"},
    {"utimes", {}, kNotify, "changes timestamps"},
    {"utimensat", {}, kNotify, "changes timestamps"},
    {"futimesat", {}, kNotify, "changes timestamps"},
    {"setxattr", {}, kNotify, "sets an extended attribute"},
    {"lsetxattr", {}, kNotify, "sets an extended attribute"},
    {"fsetxattr", {}, kNotify, "sets an extended attribute"},
    {"removexattr", {}, kNotify, "removes an extended attribute"},
    {"lremovexattr", {}, kNotify, "removes an extended attribute"},
    {"fremovexattr", {}, kNotify, "removes an extended attribute"},
    {"setxattrat", {}, kNotify, "sets an extended attribute (Linux 6.13)"},
    {"removexattrat", {}, kNotify, "removes an extended attribute (Linux 6.13)"},
    {"file_setattr", {}, kNotify, "sets an inode's fsxattr flags (Linux 6.17)"},
    // ioctl requests that change a file, or make or remove a name, through an fd that
    // need not be open for writing (the other writing requests need one, and its open is
    // the event). Exact 32-bit values: a terminal's or a socket's requests never match.
    {"ioctl",
     {ioctl_request(FS_IOC_SETFLAGS, "request == FS_IOC_SETFLAGS")},
     kNotify,
     "sets inode flags (chattr) through an fd"},
    {"ioctl",
     {ioctl_request(FS_IOC_FSSETXATTR, "request == FS_IOC_FSSETXATTR")},
     kNotify,
     "sets an inode's fsxattr flags through an fd"},
    {"ioctl",
     {ioctl_request(FS_IOC_SETVERSION, "request == FS_IOC_SETVERSION")},
     kNotify,
     "sets an inode's generation number through an fd"},
    {"ioctl",
     {ioctl_request(FS_IOC_ENABLE_VERITY, "request == FS_IOC_ENABLE_VERITY")},
     kNotify,
     "seals a file read-only for good (fs-verity); takes an fd opened read-only"},
    {"ioctl",
     {ioctl_request(FS_IOC_SET_ENCRYPTION_POLICY, "request == FS_IOC_SET_ENCRYPTION_POLICY")},
     kNotify,
     "sets an empty directory's encryption policy through an fd"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SUBVOL_CREATE, "request == BTRFS_IOC_SUBVOL_CREATE")},
     kNotify,
     "creates a btrfs subvolume (a directory) in the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SUBVOL_CREATE_V2, "request == BTRFS_IOC_SUBVOL_CREATE_V2")},
     kNotify,
     "creates a btrfs subvolume (a directory) in the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SNAP_CREATE, "request == BTRFS_IOC_SNAP_CREATE")},
     kNotify,
     "creates a btrfs snapshot (a directory) in the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SNAP_CREATE_V2, "request == BTRFS_IOC_SNAP_CREATE_V2")},
     kNotify,
     "creates a btrfs snapshot (a directory) in the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SNAP_DESTROY, "request == BTRFS_IOC_SNAP_DESTROY")},
     kNotify,
     "deletes a btrfs subvolume from the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SNAP_DESTROY_V2, "request == BTRFS_IOC_SNAP_DESTROY_V2")},
     kNotify,
     "deletes a btrfs subvolume from the fd's directory"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SUBVOL_SETFLAGS, "request == BTRFS_IOC_SUBVOL_SETFLAGS")},
     kNotify,
     "makes a btrfs subvolume read-only or writable"},
    {"ioctl",
     {ioctl_request(BTRFS_IOC_SET_RECEIVED_SUBVOL, "request == BTRFS_IOC_SET_RECEIVED_SUBVOL")},
     kNotify,
     "rewrites a btrfs subvolume's received identity"},
    {"execve", {}, kNotify, "the process record: what ran"},
    {"execveat", {}, kNotify, "the process record: what ran"},
};

#undef VIGIL_OPEN_ROWS

constexpr FilterSpec kSpec{"observer", "witness of every write-intent syscall (always CONTINUE)",
                           allow_action(), kill_process_action(), kRules};

}  // namespace

const FilterSpec& notify_filter() { return kSpec; }

}  // namespace vigil
