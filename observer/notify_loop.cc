#include "observer/notify_loop.h"
#include "observer/proc_dir.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

#include "filters/syscall_names.h"
#include "observer/emulate.h"
#include "observer/event_line.h"
#include "observer/idle_threads.h"
#include "observer/protected_names.h"
#include "observer/unix_broker.h"
#include "observer/unix_rules.h"

namespace vigil::init {
namespace {

std::string read_link(const char* path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path, buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n))
                                                      : std::string();
}

std::string caller_cwd_name(pid_t pid) {
  return read_link((proc_dir(pid) + "/cwd").c_str());
}

// Field 4 of /proc/PID/stat, after the parenthesised command name (which may hold spaces
// and parentheses itself: the last ')' ends it).
long parent_of(pid_t pid) {
  char buf[512];
  if (read_proc_file(pid, "stat", buf, sizeof buf) == 0) return 0;
  const char* close_paren = std::strrchr(buf, ')');
  if (close_paren == nullptr) return 0;
  char state = 0;
  long ppid = 0;
  return std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 ? ppid : 0;
}

std::int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}


}  // namespace


Result<Observer> Observer::create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                  const ObserverOptions& options) {
  auto adopted = NotifyListener::adopt(std::move(listener));
  if (!adopted.ok()) return adopted.error();
  return create(std::make_shared<NotifyListener>(std::move(*adopted)), events_fd,
                std::move(mounts), options);
}

Result<Observer> Observer::create(std::shared_ptr<NotifyChannel> listener, int events_fd,
                                  std::vector<Mount> mounts, const ObserverOptions& options) {
  Observer o;
  o.listener_ = std::move(listener);
  o.events_fd_ = events_fd;
  o.mounts_ = std::move(mounts);
  o.options_ = options;
  o.shared_ = std::make_shared<Shared>();
  o.shared_->refused_names = options.refused_names;
  o.shared_->refused_globs = options.refused_globs;
  for (const WriteSyscall& row : write_syscalls()) {
    if (auto nr = native_syscall_number(row.name)) o.table_[*nr] = &row;
  }
  for (const OrderedSyscall& row : ordered_syscalls()) {
    if (auto nr = native_syscall_number(row.name)) o.ordered_nrs_.push_back(*nr);
  }
  if (options.unix_broker || options.capture_route) {
    o.connect_nr_ = native_syscall_number("connect").value_or(-1);
    if (options.unix_broker) o.socket_nr_ = native_syscall_number("socket").value_or(-1);
  }
  // Linux 6.6+: the kernel hands the CPU straight from the caller to us and back (no
  // trip through the scheduler to another CPU), about 9x cheaper round trips on this
  // kind of VM. On older kernels the ioctl fails and nothing changes. Off only to
  // measure what it buys ("vigil": {"observer": {"syncWakeUp": false}}).
  if (options.sync_wake_up) o.stats_.sync_wake_up = o.listener_->set_sync_wake_up();
  // vigil-init creates files for the command: the caller's umask is applied by hand
  // (observer/emulate.h), so its own must not be applied on top.
  ::umask(0);
  if (options.overflow == Overflow::kDrop)
    ::fcntl(events_fd, F_SETFL, ::fcntl(events_fd, F_GETFL) | O_NONBLOCK);
  o.buffer_.reserve(kEventBufferBytes + 8192);
  if (options.capture_fd >= 0) {
    o.capture_ = std::make_unique<Capture>(UniqueFd(options.capture_fd), options.capture_caps,
                                           /*best_effort=*/!options.gatekeeper);
    o.capture_->skip_below(options.capture_skip);
  }
  return o;
}

int Observer::fd() const { return listener_->fd(); }

bool Observer::on_ready(short revents) {
  if (revents & POLLIN) {
    handle_one();
    return true;
  }
  return (revents & (POLLHUP | POLLERR | POLLNVAL)) == 0;
}

