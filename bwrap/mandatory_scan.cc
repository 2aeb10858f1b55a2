#include "bwrap/mandatory_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// Directories we read. O_NOFOLLOW: an entry swapped for a symlink after we listed it
// fails to open instead of leading the walk outside the root.
constexpr int kReadDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Directories we only look into (a rule's head, ".git"): O_PATH needs no read
// permission and cannot be used to read or write anything by mistake.
constexpr int kProbeDirFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The walk never goes below a ".git" directory: it is large (objects/), and the only
// dangerous children (hooks, config) are probed directly by their rules.
constexpr std::string_view kGitName = ".git";

// Large enough that a typical directory is one getdents64 call.
constexpr std::size_t kDirentBufferSize = 64 * 1024;

ScanHit::Type type_from_mode(mode_t mode) {
  if (S_ISREG(mode)) return ScanHit::Type::kFile;
  if (S_ISDIR(mode)) return ScanHit::Type::kDir;
  if (S_ISLNK(mode)) return ScanHit::Type::kSymlink;
  return ScanHit::Type::kOther;
}

// How a failed open/stat of something we listed a moment ago should be treated.
enum class Miss {
  kGone,    // removed or replaced by a non-directory/symlink since: nothing to look at
  kDenied,  // permission: reported in unreadable_dirs, the scan goes on
  kFatal,   // anything else (EMFILE, EIO, ...): the result would be incomplete
};

Miss classify(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ELOOP:  // O_NOFOLLOW met a symlink
      return Miss::kGone;
    case EACCES:
    case EPERM:
      return Miss::kDenied;
    default:
      return Miss::kFatal;
  }
}

// Splits "a/b/c" into its first component and the rest ("a", "b/c"); rest may be empty.
std::pair<std::string_view, std::string_view> split_first(std::string_view relpath) {
  const auto slash = relpath.find('/');
  if (slash == std::string_view::npos) return {relpath, {}};
  return {relpath.substr(0, slash), relpath.substr(slash + 1)};
}

std::string join(std::string_view dir, std::string_view name) {
  std::string out;
  out.reserve(dir.size() + 1 + name.size());
  out.append(dir).append("/").append(name);
  return out;
}

std::size_t rule_index(const MandatoryDeny* rule) {
  return static_cast<std::size_t>(rule - mandatory_denies().data());
}

// One directory entry, valid until the next getdents64 call on the same buffer.
struct Entry {
  std::string_view name;  // NUL-terminated in the buffer: name.data() is a C string
  unsigned char d_type;
};

// Calls fn(entry) for each entry of the directory open on `fd`, except "." and "..".
// Uses getdents64 rather than fdopendir: fdopendir takes the fd over and closedir would
// close it behind its UniqueFd.
template <class Fn>
Result<void> for_each_entry(int fd, const std::string& path, std::vector<char>& buf, Fn&& fn) {
  constexpr std::size_t kNameOff = offsetof(struct dirent64, d_name);
  for (;;) {
    const ssize_t n = ::getdents64(fd, buf.data(), buf.size());
    if (n == 0) return {};
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("mandatory-deny scan: reading directory '" + path + "'");
    }
    const auto len = static_cast<std::size_t>(n);
    for (std::size_t off = 0; off < len;) {
      const char* rec = buf.data() + off;
      unsigned short reclen = 0;
      std::memcpy(&reclen, rec + offsetof(struct dirent64, d_reclen), sizeof reclen);
      const char* name = rec + kNameOff;
      // The kernel never hands out such records; checking keeps a bad one from
      // looping forever or reading past the buffer.
      const void* nul = reclen > kNameOff && off + reclen <= len
                            ? std::memchr(name, '\0', reclen - kNameOff)
                            : nullptr;
      if (nul == nullptr) {
        return make_error(Errc::kInternal,
                          "mandatory-deny scan: malformed directory record in '" + path + "'");
      }
      off += reclen;
      const Entry entry{std::string_view(name, static_cast<const char*>(nul) - name),
                        static_cast<unsigned char>(rec[offsetof(struct dirent64, d_type)])};
      if (entry.name == "." || entry.name == "..") continue;
      if (auto r = fn(entry); !r) return r;
    }
  }
}

// openat, with its errno taken before anything (a UniqueFd reset's close) can change it.
struct Opened {
  UniqueFd fd;
  int err;
};
Opened open_at(int dir_fd, const char* name, int flags) {
  const int fd = ::openat(dir_fd, name, flags);
  const int err = fd < 0 ? errno : 0;
  return Opened{UniqueFd(fd), err};
}

// One scan of one root. Holds one fd per directory level being walked.
class Walker {
 public:
  Walker(std::string root, std::string base, const ScanLimits& limits)
      : root_(std::move(root)),
        dir_path_(std::move(base)),
        limits_(limits),
        buf_(kDirentBufferSize) {}

