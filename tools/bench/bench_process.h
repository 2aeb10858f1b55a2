// What the proxy bench needs to start and stop programs (`vigil proxy`, srt's proxy in
// node) and to reach them on loopback: a scratch directory, a background process whose
// output goes to files, a TCP connection to 127.0.0.1. The bench's own, so that tools/
// builds nothing of tests/ (the integration tests' harness has its own, richer ones).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::bench {

using namespace std::chrono_literals;

// $VIGIL_BIN, else the vigil built beside the bench.
inline std::string vigil_bin() {
  if (const char* b = std::getenv("VIGIL_BIN"); b != nullptr && *b != '\0') return b;
  return VIGIL_DEFAULT_BIN;
}

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + path);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string t = "/tmp/vigil-bench-XXXXXX";
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// argv[0] (searched in PATH) started with stdout/stderr going to files in `log_dir`;
// stopped (TERM, then KILL) when destroyed.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::string& log_dir,
             const std::string& name, const std::map<std::string, std::string>& env = {})
      : out_path_(log_dir + "/" + name + ".out"), err_path_(log_dir + "/" + name + ".err") {
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      UniqueFd out(::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
      UniqueFd err(::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
      UniqueFd null(::open("/dev/null", O_RDONLY));
      ::dup2(null.get(), 0);
      ::dup2(out.get(), 1);
      ::dup2(err.get(), 2);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execvp(cargv[0], cargv.data());
      ::_exit(127);
    }
  }
  ~Background() { stop(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  std::string err() const { return read_file(err_path_); }

  // Waits until `re` matches its stdout (or stderr): the first capture group.
  std::optional<std::string> wait_for(const std::string& re, bool in_stderr,
                                      std::chrono::milliseconds timeout = 10s) {
    const std::regex pattern(re);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string text = read_file(in_stderr ? err_path_ : out_path_);
      if (std::regex_search(text, m, pattern)) return m.size() > 1 ? m[1].str() : m[0].str();
      if (exited()) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
  }

  bool exited() {
    if (exited_) return true;
    int st = 0;
    exited_ = ::waitpid(pid_, &st, WNOHANG) == pid_;
    return exited_;
  }

  void stop() {
    if (pid_ <= 0 || exited()) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 200 && !exited(); ++i) std::this_thread::sleep_for(10ms);
    if (!exited()) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      exited_ = true;
    }
  }

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

// `vigil proxy --listen tcp:127.0.0.1:0` with `settings_json`, its events to a file.
class ProxyProcess {
 public:
  ProxyProcess(const TempDir& tmp, const std::string& settings_json,
               const std::vector<std::string>& extra) {
    write_file(tmp / "proxy-settings.json", settings_json);
    std::vector<std::string> argv = {vigil_bin(), "proxy", "--settings", tmp / "proxy-settings.json",
                                     "--listen", "tcp:127.0.0.1:0", "--events", tmp / "proxy-events.jsonl"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<Background>(argv, tmp.path(), "proxy");
    if (auto p = proc_->wait_for("proxy listening on tcp:127\\.0\\.0\\.1:(\\d+)", true))
      port_ = static_cast<std::uint16_t>(std::stoi(*p));
  }
  std::uint16_t port() const { return port_; }
  bool ready() const { return port_ != 0; }
  std::string err() const { return proc_->err(); }
  Background& process() { return *proc_; }

 private:
  std::unique_ptr<Background> proc_;
  std::uint16_t port_ = 0;
};

// A TCP connection to 127.0.0.1:`port` (an empty fd when refused).
inline UniqueFd tcp_connect_loopback(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  return fd;
}

}  // namespace vigil::bench