void Observer::handle_one() {
  Notification n;
  if (!listener_->receive(&n)) return;  // raced away
  take_pending();
  settle_execs(n.pid);  // a new call from this pid: its earlier exec is done
  if (std::find(ordered_nrs_.begin(), ordered_nrs_.end(), n.nr) != ordered_nrs_.end()) {
    // flock, or an fcntl lock/lease command (ordered_syscalls()): trapped only so that the
    // kernel runs it after this thread closed its copy of every file it opened for a
    // caller, which it did before this notification was read. Nothing to judge.
    listener_->answer_continue(n.id);
    return;
  }
  if (n.nr >= 0 && n.nr == connect_nr_ && options_.capture_route) {
    handle_inet(n);
    return;
  }
  if (n.nr >= 0 && (n.nr == connect_nr_ || n.nr == socket_nr_)) {
    handle_unix(n);
    return;
  }
  const auto it = table_.find(n.nr);
  const WriteSyscall* row = it != table_.end() ? it->second : nullptr;
  if (row == nullptr) {
    // The filter trapped a call this loop has no rule for (the program and vigil-init's
    // options disagree): refused, never continued, since CONTINUE would grant what the
    // filter meant to put before a rule.
    ++stats_.unhandled;
    listener_->answer(n.id, -1, ENOSYS);
    return;
  }
  CallPlan plan = plan_call(n, row, *listener_);
  // An open/openat without a write bit reaches us only under vigil.observer.reads, to be
  // told (hidden_reads.h): the kernel then runs it as it would have without the trap
  // (CONTINUE grants nothing the filter did not already allow), even when its path could
  // not be read here (a non-dumpable caller must not lose its reads to the telling).
  // (No write bit at all, as the filter tests them: an O_PATH open that sets one was
  // trapped for that bit before reads existed, and is still performed as it was.)
  constexpr std::uint64_t kWriteBits = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  const bool read_only_trap = row != nullptr && row->trap == Trap::kOpenFlags &&
                              (plan.flags & kWriteBits) == 0;
  if (read_only_trap && plan.kind != CallPlan::Kind::kGone) {
    if (plan.kind == CallPlan::Kind::kPerform) tell_read(n, plan);
    listener_->answer_continue(n.id);
    return;
  }
  switch (plan.kind) {
    case CallPlan::Kind::kGone:
      ++stats_.vanished;
      return;
    case CallPlan::Kind::kFail:
      listener_->answer(n.id, -1, plan.error);
      record_write(&buffer_, mounts_, n, plan, Performed{}, plan.error,
                   plan.error == EPERM ? plan.why : std::string(), false);
      queued();
      return;
    case CallPlan::Kind::kContinue:
      on_continue(n, plan);
      return;
    case CallPlan::Kind::kPerform:
      break;
  }
  // openat2 is trapped always (its flags are in memory): a read-only one is performed
  // as before, and told first when it lands on a hidden path.
  if (plan.row->emulation == Emulation::kOpen && !plan.writes) tell_read(n, plan);
  if (plan.row->emulation == Emulation::kOpen && !options_.gatekeeper) {
    witness_open(n, plan);
    return;
  }
  perform_and_answer(n, std::move(plan));
}

void Observer::witness_open(const Notification& n, const CallPlan& plan) {
  // Kernels before 5.14 cannot install an fd as the answer: the open continues and is
  // witnessed (best-effort: the kernel reads the path again after this answer).
  Performed named;
  named.resolved = name_of(plan.target, n.pid);
  if (plan.writes && (plan.flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL))
    keep(AT_FDCWD, named.resolved, 0, (plan.flags & O_NOFOLLOW) == 0);
  listener_->answer_continue(n.id);
  if (plan.writes) {
    record_write(&buffer_, mounts_, n, plan, named, 0, "", /*witnessed=*/true);
    queued();
  }
}

void Observer::perform_and_answer(const Notification& n, CallPlan plan) {
  const Gate gate = [this, call = plan.row->emulation](const std::string& name,
                                                       const std::string& from) {
    std::string why = protected_name_refusal(mounts_, name, from, call);
    if (why.empty()) why = refused_name_refusal(options_.refused_names, name, call);
    if (why.empty()) why = refused_glob_refusal(options_.refused_globs, name);
    if (why.empty() && call == Emulation::kBind) why = listed_socket_refusal(options_.unix_sockets, name);
    return why;
  };
  const Keep keep_it{
      [this](int dir, const std::string& rest, std::uint64_t resolve, bool follow) {
        keep(dir, rest, resolve, follow);
      },
      [this](int fd, const std::string& name) {
        const std::size_t before = buffer_.size();
        capture_->keep_opened(fd, name, &buffer_);
        if (buffer_.size() != before) queued();
      }};
  Performed done = perform(plan, n.pid, false, &gate, &cwds_, capture_ ? &keep_it : nullptr);
  if (done.would_block) {
    // A FIFO open that waits for its peer: on a thread of its own, so that every other
    // process's calls go on meanwhile. It answers and records by itself.
    ++stats_.blocking;
    std::thread(run_blocking, listener_, shared_, mounts_, n, std::move(plan)).detach();
    return;
  }
  answer_and_record(*listener_, &buffer_, mounts_, n, plan, std::move(done));
  queued_if(plan);
}

