// vigil_probe's "fid-*" operations: see probe_fidelity.h. Raw syscalls throughout, so that
// libc neither papers over a refusal nor falls back around it.
#include "tests/adversarial/probe_fidelity.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "supervisor/core/base/unique_fd.h"

namespace {

long fail_if(long rc) { return rc < 0 ? -errno : rc; }

void put(const char* name, const char* content) {
  const vigil::UniqueFd fd(static_cast<int>(::syscall(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CREAT | O_TRUNC, 0644)));
  if (!fd) return;
  if (::write(fd.get(), content, std::strlen(content)) < 0) std::perror("write");
}

// Every fd slot taken: RLIMIT_NOFILE lowered to 32, then /dev/null opened until EMFILE.
void fill_fds() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = 32;
  ::setrlimit(RLIMIT_NOFILE, &lim);
  while (::syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) >= 0) {
  }
}

// RLIMIT_FSIZE of 4 KiB; SIGXFSZ ignored (so the call returns EFBIG) unless `signal`.
void small_fsize(bool signal) {
  rlimit lim{};
  ::getrlimit(RLIMIT_FSIZE, &lim);
  lim.rlim_cur = 4096;
  ::setrlimit(RLIMIT_FSIZE, &lim);
  if (!signal) ::signal(SIGXFSZ, SIG_IGN);
}

// A directory the caller may not write in (0555: root is held to it too, its
// capabilities dropped at the start).
void ro_dir() {
  ::mkdir("ro", 0755);
  put("ro/old", "old");
  ::chmod("ro", 0555);
}

// Files made until the file system has no inode left (a small tmpfs the test mounts).
void fill_inodes() {
  for (int i = 0; i < 100000; ++i) {
    const std::string n = "fill" + std::to_string(i);
    const vigil::UniqueFd fd(static_cast<int>(::syscall(SYS_openat, AT_FDCWD, n.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644)));
    if (!fd) break;
  }
}

// Down a chain of 200-byte names until the working directory's path is longer than
// PATH_MAX (one level past it: where vigil-init can no longer name what is made).
void go_deep() {
  char buf[PATH_MAX];
  std::size_t len = ::getcwd(buf, sizeof buf) != nullptr ? std::strlen(buf) : 0;
  const std::string level(200, 'd');
  while (len <= PATH_MAX) {
    if (::mkdir(level.c_str(), 0755) != 0 || ::chdir(level.c_str()) != 0) return;
    len += level.size() + 1;
  }
}

long bind_unix(const char* path) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -errno;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path, sizeof a.sun_path - 1);
  return fail_if(::syscall(SYS_bind, sv[0], &a, sizeof a));
}

long open_t(int flags, const char* name = "t") {
  return fail_if(::syscall(SYS_openat, AT_FDCWD, name, flags, 0644));
}

long openat2_t(std::uint64_t flags) {
  open_how how{};
  how.flags = flags;
  how.mode = 0644;
  return fail_if(::syscall(SYS_openat2, AT_FDCWD, "t", &how, sizeof how));
}

long mkfifo_t(const char* name = "t") {
  return fail_if(::syscall(SYS_mknodat, AT_FDCWD, name, S_IFIFO | 0644, 0));
}

// A minimal default ACL (user::rwx group::rwx other::rwx): under it the kernel ignores
// the umask, so a file made with 0666 keeps 0666 whatever the umask says.
void default_acl() {
  ::mkdir("acl", 0755);
  const std::uint32_t header = 2;  // POSIX_ACL_XATTR_VERSION
  struct Entry {
    std::uint16_t tag, perm;
    std::uint32_t id;
  };
  const Entry entries[] = {{0x01, 7, UINT32_MAX}, {0x04, 7, UINT32_MAX}, {0x20, 7, UINT32_MAX}};
  char value[sizeof header + sizeof entries];
  std::memcpy(value, &header, sizeof header);
  std::memcpy(value + sizeof header, entries, sizeof entries);
  ::setxattr("acl", "system.posix_acl_default", value, sizeof value, 0);
  ::umask(077);
}

struct Case {
  std::string_view name;
  std::function<void()> setup;
  std::function<long()> call;
};

