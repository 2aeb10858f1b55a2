// The one writer of a JSON-RPC stream (`vigil serve`, `vigil mcp`): whole lines, in the
// order they were queued, written by a thread of its own (or at once, by the caller, when
// nothing is queued and the pipe or socket has room for the line: never a wait).
//
// Why a queue: the client reads its stdin when it likes. A synchronous write blocks
// whoever writes once the pipe is full, and some writers must never block: the proxy
// thread that asks the client about a host (a stalled proxy stalls every connection of
// its command, and the answer it waits for may sit behind the very line it cannot
// write), and the session log's listener (it runs under the log's lock). Those post();
// a command's output goes through send(), which waits while too much is queued, so a
// client that stops reading slows the command down instead of growing vigil's memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace vigil::rpc {

class Out {
 public:
  static constexpr std::size_t kDefaultMaxQueued = 8u << 20;  // bytes
  explicit Out(int fd, std::size_t max_queued = kDefaultMaxQueued);
  ~Out();  // writes what is queued (unless the reader has gone), then stops its thread
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  // Queues one line; waits while more than max_queued bytes are queued and the reader
  // is still there.
  void send(const nlohmann::json& message);
  // Queues one line and returns at once, however much is queued.
  void post(const nlohmann::json& message);
  void notify(const std::string& method, nlohmann::json params);       // send()
  void notify_now(const std::string& method, nlohmann::json params);   // post()
  // Waits until every line queued so far is written, or the reader has gone.
  void flush();

 private:
  void queue(const nlohmann::json& message, bool may_wait);
  void write_loop();

  int fd_;
  std::size_t max_queued_;
  std::mutex mu_;  // everything below
  std::condition_variable changed_;
  std::deque<std::string> lines_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;  // the writer holds lines taken off the queue
  bool gone_ = false;     // a write failed: the reader has gone, lines are dropped
  bool stop_ = false;
  bool pipe_ = false, file_ = false, socket_ = false;  // what fd_ is (see queue())
  std::thread writer_;
};

}  // namespace vigil::rpc