void Observer::handle_unix(const Notification& n) {
  UnixCall call = prepare_unix_call(n, n.nr == connect_nr_, *listener_, options_.unix_sockets, &cwds_);
  if (call.step == UnixCall::Step::kConnect && call.blocking) {
    // A blocking connect() waits for the server to accept (a full backlog): on a thread
    // of its own, so every other process's calls go on meanwhile.
    ++stats_.blocking;
    auto c = std::make_shared<UnixCall>(std::move(call));  // std::function needs a copyable task
    run_on_idle_thread([listener = listener_, shared = shared_, n, c] {
      finish_unix_call(std::move(*c), n, *listener, &shared->lines, &shared->mu);
    });
    return;
  }
  const std::size_t before = buffer_.size();
  finish_unix_call(std::move(call), n, *listener_, &buffer_);
  if (buffer_.size() != before) queued();
}

void Observer::keep(int dir, const std::string& rest, std::uint64_t resolve, bool follow) {
  if (!capture_) return;
  const std::size_t before = buffer_.size();
  capture_->keep(dir, rest, resolve, follow, &buffer_);
  if (buffer_.size() != before) queued();
}

void Observer::queued_if(const CallPlan& plan) {
  if (plan.writes) queued();
}

bool Observer::install(NotifyChannel& listener, const Notification& n, Performed* done) {
  if (!done->fd) return true;
  const long got = listener.install_fd(n.id, done->fd.get(), done->cloexec);
  done->fd.reset();
  if (got >= 0) {
    done->value = got;
    return true;
  }
  // The caller gone meanwhile (ENOENT) gets nothing; the open still happened. Any other
  // failure (EMFILE in its table) is its result, and the call still waits for it.
  if (got == -ENOENT) return false;
  done->error = static_cast<int>(-got);
  take_back(done);
  return true;
}

void Observer::answer_and_record(NotifyChannel& listener, std::string* out,
                                 const std::vector<Mount>& mounts, const Notification& n,
                                 const CallPlan& plan, Performed done) {
  // An open's fd is the answer itself (ADDFD_FLAG_SEND): one ioctl and one hand-off to the
  // caller per trapped write fewer than installing it and answering after. Our copy is
  // closed just after, while the caller may already run on; the calls that could see it
  // in that moment (a flock, a lease, an exec of the file: ETXTBSY) are trapped too and so
  // read by this thread only after the close (ordered_syscalls(),
  // supervisor/core/events/syscall_table.h). Measured both ways in the same rounds
  // (docs/performance/gatekeeper-2.md): which is faster follows what a task switch costs on
  // the machine at the time. On 2026-12-02 SEND was 1.74-1.81x the bare notify loop
  // against 2.13-2.18x, its mechanism alone 1.68x against 2.41x (vigil_emulation_floor);
  // an earlier round had it the other way (2.57x against 1.77x). SEND is what #13 names.
  if (done.fd) {
    const long got = listener.answer_with_fd(n.id, done.fd.get(), done.cloexec);
    done.fd.reset();
    if (got >= 0) {
      done.value = got;
    } else if (got != -ENOENT) {
      // Not installed (EMFILE in the caller's table, say): the call still waits, and
      // that is its result. ENOENT: the caller is gone; the open still happened.
      done.error = static_cast<int>(-got);
      take_back(&done);  // a file it created, which the caller will never see
      listener.answer(n.id, -1, done.error);
    }
  } else {
    listener.answer(n.id, done.value, done.error);
  }
  if (!plan.writes) return;  // a read, a bind that makes no name: no event
  record_write(out, mounts, n, plan, done, done.error, done.why, false);
}

