// The backstop's few filesystem reads (backstop.h): an entry's type, size and times
// without following it, whether it was made during the session, a bounded read, a
// directory's listing. Thread-compatible; for the supervisor after the sandbox is gone.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::backstop_fs {

struct Info {
  mode_t mode = 0;
  std::uint64_t size = 0;
  statx_timestamp ctime{};
  statx_timestamp btime{};
  bool has_btime = false;
};

// statx of `name` under `dir_fd`, a final symlink not followed; none when it is not there.
std::optional<Info> info_at(int dir_fd, const char* name);

// Made (or, for a file, changed) at or after `start`. A directory's ctime also moves when
// an entry is added, which does not make the directory itself new: its birth time does.
bool is_new(const Info& i, const timespec& start);

// `dir` + "/" + `name`.
std::string join(const std::string& dir, std::string_view name);

// All of `name` under `dir_fd` (not followed, never waiting on a FIFO), when it holds at
// most `max` bytes.
Result<std::string> read_small(int dir_fd, const char* name, std::size_t max);

struct DirEntry {
  std::string name;
  unsigned char type;  // d_type: DT_DIR, DT_REG, ..., DT_UNKNOWN when the filesystem does not say
};

// The entries of the directory open at `fd` (but . and ..), sorted by name.
std::vector<DirEntry> list_dir(int fd);

}  // namespace vigil::backstop_fs