const Case kCases[] = {
    // EMFILE: nothing may be made or truncated for a caller that cannot receive the fd.
    {"emfile-open-creat", fill_fds, [] { return open_t(O_WRONLY | O_CREAT); }},
    {"emfile-open-creat-excl", fill_fds, [] { return open_t(O_WRONLY | O_CREAT | O_EXCL); }},
    {"emfile-open-trunc", [] { put("t", "keep me"); fill_fds(); },
     [] { return open_t(O_WRONLY | O_TRUNC); }},
    {"emfile-open-rdonly-trunc", [] { put("t", "keep me"); fill_fds(); },
     [] { return open_t(O_RDONLY | O_TRUNC); }},
    {"emfile-openat2-creat-trunc", [] { put("t", "keep me"); fill_fds(); },
     [] { return openat2_t(O_RDWR | O_CREAT | O_TRUNC); }},
    {"emfile-creat", fill_fds, [] { return fail_if(::syscall(SYS_creat, "t", 0644)); }},
    {"emfile-tmpfile", fill_fds, [] { return open_t(O_TMPFILE | O_WRONLY, "."); }},
    {"emfile-mkdir", fill_fds, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "t", 0755)); }},
    {"emfile-mkfifo", fill_fds, [] { return mkfifo_t(); }},
    // EFBIG: the caller's RLIMIT_FSIZE.
    {"efbig-truncate", [] { put("t", "keep me"); small_fsize(false); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 1L << 40)); }},
    {"efbig-truncate-shrink", [] { put("t", "keep me"); small_fsize(false); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 2)); }},
    {"efbig-truncate-within", [] { put("t", "keep me"); small_fsize(false); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 4096)); }},
    // Past the file system's own limit: EFBIG without a signal (ignored here all the same:
    // vigil.limits.maxFileBytes gives the sandbox an RLIMIT_FSIZE the direct run lacks).
    {"efbig-truncate-maxbytes", [] { put("t", "keep me"); ::signal(SIGXFSZ, SIG_IGN); },
     [] { return fail_if(::syscall(SYS_truncate, "t", LONG_MAX)); }},
    {"efbig-truncate-readonly", [] { put("t", "keep me"); ::chmod("t", 0444); small_fsize(false); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 1L << 40)); }},
    {"efbig-truncate-signal", [] { put("t", "keep me"); small_fsize(true); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 1L << 40)); }},
    {"efbig-open-trunc", [] { put("t", "keep me"); small_fsize(false); },
     [] { return open_t(O_WRONLY | O_TRUNC); }},
    // ENAMETOOLONG: a path longer than PATH_MAX, a name longer than NAME_MAX.
    {"enametoolong-path", nullptr,
     [] { return open_t(O_WRONLY | O_CREAT, (std::string(PATH_MAX, '/') + "t").c_str()); }},
    {"enametoolong-name", nullptr,
     [] { return open_t(O_WRONLY | O_CREAT, std::string(NAME_MAX + 1, 't').c_str()); }},
    {"enametoolong-mkdir", nullptr,
     [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, std::string(NAME_MAX + 1, 't').c_str(), 0755)); }},
    // Below a directory past PATH_MAX: the kernel makes "t", vigil-init cannot name it.
    {"deep-open-creat", go_deep, [] { return open_t(O_WRONLY | O_CREAT); }},
    {"deep-mkdir", go_deep, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "t", 0755)); }},
    {"deep-mkfifo", go_deep, [] { return mkfifo_t(); }},
    {"deep-symlink", go_deep, [] { return fail_if(::syscall(SYS_symlinkat, "x", AT_FDCWD, "t")); }},
    {"deep-bind", go_deep, [] { return bind_unix("t"); }},
    // EACCES: a directory the caller may not write in, a file it may not write.
    {"eacces-open-creat", ro_dir, [] { return open_t(O_WRONLY | O_CREAT, "ro/t"); }},
    {"eacces-open-trunc", ro_dir, [] { return open_t(O_WRONLY | O_TRUNC, "ro/old"); }},
    {"eacces-mkdir", ro_dir, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "ro/t", 0755)); }},
    {"eacces-mkfifo", ro_dir, [] { return mkfifo_t("ro/t"); }},
    {"eacces-symlink", ro_dir, [] { return fail_if(::syscall(SYS_symlinkat, "x", AT_FDCWD, "ro/t")); }},
    {"eacces-link", [] { ro_dir(); put("src", "src"); },
     [] { return fail_if(::syscall(SYS_linkat, AT_FDCWD, "src", AT_FDCWD, "ro/t", 0)); }},
    {"eacces-rename-in", [] { ro_dir(); put("src", "src"); },
     [] { return fail_if(::syscall(SYS_renameat, AT_FDCWD, "src", AT_FDCWD, "ro/t")); }},
    {"eacces-unlink", ro_dir, [] { return fail_if(::syscall(SYS_unlinkat, AT_FDCWD, "ro/old", 0)); }},
    {"eacces-truncate", [] { put("t", "keep me"); ::chmod("t", 0444); },
     [] { return fail_if(::syscall(SYS_truncate, "t", 0)); }},
    {"eacces-bind", ro_dir, [] { return bind_unix("ro/t"); }},
    {"eacces-setxattr", [] { put("t", "keep me"); ::chmod("t", 0444); },
     [] { return fail_if(::syscall(SYS_setxattr, "t", "user.vigil", "v", 1, 0)); }},
    // EEXIST: the name is there already.
    {"eexist-open-excl", [] { put("t", "keep me"); },
     [] { return open_t(O_WRONLY | O_CREAT | O_EXCL | O_TRUNC); }},
    {"eexist-mkdir", [] { put("t", "keep me"); },
     [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "t", 0755)); }},
    {"eexist-mkfifo", [] { put("t", "keep me"); }, [] { return mkfifo_t(); }},
    {"eexist-symlink", [] { put("t", "keep me"); },
     [] { return fail_if(::syscall(SYS_symlinkat, "x", AT_FDCWD, "t")); }},
    {"eexist-link", [] { put("t", "keep me"); put("src", "src"); },
     [] { return fail_if(::syscall(SYS_linkat, AT_FDCWD, "src", AT_FDCWD, "t", 0)); }},
    {"eexist-rename-noreplace", [] { put("t", "keep me"); put("src", "src"); },
     [] { return fail_if(::syscall(SYS_renameat2, AT_FDCWD, "src", AT_FDCWD, "t", RENAME_NOREPLACE)); }},
    {"eexist-bind", [] { put("t", "keep me"); }, [] { return bind_unix("t"); }},
    // Success, made under the caller's umask and a parent's default ACL.
    {"umask-open-creat", [] { ::umask(027); }, [] { return open_t(O_WRONLY | O_CREAT); }},
    {"umask-mkdir", [] { ::umask(027); }, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "t", 0777)); }},
    {"umask-bind", [] { ::umask(027); }, [] { return bind_unix("t"); }},
    {"acl-open-creat", default_acl, [] { return open_t(O_WRONLY | O_CREAT, "acl/t"); }},
    {"acl-mkdir", default_acl, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "acl/t", 0777)); }},
    {"acl-mkfifo", default_acl, [] { return mkfifo_t("acl/t"); }},
    // ENOSPC: no inode left (a small tmpfs, made by the test as root).
    {"enospc-open-creat", fill_inodes, [] { return open_t(O_WRONLY | O_CREAT); }},
    {"enospc-mkdir", fill_inodes, [] { return fail_if(::syscall(SYS_mkdirat, AT_FDCWD, "t", 0755)); }},
    {"enospc-mkfifo", fill_inodes, [] { return mkfifo_t(); }},
    {"enospc-symlink", fill_inodes, [] { return fail_if(::syscall(SYS_symlinkat, "x", AT_FDCWD, "t")); }},
    {"enospc-bind", fill_inodes, [] { return bind_unix("t"); }},
};

