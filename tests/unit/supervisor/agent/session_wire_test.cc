// The session socket's messages (supervisor/agent/session_wire.h) and the log's records for a
// session of many commands (command.start / command.end / policy.update, the envelope's
// cmd): table tests of the pure encoders and parsers.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/agent/session_wire.h"

namespace vigil {
namespace {

TEST(SessionWire, RunRequestsRoundTripIncludingBytesThatAreNotUtf8) {
  wire::Request r;
  r.run.argv = {"sh", "-c", std::string("echo \xff\xfe", 7)};
  r.run.cwd = "/work/\xc3\x28";
  r.run.env = {"PATH=/usr/bin", "X=\x80"};
  r.run.capture = false;
  auto back = wire::decode_request(wire::encode(r));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->op, wire::Op::kRun);
  EXPECT_EQ(back->run, r.run);
  wire::Request end;
  end.op = wire::Op::kEnd;
  auto e = wire::decode_request(wire::encode(end));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->op, wire::Op::kEnd);
}

TEST(SessionWire, BadRequestsAreRefusedWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "not a JSON object"},
      {"{}", "without an op"},
      {R"({"op":"fly"})", "unknown op"},
      {R"({"op":"run","argv":[],"cwd":"/"})", "empty argv"},
      {R"({"op":"run","argv":["x"]})", "no cwd"},
      {R"({"op":"run","argv":["x"],"cwd":"rel"})", "absolute"},
      {R"({"op":"run","argv":[{"b64":"!!"}],"cwd":"/"})", "argv"},
      {R"({"op":"run","argv":[1],"cwd":"/"})", "argv"},
  };
  for (const auto& [text, why] : cases) {
    auto r = wire::decode_request(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << text << ": " << r.error().message;
  }
}

TEST(SessionWire, RepliesRoundTrip) {
  const std::vector<wire::Reply> cases = {
      {std::nullopt, 3, "{\"denied\":[]}\n", false},
      {std::string("the sandbox could not be set up"), 125, "", false},
      {std::nullopt, 0, "", true},
  };
  for (const auto& r : cases) {
    auto back = wire::decode_reply(wire::encode(r));
    ASSERT_TRUE(back) << wire::encode(r);
    EXPECT_EQ(*back, r);
  }
  EXPECT_FALSE(wire::decode_reply(R"({"exit_code":300})"));
  EXPECT_FALSE(wire::decode_reply(R"({"violations":""})"));
}

TEST(SessionWire, FramesCarryTheirFdsAndSplitNothing) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  const std::string big(200000, 'x');
  ASSERT_TRUE(wire::send_frame(a.get(), "first", {0, 1, 2}));
  ASSERT_TRUE(wire::send_frame(a.get(), "second"));
  auto f1 = wire::recv_frame(b.get());
  ASSERT_TRUE(f1);
  EXPECT_EQ(f1->payload, "first");
  EXPECT_EQ(f1->fds.size(), 3u);
  auto f2 = wire::recv_frame(b.get());
  ASSERT_TRUE(f2);
  EXPECT_EQ(f2->payload, "second");
  EXPECT_TRUE(f2->fds.empty());
  a.reset();
  EXPECT_FALSE(wire::recv_frame(b.get()));  // closed: an error, not an empty frame
}

events::Event record(events::Body body, std::optional<std::uint64_t> cmd) {
  events::Event e;
  e.seq = 4;
  e.t = 100;
  e.session = "s-1";
  e.src = events::Source::kSupervisor;
  e.prev = std::string(events::kGenesisPrev);
  e.cmd = cmd;
  e.body = std::move(body);
  return e;
}

TEST(SessionRecords, CommandRecordsRoundTripThroughTheLogFormat) {
  events::CommandEnd end;
  end.signal = 9;
  end.duration_ns = 5;
  end.counters = {{"lines.forged", 1}};
  const std::vector<events::Event> cases = {
      record(events::CommandStart{{"make", "test"}, "/w"}, 1),
      record(end, 2),
      record(events::PolicyUpdate{{"pypi.org"}, {"*.example.com"}}, std::nullopt),
      record(events::IoStdout{"x"}, 12345678901ull),
      record(events::CommandCancel{"client", "notifications/cancelled", "the user pressed stop", 2000}, 3),
      record(events::CommandCancel{"disconnect", "eof", "", 2000}, 4),
  };
  for (const auto& e : cases) {
    const std::string line = events::serialize(e);
    auto back = events::parse_log_record(line);
    ASSERT_TRUE(back) << line << ": " << back.error().message;
    EXPECT_EQ(*back, e) << line;
  }
  EXPECT_NE(events::serialize(cases[0]).find(R"("src":"supervisor","cmd":1,"kind":"command.start")"),
            std::string::npos);
}

TEST(SessionRecords, TheSandboxCannotClaimACommand) {
  auto r = events::parse_untrusted_event_line(
      R"({"kind":"proc.exec","cmd":3,"pid":2,"ppid":1,"argv":["x"],"cwd":"/"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(events::fault_of(r.error()), events::LineFault::kForged);
  for (const char* kind : {"command.start", "command.end", "policy.update", "command.cancel"}) {
    auto k = events::parse_untrusted_event_line(std::string(R"({"kind":")") + kind + "\"}");
    ASSERT_FALSE(k) << kind;
    EXPECT_EQ(events::fault_of(k.error()), events::LineFault::kForged) << kind;
  }
}

TEST(SessionRecords, ACommandCancelSaysWhoFromAFixedSetAndHow) {
  EXPECT_TRUE(events::validate(events::CommandCancel{"client", "cancel", "", 1}, events::Limits::log()));
  EXPECT_FALSE(events::validate(events::CommandCancel{"the model", "cancel", "", 1}, events::Limits::log()));
  EXPECT_FALSE(events::validate(events::CommandCancel{"client", "", "", 1}, events::Limits::log()));
  EXPECT_FALSE(events::validate(events::CommandCancel{"client", "cancel", std::string("a\0b", 3), 1},
                                events::Limits::log()));
}

TEST(SessionRecords, ACommandEndNeedsExactlyOneOfStatusAndSignal) {
  events::CommandEnd both;
  both.exit_code = 1;
  both.signal = 2;
  EXPECT_FALSE(events::validate(both, events::Limits::log()));
  EXPECT_FALSE(events::parse_log_record(
      R"({"v":1,"seq":0,"t":0,"session":"s","src":"supervisor","cmd":1,"kind":"command.end","duration_ns":0,"counters":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000"})"));
}

}  // namespace
}  // namespace vigil
