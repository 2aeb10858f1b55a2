// vigil-init's command line (supervisor/core/wire/init_args.h): what the supervisor
// writes, vigil-init reads back the same; every malformed value and unknown flag is an
// error naming the flag.
#include "supervisor/core/wire/init_args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vigil::wire {
namespace {

Result<InitArgs> parse_words(const std::vector<std::string>& words) {
  std::vector<const char*> ptrs;
  for (const auto& w : words) ptrs.push_back(w.c_str());
  return parse(ptrs);
}

InitArgs everything() {
  InitArgs a;
  a.proxy_socket = "/run/s/proxy.sock";
  a.http_socket = "/run/s/proxy-http.sock";
  a.socks_socket = "/run/s/proxy-socks.sock";
  a.loopback = "127.86.0.7";
  a.outer_proc = true;
  a.events_fd = 5;
  a.program_fd = 7;
  a.capture_fd = 9;
  a.command_fd = 11;
  a.capture_caps = CaptureCaps{1048576, 18446744073709551615ULL};
  a.overflow_drop = true;
  a.no_sync_wake_up = true;
  a.rlimits = {{"nproc", 256}, {"data", 0}, {"fsize", 1u << 30}};
  a.refuse_create = {{"/ws/.env", "filesystem.denyWrite[0]"}, {"/ws/a b", ""}};
  a.refuse_glob = {{"/ws/**/.env", "filesystem.denyRead[1] \"**/.env\""}};
  a.reads = {{"/home/u/.ssh", "filesystem.denyRead[0]", true},
             {"/home/u/.ssh/known_hosts", "filesystem.allowRead[0]", false},
             {"/ws/.env", "filesystem.denyRead[1]", true}};
  a.unix_broker = true;
  a.unix_sockets = {"/run/docker.sock", "@abstract"};
  a.command = {"sh", "-c", "echo -- --events-fd 3"};
  return a;
}

TEST(InitArgs, RoundTripsEveryFlag) {
  const InitArgs a = everything();
  const auto back = parse_words(to_argv(a));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, a);
}

TEST(InitArgs, RoundTripsTheEmptyOptions) {
  InitArgs a;
  a.command = {"true"};
  EXPECT_EQ(to_argv(a), (std::vector<std::string>{"--", "true"}));
  const auto back = parse_words(to_argv(a));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, a);
}

// A show re-binds a path below the hide before it: the order is part of the meaning.
TEST(InitArgs, KeepsHidesAndShowsInTheirOrder) {
  InitArgs a;
  a.reads = {{"/a", "o1", true}, {"/a/b", "o2", false}, {"/c", "o3", true}, {"/c/d", "o4", false}};
  EXPECT_EQ(option_args(a),
            (std::vector<std::string>{"--hide", "/a", "o1", "--show", "/a/b", "o2", "--hide", "/c",
                                      "o3", "--show", "/c/d", "o4"}));
}

TEST(InitArgs, EachFlagIsWrittenOnceByName) {
  const auto words = option_args(everything());
  for (const char* flag : {"--proxy-socket", "--http-socket", "--socks-socket", "--outer-proc",
                           "--events-fd", "--program-fd", "--overflow", "--no-sync-wake-up",
                           "--capture-fd", "--capture-caps", "--unix-broker", "--command-fd"}) {
    EXPECT_EQ(std::count(words.begin(), words.end(), flag), 1) << flag;
  }
}

struct BadCase {
  std::vector<std::string> words;
  std::string message;  // a part of the error
};

