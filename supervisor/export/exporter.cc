#include "supervisor/export/exporter.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <optional>
#include <thread>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/export/export_spool.h"
#include "supervisor/export/export_status.h"

namespace vigil {
namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};
void on_stop(int) { g_stop.store(true); }

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

// The length of the whole frames ("LEN SP MSG") at the start of `bytes`; 0 when the first
// is not whole; nullopt when `bytes` does not start with a frame (a damaged spool).
std::optional<std::size_t> whole_frames(std::string_view bytes, std::size_t* first_len) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::size_t n = 0, i = at;
    while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9' && i - at < 10)
      n = n * 10 + static_cast<std::size_t>(bytes[i++] - '0');
    if (i == bytes.size()) break;
    if (i == at || bytes[i] != ' ') return std::nullopt;
    const std::size_t len = i + 1 - at + n;
    if (at == 0 && first_len != nullptr) *first_len = len;
    if (at + len > bytes.size()) break;
    at += len;
  }
  return at;
}

// The syslog side: the spool, the connection, what is in flight.
class SyslogDrain {
 public:
  SyslogDrain(const ExporterOptions& o, Spool* spool) : o_(o), spool_(spool) {}
  bool connected() const { return client_ != nullptr; }
  // One round of sending; true when the spool's acked offset moved.
  Result<bool> step();

 private:
  struct InFlight {
    std::uint64_t end = 0;
    std::optional<Clock::time_point> tcp_acked;
  };
  void drop(const std::string& why);
  const ExporterOptions& o_;
  Spool* spool_;
  std::unique_ptr<SyslogClient> client_;
  std::deque<InFlight> inflight_;
  std::uint64_t sent_ = 0;
  Clock::time_point next_try_{};
  bool warned_down_ = false;
};

void SyslogDrain::drop(const std::string& why) {
  print_warning("export: the collector " + sink_name(o_) + " is gone (" + why + "): " +
                std::to_string(spool_->pending()) +
                " byte(s) not yet confirmed stay in the spool and are sent again");
  client_.reset();
  inflight_.clear();
  sent_ = spool_->acked();
  next_try_ = Clock::now() + std::chrono::milliseconds(500);
}

Result<bool> SyslogDrain::step() {
  const auto now = Clock::now();
  if (!client_) {
    if (now < next_try_) return false;
    auto c = SyslogClient::connect(o_.syslog, o_.timeout);
    if (!c) {
      if (c.error().code == Errc::kInvalidPolicy || c.error().code == Errc::kUnsupported)
        return c.error();
      if (!warned_down_) print_warning("export: " + c.error().message + "; records wait in the spool");
      warned_down_ = true;
      next_try_ = now + std::chrono::seconds(1);
      return false;
    }
    if (warned_down_) print_notice("export: connected to " + sink_name(o_) + ", draining the spool");
    warned_down_ = false;
    client_ = std::move(*c);
    sent_ = spool_->acked();
    inflight_.clear();
  }
  if (!client_->alive()) {
    drop("it closed the connection");
    return false;
  }
  for (int round = 0; sent_ < spool_->size() && round < 16; ++round) {
    auto chunk = spool_->read(sent_, 256 * 1024);
    VIGIL_TRY(chunk);
    std::size_t first = 0;
    auto whole = whole_frames(*chunk, &first);
    if (!whole) return make_error(Errc::kRefused, "the export spool is damaged: stop the exporter and remove it");
    if (*whole == 0) {
      chunk = spool_->read(sent_, first);
      VIGIL_TRY(chunk);
      whole = chunk->size();
    }
    if (auto sent = client_->send(std::string_view(*chunk).substr(0, *whole), o_.timeout); !sent) {
      drop(sent.error().message);
      return false;
    }
    sent_ += *whole;
    inflight_.push_back({sent_, std::nullopt});
  }
  // Acknowledged by the peer's TCP: every byte up to the entry's end left the send queue.
  // Over TLS the queue holds records, not these bytes: only an empty queue counts.
  const std::uint64_t queued = client_->unacked();
  for (auto& f : inflight_) {
    const bool taken = o_.syslog.tls ? queued == 0 : queued <= sent_ - f.end;
    if (!f.tcp_acked && taken) f.tcp_acked = now;
  }
  std::uint64_t upto = spool_->acked();
  while (!inflight_.empty() && inflight_.front().tcp_acked &&
         now - *inflight_.front().tcp_acked >= o_.settle && client_->alive()) {
    upto = inflight_.front().end;
    inflight_.pop_front();
  }
  if (upto == spool_->acked()) return false;
  VIGIL_TRY_VOID(spool_->ack(upto));
  if (spool_->size() == 0) {
    sent_ = 0;
    inflight_.clear();
  }
  return true;
}

