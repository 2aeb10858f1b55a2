// rpc::Out: the JSON-RPC writer never blocks a poster on a client that does not read,
// and what it queued arrives whole and in order once the client reads.
#include "supervisor/agent/rpc_out.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::rpc {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Pipe {
  UniqueFd r, w;
};

// A pipe with the smallest buffer the kernel allows (a page): a few lines fill it.
Pipe small_pipe() {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  ::fcntl(p.w.get(), F_SETPIPE_SZ, 4096);
  return p;
}

json line_n(int i) { return json{{"n", i}, {"pad", std::string(1000, 'x')}}; }

// Reads `count` lines from `fd` and checks they are line_n(0..count-1), in order.
void expect_lines(int fd, int count) {
  std::string buf;
  int next = 0;
  char chunk[65536];
  while (next < count) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    ASSERT_GT(n, 0) << "the stream ended after " << next << " of " << count << " lines";
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      const json m = json::parse(buf.substr(0, nl));
      ASSERT_EQ(m.at("n").get<int>(), next) << "lines out of order";
      ++next;
      buf.erase(0, nl + 1);
    }
  }
  EXPECT_TRUE(buf.empty());
}

TEST(RpcOut, SendToAClientThatDoesNotReadReturnsWhileUnderTheCap) {
  Pipe p = small_pipe();
  constexpr int kLines = 64;  // 64 KB: sixteen times the pipe's room
  {
    Out out(p.w.get());
    auto sent = std::async(std::launch::async, [&] {
      for (int i = 0; i < kLines; ++i) out.send(line_n(i));
    });
    const bool returned = sent.wait_for(5s) == std::future_status::ready;
    EXPECT_TRUE(returned) << "send() blocked on a full pipe";
    expect_lines(p.r.get(), kLines);  // also unblocks an old, synchronous writer
    sent.get();
  }
}

// node (libuv) gives a child's stdio as a socketpair: lines the socket takes only in
// part are finished by the writer, in order.
TEST(RpcOut, ASocketClientGetsEveryLineWholeAndInOrder) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd ours(fds[0]), theirs(fds[1]);
  const int small = 4096;
  ::setsockopt(ours.get(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  constexpr int kLines = 300;
  Out out(ours.get());
  auto sent = std::async(std::launch::async, [&] {
    for (int i = 0; i < kLines; ++i) out.send(line_n(i));
  });
  EXPECT_EQ(sent.wait_for(5s), std::future_status::ready) << "send() blocked on a full socket";
  expect_lines(theirs.get(), kLines);
  sent.get();
}

TEST(RpcOut, PostNeverWaitsEvenPastTheCap) {
  Pipe p = small_pipe();
  constexpr int kLines = 200;
  Out out(p.w.get(), /*max_queued=*/1);
  auto posted = std::async(std::launch::async, [&] {
    for (int i = 0; i < kLines; ++i) out.post(line_n(i));
  });
  EXPECT_EQ(posted.wait_for(5s), std::future_status::ready) << "post() waited for the reader";
  expect_lines(p.r.get(), kLines);
  posted.get();
  out.flush();
}

TEST(RpcOut, SendWaitsPastTheCapUntilTheClientReads) {
  Pipe p = small_pipe();
  constexpr int kLines = 100;
  Out out(p.w.get(), /*max_queued=*/2000);
  auto sent = std::async(std::launch::async, [&] {
    for (int i = 0; i < kLines; ++i) out.send(line_n(i));
  });
  // Whatever the sender's progress, reading lets every line through, in order.
  expect_lines(p.r.get(), kLines);
  EXPECT_EQ(sent.wait_for(5s), std::future_status::ready);
  sent.get();
}

TEST(RpcOut, AClientThatHasGoneNeverBlocksAWriter) {
  Pipe p = small_pipe();
  Out out(p.w.get(), /*max_queued=*/2000);
  p.r.reset();  // the client closed its end: every write is EPIPE
  auto sent = std::async(std::launch::async, [&] {
    for (int i = 0; i < 100; ++i) out.send(line_n(i));
    out.flush();
  });
  EXPECT_EQ(sent.wait_for(5s), std::future_status::ready);
  sent.get();
}

}  // namespace
}  // namespace vigil::rpc
