// The observer: vigil-init's side of the USER_NOTIF listener (the gatekeeper). For each
// trapped call it reads the arguments from the caller's memory once
// (observer/call_plan.h), performs a path-based call itself on exactly those bytes from
// the caller's view (observer/emulate.h) and answers with the call's own result (an open's
// fd installed with SECCOMP_ADDFD_FLAG_SEND), then queues one JSON event line whose
// verdict is that result. Execs and fd-based calls continue (nothing they read can race).
// On kernels before 5.14 (no ADDFD_FLAG_SEND) opens continue and are only witnessed.
//
// Lossless by default: events are buffered up to a bound, and a full buffer is written out
// with a blocking write before the next notification is taken, so a slow supervisor
// holds the workload instead of losing events. With Overflow::kDrop the write is
// non-blocking and what does not fit is counted as dropped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "filters/seccomp_notify.h"
#include "observer/call_plan.h"
#include "observer/capture.h"
#include "observer/capture_route.h"
#include "observer/emulate.h"
#include "observer/fake_names.h"
#include "observer/hidden_reads.h"
#include "observer/mount_table.h"
#include "observer/refused_names.h"
#include "observer/write_record.h"
#include "supervisor/core/events/syscall_table.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

enum class Overflow { kBlock, kDrop };

struct ObserverOptions {
  Overflow overflow = Overflow::kBlock;
  bool sync_wake_up = true;  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP where the kernel has it
  // Lines wait at most this long before they go to the supervisor. Every round trip
  // leaves the observer idle (the caller runs next), so "write when idle" would be one
  // write per event; batching is what keeps a trapped call at a few microseconds.
  int flush_after_ms = 20;
  // Opens are performed and their fd installed (Linux 5.14+); false: witnessed only.
  bool gatekeeper = true;
  // Pre-images (observer/capture.h): the store directory's fd, adopted by the observer
  // (-1: no capture), and the caps.
  int capture_fd = -1;
  CaptureCaps capture_caps;
  std::vector<std::string> capture_skip;  // trees of the sandbox's own: no pre-images

  // Missing denyWrite targets refused when created (gatekeeper only; refused_names.h).
  std::vector<RefusedName> refused_names;
  // Deny globs: names they match created after launch refused (gatekeeper only; ditto).
  std::vector<RefusedGlob> refused_globs;
  // vigil.observer.reads: the sandbox's read layout (hidden_reads.h); reads landing on a
  // hidden path are told with an fs.read line. Empty: none told.
  std::vector<HiddenPath> hidden;
  // network.allowUnixSockets: connect() and AF_UNIX datagram socket() are brokered
  // (observer/unix_broker.h). Set with the broker's filter (filters/filter_specs.h).
  std::vector<std::string> unix_sockets;
  // The broker's filter is installed (--unix-broker): connect() and AF_UNIX socket() reach
  // vigil-init, which decides them against `unix_sockets` (an empty list refuses every
  // unix socket, with a line). Set explicitly, never inferred from the list: a trap with
  // no handler must not fall through to CONTINUE.
  bool unix_broker = false;
  // vigil.network.capture (--net-capture-fd): connect() of TCP sockets is carried through
  // the proxy (observer/inet_broker.h) along `capture_route`, and fake addresses map back
  // through `fake_names` (the DNS stub's table, observer/fake_names.h; the loop's thread
  // only). Both set together.
  std::shared_ptr<CaptureRoute> capture_route;
  std::shared_ptr<FakeNames> fake_names;
};

struct ObserverStats {
  std::uint64_t events = 0;    // lines produced
  std::uint64_t dropped = 0;   // lines lost (kDrop only)
  std::uint64_t held = 0;      // times the workload waited for the supervisor
  std::uint64_t vanished = 0;  // notifications whose caller was gone before we read it
  std::uint64_t blocking = 0;  // opens that waited on a thread of their own (FIFOs)
  std::uint64_t unhandled = 0;  // trapped calls with no rule here, refused (ENOSYS)
  bool sync_wake_up = false;   // the kernel took SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
};