// Root is held to the permission bits as any user is (vigil's sandbox drops every
// capability; the direct run must too, or it would write where the sandbox cannot).
void drop_capabilities() {
  if (::geteuid() != 0) return;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  ::syscall(SYS_capset, &header, data);
}

void print_result(long rc) {
  if (rc >= 0) {
    std::puts("result:ok");
  } else {
    std::printf("result:%s\n", strerrorname_np(static_cast<int>(-rc)));
  }
}

}  // namespace

int fidelity_probe(const char* op) {
  const std::string_view name(op);
  if (name == "fid-list") {
    for (const Case& c : kCases) std::printf("%.*s\n", static_cast<int>(c.name.size()), c.name.data());
    return 0;
  }
  if (name.rfind("fid-", 0) != 0) return -1;
  for (const Case& c : kCases) {
    if (c.name != name.substr(4)) continue;
    drop_capabilities();
    ::umask(022);
    std::fflush(stdout);
    // In a child, so that a signal the call earns (SIGXFSZ) is reported, not suffered.
    const pid_t child = ::fork();
    if (child == 0) {
      if (c.setup) c.setup();
      print_result(c.call());
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return 1;
    if (WIFSIGNALED(status)) std::printf("signal:%s\n", sigabbrev_np(WTERMSIG(status)));
    return 0;
  }
  std::fprintf(stderr, "vigil_probe: no fidelity case %s\n", op);
  return 2;
}
