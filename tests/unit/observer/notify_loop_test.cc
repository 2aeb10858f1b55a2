// The notify loop itself (observer/notify_loop.h) driven by a fake channel: notifications
// are handed in, answers are recorded, and the calls the loop performs are real (the
// "caller" is this test process, so the caller's view is our own /proc entry) under a
// fresh temporary directory. What the loop must do with each kind of trap:
// an unknown syscall is refused with ENOSYS, an ordered trap (flock) is let through
// untouched, a caller gone mid-call gets nothing more, the record is queued only after
// the answer, and a full event pipe either holds the loop (kBlock) or drops whole lines
// and counts them (kDrop).
#include "observer/notify_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace vigil::init {
namespace {

using std::string_literals::operator""s;

// A NotifyChannel with no kernel behind it. Caller memory is a set of regions (as in
// call_plan_test.cc); every answer is recorded with how it was given.
class FakeChannel : public NotifyChannel {
 public:
  enum class How { kContinue, kValue, kFd, kInstall };
  struct Answer {
    std::uint64_t id = 0;
    How how = How::kValue;
    std::int64_t value = 0;
    int error = 0;
  };
  std::deque<Notification> queue;
  std::map<std::uint64_t, std::string> regions;
  bool valid = true;      // whether the caller still waits in its call
  long fd_result = -1;    // answer_with_fd's result: -1 dup()s the fd (an install)
  std::vector<Answer> answers;
  std::vector<UniqueFd> installed;  // our dups of the fds handed over
  std::function<void()> on_answer;   // runs inside every answer, before it returns

  int fd() const override { return -1; }
  bool receive(Notification* out) override {
    if (queue.empty()) return false;
    *out = queue.front();
    queue.pop_front();
    return true;
  }
  bool answer_continue(std::uint64_t id) override { return note({id, How::kContinue, 0, 0}); }
  bool answer(std::uint64_t id, std::int64_t value, int error) override {
    return note({id, How::kValue, value, error});
  }
  long answer_with_fd(std::uint64_t id, int fd, bool) override {
    long got = fd_result;
    if (got == -1) {
      got = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      installed.emplace_back(static_cast<int>(got));
    }
    note({id, How::kFd, got, 0});
    return got;
  }
  long install_fd(std::uint64_t id, int fd, bool cloexec) override {
    const long got = answer_with_fd(id, fd, cloexec);
    answers.back().how = How::kInstall;
    return got;
  }
  bool set_sync_wake_up() override { return false; }
  bool id_valid(std::uint64_t) override { return valid; }
  long read(pid_t, std::uint64_t addr, void* buf, std::size_t len) override {
    for (const auto& [start, bytes] : regions) {
      if (addr < start || addr >= start + bytes.size()) continue;
      const std::size_t off = addr - start;
      const std::size_t n = std::min(len, bytes.size() - off);
      std::memcpy(buf, bytes.data() + off, n);
      return static_cast<long>(n);
    }
    errno = EFAULT;
    return -1;
  }

 private:
  bool note(Answer a) {
    answers.push_back(a);
    if (on_answer) on_answer();
    return valid;
  }
};

constexpr std::uint64_t kCwdArg = static_cast<std::uint64_t>(-100);  // AT_FDCWD

class NotifyLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    old_umask_ = ::umask(022);
    ::umask(old_umask_);
    char tmpl[] = "/tmp/vigil-notify-loop-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    read_end_.reset(p[0]);
    write_end_.reset(p[1]);
    channel_ = std::make_shared<FakeChannel>();
  }
  void TearDown() override {
    ::umask(old_umask_);  // Observer::create sets vigil-init's umask (0)
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  Observer make(ObserverOptions options = {}) {
    auto o = Observer::create(channel_, write_end_.get(), {}, options);
    EXPECT_TRUE(o.ok());
    return std::move(*o);
  }
  // A trapped call of this process: `nr` with its arguments; a path argument's bytes are
  // put in the fake caller's memory first (put()).
  void trap(long nr, std::initializer_list<std::uint64_t> args) {
    Notification n;
    n.id = ++next_id_;
    n.pid = ::getpid();
    n.nr = static_cast<int>(nr);
    int i = 0;
    for (auto a : args) n.args[i++] = a;
    channel_->queue.push_back(n);
  }
  std::uint64_t put(const std::string& text) {
    const std::uint64_t at = 0x10000 * (channel_->regions.size() + 1);
    channel_->regions[at] = text + '\0';
    return at;
  }
  // Everything in the pipe now.
  std::string drain() {
    std::string out;
    char buf[65536];
    const int fl = ::fcntl(read_end_.get(), F_GETFL);
    ::fcntl(read_end_.get(), F_SETFL, fl | O_NONBLOCK);
    for (;;) {
      const ssize_t n = ::read(read_end_.get(), buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    ::fcntl(read_end_.get(), F_SETFL, fl);
    return out;
  }
  static int count_lines(const std::string& s, const std::string& kind) {
    int n = 0;
    for (std::size_t at = 0; (at = s.find("\"kind\":\"" + kind + "\"", at)) != std::string::npos; ++at) ++n;
    return n;
  }

  mode_t old_umask_ = 0;
  std::string dir_;
  UniqueFd read_end_, write_end_;
  std::shared_ptr<FakeChannel> channel_;
  std::uint64_t next_id_ = 0;
};

TEST_F(NotifyLoop, AnUnknownSyscallIsRefusedWithEnosys) {
  Observer o = make();
  trap(SYS_getpid, {});
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 1u);
  EXPECT_EQ(channel_->answers[0].how, FakeChannel::How::kValue);  // never continued
  EXPECT_EQ(channel_->answers[0].value, -1);
  EXPECT_EQ(channel_->answers[0].error, ENOSYS);
  EXPECT_EQ(o.stats().unhandled, 1u);
  o.finish();
  EXPECT_EQ(count_lines(drain(), "fs.write"), 0);
}

TEST_F(NotifyLoop, AnOrderedTrapIsLetThrough) {
  Observer o = make();
  trap(SYS_flock, {3, LOCK_EX});
  trap(SYS_fcntl, {3, F_OFD_SETLK, 0});
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 2u);
  for (const auto& a : channel_->answers) EXPECT_EQ(a.how, FakeChannel::How::kContinue);
  EXPECT_EQ(channel_->answers[0].id, 1u);
  EXPECT_EQ(channel_->answers[1].id, 2u);
  EXPECT_EQ(o.stats().unhandled, 0u);
  o.finish();
  EXPECT_EQ(count_lines(drain(), "fs.write"), 0);
}