  // Reads the directory open on `dir` (at dir_path_), whose entries are at `depth`.
  Result<void> walk(const UniqueFd& dir, int depth);

  ScanResult finish() &&;

 private:
  Result<void> visit(int dir_fd, const Entry& entry, int depth, std::vector<std::string>& subdirs);
  Result<void> check_head(int dir_fd, const Entry& head, ScanHit::Type type, int depth);
  Result<void> probe_below(int dir_fd, const Entry& head, ScanHit::Type head_type,
                           std::string_view rest, const MandatoryDeny& rule, int depth);
  Result<void> descend(int dir_fd, const std::string& name, int depth);
  void add_hit(std::string path, const MandatoryDeny& rule, ScanHit::Type type, int depth) {
    result_.hits.push_back(ScanHit{std::move(path), &rule, type, depth});
  }
  // Records a failure to open or stat `path` (err from that call). Returns an error
  // only for the failures that would make the result incomplete.
  Result<void> miss(int err, const std::string& path, const char* what);
  Error too_many_entries() const;
  std::string current_dir() const { return dir_path_.empty() ? "/" : dir_path_; }

  const std::string root_;  // as given (for messages)
  std::string dir_path_;    // path of the directory being read; "" when the root is "/"
  const ScanLimits limits_;
  std::vector<char> buf_;  // getdents64 buffer; a directory is fully read before recursing
  ScanResult result_;
};

Result<void> Walker::walk(const UniqueFd& dir, int depth) {
  // Subdirectories are collected first and walked after the listing: the listing
  // buffer is shared by all levels.
  std::vector<std::string> subdirs;
  auto listed = for_each_entry(dir.get(), dir_path_, buf_, [&](const Entry& entry) {
    return visit(dir.get(), entry, depth, subdirs);
  });
  if (!listed) return listed;
  for (const auto& name : subdirs) {
    if (auto r = descend(dir.get(), name, depth + 1); !r) return r;
  }
  return {};
}

