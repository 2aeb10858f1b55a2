// Helpers for integration tests that drive the real `vigil` binary and a real bwrap.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace vigil::test {

// $VIGIL_BIN, else the binary built next to the tests.
std::string vigil_bin();

// vigil-init beside vigil_bin() (or in ../observer/, the build tree's layout); "" when
// there is none.
std::string vigil_init_bin();

struct Outcome {
  int exit_code = -1;  // as a shell reports it: 128+N for a signal
  std::string out;
  std::string err;
};

// Runs `vigil ARGS...` in `cwd`, capturing stdout and stderr. Kills it (and fails the
// test) after `timeout_s`.
// XDG_STATE_HOME of every run_vigil() (the logs' default place and the key that seals
// them): a directory of this test process.
const std::string& default_state_dir();

Outcome run_vigil(const std::vector<std::string>& args, const std::string& cwd, int timeout_s = 60,
                  const std::map<std::string, std::string>& env = {},
                  const std::string& leak_fd_of = "",
                  const std::vector<std::string>& wrapper = {},
                  const std::function<bool()>& in_child = {});
// in_child: runs in the forked child just before exec (false: the child exits 123), e.g.
// to enter namespaces the test made up.
// leak_fd_of: a path the child opens WITHOUT O_CLOEXEC before exec'ing vigil, as a
// careless caller would leave one open. wrapper: a program (absolute path) and its
// arguments that run vigil (e.g. setpriv dropping capabilities).

// A fresh directory under /tmp owned by the current user, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& content);
std::string read_file(const std::string& path);
bool exists(const std::string& path);
void make_dirs(const std::string& path);

// The session directories in `base` (e.g. $XDG_RUNTIME_DIR/vigil), leaving out roots/
// (the writable roots' locks).
std::vector<std::string> session_dirs(const std::string& base);

// Host pids whose /proc/PID/cmdline contains `marker`.
std::vector<int> pids_with_marker(const std::string& marker);

// Peak RSS (KiB, wait4's ru_maxrss) of `vigil ARGS...` with its output discarded and
// run_vigil()'s XDG_STATE_HOME (the key that sealed its logs), in `cwd` ("" = this
// process's); expects exit 0. The forked child's RSS before its exec counts too: hold no
// large buffers when calling it.
long peak_rss_kib(const std::vector<std::string>& args, const std::string& cwd = "");

// A marker unique to this test run.
std::string unique_marker(const std::string& what);

// vigil's stderr split at its closing `vigil: session log: PATH` line (printed after the
// block when something was denied, or with -v): what came before it, and the line itself
// ("" when there is none).
inline std::pair<std::string, std::string> split_log_line(const std::string& err) {
  const auto at = err.rfind("vigil: session log: ");
  if (at == std::string::npos) return {err, ""};
  return {err.substr(0, at), err.substr(at)};
}

}  // namespace vigil::test
