#include "supervisor/agent/background.h"

#include <algorithm>
#include <thread>

#include "supervisor/agent/wire_json.h"

namespace vigil {

struct BackgroundCommands::Entry {
  std::uint64_t n = 0;
  RunParams params;
  CommandStop stop;
  std::thread thread;
  std::uint64_t command = 0;
  bool running = true;
  std::string window;       // the last kOutputWindow bytes of output
  std::uint64_t total = 0;  // bytes of output so far
  std::optional<Ran> ran;   // once ended (its texts dropped: the window has what is kept)
  std::string error;        // once ended, when nothing ran
  std::uint64_t ended = 0;  // the order it ended in
};

BackgroundCommands::~BackgroundCommands() {
  // The server ends only at its client's end (stdin's EOF): what still runs is nobody's.
  kill_all({"disconnect", "eof", ""});
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& [n, e] : entries_) {
      if (e->thread.joinable()) threads.push_back(std::move(e->thread));
    }
  }
  for (auto& t : threads) t.join();
}

BackgroundStatus BackgroundCommands::status_of(const Entry& e) {
  BackgroundStatus s;
  s.handle = "bg-" + std::to_string(e.n);
  s.command = e.command;
  s.argv = e.params.argv;
  s.running = e.running;
  s.output_bytes = e.total;
  s.error = e.error;
  if (e.ran) {
    s.exit_code = e.ran->outcome.exit_code;
    s.timed_out = e.ran->timed_out;
    s.cancelled = e.ran->cancelled;
    s.annotation = e.ran->outcome.annotation;
    s.violations_json = e.ran->outcome.violations_json;
  }
  return s;
}

