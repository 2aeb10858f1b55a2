#include "supervisor/agent/rpc_out.h"

#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>

#include "supervisor/core/base/write_all.h"

namespace vigil::rpc {

using json = nlohmann::json;

namespace {

// Whether `fd` takes `size` bytes at once without blocking: a regular file always; a pipe
// when it has room (POLLOUT: a free buffer, which a write of at most PIPE_BUF fills
// whole and atomically); anything else is left to the writer thread.
bool takes_now(int fd, bool pipe, bool file, std::size_t size) {
  if (file) return true;
  if (!pipe || size > PIPE_BUF) return false;
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

}  // namespace

Out::Out(int fd, std::size_t max_queued)
    : fd_(fd), max_queued_(max_queued), writer_([this] { write_loop(); }) {
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    pipe_ = S_ISFIFO(st.st_mode);
    file_ = S_ISREG(st.st_mode);
    socket_ = S_ISSOCK(st.st_mode);
  }
}

Out::~Out() {
  flush();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  writer_.join();
}

void Out::queue(const json& message, bool may_wait) {
  std::string line = message.dump(-1, ' ', true, json::error_handler_t::replace);
  line += '\n';
  std::unique_lock lock(mu_);
  if (may_wait) changed_.wait(lock, [&] { return gone_ || queued_bytes_ <= max_queued_; });
  if (gone_) return;
  // Nothing ahead of it and room for it: written here, without waking the writer (a
  // hand-off per line costs a wake-up, which on a busy machine waits for a CPU).
  if (lines_.empty() && !writing_) {
    if (socket_) {
      // A socket (node's and libuv's child stdio): what it takes now, without waiting;
      // the rest is queued first in line.
      const ssize_t n = ::send(fd_, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n == static_cast<ssize_t>(line.size())) return;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        gone_ = true;
        changed_.notify_all();
        return;
      }
      if (n > 0) line.erase(0, static_cast<std::size_t>(n));
    } else if (takes_now(fd_, pipe_, file_, line.size())) {
      if (!write_all_to(fd_, line)) gone_ = true;
      changed_.notify_all();
      return;
    }
  }
  queued_bytes_ += line.size();
  lines_.push_back(std::move(line));
  changed_.notify_all();
}

void Out::send(const json& message) { queue(message, /*may_wait=*/true); }
void Out::post(const json& message) { queue(message, /*may_wait=*/false); }

void Out::notify(const std::string& method, json params) {
  send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}
void Out::notify_now(const std::string& method, json params) {
  post(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

void Out::flush() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return gone_ || (lines_.empty() && !writing_); });
}

void Out::write_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !lines_.empty(); });
    if (lines_.empty()) return;  // stopping, all written
    // Everything queued goes out in one write where it fits: fewer wake-ups of the
    // client, same order.
    std::string batch;
    while (!lines_.empty()) {
      batch += lines_.front();
      lines_.pop_front();
    }
    writing_ = true;
    lock.unlock();
    const bool ok = write_all_to(fd_, batch);
    lock.lock();
    writing_ = false;
    queued_bytes_ -= std::min(queued_bytes_, batch.size());
    if (!ok) {
      gone_ = true;
      lines_.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
  }
}

}  // namespace vigil::rpc