TEST_F(NotifyLoop, APerformedCallIsAnsweredWithItsResultThenRecorded) {
  Observer o = make();
  const std::string made = dir_ + "/made";
  trap(SYS_mkdirat, {kCwdArg, put(made), 0750});
  trap(SYS_mkdirat, {kCwdArg, put(made), 0750});  // again: EEXIST, the call's own result
  std::vector<std::uint64_t> events_at_answer;
  channel_->on_answer = [&] { events_at_answer.push_back(o.stats().events); };
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 2u);
  EXPECT_EQ(channel_->answers[0].value, 0);
  EXPECT_EQ(channel_->answers[0].error, 0);
  EXPECT_EQ(channel_->answers[1].error, EEXIST);
  struct stat st {};
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u);  // the caller's mode, vigil-init's umask 0 not added
  // Each line is queued after its call's answer: none at the first answer, one at the
  // second (the first call's), two at the end.
  EXPECT_EQ(events_at_answer, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(o.stats().events, 2u);
  o.flush();
  const std::string lines = drain();
  EXPECT_EQ(count_lines(lines, "fs.write"), 2);
  EXPECT_NE(lines.find("\"syscall\":\"mkdirat\""), std::string::npos) << lines;
  EXPECT_NE(lines.find("\"result\":\"0\""), std::string::npos) << lines;
  EXPECT_NE(lines.find("\"result\":\"EEXIST\""), std::string::npos) << lines;
}

TEST_F(NotifyLoop, AnUnreadablePathFailsWithEfaultAndIsRecorded) {
  Observer o = make();
  trap(SYS_mkdirat, {kCwdArg, 0xdead0000, 0755});  // not in the caller's memory
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 1u);
  EXPECT_EQ(channel_->answers[0].error, EFAULT);
  o.flush();
  const std::string lines = drain();
  EXPECT_EQ(count_lines(lines, "fs.write"), 1);
  EXPECT_NE(lines.find("\"result\":\"EFAULT\""), std::string::npos) << lines;
}

TEST_F(NotifyLoop, ACallerGoneBeforeItsCallWasJudgedGetsNothing) {
  Observer o = make();
  channel_->valid = false;  // the caller was killed while its notification waited
  // Its path could not be read (its memory is gone with it): not refused, nobody to tell.
  trap(SYS_mkdirat, {kCwdArg, 0xdead0000, 0755});
  // An exec whose name was read, but whose caller left before the check after the read:
  // what was read belongs to nobody, so nothing is continued or recorded.
  const std::string argv0 = "/bin/true";
  const std::uint64_t name = put(argv0);
  const std::uint64_t argv = put(std::string(reinterpret_cast<const char*>(&name), 8) +
                                 std::string(8, '\0'));
  trap(SYS_execve, {name, argv, 0});
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_TRUE(o.on_ready(POLLIN));
  EXPECT_TRUE(channel_->answers.empty());
  EXPECT_EQ(o.stats().vanished, 2u);
  // A notification raced away before it could be received: nothing at all.
  ASSERT_TRUE(o.on_ready(POLLIN));
  EXPECT_TRUE(channel_->answers.empty());
  EXPECT_FALSE(o.on_ready(POLLHUP));  // every filtered process has gone: the loop ends
  o.finish();
  const std::string lines = drain();
  EXPECT_EQ(count_lines(lines, "fs.write"), 0);
  EXPECT_EQ(count_lines(lines, "proc.exec"), 0);
}