TEST(InitArgs, RejectsEachBadValueWithAMessage) {
  const BadCase cases[] = {
      {{"--events-fd", "abc", "--", "true"}, "--events-fd must be a descriptor number above 2"},
      {{"--events-fd", "", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "-5", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "+5", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", " 5", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "5x", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "0x5", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "2", "--", "true"}, "--events-fd must be"},
      {{"--events-fd", "2147483648", "--", "true"}, "--events-fd must be"},
      {{"--program-fd", "0", "--", "true"}, "--program-fd must be"},
      {{"--capture-fd", "1", "--", "true"}, "--capture-fd must be"},
      {{"--events-fd", "5", "--program-fd", "5", "--", "true"},
       "--program-fd must be a descriptor of its own"},
      {{"--events-fd", "5", "--capture-fd", "5", "--", "true"},
       "--capture-fd must be a descriptor of its own"},
      {{"--program-fd", "6", "--capture-fd", "6", "--", "true"},
       "--capture-fd must be a descriptor of its own"},
      {{"--proxy-socket", "relative.sock", "--", "true"}, "--proxy-socket must be an absolute"},
      {{"--http-socket", "", "--", "true"}, "--http-socket must be an absolute"},
      {{"--socks-socket", "s", "--", "true"}, "--socks-socket must be an absolute"},
      {{"--overflow", "block", "--", "true"}, "--overflow must be drop"},
      {{"--loopback", "10.0.0.1", "--", "true"}, "--loopback must be an IPv4 loopback address"},
      {{"--loopback", "localhost", "--", "true"}, "--loopback must be an IPv4 loopback"},
      {{"--loopback", "::1", "--", "true"}, "--loopback must be an IPv4 loopback"},
      {{"--loopback", "127.1", "--", "true"}, "--loopback must be an IPv4 loopback"},
      {{"--loopback", "", "--", "true"}, "--loopback must be an IPv4 loopback"},
      {{"--capture-caps", "10", "--", "true"}, "--capture-caps must be FILE:SESSION"},
      {{"--capture-caps", "10:", "--", "true"}, "--capture-caps must be FILE:SESSION"},
      {{"--capture-caps", "10:-1", "--", "true"}, "--capture-caps must be FILE:SESSION"},
      {{"--capture-caps", "18446744073709551616:1", "--", "true"}, "--capture-caps must be"},
      {{"--rlimit", "nproc", "--", "true"}, "--rlimit must be nproc=N"},
      {{"--rlimit", "nproc=", "--", "true"}, "--rlimit must be nproc=N"},
      {{"--rlimit", "nproc=12k", "--", "true"}, "--rlimit must be nproc=N"},
      {{"--rlimit", "stack=1", "--", "true"}, "--rlimit must be nproc=N"},
      {{"--refuse-create", "ws/.env", "o", "--", "true"}, "--refuse-create must be an absolute"},
      {{"--refuse-glob", "*.pem", "o", "--", "true"}, "--refuse-glob must be an absolute"},
      {{"--hide", "", "o", "--", "true"}, "--hide must be an absolute"},
      {{"--show", "x", "o", "--", "true"}, "--show must be an absolute"},
      {{"--unix-socket", "", "--", "true"}, "--unix-socket must be a socket path"},
      // A value missing at the end of the options: the "--" is not taken for it.
      {{"--events-fd"}, "--events-fd needs N"},
      {{"--refuse-create", "/ws/.env"}, "--refuse-create needs PATH ORIGIN"},
      // Values are positional: a "--" right after a flag is its value, and refused as one.
      {{"--proxy-socket", "--", "true"},
       "--proxy-socket must be an absolute socket path, not \"--\""},
      // Given twice: which one counts would be a guess.
      {{"--events-fd", "5", "--events-fd", "6", "--", "true"}, "--events-fd is given twice"},
      {{"--outer-proc", "--outer-proc", "--", "true"}, "--outer-proc is given twice"},
      // No command.
      {{"--events-fd", "5"}, "no command"},
      {{"--events-fd", "5", "--"}, "no command"},
      {{}, "no command"},
  };
  for (const auto& c : cases) {
    const auto r = parse_words(c.words);
    std::string shown;
    for (const auto& w : c.words) shown += "[" + w + "]";
    ASSERT_FALSE(r.ok()) << shown;
    EXPECT_EQ(r.error().code, Errc::kInvalidPolicy) << shown;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << shown << ": " << r.error().message;
  }
}

TEST(InitArgs, RejectsAnUnknownFlagByName) {
  for (const char* flag : {"--event-fd", "-x", "--EVENTS-FD", "events-fd", "--events-fd=5"}) {
    const auto r = parse_words({flag, "5", "--", "true"});
    ASSERT_FALSE(r.ok()) << flag;
    EXPECT_NE(r.error().message.find(std::string("unknown option \"") + flag + "\""),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("--events-fd"), std::string::npos) << r.error().message;
  }
}

TEST(InitArgs, EscapesTheBadValueItQuotes) {
  const auto r = parse_words({"--events-fd", "5\n\x1b[31m", "--", "true"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find('\x1b'), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
}

TEST(InitArgs, TakesTheLargestNumbers) {
  const auto r = parse_words(
      {"--events-fd", "2147483647", "--capture-caps", "18446744073709551615:0", "--", "true"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->events_fd, 2147483647);
  EXPECT_EQ(r->capture_caps->file_bytes, 18446744073709551615ULL);
}

TEST(InitArgs, UsageNamesEveryFlag) {
  const std::string u = usage();
  for (const auto& w : option_args(everything())) {
    if (w.rfind("--", 0) == 0) {
      EXPECT_NE(u.find(w), std::string::npos) << w;
    }
  }
}

}  // namespace
}  // namespace vigil::wire
