// Background commands of `vigil serve` and `vigil mcp` (docs/protocol.md): a run that
// returns a handle at once, for dev servers and watchers an agent starts in one call and
// queries in the next. Each is a command of the session like any other: the same sandbox
// rules, framed by command.start / command.end in the same log, its block in its status
// once it has ended. Bounded: at most kMaxRunning at once, each for at most its timeout
// (kDefaultTimeoutS when none is given, kMaxTimeoutS at most), the last kOutputWindow
// bytes of its output kept for reading (the log keeps it all), kMaxKept ended ones kept
// for their status. They end with the server (SIGTERM, then SIGKILL after the grace:
// command_stop.h), before the session does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/command_stop.h"
#include "supervisor/agent/rpc_run.h"
#include "supervisor/agent/rpc_stdio.h"

namespace vigil {

struct BackgroundStatus {
  std::string handle;  // "bg-N"
  std::uint64_t command = 0;  // its number in the log (0 until the session gave it one)
  std::vector<std::string> argv;
  bool running = true;
  // Once it has ended:
  int exit_code = 0;
  bool timed_out = false;
  std::optional<CancelWhy> cancelled;
  std::string error;       // it could not run at all (nothing ran)
  std::string annotation;  // the <sandbox_violations> block, "" when none
  std::string violations_json;
  std::uint64_t output_bytes = 0;  // stdout and stderr, as they came, so far
};

// A piece of a background command's output (stdout and stderr as they came).
struct BackgroundChunk {
  std::string data;
  std::uint64_t offset = 0;   // where `data` starts
  std::uint64_t next = 0;     // the offset to ask for next
  std::uint64_t dropped = 0;  // bytes asked for that are no longer kept (the log has them)
  BackgroundStatus status;
};

class BackgroundCommands {
 public:
  static constexpr std::size_t kMaxRunning = 8;
  static constexpr std::size_t kMaxKept = 64;
  static constexpr std::size_t kOutputWindow = 1u << 20;
  static constexpr std::size_t kMaxChunk = 1u << 20;
  static constexpr double kDefaultTimeoutS = 3600;
  static constexpr double kMaxTimeoutS = 24 * 3600;

  explicit BackgroundCommands(AgentSession& session) : session_(session) {}
  ~BackgroundCommands();  // ends every one still running, and waits for them
  BackgroundCommands(const BackgroundCommands&) = delete;
  BackgroundCommands& operator=(const BackgroundCommands&) = delete;

  // Starts `p` and returns its status once the session has numbered it (or it failed to
  // start); an error when kMaxRunning are running, or the timeout is over kMaxTimeoutS.
  std::variant<BackgroundStatus, rpc::RpcError> start(RunParams p);
  // Up to `max` bytes of output from `offset`; none: no such handle.
  std::optional<BackgroundChunk> output(const std::string& handle, std::uint64_t offset,
                                        std::size_t max);
  // Its status once it has ended, or after `timeout` (then still running).
  std::optional<BackgroundStatus> wait(const std::string& handle,
                                       std::chrono::milliseconds timeout);
  // Stops it (command.cancel with `why`); false: no such handle, or it had ended.
  std::optional<bool> kill(const std::string& handle, const CancelWhy& why);
  std::vector<BackgroundStatus> list();
  // Stops every one still running (the client went away, the server ends).
  void kill_all(const CancelWhy& why);

 private:
  struct Entry;
  void run(Entry* e);
  void forget_ended();  // under mu_: beyond kMaxKept ended ones, the oldest go
  static BackgroundStatus status_of(const Entry& e);  // under mu_
  Entry* find(const std::string& handle);             // under mu_

  AgentSession& session_;
  std::mutex mu_;
  std::condition_variable changed_;
  // By N of "bg-N". Shared: a kill holds its entry outside mu_ (its cancel logs).
  std::map<std::uint64_t, std::shared_ptr<Entry>> entries_;
  std::uint64_t next_ = 1;
  std::uint64_t ended_count_ = 0;
};

// The JSON of a status (docs/protocol.md: output, wait, kill, list, run's background
// reply).
nlohmann::json background_json(const BackgroundStatus& s);

}  // namespace vigil
