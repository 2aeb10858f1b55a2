#include "observer/idle_threads.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace vigil::init {
namespace {

struct Pool {
  std::mutex mu;
  std::condition_variable ready;
  std::deque<std::function<void()>> tasks;
  int idle = 0;

  void serve() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      ++idle;
      ready.wait(lock, [this] { return !tasks.empty(); });
      --idle;
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
};

Pool& pool() {
  static Pool* const p = new Pool;  // never destroyed: see the header
  return *p;
}

}  // namespace

void run_on_idle_thread(std::function<void()> task) {
  Pool& p = pool();
  bool spawn = false;
  {
    const std::lock_guard<std::mutex> lock(p.mu);
    p.tasks.push_back(std::move(task));
    // Every queued task needs a thread of its own: one may block for good.
    spawn = static_cast<int>(p.tasks.size()) > p.idle;
  }
  if (spawn) {
    std::thread([&p] { p.serve(); }).detach();
  } else {
    p.ready.notify_one();
  }
}

}  // namespace vigil::init
