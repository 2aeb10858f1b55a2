// The one syscall table (supervisor/core/events/syscall_table.h) and everything derived from it:
// the observer's filter, the schema's accepted names, replay's action words, the
// annotation's "removes". A fact added to the table must show up in each; a name kept in
// a list of its own somewhere would make these disagree.
#include "supervisor/core/events/syscall_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "filters/notify_filter.h"
#include "filters/syscall_names.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {
namespace {

TEST(SyscallTable, EveryRowIsWellFormed) {
  std::set<std::string_view> names;
  for (const WriteSyscall& row : write_syscalls()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate row";
    EXPECT_TRUE(native_syscall_number(row.name).has_value()) << "no number on this arch";
    // Every write has its word (execs are proc.exec records, not writes).
    if (row.emulation != Emulation::kExec) {
      EXPECT_NE(std::string_view(events::to_string(row.action)), "");
    }
    EXPECT_FALSE(row.why.empty());
    const bool on_fd = row.emulation == Emulation::kOnFd;
    // A path-based call is performed by vigil-init; only fd-based ones may continue.
    EXPECT_EQ(on_fd, row.fd_only);
    if (!on_fd) {
      EXPECT_TRUE(row.path >= 0 || row.path2 >= 0) << "a path call with no path";
    }
    for (int arg : {row.dirfd, row.path, row.dirfd2, row.path2, row.flags, row.at_flags, row.mode})
      EXPECT_LE(arg, 5);
    if (row.dirfd2 >= 0) {
      EXPECT_GE(row.path2, 0);
    }
    if (row.open_how) {
      EXPECT_GE(row.flags, 0);
    }
    if (row.trap == Trap::kOpenFlags) {
      EXPECT_EQ(row.emulation, Emulation::kOpen);
    }
    if (row.removes) {
      EXPECT_EQ(row.emulation, Emulation::kUnlink);
    }
  }
}

TEST(SyscallTable, TheFilterTrapsExactlyTheTablesCalls) {
  std::set<std::string_view> trapped;
  for (const FilterRule& r : notify_filter().rules) trapped.insert(r.syscall);
  std::set<std::string_view> table;
  for (const WriteSyscall& row : write_syscalls()) table.insert(row.name);
  for (const OrderedSyscall& row : ordered_syscalls()) table.insert(row.name);
  EXPECT_EQ(trapped, table);
}

// The calls that could see vigil-init's own copy of a file it just installed in a caller
// (syscall_table.h): flock always; fcntl only for the OFD lock and lease commands, so a
// plain fcntl (F_GETFL, F_SETFD, POSIX locks) never leaves the kernel. Each rule of the
// filter is one command, compared on the low 32 bits.
TEST(SyscallTable, OrderedCallsAreTrappedByExactlyTheirCommands) {
  std::set<std::string_view> names;
  for (const OrderedSyscall& row : ordered_syscalls()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate row";
    EXPECT_TRUE(native_syscall_number(row.name).has_value()) << "no number on this arch";
    EXPECT_EQ(find_write_syscall(row.name), nullptr) << "never a write record's name";
    EXPECT_FALSE(events::is_known_write_syscall(row.name));
    EXPECT_EQ(row.command < 0, row.commands.empty());
    EXPECT_LE(row.command, 5);
    if (row.command < 0) {
      EXPECT_FALSE(row.why.empty());
    }
    for (const OrderedCommand& c : row.commands) {
      EXPECT_FALSE(c.test.empty());
      EXPECT_FALSE(c.why.empty());
    }
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"flock", "fcntl"}));
  std::set<std::uint64_t> fcntl_cmds;
  bool flock_always = false;
  for (const FilterRule& r : notify_filter().rules) {
    if (r.syscall == "flock") flock_always = !r.when[0].used();
    if (r.syscall != "fcntl") continue;
    ASSERT_TRUE(r.when[0].used());
    EXPECT_FALSE(r.when[1].used());
    EXPECT_EQ(r.when[0].arg, 1);
    EXPECT_EQ(r.when[0].mask, 0xffffffffu);
    fcntl_cmds.insert(r.when[0].value);
  }
  EXPECT_TRUE(flock_always);
  EXPECT_EQ(fcntl_cmds, (std::set<std::uint64_t>{F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,
                                                 F_SETLEASE}));
}

TEST(SyscallTable, TheSchemaAcceptsExactlyTheTablesWrites) {
  for (const WriteSyscall& row : write_syscalls()) {
    EXPECT_EQ(events::is_known_write_syscall(row.name), row.emulation != Emulation::kExec)
        << row.name;
  }
  // Not trapped, so not a name a record can carry (it writes through an fd opened for
  // writing, and that open is the event). The schema used to accept it.
  EXPECT_FALSE(events::is_known_write_syscall("ftruncate"));
  EXPECT_FALSE(events::is_known_write_syscall("write"));
  EXPECT_FALSE(events::is_known_write_syscall("execve"));
  EXPECT_TRUE(events::is_known_write_syscall("file-write-create"));  // macOS
}

TEST(SyscallTable, ActionWords) {
  struct Case {
    const char* syscall;
    std::uint64_t flags;
    const char* word;
  };
  const Case cases[] = {
      {"openat", O_WRONLY | O_CREAT, "create"}, {"openat", O_WRONLY | O_TRUNC, "truncate"},
      {"open", O_WRONLY, "write"},              {"openat2", O_RDWR | O_CREAT, "create"},
      {"creat", 0, "create"},                   {"unlinkat", 0, "delete"},
      {"unlinkat", AT_REMOVEDIR, "rmdir"},      {"rmdir", 0, "rmdir"},
      {"renameat2", 1, "rename"},               {"linkat", 0, "link"},
      {"symlinkat", 0, "symlink"},              {"fchmodat2", 0, "chmod"},
      {"lchown", 0, "chown"},                   {"utimensat", 0, "touch"},
      {"removexattrat", 0, "xattr"},            {"truncate", 0, "truncate"},
      {"mknodat", 0, "mknod"},                  {"mkdir", 0, "mkdir"},
      {"no-such-call", O_CREAT, "write"},
  };
  for (const Case& c : cases) EXPECT_EQ(action_word(c.syscall, c.flags), c.word) << c.syscall;
}

TEST(SyscallTable, OnlyUnlinkAndRmdirRemove) {
  std::set<std::string_view> removing;
  for (const WriteSyscall& row : write_syscalls())
    if (removes_name(row.name)) removing.insert(row.name);
  EXPECT_EQ(removing, (std::set<std::string_view>{"unlink", "unlinkat", "rmdir"}));
  EXPECT_FALSE(removes_name("renameat2"));
}

}  // namespace
}  // namespace vigil