void Observer::run_blocking(std::shared_ptr<NotifyChannel> listener,
                            std::shared_ptr<Shared> shared, std::vector<Mount> mounts,
                            Notification n, CallPlan plan) {
  // Its own umask (and cwd), so that the caller's, put in force for a creating call
  // (caller_view::CallerUmask), is never the loop's at the same moment.
  ::unshare(CLONE_FS);
  ::umask(0);
  const Gate gate = [&mounts, &shared, call = plan.row->emulation](const std::string& name,
                                                                   const std::string& from) {
    std::string why = protected_name_refusal(mounts, name, from, call);
    if (why.empty()) why = refused_name_refusal(shared->refused_names, name, call);
    if (why.empty()) why = refused_glob_refusal(shared->refused_globs, name);
    return why;
  };
  Performed done = perform(plan, n.pid, /*may_block=*/true, &gate);
  // Installed, our copy closed, then answered: this thread runs beside the loop, which may
  // meanwhile read and continue a flock or a lease of this very file, so its copy must be
  // gone before the caller can run on. These opens waited for a FIFO's peer
  // or a lease's break; one ioctl more is nothing beside that.
  const bool answer = install(*listener, n, &done);
  // The line goes to the loop before the answer: once every process has ended the loop
  // writes what it holds and exits, and the caller's answer can be what lets the last
  // one end, so a line queued after it could be left behind.
  if (plan.writes) {
    std::string line;
    record_write(&line, mounts, n, plan, done, done.error, done.why, false);
    const std::lock_guard<std::mutex> lock(shared->mu);
    shared->lines += line;
  }
  if (answer) listener->answer(n.id, done.value, done.error);
}

// Records the execs that have happened. `caller`: a pid that just made another call
// (its exec is over); 0: each whose /proc/PID/exe changed or whose process is gone; -1:
// all (the end). What ran is /proc/PID/exe after the exec, not the name read before it.
void Observer::settle_execs(pid_t caller) {
  for (auto it = pending_execs_.begin(); it != pending_execs_.end();) {
    const std::string dir = proc_dir(it->pid);
    const std::string now = read_link((dir + "/exe").c_str());
    const bool gone = ::access(dir.c_str(), F_OK) != 0;
    const bool done = caller == -1 || it->pid == caller || gone || (!now.empty() && now != it->before);
    if (!done) {
      it->at_ms = now_ms();  // not yet: looked at again a while later, not in a spin
      ++it;
      continue;
    }
    EventLine ev(&buffer_, "proc.exec");
    ev.number("pid", it->pid).number("ppid", it->ppid).bytes_array("argv", it->argv).bytes("cwd", it->cwd);
    if (it->truncated) ev.boolean("truncated", true);
    // Unreadable (a non-dumpable process, or gone): the name it was started by.
    ev.bytes("exe", !now.empty() && now != it->before ? now : it->claimed);
    ev.finish();
    queued();
    it = pending_execs_.erase(it);
  }
}

void Observer::take_pending() {
  const std::lock_guard<std::mutex> lock(shared_->mu);
  if (shared_->lines.empty()) return;
  for (char c : shared_->lines) stats_.events += c == '\n';
  buffer_ += shared_->lines;
  shared_->lines.clear();
  if (oldest_ms_ < 0) oldest_ms_ = 0;  // due now
}

void Observer::on_continue(const Notification& n, const CallPlan& plan) {
  if (plan.row == nullptr) {
    listener_->answer_continue(n.id);
    return;
  }
  if (plan.row->emulation == Emulation::kExec) {
    // The exec continues. What it names is resolved before the answer, while the
    // caller's /proc entry and fds are still its own: an fd exec (execveat AT_EMPTY_PATH,
    // /proc/self/fd/N, /dev/fd/N) by the fd's target ("/memfd:x (deleted)"). The record
    // waits until the exec has happened and takes /proc/PID/exe then (settle_execs).
    PendingExec e;
    e.pid = n.pid;
    const bool fd_exec = plan.on_fd || route_magic(plan.target.path, n.pid).kind ==
                                           MagicRoute::Kind::kCallerFd;
    e.claimed = plan.on_fd ? caller_fd_target(n.pid, plan.target.dirfd)
                           : name_of(plan.target, n.pid);
    e.before = read_link((proc_dir(n.pid) + "/exe").c_str());
    e.cwd = caller_cwd_name(n.pid);
    e.ppid = parent_of(n.pid);
    listener_->answer_continue(n.id);
    // execvp walks $PATH: attempts on names that do not exist fail with ENOENT and ran
    // nothing, so they are not part of the process record.
    if (!fd_exec && (e.claimed.empty() || ::access(e.claimed.c_str(), F_OK) != 0)) return;
    e.argv = plan.argv;
    e.truncated = plan.argv_truncated;
    e.at_ms = now_ms();
    pending_execs_.push_back(std::move(e));
    return;
  }
  // An fd-based call: the fd cannot change under the kernel. Its real target, from our
  // own copy of the caller's fd, before the answer.
  Performed named;
  named.resolved = caller_fd_target(n.pid, plan.target.dirfd);
  listener_->answer_continue(n.id);
  record_write(&buffer_, mounts_, n, plan, named, -1, "", false);
  queued();
}