Result<UniqueFd> open_state_dir(const std::string& dir) {
  ::mkdir(dir.c_str(), 0700);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return system_error("cannot open the export state directory " + dir + " (create it, mode 0700)");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + dir);
  if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
    return make_error(Errc::kRefused, dir + " is not a directory of ours closed to others: refusing "
                                            "to keep the export cursor and spool there");
  return fd;
}

Result<UniqueFd> open_journald(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("cannot make a socket for journald");
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) return make_error(Errc::kInvalidPolicy, "journald socket path too long: " + path);
  path.copy(a.sun_path, path.size());
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    return system_error("journald is not reachable at " + path +
                        " (is systemd-journald running here? else choose another --to)");
  }
  return fd;
}

}  // namespace

std::string sink_name(const ExporterOptions& o) {
  switch (o.sink) {
    case ExporterOptions::Sink::kStdout: return "stdout";
    case ExporterOptions::Sink::kFile: return o.file;
    case ExporterOptions::Sink::kJournald: return "journald:" + o.journald_socket;
    case ExporterOptions::Sink::kSyslog:
      return std::string(o.syslog.tls ? "syslog+tls://" : "syslog://") + o.syslog.host + ":" +
             std::to_string(o.syslog.port);
  }
  return "";
}

int run_exporter(const ExporterOptions& o) {
  auto dir = open_state_dir(o.state_dir);
  if (!dir) return report(dir.error());
  const std::string cursor_path = o.state_dir + "/cursor.json";
  const std::string status_path = o.state_dir + "/status.json";
  auto cursor = load_cursor(cursor_path);
  if (!cursor) return report(cursor.error());
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // Below the sandboxed commands it ships the records of: on a busy machine the exporter
  // waits, never they (it catches up from the logs, which stay on disk).
  (void)::setpriority(PRIO_PROCESS, 0, 10);

  std::optional<Spool> spool;
  std::optional<SyslogDrain> drain;
  UniqueFd out;
  if (o.sink == ExporterOptions::Sink::kSyslog) {
    auto s = Spool::open(o.state_dir + "/spool", o.spool_max, cursor->spool_acked);
    if (!s) return report(s.error());
    spool.emplace(std::move(*s));
    drain.emplace(o, &*spool);
  } else if (o.sink == ExporterOptions::Sink::kFile) {
    out = UniqueFd(::open(o.file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!out) return report(system_error("cannot open the export file " + o.file));
  } else if (o.sink == ExporterOptions::Sink::kJournald) {
    auto j = open_journald(o.journald_socket);
    if (!j) return report(j.error());
    out = std::move(*j);
  }
  const int out_fd = o.sink == ExporterOptions::Sink::kStdout ? 1 : out.get();

  LogFollower follower(o.follow, *cursor);
  ExportStatus status;
  status.pid = ::getpid();
  status.target = sink_name(o);
  status.spool_cap = o.spool_max;
  std::string batch;  // JSON lines or frames of this pass
  std::string failed;
  Clock::time_point last_full_warning{};
  auto emit = [&](std::vector<ExportItem>& items) -> bool {
    std::string piece;
    for (const auto& it : items) {
      if (it.mark == ExportItem::Mark::kBroken) ++status.broken_sessions;
      if (it.mark == ExportItem::Mark::kLost) ++status.lost_marks;
      if (it.mark != ExportItem::Mark::kNone) print_warning("export: session " + it.session + " " + std::string(to_string(it.mark)) + " at seq " + std::to_string(it.seq) + ": " + it.why);
      switch (o.sink) {
        case ExporterOptions::Sink::kSyslog: piece += octet_frame(syslog_message(it)); break;
        case ExporterOptions::Sink::kJournald: {
          const std::string d = journald_datagram(it);
          if (::send(out_fd, d.data(), d.size(), 0) < 0) {
            failed = std::string("journald refused a record: ") + std::strerror(errno);
            return false;
          }
          break;
        }
        default:
          if (auto line = export_json_line(it); !line.empty()) piece += line + "\n";
      }
    }
    const bool lone = batch.empty() && spool && spool->pending() == 0;
    if (spool && !lone && !spool->has_room(batch.size() + piece.size())) {
      // This pass filled the room under the cap: it stops here, and its batch goes to the
      // file. FULL only when what the file already holds is not being taken (the
      // collector is away), not when one pass read a lot from logs written in a burst.
      const bool backlogged = spool->pending() * 2 > spool->cap();
      if (!backlogged) return false;
      if (!spool->full() || Clock::now() - last_full_warning > std::chrono::seconds(60)) {
        print_error("export: the spool is FULL (" + std::to_string(spool->pending()) + " of " +
                    std::to_string(spool->cap()) + " bytes): " + sink_name(o) +
                    " is not taking records; reading session logs is paused until it does");
        last_full_warning = Clock::now();
        if (!spool->full()) status.full_since = now_s();
      }
      spool->set_full(true);
      return false;
    }
    batch += piece;
    return true;
  };

  std::int64_t last_status = 0;
  bool last_full = false;
  while (!g_stop.load()) {
    bool more = false;
    batch.clear();
    failed.clear();
    const auto before = follower.cursor();
    if (auto polled = follower.poll(emit, &more); !polled) return report(polled.error());
    if (!failed.empty()) print_warning("export: " + failed);
    Result<void> wrote;
    if (spool) {
      if (!batch.empty()) wrote = spool->append(batch);
    } else if (!batch.empty()) {
      wrote = write_all(out_fd, batch, "the export output");
      if (wrote && o.sink == ExporterOptions::Sink::kFile) ::fdatasync(out_fd);
    }
    if (!wrote) return report(wrote.error());
    bool acked = false;
    if (drain) {
      auto stepped = drain->step();
      if (!stepped) return report(stepped.error());
      acked = *stepped;
      if (spool->full() && spool->pending() * 2 < spool->cap()) {
        print_notice("export: the spool drained below half its cap: reading session logs again");
        spool->set_full(false);
      }
    }
    auto now_cursor = follower.cursor();
    now_cursor.spool_acked = spool ? spool->acked() : 0;
    if (now_cursor.logs != before.logs || acked) {
      if (auto saved = save_cursor(cursor_path, now_cursor); !saved) return report(saved.error());
    }
    const bool full = spool && spool->full();
    if (full != last_full || now_s() - last_status >= 2) {
      status.updated = now_s();
      status.connected = drain && drain->connected();
      status.spool_bytes = spool ? spool->pending() : 0;
      status.spool_full = full;
      if (!full) status.full_since = 0;
      (void)save_status(status_path, status);
      last_status = status.updated;
      last_full = full;
    }
    const bool idle = !more && batch.empty() && (!spool || spool->pending() == 0);
    if (o.until_idle && idle && now_cursor.logs == before.logs) break;
    if (!more && !(spool && spool->pending() > 0 && drain->connected())) std::this_thread::sleep_for(o.poll);
    else if (spool && spool->pending() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto final_cursor = follower.cursor();
  final_cursor.spool_acked = spool ? spool->acked() : 0;
  if (auto saved = save_cursor(cursor_path, final_cursor); !saved) return report(saved.error());
  return 0;
}

}  // namespace vigil