class Observer {
 public:
  // `events_fd`: where event lines go (the supervisor's pipe). `mounts`: the sandbox's.
  static Result<Observer> create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                 const ObserverOptions& options);
  // The same loop over any channel: the kernel's listener above, or a test's fake.
  static Result<Observer> create(std::shared_ptr<NotifyChannel> listener, int events_fd,
                                 std::vector<Mount> mounts, const ObserverOptions& options);
  int fd() const;

  // Called with poll()'s revents for the listener: answers one notification. Returns
  // false when the listener is gone (every filtered process has exited). Wait for the
  // listener with poll(), not epoll: only poll passes the kernel's same-CPU wake-up on.
  bool on_ready(short revents);
  // Milliseconds until the buffered lines are due (0: now; -1: nothing buffered).
  int flush_timeout_ms() const;
  // Writes out what is buffered (blocking unless kDrop). Call when due and at exit.
  void flush();
  // Appends the observer.stats line and flushes.
  void finish();
  const ObserverStats& stats() const { return stats_; }

 private:
  Observer() = default;
  // Lines from the threads that perform blocking opens, merged into buffer_ by the loop.
  struct Shared {
    std::mutex mu;
    std::string lines;
    std::vector<RefusedName> refused_names;  // set once at create(), read-only after
    std::vector<RefusedGlob> refused_globs;  // ditto
  };
  void handle_one();
  void witness_open(const Notification& n, const CallPlan& plan);  // kernels before 5.14
  void perform_and_answer(const Notification& n, CallPlan plan);    // the gatekeeper's path
  void handle_unix(const Notification& n);  // observer/unix_broker.h
  void handle_inet(const Notification& n);  // observer/inet_broker.h (notify_connect.cc)
  void on_continue(const Notification& n, const CallPlan& plan);
  void tell_read(const Notification& n, const CallPlan& plan);
  void queued();  // a line was appended to buffer_
  void queued_if(const CallPlan& plan);
  void take_pending();
  void settle_execs(pid_t caller);
  struct PendingExec {
    pid_t pid = 0;
    long ppid = 0;
    std::vector<std::string> argv;
    bool truncated = false;
    std::string cwd, claimed, before;
    std::int64_t at_ms = 0;  // when it was last looked at
  };
  std::vector<PendingExec> pending_execs_;
  // Puts an open's fd (`done->fd`) in the caller and closes our copy, before the answer
  // (the blocking threads: run_blocking says why). Whether the caller still waits for
  // answer(n.id, done->value, done->error): false only for a caller gone meanwhile.
  static bool install(NotifyChannel& listener, const Notification& n, Performed* done);
  static void answer_and_record(NotifyChannel& listener, std::string* out,
                                const std::vector<Mount>& mounts, const Notification& n,
                                const CallPlan& plan, Performed done);
  static void run_blocking(std::shared_ptr<NotifyChannel> listener,
                           std::shared_ptr<Shared> shared, std::vector<Mount> mounts,
                           Notification n, CallPlan plan);

  std::shared_ptr<NotifyChannel> listener_;
  std::shared_ptr<Shared> shared_;
  int events_fd_ = -1;
  std::vector<Mount> mounts_;
  ObserverOptions options_;
  std::map<int, const WriteSyscall*> table_;  // syscall nr -> its row
  std::vector<int> ordered_nrs_;              // ordered_syscalls(): continued in order
  int connect_nr_ = -1, socket_nr_ = -1;      // brokered when unix_broker is set
  std::unique_ptr<Capture> capture_;          // pre-images; null: not captured
  void keep(int dir, const std::string& rest, std::uint64_t resolve, bool follow);
  std::string buffer_;
  CwdCache cwds_;  // callers' cwds, for the calls this thread performs
  ObserverStats stats_;
  std::int64_t oldest_ms_ = -1;  // when the oldest buffered line was queued
  bool reader_gone_ = false;     // a write failed for good: the supervisor is gone
  std::size_t owed_ = 0;         // bytes at the front of buffer_: the rest of a cut line
};

inline constexpr std::size_t kEventBufferBytes = 256 * 1024;

}  // namespace vigil::init
