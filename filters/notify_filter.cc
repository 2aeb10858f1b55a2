#include "filters/notify_filter.h"

#include <fcntl.h>

namespace vigil {
namespace {

constexpr FilterAction kNotify = notify_action();

constexpr ArgTest flag(int arg, std::uint64_t bit, std::string_view text) {
  return {arg, bit, bit, text};
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
    {"fchmodat", {}, kNotify, "changes permissions"},
    {"fchmodat2", {}, kNotify, "changes permissions"},
    {"chown", {}, kNotify, "changes ownership"},
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
    {"execve", {}, kNotify, "the process record: what ran"},
    {"execveat", {}, kNotify, "the process record: what ran"},
};

#undef VIGIL_OPEN_ROWS

constexpr FilterSpec kSpec{"observer", "witness of every write-intent syscall (always CONTINUE)",
                           allow_action(), kill_process_action(), kRules};

}  // namespace

const FilterSpec& notify_filter() { return kSpec; }

}  // namespace vigil
