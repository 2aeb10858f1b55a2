#include "filters/notify_filter.h"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>

#include <vector>

#include "supervisor/core/events/syscall_table.h"

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

// One rule per write bit: a rule's tests are ANDed, rules for one syscall are ORed.
struct OpenBit {
  std::uint64_t bit;
  std::string_view test, why;
};
constexpr OpenBit kOpenBits[] = {
    {O_WRONLY, "flags & O_WRONLY", "opens for writing"},
    {O_RDWR, "flags & O_RDWR", "opens for reading and writing"},
    {O_CREAT, "flags & O_CREAT", "may create the file"},
    {O_TRUNC, "flags & O_TRUNC", "truncates the file"},
    {O_APPEND, "flags & O_APPEND", "opens for appending"},
};

constexpr FilterRule kIoctlRules[] = {
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
};

// The rules, derived from the one syscall table (supervisor/core/events/syscall_table.h): a row
// trapped always is one rule; an open row is one rule per write bit of its flags
// argument; ioctl is the request list above; then the ordered calls (flock, fcntl's lock
// and lease commands).
// With `reads`, an open row is one rule with no test: every open, whatever its flags.
std::vector<FilterRule> derive_rules(bool reads) {
  std::vector<FilterRule> out;
  for (const WriteSyscall& row : write_syscalls()) {
    switch (row.trap) {
      case Trap::kAlways:
        out.push_back({row.name, {}, kNotify, row.why});
        break;
      case Trap::kOpenFlags:
        if (reads) {
          out.push_back({row.name, {}, kNotify,
                         "every open, reads too (vigil.observer.reads: a read of a denyRead "
                         "path is told)"});
          break;
        }
        for (const OpenBit& b : kOpenBits) out.push_back({row.name, {flag(row.flags, b.bit, b.test)}, kNotify, b.why});
        break;
      case Trap::kIoctlRequests:
        for (const FilterRule& r : kIoctlRules) out.push_back(r);
        break;
    }
  }
  // The calls that must wait for vigil-init's own copies of files it opened to be closed
  // (supervisor/core/events/syscall_table.h, ordered_syscalls()): a row with commands is one
  // rule per command, compared on the low 32 bits as the kernel reads them.
  for (const OrderedSyscall& row : ordered_syscalls()) {
    if (row.command < 0) {
      out.push_back({row.name, {}, kNotify, row.why});
      continue;
    }
    for (const OrderedCommand& c : row.commands)
      out.push_back({row.name, {ArgTest{row.command, 0xffffffffu, c.value, c.test}}, kNotify, c.why});
  }
  return out;
}

}  // namespace

const FilterSpec& notify_filter(bool reads) {
  // Built once, on first use (before any fork: the caller compiles the filter there).
  static const std::vector<FilterRule> rules = derive_rules(false);
  static const FilterSpec spec{"observer",
                               "every write-intent syscall and exec goes to vigil-init, which "
                               "performs path-based calls itself",
                               allow_action(), kill_process_action(), rules};
  static const std::vector<FilterRule> read_rules = derive_rules(true);
  static const FilterSpec read_spec{"observer-reads",
                                    "as observer, and every open for reading too "
                                    "(vigil.observer.reads)",
                                    allow_action(), kill_process_action(), read_rules};
  return reads ? read_spec : spec;
}

}  // namespace vigil
