// What the kernel says about this network namespace's IPv4 TCP sockets (/proc/net/tcp),
// for tests that must wait on a state ("the connection sits in the accept queue", "the
// connect is in SYN_SENT") instead of sleeping and hoping it was reached. Header-only.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace vigil::test {

constexpr int kTcpSynSent = 0x02;
constexpr int kTcpListen = 0x0A;

struct TcpRow {
  std::uint16_t local_port = 0, remote_port = 0;
  int state = 0;
  unsigned long rx_queue = 0;  // for a listener: connections waiting in its accept queue
};

inline std::vector<TcpRow> tcp_rows() {
  std::vector<TcpRow> out;
  std::ifstream f("/proc/net/tcp");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    unsigned local_addr = 0, local_port = 0, remote_addr = 0, remote_port = 0, state = 0;
    unsigned long tx = 0, rx = 0;
    if (std::sscanf(line.c_str(), " %*d: %8X:%4X %8X:%4X %2X %8lX:%8lX", &local_addr,
                    &local_port, &remote_addr, &remote_port, &state, &tx, &rx) == 7) {
      out.push_back({static_cast<std::uint16_t>(local_port),
                     static_cast<std::uint16_t>(remote_port), static_cast<int>(state), rx});
    }
  }
  return out;
}

// Connections waiting, not yet accepted, on the listener at `port`.
inline unsigned long accept_queue_length(std::uint16_t port) {
  for (const TcpRow& r : tcp_rows())
    if (r.local_port == port && r.state == kTcpListen) return r.rx_queue;
  return 0;
}

// Polls `cond` until it holds or 10 s have passed (then returns false). The interval is a
// polling period, not a guess at how long anything takes.
template <typename F>
bool eventually(F cond) {
  for (int i = 0; i < 2000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace vigil::test
