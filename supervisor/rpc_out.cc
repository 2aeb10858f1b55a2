#include "supervisor/rpc_out.h"

#include "supervisor/session_runner.h"  // write_all_to

namespace vigil::rpc {

using json = nlohmann::json;

Out::Out(int fd, std::size_t max_queued)
    : fd_(fd), max_queued_(max_queued), writer_([this] { write_loop(); }) {}

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