TEST_F(NotifyLoop, AnOpenWhoseCallerLeftBeforeTheInstallIsRecordedNotAnsweredTwice) {
  Observer o = make();
  channel_->fd_result = -ENOENT;  // SECCOMP_ADDFD_FLAG_SEND: the caller is gone
  const std::string file = dir_ + "/opened";
  const auto fds_before = std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                        std::filesystem::directory_iterator());
  trap(SYS_openat, {kCwdArg, put(file), O_WRONLY | O_CREAT | O_CLOEXEC, 0640});
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 1u);  // the install only: no answer after it
  EXPECT_EQ(channel_->answers[0].how, FakeChannel::How::kFd);
  EXPECT_EQ(::access(file.c_str(), F_OK), 0);  // the open happened
  const auto fds_after = std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                       std::filesystem::directory_iterator());
  EXPECT_EQ(fds_after, fds_before);  // our copy of the fd is closed
  o.flush();
  EXPECT_EQ(count_lines(drain(), "fs.write"), 1);
}

TEST_F(NotifyLoop, AnOpenIsAnsweredWithTheInstalledFd) {
  Observer o = make();
  const std::string file = dir_ + "/installed";
  trap(SYS_openat, {kCwdArg, put(file), O_WRONLY | O_CREAT | O_CLOEXEC, 0600});
  ASSERT_TRUE(o.on_ready(POLLIN));
  ASSERT_EQ(channel_->answers.size(), 1u);
  ASSERT_EQ(channel_->answers[0].how, FakeChannel::How::kFd);
  // The fd handed over is the file the caller named, open for writing.
  const int fd = static_cast<int>(channel_->answers[0].value);
  ASSERT_EQ(::write(fd, "x", 1), 1);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1);
}

TEST_F(NotifyLoop, AFullEventPipeDropsWholeLinesAndCountsThemUnderDrop) {
  ASSERT_GT(::fcntl(write_end_.get(), F_SETPIPE_SZ, 4096), 0);
  ObserverOptions opt;
  opt.overflow = Overflow::kDrop;
  Observer o = make(opt);
  constexpr int kCalls = 100;  // ~200 bytes a line: several pipes' worth
  const std::uint64_t at = put(dir_ + "/same");
  for (int i = 0; i < kCalls; ++i) trap(SYS_mkdirat, {kCwdArg, at, 0755});
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(o.on_ready(POLLIN));
  o.flush();  // the pipe takes what it can; the rest is dropped
  EXPECT_GT(o.stats().dropped, 0u);
  // A line cut by the short write is completed by the next write, before anything else.
  std::string got = drain();
  o.finish();
  got += drain();
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), '\n');
  int lines = 0;
  for (std::size_t start = 0, nl; (nl = got.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string line = got.substr(start, nl - start);
    EXPECT_EQ(line.front(), '{') << line;
    EXPECT_EQ(line.back(), '}') << line;
    lines += count_lines(line, "fs.write");
  }
  EXPECT_EQ(static_cast<std::uint64_t>(lines) + o.stats().dropped, static_cast<std::uint64_t>(kCalls));
  EXPECT_EQ(count_lines(got, "observer.stats"), 1);
}

TEST_F(NotifyLoop, AFullEventPipeHoldsTheLoopUnderBlockAndLosesNothing) {
  ASSERT_GT(::fcntl(write_end_.get(), F_SETPIPE_SZ, 4096), 0);
  Observer o = make();
  // More than the loop's buffer (kEventBufferBytes): the loop must write while taking
  // notifications, into a pipe a slow reader empties.
  const std::uint64_t at = put(dir_ + "/same");
  int calls = 0;
  std::string got;
  std::thread reader([&] {
    char buf[1024];
    for (;;) {
      const ssize_t n = ::read(read_end_.get(), buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
  });
  while (o.stats().held == 0 && calls < 20000) {
    trap(SYS_mkdirat, {kCwdArg, at, 0755});
    ASSERT_TRUE(o.on_ready(POLLIN));
    ++calls;
  }
  o.finish();
  write_end_.reset();
  reader.join();
  EXPECT_GE(o.stats().held, 1u);
  EXPECT_EQ(o.stats().dropped, 0u);
  EXPECT_EQ(count_lines(got, "fs.write"), calls);
  EXPECT_EQ(count_lines(got, "observer.stats"), 1);
}

}  // namespace
}  // namespace vigil::init
