// Issue 5's load against one real `vigil proxy` process, several rounds in a row: 500
// CONNECT tunnels and 1,000 slow-loris connections held at once while a fresh client is
// still served, then all closed. After every round the proxy's descriptors are back to
// exactly the idle count, and its RSS stops moving after the first round: what stays
// resident after round 1 is reused, not memory that grows with use. Loopback only (an IP literal on
// the allow list: no DNS, no test option needed).
#include "tools/bench/proxy_load.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

using namespace vigil::load;  // the load, shared with tools/bench/proxy_bench.cc

// Descriptors this test needs: 1,500 client sockets and the echo server's 500 in this
// process, ~2,000 in the proxy (which raises its own soft limit to the hard one).
constexpr rlim_t kFdsNeeded = 2600;

TEST(ProxyLoad, RepeatedRoundsReturnDescriptorsAndDoNotGrow) {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < kFdsNeeded) {
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << rl.rlim_max << " is below the " << kFdsNeeded
                 << " descriptors 1,500 held connections need (raise it: ulimit -Hn)";
  }
  const rlim_t saved = rl.rlim_cur;
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);

  {
    TempDir tmp;
    EpollServer echo(EpollServer::Mode::kEcho);
    ProxyProcess proxy(tmp, R"({"network": {"allowedDomains": ["127.0.0.1"]}})",
                       {"--idle-timeout", "60"}, "tcp:127.0.0.1:0", /*test_mode=*/false);
    ASSERT_TRUE(proxy.ready()) << proxy.err();
    const pid_t pid = proxy.process().pid();
    const std::string authority = "127.0.0.1:" + std::to_string(echo.port());
    const std::string connect =
        "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";

    // One tunnel first, so that what the first connection sets up once (the metadata
    // lookup) is part of the idle state, not of round 1.
    ASSERT_TRUE(one_connection(proxy.port(), connect)) << proxy.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const std::size_t fds_idle = proc_fds(pid);
    const long rss_idle = proc_status_kb(pid, "VmRSS:");

    constexpr int kRounds = 3;
    std::vector<Load> rounds;
    for (int r = 0; r < kRounds; ++r) {
      rounds.push_back(hold_load(pid, proxy.port(), connect, "127.0.0.1"));
      const Load& l = rounds.back();
      const RssParts parts = proc_rss_parts(pid);
      std::printf(
          "round %d: RSS %ld KiB loaded, %ld KiB after (heap %ld, anon %ld in %d maps, files "
          "%ld); fds %zu idle, %zu loaded, %zu after\n",
          r + 1, l.rss_kb, l.rss_after_kb, parts.heap_kb, parts.anon_kb, parts.anon_maps,
          parts.file_kb, fds_idle, l.fds, l.fds_after);
      EXPECT_EQ(l.alive, 500) << "round " << r + 1 << ": open tunnels stopped working";
      EXPECT_TRUE(l.fresh_ok) << "round " << r + 1 << ": a fresh client was not served";
      EXPECT_EQ(l.fds_after, fds_idle) << "round " << r + 1 << ": descriptors left after load";
    }
    std::printf("idle before the rounds: RSS %ld KiB, %zu fds\n", rss_idle, fds_idle);

    // Round 1 brings RSS to its plateau and later rounds reuse that memory. What stays
    // (~6.5 MB of brk heap after malloc_trim, measured with smaps and malloc_info) is
    // Asio's reactor keeping one descriptor state per socket it ever held at once, in a
    // pool it reuses but never frees: ~2,000 small live objects scattered through the
    // heap that the burst grew, and the page heading each free gap between them stays
    // resident. Measured (2 cores shared with builds): round 3 ends 4-20 KiB above round
    // 1. 1 MiB of slack covers the allocator placing a round differently; a leak of 400
    // bytes per connection (injected once to check this test) put round 3 1.7 MB above
    // round 1: leaked blocks scattered through the heap pin whole pages.
    constexpr long kBoundKb = 1024;
    EXPECT_LE(rounds[kRounds - 1].rss_after_kb, rounds[0].rss_after_kb + kBoundKb)
        << "RSS grew from round 1 to round " << kRounds;
  }
  rl.rlim_cur = saved;
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

}  // namespace
}  // namespace vigil::test