BackgroundCommands::Entry* BackgroundCommands::find(const std::string& handle) {
  if (!handle.starts_with("bg-") || handle.size() > 23) return nullptr;
  std::uint64_t n = 0;
  for (const char c : handle.substr(3)) {
    if (c < '0' || c > '9') return nullptr;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const auto it = entries_.find(n);
  return it == entries_.end() ? nullptr : it->second.get();
}

void BackgroundCommands::run(Entry* e) {
  auto ran = run_one(
      session_, e->params, e->stop,
      [this, e](std::uint64_t id) {
        std::lock_guard lock(mu_);
        e->command = id;
        changed_.notify_all();
      },
      [this, e](OutputStream, std::string_view bytes) {
        std::lock_guard lock(mu_);
        e->total += bytes.size();
        if (bytes.size() >= kOutputWindow) {
          e->window.assign(bytes.substr(bytes.size() - kOutputWindow));
        } else {
          e->window.append(bytes);
          if (e->window.size() > kOutputWindow) e->window.erase(0, e->window.size() - kOutputWindow);
        }
      });
  std::lock_guard lock(mu_);
  if (ran) {
    ran->stdout_text.clear();
    ran->stderr_text.clear();
    ran->combined.clear();
    ran->stdout_text.shrink_to_fit();
    ran->stderr_text.shrink_to_fit();
    ran->combined.shrink_to_fit();
    e->ran = std::move(*ran);
  } else {
    e->error = ran.error().message;
  }
  e->running = false;
  e->ended = ++ended_count_;
  changed_.notify_all();
}

void BackgroundCommands::forget_ended() {
  std::vector<Entry*> ended;
  for (auto& [n, e] : entries_) {
    if (!e->running) ended.push_back(e.get());
  }
  if (ended.size() <= kMaxKept) return;
  std::sort(ended.begin(), ended.end(), [](const Entry* a, const Entry* b) { return a->ended < b->ended; });
  for (std::size_t i = 0; i + kMaxKept < ended.size(); ++i) {
    // Ended: its thread has returned from run() or is about to (it only unlocks mu_).
    if (ended[i]->thread.joinable()) ended[i]->thread.join();
    entries_.erase(ended[i]->n);
  }
}

std::variant<BackgroundStatus, rpc::RpcError> BackgroundCommands::start(RunParams p) {
  if (p.timeout_s == 0) p.timeout_s = kDefaultTimeoutS;
  if (p.timeout_s > kMaxTimeoutS) {
    return rpc::RpcError{rpc::kInvalidParams,
                         "timeout: a background command runs for at most 86400 seconds"};
  }
  std::unique_lock lock(mu_);
  const auto running = std::count_if(entries_.begin(), entries_.end(),
                                     [](const auto& kv) { return kv.second->running; });
  if (static_cast<std::size_t>(running) >= kMaxRunning) {
    return rpc::RpcError{rpc::kServerError,
                         std::to_string(kMaxRunning) +
                             " background commands are running, the most a session runs at "
                             "once: kill one (kill {\"handle\"}) or wait for one to end"};
  }
  forget_ended();
  auto entry = std::make_shared<Entry>();
  Entry* e = entry.get();
  e->n = next_++;
  e->params = std::move(p);
  entries_.emplace(e->n, std::move(entry));
  e->thread = std::thread([this, e] { run(e); });
  // The reply names the command's number in the log: the session gives it before it sets
  // anything up.
  changed_.wait_for(lock, std::chrono::seconds(30), [e] { return e->command != 0 || !e->running; });
  return status_of(*e);
}

std::optional<BackgroundChunk> BackgroundCommands::output(const std::string& handle,
                                                          std::uint64_t offset, std::size_t max) {
  std::lock_guard lock(mu_);
  const Entry* e = find(handle);
  if (e == nullptr) return std::nullopt;
  BackgroundChunk c;
  const std::uint64_t first = e->total - e->window.size();  // the oldest byte still kept
  c.offset = std::clamp(offset, first, e->total);
  c.dropped = offset < first ? first - offset : 0;
  const std::size_t take = static_cast<std::size_t>(
      std::min<std::uint64_t>(e->total - c.offset, std::min(max, kMaxChunk)));
  c.data = e->window.substr(static_cast<std::size_t>(c.offset - first), take);
  c.next = c.offset + take;
  c.status = status_of(*e);
  return c;
}

std::optional<BackgroundStatus> BackgroundCommands::wait(const std::string& handle,
                                                         std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const Entry* e = find(handle);
  if (e == nullptr) return std::nullopt;
  const std::uint64_t n = e->n;
  changed_.wait_for(lock, timeout, [this, n] {
    const auto it = entries_.find(n);
    return it == entries_.end() || !it->second->running;
  });
  e = find(handle);
  if (e == nullptr) return std::nullopt;
  return status_of(*e);
}

std::optional<bool> BackgroundCommands::kill(const std::string& handle, const CancelWhy& why) {
  std::shared_ptr<Entry> e;
  {
    std::lock_guard lock(mu_);
    const Entry* found = find(handle);
    if (found == nullptr) return std::nullopt;
    if (!found->running) return false;
    e = entries_.at(found->n);
  }
  // Outside mu_: the cancel logs (command.cancel), and its record's listener may call in.
  return e->stop.cancel(why);
}

std::vector<BackgroundStatus> BackgroundCommands::list() {
  std::lock_guard lock(mu_);
  std::vector<BackgroundStatus> out;
  for (const auto& [n, e] : entries_) out.push_back(status_of(*e));
  return out;
}

void BackgroundCommands::kill_all(const CancelWhy& why) {
  std::vector<std::shared_ptr<Entry>> running;
  {
    std::lock_guard lock(mu_);
    for (auto& [n, e] : entries_) {
      if (e->running) running.push_back(e);
    }
  }
  for (const auto& e : running) (void)e->stop.cancel(why);
}

nlohmann::json background_json(const BackgroundStatus& s) {
  using json = nlohmann::json;
  json j = {{"handle", s.handle},
            {"command", s.command},
            {"argv", s.argv},
            {"running", s.running},
            {"output_bytes", s.output_bytes}};
  if (s.running) return j;
  if (!s.error.empty()) {
    j["error"] = s.error;
    return j;
  }
  j["exit_code"] = s.exit_code;
  j["timed_out"] = s.timed_out;
  j["cancelled"] = s.cancelled.has_value();
  if (s.cancelled) j["cancelled_by"] = {{"by", s.cancelled->by}, {"via", s.cancelled->via}};
  j["annotation"] = s.annotation;
  auto v = parse_json_object(s.violations_json, 16);
  j["violations"] = v ? std::move(*v) : json::object();
  return j;
}

}  // namespace vigil
