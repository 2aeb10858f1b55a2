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

// One exporter: its sink (a spool and its drain for syslog, else a descriptor), the
// follower over the logs, the cursor and status files. Each pass reads what the logs
// gained (emit), hands it on (deliver) and records how far it got (checkpoint).
class Exporter {
 public:
  Exporter(const ExporterOptions& o, const ExportCursor& cursor)
      : o_(o),
        cursor_path_(o.state_dir + "/cursor.json"),
        status_path_(o.state_dir + "/status.json"),
        follower_(o.follow, cursor) {
    status_.pid = ::getpid();
    status_.target = sink_name(o);
    status_.spool_cap = o.spool_max;
  }
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // The sink: syslog's spool (from where the collector last acknowledged), the file, or
  // journald's socket.
  Result<void> open_sink(std::uint64_t spool_acked) {
    if (o_.sink == ExporterOptions::Sink::kSyslog) {
      auto s = Spool::open(o_.state_dir + "/spool", o_.spool_max, spool_acked);
      VIGIL_TRY(s);
      spool_.emplace(std::move(*s));
      drain_.emplace(o_, &*spool_);
    } else if (o_.sink == ExporterOptions::Sink::kFile) {
      out_ = UniqueFd(::open(o_.file.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!out_) return system_error("cannot open the export file " + o_.file);
    } else if (o_.sink == ExporterOptions::Sink::kJournald) {
      auto j = open_journald(o_.journald_socket);
      VIGIL_TRY(j);
      out_ = std::move(*j);
    }
    out_fd_ = o_.sink == ExporterOptions::Sink::kStdout ? 1 : out_.get();
    return {};
  }

  // One pass; false when --until-idle and nothing is left to do.
  Result<bool> pass() {
    bool more = false;
    batch_.clear();
    failed_.clear();
    const auto before = follower_.cursor();
    VIGIL_TRY_VOID(follower_.poll([this](std::vector<ExportItem>& items) { return emit(items); },
                                  &more));
    if (!failed_.empty()) print_warning("export: " + failed_);
    auto acked = deliver();
    VIGIL_TRY(acked);
    auto now_cursor = follower_.cursor();
    now_cursor.spool_acked = spool_ ? spool_->acked() : 0;
    if (now_cursor.logs != before.logs || *acked) VIGIL_TRY_VOID(save_cursor(cursor_path_, now_cursor));
    write_status();
    const bool idle = !more && batch_.empty() && (!spool_ || spool_->pending() == 0);
    if (o_.until_idle && idle && now_cursor.logs == before.logs) return false;
    if (!more && !(spool_ && spool_->pending() > 0 && drain_->connected()))
      std::this_thread::sleep_for(o_.poll);
    else if (spool_ && spool_->pending() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return true;
  }

  Result<void> save_final() {
    auto final_cursor = follower_.cursor();
    final_cursor.spool_acked = spool_ ? spool_->acked() : 0;
    return save_cursor(cursor_path_, final_cursor);
  }

 private:
  // The follower's callback: one line's items into this pass's batch (journald's are sent
  // at once); false to stop the pass here (the spool has no room).
  bool emit(std::vector<ExportItem>& items) {
    std::string piece;
    for (const auto& it : items) {
      if (it.mark == ExportItem::Mark::kBroken) ++status_.broken_sessions;
      if (it.mark == ExportItem::Mark::kLost) ++status_.lost_marks;
      if (it.mark != ExportItem::Mark::kNone)
        print_warning("export: session " + it.session + " " + std::string(to_string(it.mark)) +
                      " at seq " + std::to_string(it.seq) + ": " + it.why);
      switch (o_.sink) {
        case ExporterOptions::Sink::kSyslog: piece += octet_frame(syslog_message(it)); break;
        case ExporterOptions::Sink::kJournald: {
          const std::string d = journald_datagram(it);
          if (::send(out_fd_, d.data(), d.size(), 0) < 0) {
            failed_ = std::string("journald refused a record: ") + std::strerror(errno);
            return false;
          }
          break;
        }
        default:
          if (auto line = export_json_line(it); !line.empty()) piece += line + "\n";
      }
    }
    if (!room_for(piece.size())) return false;
    batch_ += piece;
    return true;
  }

  // Whether `more` bytes fit in the spool beside this pass's batch (always without one).
  bool room_for(std::size_t more) {
    const bool lone = batch_.empty() && spool_ && spool_->pending() == 0;
    if (!spool_ || lone || spool_->has_room(batch_.size() + more)) return true;
    // This pass filled the room under the cap: it stops here, and its batch goes to the
    // file. FULL only when what the file already holds is not being taken (the
    // collector is away), not when one pass read a lot from logs written in a burst.
    const bool backlogged = spool_->pending() * 2 > spool_->cap();
    if (!backlogged) return false;
    if (!spool_->full() || Clock::now() - last_full_warning_ > std::chrono::seconds(60)) {
      print_error("export: the spool is FULL (" + std::to_string(spool_->pending()) + " of " +
                  std::to_string(spool_->cap()) + " bytes): " + sink_name(o_) +
                  " is not taking records; reading session logs is paused until it does");
      last_full_warning_ = Clock::now();
      if (!spool_->full()) status_.full_since = now_s();
    }
    spool_->set_full(true);
    return false;
  }

  // The batch into the spool (then a drain step) or the output; true when the collector
  // acknowledged more.
  Result<bool> deliver() {
    if (spool_) {
      if (!batch_.empty()) VIGIL_TRY_VOID(spool_->append(batch_));
    } else if (!batch_.empty()) {
      VIGIL_TRY_VOID(write_all(out_fd_, batch_, "the export output"));
      if (o_.sink == ExporterOptions::Sink::kFile) ::fdatasync(out_fd_);
    }
    if (!drain_) return false;
    auto stepped = drain_->step();
    VIGIL_TRY(stepped);
    if (spool_->full() && spool_->pending() * 2 < spool_->cap()) {
      print_notice("export: the spool drained below half its cap: reading session logs again");
      spool_->set_full(false);
    }
    return *stepped;
  }

  // status.json, every 2 s and whenever the spool fills or drains (`vigil export --status`).
  void write_status() {
    const bool full = spool_ && spool_->full();
    if (full == last_full_ && now_s() - last_status_ < 2) return;
    status_.updated = now_s();
    status_.connected = drain_ && drain_->connected();
    status_.spool_bytes = spool_ ? spool_->pending() : 0;
    status_.spool_full = full;
    if (!full) status_.full_since = 0;
    (void)save_status(status_path_, status_);
    last_status_ = status_.updated;
    last_full_ = full;
  }

  const ExporterOptions& o_;
  const std::string cursor_path_;
  const std::string status_path_;
  std::optional<Spool> spool_;
  std::optional<SyslogDrain> drain_;  // over spool_
  UniqueFd out_;
  int out_fd_ = -1;
  LogFollower follower_;
  ExportStatus status_;
  std::string batch_;   // JSON lines or frames of this pass
  std::string failed_;  // why this pass stopped early, if it did
  Clock::time_point last_full_warning_{};
  std::int64_t last_status_ = 0;
  bool last_full_ = false;
};

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
  auto cursor = load_cursor(o.state_dir + "/cursor.json");
  if (!cursor) return report(cursor.error());
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // Below the sandboxed commands it ships the records of: on a busy machine the exporter
  // waits, never they (it catches up from the logs, which stay on disk).
  (void)::setpriority(PRIO_PROCESS, 0, 10);
  Exporter exporter(o, *cursor);
  if (auto opened = exporter.open_sink(cursor->spool_acked); !opened) return report(opened.error());
  while (!g_stop.load()) {
    auto going = exporter.pass();
    if (!going) return report(going.error());
    if (!*going) break;
  }
  if (auto saved = exporter.save_final(); !saved) return report(saved.error());
  return 0;
}

}  // namespace vigil
