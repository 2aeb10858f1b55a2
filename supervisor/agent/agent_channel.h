// srt's agent channel, spoken by `vigil run` (docs/protocol.md, "srt's agent channel";
// the wire is agent_channel_wire.h). A harness that starts vigil with
// SANDBOX_AGENT_CHANNEL_FD=N and one end of a socketpair as fd N is asked about every
// request to a host off the allow list (permission_request; its permission_response
// decides) and told of every denial that goes into the <sandbox_violations> block
// (blocked).
//
// The descriptor and the variable are the harness's, never the command's: the variable is
// removed from vigil's own environment (which the command's is made from) and the
// descriptor made close-on-exec before anything is started.
//
// Fail-safe: a channel that is absent, not yet greeted (no hello of version 1), or gone
// (closed, an error, a line over 1 MiB, too much that is not the protocol, a peer that
// stops reading) answers every question deny, at once; a question it sent is denied when
// the channel goes, and by the proxy's own deadline (vigil.network.askTimeoutSeconds)
// when nobody answers. Nothing here blocks the caller: one thread of its own does the I/O,
// every wait has a deadline, and each unusual event is one line on stderr.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "proxy/ask.h"
#include "supervisor/agent/agent_channel_wire.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/report/annotation.h"

namespace vigil {

class AgentChannel final : public proxy::Asker {
 public:
  // Takes SANDBOX_AGENT_CHANNEL_FD out of this process's environment (whatever it says)
  // and makes the descriptor it names close-on-exec. None when the variable is not set;
  // a channel that is closed from the start (every ask denied, a line on stderr saying
  // why) when it names no open stream socket. Call before any thread is started.
  static std::shared_ptr<AgentChannel> from_environment();

  // Where the channel is not spoken (a `vigil run` sent to an agent session, `vigil
  // session`, `serve`, `mcp`: their own client is asked): the variable is removed all the
  // same and the descriptor made close-on-exec, so neither reaches a command. True when
  // the variable was set (the caller says it is not used).
  static bool drop_from_environment();

  // Sends vigil's hello and starts the I/O thread. An invalid `fd`: closed from the start.
  AgentChannel(UniqueFd fd, std::string why_unusable = "");
  ~AgentChannel() override;  // stop(): what is still queued gets a moment to be written
  AgentChannel(const AgentChannel&) = delete;
  AgentChannel& operator=(const AgentChannel&) = delete;

  // Waits up to `limit` for the harness's hello. False: not greeted (yet).
  bool wait_ready(std::chrono::milliseconds limit);
  // The harness's answer decides the ticket (allow: once; anything else: deny). Never
  // blocks: not ready, or too many questions open, is a deny now.
  void ask(const std::shared_ptr<proxy::AskTicket>& ticket) override;
  // Every record of the run, in log order: each new entry of the <sandbox_violations>
  // block becomes one `blocked` notice (the harness's own denies are not echoed back).
  void on_event(const events::Event& e);
  // Writes what is queued (up to `limit`), then closes: open questions are denied.
  void stop(std::chrono::milliseconds limit = std::chrono::seconds(2));

 private:
  void loop();
  void read_some();
  void write_some();
  void handle_line(const std::string& line);
  void answer(const agent_channel::PeerMessage& m);
  // Closes the channel (once): open questions are denied, `why` goes to stderr (unless
  // the run simply ended).
  void close_locked(const std::string& why, bool warn = true);
  void complain_locked(const std::string& what);
  void enqueue_locked(std::string line);
  void wake();
  void notify_blocked(const Violation& v, bool quarantined);

  UniqueFd fd_;
  UniqueFd wake_;  // an eventfd: work for the I/O thread
  std::mutex mu_;
  std::condition_variable ready_cv_;
  bool greeted_ = false;
  bool closed_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_by_{};
  agent_channel::LineSplitter splitter_;
  std::deque<std::string> out_;
  std::size_t out_offset_ = 0;  // of out_.front(), already written
  std::size_t out_bytes_ = 0;   // in out_
  std::chrono::steady_clock::time_point last_write_progress_{};
  std::deque<std::string> early_blocked_;  // before the hello
  std::uint64_t next_request_ = 1;
  std::map<std::string, std::shared_ptr<proxy::AskTicket>> pending_;
  std::set<std::string> denied_by_harness_;  // host:port entries: not echoed as blocked
  std::uint64_t complaints_ = 0;
  std::uint64_t bad_lines_ = 0;
  std::uint64_t dropped_ = 0;
  ViolationCollector violations_;
  std::size_t sent_denied_ = 0;
  std::size_t sent_quarantined_ = 0;
  std::thread thread_;
};

}  // namespace vigil
