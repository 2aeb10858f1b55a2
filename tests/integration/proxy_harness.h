// Helpers for the proxy integration tests: background processes (the real `vigil proxy`,
// loopback HTTP/TLS servers written in Python), running client programs (curl, git,
// python3) with a deadline, and raw loopback sockets. Header-only (inline) so that the
// integration test binary needs no CMake change; it builds on harness.h.
//
// Everything listens and connects on 127.0.0.1 only.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"

namespace vigil::test {

using namespace std::chrono_literals;

// Starts argv[0] (searched in PATH) with stdout/stderr going to files; kills it (TERM,
// then KILL) when destroyed.
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
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

  // Waits until `re` matches stdout (or stderr); returns the first capture group.
  std::optional<std::string> wait_for(const std::string& re, bool in_stderr,
                                      std::chrono::milliseconds timeout = 10s) {
    const std::regex pattern(re);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string text = in_stderr ? err() : out();
      if (std::regex_search(text, m, pattern)) return m.size() > 1 ? m[1].str() : m[0].str();
      if (exited()) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
    return std::nullopt;
  }

  bool exited() {
    if (status_) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return status_.has_value();
  }

  // Sends `sig` and waits up to `timeout` for the exit; returns the exit status as a
  // shell reports it, or -1 if it had to be killed.
  int signal_and_wait(int sig, std::chrono::milliseconds timeout = 10s) {
    if (!exited()) ::kill(pid_, sig);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!exited() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    if (!exited()) {
      stop();
      return -1;
    }
    return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
  }

  void stop() {
    if (pid_ <= 0 || exited()) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 200 && !exited(); ++i) std::this_thread::sleep_for(10ms);
    if (!exited()) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      status_ = st;
    }
  }

 private:
  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs a program to completion (or kills it after `timeout_s`), capturing its output.
inline Outcome run_program(const std::vector<std::string>& argv, const std::string& dir,
                           int timeout_s = 60, const std::map<std::string, std::string>& env = {}) {
  static int counter = 0;
  const std::string name = "run" + std::to_string(++counter);
  Background p(argv, dir, name, env);
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (!p.exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  if (!p.exited()) ADD_FAILURE() << argv[0] << " timed out after " << timeout_s << "s";
  o.exit_code = p.signal_and_wait(SIGKILL, 1s);
  o.out = p.out();
  o.err = p.err();
  return o;
}

// The names the proxy tests use, all answered with the test server's loopback address
// (`--test-resolve`, honoured only with VIGIL_TEST_MODE=1): allowed by an exact entry, by
// the pattern, denied by deniedDomains, and on no list.
inline const std::vector<std::string> kLoopbackTestResolve = {
    "--test-resolve",           "allowed.test=127.0.0.1", "--test-resolve",
    "x.pattern.test=127.0.0.1", "--test-resolve",         "blocked.pattern.test=127.0.0.1",
    "--test-resolve",           "denied.test=127.0.0.1"};

// The Python to run: the distribution's own when present (a pyenv shim on PATH costs
// ~2 s of bash per start on the CI VM), else whatever python3 PATH finds.
inline std::string python3() {
  return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

// A loopback HTTP (or, with a cert, HTTPS) file server over `root`: HTTP/1.1 keep-alive,
// Python's http.server. The port is what it bound (127.0.0.1:0).
inline constexpr const char* kPyFileServer = R"PY(
import http.server, os, ssl, sys
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        sys.stderr.write(self.requestline + "\n")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
if len(sys.argv) > 3:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[2], sys.argv[3])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("port", srv.server_address[1], flush=True)
srv.serve_forever()
)PY";

class FileServer {
 public:
  FileServer(const TempDir& tmp, const std::string& root, const std::string& cert = "",
             const std::string& key = "") {
    const std::string script = tmp / ("fileserver" + std::to_string(++count_) + ".py");
    write_file(script, kPyFileServer);
    std::vector<std::string> argv = {python3(), script, root};
    if (!cert.empty()) {
      argv.push_back(cert);
      argv.push_back(key);
    }
    proc_ = std::make_unique<Background>(argv, tmp.path(), "fileserver" + std::to_string(count_));
    if (auto p = proc_->wait_for("port (\\d+)", false))
      port_ = static_cast<std::uint16_t>(std::stoi(*p));
  }
  std::uint16_t port() const { return port_; }
  std::string log() const { return proc_->err(); }

 private:
  static inline int count_ = 0;
  std::unique_ptr<Background> proc_;
  std::uint16_t port_ = 0;
};

// `vigil proxy` on tcp:127.0.0.1:0 (or a given --listen), events to a file.
class ProxyProcess {
 public:
  ProxyProcess(const TempDir& tmp, const std::string& settings_json,
               const std::vector<std::string>& extra, const std::string& listen = "tcp:127.0.0.1:0",
               bool test_mode = true)
      : events_(tmp / ("events" + std::to_string(++count_) + ".jsonl")) {
    const std::string settings = tmp / ("settings" + std::to_string(count_) + ".json");
    write_file(settings, settings_json);
    std::vector<std::string> argv = {vigil_bin(), "proxy", "--settings", settings,
                                     "--listen",  listen,  "--events",   events_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::map<std::string, std::string> env;
    if (test_mode) env["VIGIL_TEST_MODE"] = "1";
    proc_ = std::make_unique<Background>(argv, tmp.path(), "proxy" + std::to_string(count_), env);
    if (listen.rfind("unix:", 0) == 0) {
      ready_ = proc_->wait_for("proxy listening on (unix:.*)", true).has_value();
    } else if (auto p = proc_->wait_for("proxy listening on tcp:127\\.0\\.0\\.1:(\\d+)", true)) {
      port_ = static_cast<std::uint16_t>(std::stoi(*p));
    }
  }
  std::uint16_t port() const { return port_; }
  bool ready() const { return port_ != 0 || ready_; }
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }
  std::string events() const { return read_file(events_); }
  std::string err() const { return proc_->err(); }
  Background& process() { return *proc_; }

 private:
  static inline int count_ = 0;
  std::string events_;
  std::unique_ptr<Background> proc_;
  std::uint16_t port_ = 0;
  bool ready_ = false;
};

// Raw loopback sockets, for byte-exact protocol checks.
inline UniqueFd tcp_connect_loopback(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  return fd;
}

inline UniqueFd unix_connect(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), std::min(path.size(), sizeof sa.sun_path - 1));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  return fd;
}

// Sends `request`, reads until the peer closes or `timeout`.
inline std::string exchange(int fd, const std::string& request,
                            std::chrono::milliseconds timeout = 5s) {
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    return {};
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A self-signed certificate for `name` made by openssl at test time.
inline bool make_cert(const TempDir& tmp, const std::string& name, std::string* cert,
                      std::string* key) {
  *cert = tmp / "cert.pem";
  *key = tmp / "key.pem";
  // An EC key: RSA key generation costs seconds on a busy VM.
  const Outcome o =
      run_program({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                   "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=" + name,
                   "-addext", "subjectAltName=DNS:" + name, "-keyout", *key, "-out", *cert},
                  tmp.path(), 60);
  return o.exit_code == 0;
}

inline std::size_t count_lines_containing(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  std::size_t pos = 0;
  while (true) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line =
        text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find(needle) != std::string::npos) ++n;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return n;
}

}  // namespace vigil::test
