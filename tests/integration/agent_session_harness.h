// A `vigil session` for integration tests: started in a workspace with its own runtime
// and state directories, its commands run through `vigil run` as thin clients.
#pragma once

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/log/session_log.h"
#include "tests/integration/harness.h"

namespace vigil::test {

inline bool wait_for(const std::function<bool()>& cond, int timeout_ms = 10000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// A session started in `ws` with its own runtime and state directories.
class Session {
 public:
  Session(const std::string& ws, const std::vector<std::string>& extra = {}) : ws_(ws) {
    ::chmod(runtime_.path().c_str(), 0700);
    env_ = {{"XDG_RUNTIME_DIR", runtime_.path()}, {"XDG_STATE_HOME", state_.path()}};
    std::vector<std::string> args = {"session", "start", "--log", log()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto o = run_vigil(args, ws_, 30, env_);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    // VIGIL_SESSION=...; export VIGIL_SESSION;\nVIGIL_SESSION_PID=N; export ...
    const auto take = [&](const std::string& key) {
      const auto at = o.out.find(key + "=");
      if (at == std::string::npos) return std::string();
      const auto from = at + key.size() + 1;
      return o.out.substr(from, o.out.find(';', from) - from);
    };
    handle_ = take("VIGIL_SESSION");  // single-quoted for eval
    if (handle_.size() >= 2 && handle_.front() == '\'' && handle_.back() == '\'')
      handle_ = handle_.substr(1, handle_.size() - 2);
    pid_ = std::atoi(take("VIGIL_SESSION_PID").c_str());
    env_["VIGIL_SESSION"] = handle_;
  }
  ~Session() {
    if (pid_ > 0 && ::kill(pid_, 0) == 0) run_vigil({"session", "end", handle_}, ws_, 30, env_);
  }
  Outcome run(const std::vector<std::string>& argv) {
    std::vector<std::string> args = {"run", "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    return run_vigil(args, ws_, 60, env_);
  }
  Outcome end() { return run_vigil({"session", "end", handle_}, ws_, 30, env_); }
  std::string log() const { return state_ / "session.jsonl"; }
  const std::string& handle() const { return handle_; }
  pid_t pid() const { return pid_; }
  const std::string& runtime() const { return runtime_.path(); }
  std::map<std::string, std::string> env() const { return env_; }

 private:
  std::string ws_;
  TempDir runtime_, state_;
  std::map<std::string, std::string> env_;
  std::string handle_;
  pid_t pid_ = -1;
};

inline std::vector<events::Event> records(const std::string& log) {
  std::vector<events::Event> out;
  auto loaded = load_log(log);
  EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message);
  if (loaded) {
    for (auto& r : loaded->records) out.push_back(r.event);
  }
  return out;
}

}  // namespace vigil::test
