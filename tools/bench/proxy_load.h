// Load on an egress proxy process, shared by the proxy load test
// (tests/integration/proxy_load_test.cc) and the proxy benchmark (tools/bench/proxy_bench.cc):
// a loopback echo/HTTP server that holds thousands of connections, blocking clients, and
// one round of the load (500 CONNECT tunnels plus 1,000 slow-loris connections
// held at once) with the proxy's descriptors and RSS read from /proc. Header-only, and
// standing on nothing of either side's harness. Everything is on 127.0.0.1. It lives with
// the benchmarks: a test may include anything, a benchmark nothing of tests/.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::load {

namespace load_detail {

inline UniqueFd connect_loopback(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  return fd;
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace load_detail

// A small epoll server on 127.0.0.1: echo, or a fixed HTTP/1.1 keep-alive response. One
// thread; holds thousands of connections without a thread each.

class EpollServer {
 public:
  enum class Mode { kEcho, kHttp };
  explicit EpollServer(Mode mode) : mode_(mode) {
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int one = 1;
    ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(listen_.get(), 4096);
    socklen_t len = sizeof sa;
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_.get();
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev);
    thread_ = std::thread([this] { loop(); });
  }
  ~EpollServer() {
    stop_ = true;
    thread_.join();
    for (auto& [fd, buf] : conns_) UniqueFd close_it(fd);
  }
  std::uint16_t port() const { return port_; }

 private:
  void loop() {
    epoll_event events[256];
    while (!stop_) {
      const int n = ::epoll_wait(epoll_.get(), events, 256, 50);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_.get()) {
          while (true) {
            const int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c < 0) break;
            const int one = 1;
            ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.fd = c;
            ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c, &ev);
            conns_.emplace_back(c, std::string());
          }
          continue;
        }
        char buf[16384];
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        auto it = std::find_if(conns_.begin(), conns_.end(),
                               [fd](const auto& p) { return p.first == fd; });
        if (r <= 0) {
          ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
          if (it != conns_.end()) {
            UniqueFd close_it(it->first);
            conns_.erase(it);
          }
          continue;
        }
        if (mode_ == Mode::kEcho) {
          (void)::send(fd, buf, static_cast<std::size_t>(r), MSG_NOSIGNAL);
        } else if (it != conns_.end()) {
          it->second.append(buf, static_cast<std::size_t>(r));
          std::size_t end;
          while ((end = it->second.find("\r\n\r\n")) != std::string::npos) {
            it->second.erase(0, end + 4);
            static const char kReply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            (void)::send(fd, kReply, sizeof kReply - 1, MSG_NOSIGNAL);
          }
        }
      }
    }
  }

  Mode mode_;
  UniqueFd listen_;
  UniqueFd epoll_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::pair<int, std::string>> conns_;
};

inline bool send_str(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

// Reads until `needle` has arrived.
inline bool recv_until_has(int fd, std::string* buf, const std::string& needle) {
  char tmp[4096];
  while (buf->find(needle) == std::string::npos) {
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf->append(tmp, static_cast<std::size_t>(n));
  }
  return true;
}

// One short-lived tunnel (or direct connection): the unit of "new connections/s".
inline bool one_connection(std::uint16_t port, const std::string& connect_line) {
  UniqueFd fd = load_detail::connect_loopback(port);
  if (!fd) return false;
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string buf;
  if (!connect_line.empty()) {
    if (!send_str(fd.get(), connect_line) || !recv_until_has(fd.get(), &buf, "\r\n\r\n"))
      return false;
    if (buf.rfind("HTTP/1.1 200", 0) != 0) return false;
    buf.clear();
  }
  if (!send_str(fd.get(), "x")) return false;
  return recv_until_has(fd.get(), &buf, "x");
}

// A field of /proc/PID/status in KiB ("VmRSS:", "VmHWM:"); -1 if missing.
inline long proc_status_kb(pid_t pid, const char* field) {
  const std::string s = load_detail::read_text("/proc/" + std::to_string(pid) + "/status");
  const std::size_t at = s.find(field);
  if (at == std::string::npos) return -1;
  return std::atol(s.c_str() + at + std::strlen(field) + 1);
}

// The number of open descriptors of PID.
inline std::size_t proc_fds(pid_t pid) {
  std::size_t n = 0;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (d == nullptr) return 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

// Where a process's resident memory is, from /proc/PID/smaps (KiB): the brk heap (the
// main glibc arena), anonymous mappings (other arenas, thread stacks, large mallocs),
// and file-backed pages (the binary and its libraries).
struct RssParts {
  long heap_kb = 0, anon_kb = 0, file_kb = 0, other_kb = 0;
  int anon_maps = 0;  // anonymous mappings with resident pages
};

inline RssParts proc_rss_parts(pid_t pid) {
  RssParts parts;
  const std::string s = load_detail::read_text("/proc/" + std::to_string(pid) + "/smaps");
  std::string name;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    const std::string line = s.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("Rss:", 0) == 0) {
      const long kb = std::atol(line.c_str() + 4);
      if (name == "[heap]") {
        parts.heap_kb += kb;
      } else if (name.empty()) {
        parts.anon_kb += kb;
        if (kb > 0) ++parts.anon_maps;
      } else if (name[0] == '/') {
        parts.file_kb += kb;
      } else {
        parts.other_kb += kb;  // [stack], [vdso], ...
      }
      continue;
    }
    // A mapping's header, "start-end perms offset dev inode [name]": its first word is an
    // address range (field lines start "Key:").
    std::istringstream words(line);
    std::string range, perms, offset, dev, inode;
    words >> range >> perms >> offset >> dev >> inode;
    if (range.find('-') == std::string::npos || range.back() == ':') continue;
    name.clear();
    std::getline(words >> std::ws, name);
  }
  return parts;
}

