#include "tests/integration/harness.h"
#include "tests/integration/gatekeeper_kernel.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::test {

std::string vigil_bin() {
  if (const char* b = std::getenv("VIGIL_BIN"); b != nullptr && *b != '\0') return b;
  return VIGIL_DEFAULT_BIN;
}

std::string vigil_init_bin() {
  const std::string v = vigil_bin();
  const std::string dir = v.substr(0, v.rfind('/'));
  for (const std::string& c : {dir + "/vigil-init", dir + "/../observer/vigil-init"}) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

// Where session logs go when a test gives no --log: a directory of this test process,
// removed at exit, rather than the user's ~/.local/state/vigil/sessions.
const std::string& default_state_dir() {
  static TempDir dir;
  return dir.path();
}

Outcome run_vigil(const std::vector<std::string>& args, const std::string& cwd, int timeout_s,
                  const std::map<std::string, std::string>& env, const std::string& leak_fd_of,
                  const std::vector<std::string>& wrapper, const std::function<bool()>& in_child) {
  const std::string& state = default_state_dir();
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return {};
  }
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]), err_r(err_pipe[0]), err_w(err_pipe[1]);
  const std::string bin = vigil_bin();
  std::vector<std::string> argv_s = wrapper;
  argv_s.push_back(bin);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_w.get(), 1);
    ::dup2(err_w.get(), 2);
    UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ::dup2(devnull.get(), 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(121);
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (!leak_fd_of.empty())
      (void)::open(leak_fd_of.c_str(), O_RDONLY | O_DIRECTORY);  // leaked on purpose
    if (in_child && !in_child()) ::_exit(123);
    ::execv(argv[0], argv.data());
    ::_exit(122);
  }
  out_w.reset();
  err_w.reset();
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[2] = {{out_open ? out_r.get() : -1, POLLIN, 0},
                     {err_open ? err_r.get() : -1, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "vigil timed out after " << timeout_s << "s";
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0) continue;
    char buf[8192];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? o.out : o.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

TempDir::TempDir() {
  std::string t = "/tmp/vigil-it-XXXXXX";
  if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  // Resolved, so that paths compare equal to what vigil reports.
  char* real = ::realpath(t.c_str(), nullptr);
  path_ = real;
  std::free(real);
}

TempDir::~TempDir() {
  // Test trees may hold read-only dirs: open them up first.
  const std::string cmd = "chmod -R u+rwx '" + path_ + "' 2>/dev/null; rm -rf '" + path_ + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool kernel_has_gatekeeper() {
  utsname u{};
  if (::uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 14);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += "/" + part;
    ::mkdir(cur.c_str(), 0755);
  }
}

std::vector<std::string> session_dirs(const std::string& base) {
  std::vector<std::string> out;
  DIR* d = ::opendir(base.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != ".." && n != "roots") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

std::vector<int> pids_with_marker(const std::string& marker) {
  std::vector<int> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::string cmd = read_file("/proc/" + std::string(e->d_name) + "/cmdline");
    if (cmd.find(marker) != std::string::npos) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

std::string unique_marker(const std::string& what) {
  return "vigil-marker-" + what + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

// The peak RSS of vigil alone. A child forked from this test binary starts with this
// process's resident pages (tens of MiB once many tests have run), and the kernel keeps
// that high-water mark through exec: measured directly, every command would read as big
// as the test binary. So a small python3 forks vigil and reports the wait4 rusage of its
// own child, whose start is python's few MiB, not ours.
long peak_rss_kib(const std::vector<std::string>& args, const std::string& cwd) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::dup2(out[1], 3);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    // The key that sealed the log: where run_vigil() keeps it.
    ::setenv("XDG_STATE_HOME", default_state_dir().c_str(), 1);
    static const char* kMeasure =
        "import os, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.closerange(3, 4)\n"
        "    os.execv(sys.argv[1], sys.argv[1:])\n"
        "_, status, ru = os.wait4(pid, 0)\n"
        "os.write(3, ('%d %d\\n' % (status, ru.ru_maxrss)).encode())\n";
    std::vector<char*> argv;
    const std::string bin = vigil_bin();
    argv.push_back(const_cast<char*>("python3"));
    argv.push_back(const_cast<char*>("-c"));
    argv.push_back(const_cast<char*>(kMeasure));
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp("python3", argv.data());
    ::_exit(127);
  }
  vigil::UniqueFd read_end(out[0]);
  { vigil::UniqueFd write_end(out[1]); }
  std::string text;
  char buf[128];
  ssize_t n;
  while ((n = ::read(read_end.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "python3 status " << status;
  int vigil_status = -1;
  long kib = -1;
  if (std::sscanf(text.c_str(), "%d %ld", &vigil_status, &kib) != 2) {
    ADD_FAILURE() << "no measurement from python3: " << text;
    return -1;
  }
  EXPECT_TRUE(WIFEXITED(vigil_status) && WEXITSTATUS(vigil_status) == 0)
      << "vigil status " << vigil_status;
  return kib;
}

}  // namespace vigil::test
