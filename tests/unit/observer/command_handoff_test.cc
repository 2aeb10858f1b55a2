// A spare sandbox's command hand-off (observer/command_handoff.h): the payload round-trips
// and malformed ones are refused; over a socketpair the command arrives with exactly the
// stdio descriptors sent, and a closed channel with nothing sent says "discarded".
#include "observer/command_handoff.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace vigil::init {
namespace {

using namespace std::string_literals;

TEST(CommandHandoff, ThePayloadRoundTrips) {
  const HandedCommand cases[] = {
      {{"true"}, {}},
      {{"sh", "-c", "echo a b; exit 3", ""}, {"PATH=/bin", "EMPTY=", "X=a=b"}},
      {{"printf", "%s\n", "with\nnewline"}, {"LANG=C.UTF-8"}},
  };
  for (const auto& c : cases) {
    auto back = decode_handoff_payload(encode_handoff_payload(c));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->argv, c.argv);
    EXPECT_EQ(back->env, c.env);
  }
}

TEST(CommandHandoff, MalformedPayloadsAreRefused) {
  const std::string bad[] = {
      ""s,                        // nothing
      "0\0"s,                     // no argv
      "2\0true\0"s,               // fewer arguments than counted
      "1\0true\0NOEQUALS\0"s,     // an environment entry without '='
      "1\0true"s,                 // the last entry has no NUL
      "x\0true\0"s,               // not a count
      "1x\0true\0"s,              // trailing junk in the count
      "-1\0true\0"s,              // a negative count
  };
  for (const auto& p : bad) EXPECT_FALSE(decode_handoff_payload(p)) << "accepted: " << p;
}

TEST(CommandHandoff, TheCommandArrivesWithTheStdioSent) {
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  UniqueFd ours(sp[0]), theirs(sp[1]);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  HandedCommand cmd{{"echo", "hi"}, {"A=1"}};
  // stdin and stderr go; stdout stays what the sandbox has (-1).
  ASSERT_TRUE(send_handed_command(ours.get(), cmd, {r.get(), -1, w.get()}));
  auto got = receive_handed_command(theirs.get());
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->cmd.argv, cmd.argv);
  EXPECT_EQ(got->cmd.env, cmd.env);
  ASSERT_TRUE(got->stdio[0].valid());
  EXPECT_FALSE(got->stdio[1].valid());
  ASSERT_TRUE(got->stdio[2].valid());
  EXPECT_NE(::fcntl(got->stdio[2].get(), F_GETFD) & FD_CLOEXEC, 0);
  ASSERT_EQ(::write(got->stdio[2].get(), "x", 1), 1);  // the pipe's write end
  char c = 0;
  ASSERT_EQ(::read(got->stdio[0].get(), &c, 1), 1);  // and its read end
  EXPECT_EQ(c, 'x');
}

TEST(CommandHandoff, AClosedChannelMeansDiscarded) {
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  UniqueFd ours(sp[0]), theirs(sp[1]);
  ours.reset();
  auto got = receive_handed_command(theirs.get());
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::kNotFound);
}

TEST(CommandHandoff, AForgedHeaderIsRefused) {
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  UniqueFd ours(sp[0]), theirs(sp[1]);
  const char junk[16] = "not a header";
  ASSERT_EQ(::write(ours.get(), junk, sizeof junk), static_cast<ssize_t>(sizeof junk));
  auto got = receive_handed_command(theirs.get());
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::kInvalidPolicy);
}

}  // namespace
}  // namespace vigil::init