Result<void> Walker::visit(int dir_fd, const Entry& entry, int depth,
                           std::vector<std::string>& subdirs) {
  if (++result_.entries_visited > limits_.max_entries) return too_many_entries();
  const bool head = is_mandatory_deny_head(entry.name);
  const bool may_descend = depth < limits_.max_depth && entry.name != kGitName;
  if (!head && !may_descend) return {};  // the type is not needed: skip the lstat

  ScanHit::Type type;
  switch (entry.d_type) {
    case DT_REG:
      type = ScanHit::Type::kFile;
      break;
    case DT_DIR:
      type = ScanHit::Type::kDir;
      break;
    case DT_LNK:
      type = ScanHit::Type::kSymlink;
      break;
    case DT_UNKNOWN: {  // some filesystems do not fill d_type
      struct stat st {};
      if (::fstatat(dir_fd, entry.name.data(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        const int err = errno;
        // EACCES here means this directory is listable but not searchable (mode r--).
        if (classify(err) == Miss::kDenied) return miss(err, current_dir(), "search");
        return miss(err, join(dir_path_, entry.name), "lstat");
      }
      type = type_from_mode(st.st_mode);
      break;
    }
    default:
      type = ScanHit::Type::kOther;
      break;
  }

  if (head) {
    if (auto r = check_head(dir_fd, entry, type, depth); !r) return r;
  }
  if (may_descend && type == ScanHit::Type::kDir) subdirs.emplace_back(entry.name);
  return {};
}

Result<void> Walker::check_head(int dir_fd, const Entry& head, ScanHit::Type type, int depth) {
  if (head.name == kGitName && type == ScanHit::Type::kFile) {
    result_.git_files.push_back(join(dir_path_, head.name));
  }
  for (const auto& rule : mandatory_denies()) {
    const auto [first, rest] = split_first(rule.relpath);
    if (first != head.name) continue;
    if (rest.empty()) {
      add_hit(join(dir_path_, head.name), rule, type, depth);
      continue;
    }
    if (auto r = probe_below(dir_fd, head, type, rest, rule, depth); !r) return r;
  }
  return {};
}

// Looks for `rest` ("hooks", or "a/b" for a longer rule) below the entry `head` of
// dir_fd, one component at a time, never following a symlink. A symlink on the way is
// itself the hit: it can point anywhere, and the writable root lets it be re-pointed.
Result<void> Walker::probe_below(int dir_fd, const Entry& head, ScanHit::Type head_type,
                                 std::string_view rest, const MandatoryDeny& rule, int depth) {
  std::string path = join(dir_path_, head.name);
  if (head_type == ScanHit::Type::kSymlink) {
    add_hit(std::move(path), rule, head_type, depth);
    return {};
  }
  if (head_type != ScanHit::Type::kDir) return {};  // e.g. a ".git" file: nothing below

  Opened cur = open_at(dir_fd, head.name.data(), kProbeDirFlags);
  for (;;) {
    if (!cur.fd) return miss(cur.err, path, "open");
    const auto [component, more] = split_first(rest);
    const std::string comp(component);
    struct stat st {};
    if (::fstatat(cur.fd.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int err = errno;
      // ENOENT is the usual case: the rule's target does not exist. EACCES means the
      // directory `path` cannot be searched, so it is the one reported.
      if (classify(err) == Miss::kDenied) return miss(err, path, "search");
      return miss(err, join(path, comp), "lstat");
    }
    path = join(path, comp);
    const auto type = type_from_mode(st.st_mode);
    if (more.empty() || type == ScanHit::Type::kSymlink) {
      add_hit(std::move(path), rule, type, depth);
      return {};
    }
    if (type != ScanHit::Type::kDir) return {};
    cur = open_at(cur.fd.get(), comp.c_str(), kProbeDirFlags);
    rest = more;
  }
}

Result<void> Walker::descend(int dir_fd, const std::string& name, int depth) {
  const std::size_t parent_len = dir_path_.size();
  dir_path_.append("/").append(name);
  Opened child = open_at(dir_fd, name.c_str(), kReadDirFlags);
  Result<void> r = child.fd ? walk(child.fd, depth) : miss(child.err, dir_path_, "open");
  dir_path_.resize(parent_len);
  return r;
}

Result<void> Walker::miss(int err, const std::string& path, const char* what) {
  switch (classify(err)) {
    case Miss::kGone:
      return {};  // changed since listed: nothing left to check there
    case Miss::kDenied:
      result_.unreadable_dirs.push_back(path);
      return {};
    case Miss::kFatal:
      break;
  }
  return system_error(std::string("mandatory-deny scan: ") + what + " '" + path + "'", err);
}

Error Walker::too_many_entries() const {
  return make_error(Errc::kRefused,
                    "mandatory-deny scan of '" + root_ + "' stopped after " +
                        std::to_string(limits_.max_entries) + " entries (limit) within depth " +
                        std::to_string(limits_.max_depth) +
                        ": lower mandatoryDenySearchDepth or narrow filesystem.allowWrite "
                        "(a partial scan would leave denies out, so none is used)");
}

ScanResult Walker::finish() && {
  auto& hits = result_.hits;
  std::sort(hits.begin(), hits.end(), [](const ScanHit& a, const ScanHit& b) {
    if (a.path != b.path) return a.path < b.path;
    return rule_index(a.rule) < rule_index(b.rule);
  });
  for (auto* list : {&result_.git_files, &result_.unreadable_dirs}) {
    std::sort(list->begin(), list->end());
    // A head dir we cannot search is reported once per rule that probes it.
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return std::move(result_);
}

// "/w/" -> "/w", "/" -> "": the walker appends "/name" to it.
std::string path_base(std::string_view root) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return std::string(root);
}

}  // namespace

Result<ScanResult> scan_mandatory_denies(const std::string& root, const ScanLimits& limits) {
  if (root.empty() || root.front() != '/') {
    return make_error(Errc::kInternal,
                      "mandatory-deny scan: root '" + root + "' is not an absolute path");
  }
  if (limits.max_depth < 0 || limits.max_depth > kMaxScanDepth) {
    return make_error(Errc::kInvalidPolicy,
                      "mandatoryDenySearchDepth " + std::to_string(limits.max_depth) +
                          " is out of range: expected 0 to " + std::to_string(kMaxScanDepth));
  }
  // The root itself is trusted policy input: follow symlinks in it, like bwrap will.
  UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) {
    const int err = errno;
    if (err == ENOENT) {
      return make_error(Errc::kNotFound, "mandatory-deny scan: root '" + root + "' does not exist");
    }
    if (err == ENOTDIR) {
      return make_error(Errc::kInvalidPolicy,
                        "mandatory-deny scan: root '" + root + "' is not a directory");
    }
    if (classify(err) != Miss::kDenied) {
      return system_error("mandatory-deny scan: opening root '" + root + "'", err);
    }
    ScanResult unreadable;
    unreadable.unreadable_dirs.push_back(root);
    return unreadable;
  }
  Walker walker(root, path_base(root), limits);
  if (limits.max_depth > 0) {
    VIGIL_TRY_VOID(walker.walk(dir, 1));
  }
  return std::move(walker).finish();
}

const char* to_string(ScanHit::Type type) {
  switch (type) {
    case ScanHit::Type::kFile:
      return "file";
    case ScanHit::Type::kDir:
      return "dir";
    case ScanHit::Type::kSymlink:
      return "symlink";
    case ScanHit::Type::kOther:
      return "other";
  }
  return "other";
}

}  // namespace vigil