// One fs.read line when the open lands on a hidden path. Before the answer: the caller's
// cwd and dirfd are read while it waits in its call.
void Observer::tell_read(const Notification& n, const CallPlan& plan) {
  if (options_.hidden.empty()) return;
  const auto hit = hidden_read(options_.hidden, plan, n.pid, &cwds_);
  if (!hit) return;
  EventLine(&buffer_, "fs.read")
      .number("pid", n.pid)
      .bytes("syscall", plan.row->name)
      .bytes("path", plan.target.path)
      .bytes("resolved", hit->resolved)
      .bytes("reason", "hidden by " + hit->rule->origin)
      .finish();
  queued();
}

void Observer::queued() {
  ++stats_.events;
  if (oldest_ms_ < 0) oldest_ms_ = now_ms();
  if (buffer_.size() >= kEventBufferBytes) {
    ++stats_.held;
    flush();
  }
}

int Observer::flush_timeout_ms() const {
  if (buffer_.empty()) {
    if (pending_execs_.empty()) return -1;
    // An exec record waits for its exec to happen: looked at again after a while.
    std::int64_t due = pending_execs_.front().at_ms;
    for (const PendingExec& e : pending_execs_) due = std::min(due, e.at_ms);
    const std::int64_t left = due + options_.flush_after_ms - now_ms();
    return left <= 0 ? 0 : static_cast<int>(left);
  }
  const std::int64_t left = oldest_ms_ + options_.flush_after_ms - now_ms();
  return left <= 0 ? 0 : static_cast<int>(left);
}

void Observer::flush() {
  take_pending();
  settle_execs(0);
  oldest_ms_ = -1;
  std::size_t off = 0;
  while (off < buffer_.size() && !reader_gone_) {
    const ssize_t n = ::write(events_fd_, buffer_.data() + off, buffer_.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // EAGAIN: kDrop and the pipe is full. Anything else (EPIPE): the supervisor is gone;
    // the command still runs to completion, and from here on every line is counted lost.
    if (!(n < 0 && errno == EAGAIN)) reader_gone_ = true;
    break;
  }
  // A line cut by a short write must still be completed, or the supervisor would read
  // its head glued to the next line: its rest stays, and goes first next time (and a
  // rest still owed from an earlier cut is kept the same way).
  std::size_t keep = off;
  if (!reader_gone_ && off < buffer_.size()) {
    if (off < owed_) {
      keep = owed_;
    } else if (off > 0 && buffer_[off - 1] != '\n') {
      keep = buffer_.find('\n', off) + 1;
    }
  }
  for (std::size_t i = keep; i < buffer_.size(); ++i) stats_.dropped += buffer_[i] == '\n';
  owed_ = keep - off;
  buffer_.resize(keep);
  buffer_.erase(0, off);
  if (!buffer_.empty()) oldest_ms_ = now_ms();
}

void Observer::finish() {
  take_pending();
  settle_execs(-1);
  EventLine(&buffer_, "observer.stats")
      .unsigned_number("events", stats_.events)
      .unsigned_number("dropped", stats_.dropped)
      .unsigned_number("held", stats_.held)
      .finish();
  // Blocking for this last line even in kDrop: it is the count of what was lost.
  if (options_.overflow == Overflow::kDrop)
    ::fcntl(events_fd_, F_SETFL, ::fcntl(events_fd_, F_GETFL) & ~O_NONBLOCK);
  flush();
}

}  // namespace vigil::init