// What one round of load did to a proxy process.
struct Load {
  long rss_kb = 0;  // under load
  std::size_t fds = 0;
  int alive = 0;  // tunnels still echoing after the slow-loris connections arrived
  bool fresh_ok = false;
  double fresh_ms = 0;
  std::size_t fds_idle = 0, fds_after = 0;
  long rss_after_kb = 0;  // `settle` after the last descriptor closed
};

// A client socket that gives up on a silent proxy instead of hanging the caller.
inline UniqueFd load_client(std::uint16_t port) {
  UniqueFd fd = load_detail::connect_loopback(port);
  if (!fd) return fd;
  const timeval tv{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// 500 open tunnels (each echoing) and 1,000 slow-loris connections (a request head that
// never ends) held at once against the proxy PID listening on `port`, then a fresh client;
// then everything closed. `connect` is the CONNECT request (with any auth header) for the
// echo server; `host` the allowed name the slow requests name. `settle`: how long to wait
// after the proxy's descriptors are back before reading its RSS (vigil's proxy hands freed
// memory back to the OS a second after its last connection goes: kTrimAfterIdle).
inline Load hold_load(pid_t pid, std::uint16_t port, const std::string& connect,
                      const std::string& host,
                      std::chrono::milliseconds settle = std::chrono::milliseconds(1500)) {
  using Clock = std::chrono::steady_clock;
  Load l;
  l.fds_idle = proc_fds(pid);
  std::vector<UniqueFd> tunnels;
  for (int i = 0; i < 500; ++i) {
    UniqueFd fd = load_client(port);
    std::string buf;
    if (!fd || !send_str(fd.get(), connect) || !recv_until_has(fd.get(), &buf, "\r\n\r\n")) break;
    buf.clear();
    if (!send_str(fd.get(), "y") || !recv_until_has(fd.get(), &buf, "y")) break;
    tunnels.push_back(std::move(fd));
  }
  std::vector<UniqueFd> loris;
  for (int i = 0; i < 1000; ++i) {
    UniqueFd fd = load_client(port);
    if (!fd) break;
    send_str(fd.get(), "GET http://" + host + "/ HTTP/1.1\r\nX-Slow: ");  // never finished
    loris.push_back(std::move(fd));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t_fresh = Clock::now();
  l.fresh_ok = one_connection(port, connect);
  l.fresh_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_fresh).count();
  for (auto& t : tunnels) {
    std::string buf;
    if (send_str(t.get(), "z") && recv_until_has(t.get(), &buf, "z")) ++l.alive;
  }
  l.rss_kb = proc_status_kb(pid, "VmRSS:");
  l.fds = proc_fds(pid);
  tunnels.clear();
  loris.clear();
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    l.fds_after = proc_fds(pid);
    if (l.fds_after <= l.fds_idle) break;
  }
  std::this_thread::sleep_for(settle);
  l.rss_after_kb = proc_status_kb(pid, "VmRSS:");
  return l;
}

}  // namespace vigil::load
