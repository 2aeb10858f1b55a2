#include "supervisor/agent/agent_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "supervisor/core/base/diagnostics.h"

namespace vigil {

namespace {

using namespace std::chrono_literals;
namespace chan = agent_channel;

// Questions the harness has not answered yet: past it, a new one is a deny at once.
constexpr std::size_t kMaxPending = 64;
// Bytes queued for a harness that does not read: past it, blocked notices are dropped
// (counted) and questions denied.
constexpr std::size_t kMaxOutBytes = 4U << 20;
// Lines that are not the protocol (not JSON, no type, an id never asked or already
// answered): past it the peer is treated as broken and the channel closed.
constexpr std::uint64_t kMaxBadLines = 100;
// Lines on stderr about one channel's peer, so that a flood cannot flood the terminal.
constexpr std::uint64_t kMaxComplaints = 10;
// Hosts the harness denied, remembered so as not to echo them back as blocked.
constexpr std::size_t kMaxRemembered = 10000;
// A harness that has not read anything for this long while vigil has a message for it.
constexpr auto kWriteStall = 10s;

// SANDBOX_AGENT_CHANNEL_FD's value, when it is a descriptor number above stderr.
std::optional<int> fd_number(const char* text) {
  int n = -1;
  const char* end = text + std::strlen(text);
  const auto [p, ec] = std::from_chars(text, end, n);
  if (ec != std::errc() || p != end || n < 3) return std::nullopt;
  return n;
}

// "" when `fd` is an open stream socket (the socketpair end srt hands its agent).
std::string unusable_reason(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "it is not an open descriptor";
  if (!S_ISSOCK(st.st_mode)) return "it is not a socket (pass one end of a socketpair)";
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
    return "it is not a stream socket (pass one end of a socketpair(AF_UNIX, SOCK_STREAM))";
  return "";
}

}  // namespace

std::shared_ptr<AgentChannel> AgentChannel::from_environment() {
  const char* value = std::getenv(chan::kFdVariable);
  if (value == nullptr) return nullptr;
  const std::string text = value;
  // The harness's, never the command's: the command's environment is made from vigil's.
  ::unsetenv(chan::kFdVariable);
  const auto fd = fd_number(text.c_str());
  if (!fd) {
    return std::make_shared<AgentChannel>(
        UniqueFd(), "SANDBOX_AGENT_CHANNEL_FD=" + text.substr(0, 32) +
                        " is not a descriptor number above 2");
  }
  // Close-on-exec first, whatever comes next: bwrap and the command never inherit it.
  const int flags = ::fcntl(*fd, F_GETFD);
  if (flags < 0 || ::fcntl(*fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
    return std::make_shared<AgentChannel>(
        UniqueFd(), "SANDBOX_AGENT_CHANNEL_FD=" + text + ": it is not an open descriptor");
  }
  UniqueFd owned(*fd);
  if (std::string why = unusable_reason(owned.get()); !why.empty()) {
    return std::make_shared<AgentChannel>(UniqueFd(),
                                          "SANDBOX_AGENT_CHANNEL_FD=" + text + ": " + why);
  }
  return std::make_shared<AgentChannel>(std::move(owned));
}

bool AgentChannel::drop_from_environment() {
  const char* value = std::getenv(chan::kFdVariable);
  if (value == nullptr) return false;
  if (const auto fd = fd_number(value)) {
    const int flags = ::fcntl(*fd, F_GETFD);
    if (flags >= 0) (void)::fcntl(*fd, F_SETFD, flags | FD_CLOEXEC);
  }
  ::unsetenv(chan::kFdVariable);
  return true;
}

AgentChannel::AgentChannel(UniqueFd fd, std::string why_unusable) : fd_(std::move(fd)) {
  wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  std::lock_guard lock(mu_);
  if (!why_unusable.empty() || !fd_ || !wake_) {
    close_locked(why_unusable.empty() ? "cannot make its eventfd" : why_unusable);
    return;
  }
  last_write_progress_ = std::chrono::steady_clock::now();
  enqueue_locked(chan::hello_line());  // vigil speaks first, as srt does
  thread_ = std::thread([this] { loop(); });
}

AgentChannel::~AgentChannel() { stop(0ms); }

void AgentChannel::stop(std::chrono::milliseconds limit) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_by_ = std::chrono::steady_clock::now() + limit;
    }
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

bool AgentChannel::wait_ready(std::chrono::milliseconds limit) {
  std::unique_lock lock(mu_);
  ready_cv_.wait_for(lock, limit, [&] { return greeted_ || closed_; });
  return greeted_ && !closed_;
}

void AgentChannel::wake() {
  if (!wake_) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void AgentChannel::complain_locked(const std::string& what) {
  if (++complaints_ > kMaxComplaints) return;
  print_warning("agent channel: " + what +
                (complaints_ == kMaxComplaints ? " (further ones are not shown)" : ""));
}

void AgentChannel::close_locked(const std::string& why, bool warn) {
  if (closed_) return;
  closed_ = true;
  if (warn) {
    print_warning("agent channel: " + why +
                  "; every request off the allow list is denied from now on");
  }
  // Open questions are denied (under the lock: a ticket's answer only posts to the
  // proxy's io_context, it never calls back in here).
  for (auto& [id, ticket] : pending_) ticket->answer(proxy::AskAnswer::kDeny);
  pending_.clear();
  out_.clear();
  out_bytes_ = 0;
  // The harness sees the end at once (its reads end, its writes fail), not when vigil exits.
  if (fd_) ::shutdown(fd_.get(), SHUT_RDWR);
  early_blocked_.clear();
  ready_cv_.notify_all();
}

void AgentChannel::enqueue_locked(std::string line) {
  if (out_bytes_ + line.size() > kMaxOutBytes) {
    if (dropped_++ == 0) {
      complain_locked("the harness is not reading: 4 MiB of messages wait; what comes next is "
                      "dropped (a question is denied)");
    }
    return;
  }
  out_bytes_ += line.size();
  out_.push_back(std::move(line));
}

void AgentChannel::ask(const std::shared_ptr<proxy::AskTicket>& ticket) {
  const proxy::AskQuestion& q = ticket->question();
  {
    std::lock_guard lock(mu_);
    // Questions the proxy already ended (its deadline, the request gone) are not kept.
    std::erase_if(pending_, [](const auto& p) { return p.second->result().has_value(); });
    std::string refused;
    if (closed_) {
      refused = "the channel is closed";
    } else if (!greeted_) {
      refused = "the harness has not sent its hello";
    } else if (pending_.size() >= kMaxPending) {
      refused = std::to_string(kMaxPending) + " questions are already open";
    } else {
      const std::string id = "pr_" + std::to_string(next_request_++);
      const std::size_t before = out_.size();
      enqueue_locked(chan::permission_request_line(id, q.host, q.port, q.entry(),
                                                   events::to_string(q.proto)));
      if (out_.size() == before) {
        refused = "the harness is not reading its messages";
      } else {
        pending_.emplace(id, ticket);
      }
    }
    if (refused.empty()) {
      wake();
      return;
    }
    // vigil's own deny, not the harness's: its blocked notice is sent. A closed channel
    // said so once already.
    if (!closed_) complain_locked("not asked about " + q.entry() + " (" + refused + "): denied");
  }
  ticket->answer(proxy::AskAnswer::kDeny);
}

void AgentChannel::on_event(const events::Event& e) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  violations_.add(e);
  const auto& denied = violations_.denied();
  for (; sent_denied_ < denied.size(); ++sent_denied_) {
    const Violation& v = denied[sent_denied_];
    // The harness's own deny is its decision, not news to it (srt does the same).
    if (v.kind == Violation::Kind::kNet && denied_by_harness_.count(v.target) != 0) continue;
    notify_blocked(v, false);
  }
  const auto& moved = violations_.quarantined();
  for (; sent_quarantined_ < moved.size(); ++sent_quarantined_) {
    notify_blocked(moved[sent_quarantined_], true);
  }
}

void AgentChannel::notify_blocked(const Violation& v, bool quarantined) {
  std::string line = chan::blocked_line(v, quarantined);
  if (!greeted_) {
    if (early_blocked_.size() < chan::kMaxQueuedBlocked) early_blocked_.push_back(std::move(line));
    return;
  }
  enqueue_locked(std::move(line));
  wake();
}

void AgentChannel::loop() {
  for (;;) {
    bool want_write = false;
    {
      std::lock_guard lock(mu_);
      const auto now = std::chrono::steady_clock::now();
      if (closed_) return;
      if (stopping_ && (out_.empty() || now >= stop_by_)) {
        if (!out_.empty()) complain_locked("messages left unwritten at the end of the run");
        close_locked("the run ended", /*warn=*/false);
        return;
      }
      want_write = !out_.empty();
      if (!want_write) last_write_progress_ = now;
      if (want_write && now - last_write_progress_ > kWriteStall) {
        close_locked("the harness has read nothing for 10 s");
        return;
      }
    }
    pollfd fds[2] = {{fd_.get(), static_cast<short>(POLLIN | (want_write ? POLLOUT : 0)), 0},
                     {wake_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, 200);
    if (n < 0 && errno != EINTR) {
      std::lock_guard lock(mu_);
      close_locked(std::string("poll failed: ") + std::strerror(errno));
      return;
    }
    if (n <= 0) continue;
    if (fds[1].revents & POLLIN) {
      std::uint64_t count = 0;
      (void)!::read(wake_.get(), &count, sizeof count);
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) read_some();
    if (fds[0].revents & POLLOUT) write_some();
  }
}

void AgentChannel::read_some() {
  char buf[64 * 1024];
  const ssize_t got = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
  std::vector<std::string> lines;
  {
    std::lock_guard lock(mu_);
    if (got == 0) {
      close_locked("the harness closed it");
      return;
    }
    if (got < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        close_locked(std::string("reading it failed: ") + std::strerror(errno));
      return;
    }
    if (!splitter_.feed(std::string_view(buf, static_cast<std::size_t>(got)), lines)) {
      close_locked("the harness sent a line longer than 1 MiB");
      return;
    }
  }
  for (const auto& line : lines) handle_line(line);
}

void AgentChannel::write_some() {
  std::lock_guard lock(mu_);
  while (!out_.empty()) {
    const std::string& front = out_.front();
    const ssize_t put = ::send(fd_.get(), front.data() + out_offset_, front.size() - out_offset_,
                               MSG_DONTWAIT | MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      close_locked(std::string("writing to it failed: ") + std::strerror(errno));
      return;
    }
    last_write_progress_ = std::chrono::steady_clock::now();
    out_offset_ += static_cast<std::size_t>(put);
    if (out_offset_ < front.size()) return;
    out_bytes_ -= front.size();
    out_.pop_front();
    out_offset_ = 0;
  }
}

void AgentChannel::handle_line(const std::string& line) {
  const chan::PeerMessage m = chan::parse_peer_line(line);
  if (m.kind == chan::PeerKind::kPermissionResponse) {
    answer(m);
    return;
  }
  std::lock_guard lock(mu_);
  if (closed_) return;
  switch (m.kind) {
    case chan::PeerKind::kHello:
      if (m.version != chan::kProtocolVersion) {
        complain_locked("the harness's hello is not protocol_version 1: it is not greeted");
        return;
      }
      if (greeted_) return;
      greeted_ = true;
      for (auto& b : early_blocked_) enqueue_locked(std::move(b));
      early_blocked_.clear();
      ready_cv_.notify_all();
      wake();
      return;
    case chan::PeerKind::kIgnored:
      return;  // a newer harness's message: not an error
    default:
      complain_locked("ignored a line from the harness: " + m.why);
      if (++bad_lines_ > kMaxBadLines) close_locked("too many lines that are not the protocol");
      return;
  }
}

void AgentChannel::answer(const chan::PeerMessage& m) {
  std::shared_ptr<proxy::AskTicket> ticket;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    const auto it = pending_.find(m.id);
    if (it == pending_.end()) {
      const auto n = chan::request_number(m.id);
      const bool asked = n && *n > 0 && *n < next_request_;
      complain_locked("ignored a permission_response for " +
                      std::string(asked ? "a question already answered or ended"
                                        : "an id vigil never asked") +
                      ": \"" + m.id.substr(0, 64) + "\"");
      if (++bad_lines_ > kMaxBadLines) close_locked("too many lines that are not the protocol");
      return;
    }
    ticket = std::move(it->second);
    pending_.erase(it);
    if (!m.allow && denied_by_harness_.size() < kMaxRemembered)
      denied_by_harness_.insert(ticket->question().entry());
  }
  if (!ticket->answer(m.allow ? proxy::AskAnswer::kOnce : proxy::AskAnswer::kDeny)) {
    std::lock_guard lock(mu_);
    complain_locked("the answer for " + m.id.substr(0, 64) +
                    " came after its request had ended (no answer in time): denied");
  }
}

}  // namespace vigil
