// The one builder of a SandboxedCommand (command_spec.h): every input reaches its field,
// and a spare and the command it is handed, built from one session's inputs, ask for the
// same plan. Also the pure builders run_sandboxed() uses (command_args.h): vigil-init's
// options go through the wire table (a spare's --command-fd included), and bwrap's status
// lines (bwrap_status.h).
#include "supervisor/command/command_spec.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "supervisor/core/wire/init_args.h"
#include "supervisor/launch/bwrap_status.h"
#include "supervisor/command/command_args.h"

namespace vigil {
namespace {

SessionInputs a_session() {
  SessionInputs s;
  s.settings = "/etc/agent/sandbox.json";
  s.allow_writable_settings = true;
  s.proxy_test.allow_loopback = true;
  HostLimits h;
  h.cgroup2_dir = "/sys/fs/cgroup/vigil";
  s.host_limits = h;
  NetworkPolicy net;
  net.allowed_domains = {"example.com"};
  s.net = net;
  return s;
}

TEST(CommandSpec, EveryInputReachesItsField) {
  CommandInputs c;
  c.argv = {"make", "test"};
  c.cwd = "/ws/sub";
  c.workspace = "/ws";
  c.env = std::vector<std::string>{"A=1"};
  c.stdio = {5, 6, 7};
  c.capture_output = false;
  c.annotate_stderr = false;
  c.violations_json = false;
  c.timeout_s = 2.5;
  c.quarantine_id = "s-3";
  pid_t seen = 0;
  c.on_spawned = [&seen](pid_t p) { seen = p; };
  c.ask.asker = nullptr;
  c.ask.timeout = std::chrono::milliseconds(1234);
  const SandboxedCommand cmd = sandboxed_command(a_session(), c);
  EXPECT_EQ(cmd.settings, "/etc/agent/sandbox.json");
  EXPECT_TRUE(cmd.allow_writable_settings);
  EXPECT_TRUE(cmd.proxy_test.allow_loopback);
  ASSERT_TRUE(cmd.host_limits.has_value());
  EXPECT_EQ(cmd.host_limits->cgroup2_dir, "/sys/fs/cgroup/vigil");
  ASSERT_TRUE(cmd.net.has_value());
  EXPECT_EQ(cmd.net->allowed_domains, std::vector<std::string>{"example.com"});
  EXPECT_EQ(cmd.command, (std::vector<std::string>{"make", "test"}));
  EXPECT_EQ(cmd.cwd, "/ws/sub");
  EXPECT_EQ(cmd.workspace, "/ws");
  // The plan is the workspace's; the cwd is only where the command starts.
  EXPECT_EQ(command_plan_request(cmd, "/tmp/s").cwd, "/ws");
  EXPECT_EQ(cmd.env, (std::vector<std::string>{"A=1"}));
  EXPECT_EQ(cmd.stdio, (std::array<int, 3>{5, 6, 7}));
  EXPECT_FALSE(cmd.capture_output);
  EXPECT_FALSE(cmd.annotate_stderr);
  EXPECT_FALSE(cmd.violations_json);
  EXPECT_EQ(cmd.timeout_s, 2.5);
  EXPECT_EQ(cmd.quarantine_id, "s-3");
  EXPECT_EQ(cmd.ask.timeout, std::chrono::milliseconds(1234));
  ASSERT_TRUE(cmd.on_spawned);
  cmd.on_spawned(42);
  EXPECT_EQ(seen, 42);
  // What the launch wires itself is left alone.
  EXPECT_EQ(cmd.interrupted_fd, -1);
  EXPECT_FALSE(cmd.merge_output);
  EXPECT_EQ(cmd.spare, nullptr);
}

TEST(CommandSpec, TheDefaultsAreVigilRunsDefaults) {
  CommandInputs c;
  c.argv = {"true"};
  const SandboxedCommand cmd = sandboxed_command(SessionInputs{}, c);
  EXPECT_FALSE(cmd.settings.has_value());
  EXPECT_FALSE(cmd.net.has_value());
  EXPECT_FALSE(cmd.host_limits.has_value());
  EXPECT_TRUE(cmd.capture_output);
  EXPECT_TRUE(cmd.annotate_stderr);
  EXPECT_TRUE(cmd.violations_json);
  EXPECT_EQ(cmd.stdio, (std::array<int, 3>{0, 1, 2}));
}

// A spare is compared with the plan its command's request makes: both are built from the
// session's inputs by the one builder, so they ask for the same plan.
TEST(CommandSpec, ASpareAndItsCommandAskForTheSamePlan) {
  const SessionInputs session = a_session();
  CommandInputs spare;
  spare.argv = {"vigil-spare"};
  spare.cwd = "/ws";
  spare.quarantine_id = "s-spare1";
  CommandInputs real;
  real.argv = {"git", "status"};
  real.cwd = "/ws";
  real.env = std::vector<std::string>{"PATH=/usr/bin"};
  real.stdio = {3, 4, 5};
  real.quarantine_id = "s-1";
  const PlanRequest a = command_plan_request(sandboxed_command(session, spare), "/tmp/s/tmp");
  const PlanRequest b = command_plan_request(sandboxed_command(session, real), "/tmp/s/tmp");
  EXPECT_EQ(a.settings_path, b.settings_path);
  EXPECT_EQ(a.allow_writable_settings, b.allow_writable_settings);
  EXPECT_EQ(a.use_home_settings, b.use_home_settings);
  EXPECT_EQ(a.cwd, b.cwd);
  EXPECT_EQ(a.session_tmp, b.session_tmp);
  EXPECT_EQ(a.placeholders, b.placeholders);
  EXPECT_EQ(a.refuse_missing_at_call, b.refuse_missing_at_call);
  EXPECT_EQ(a.settings_path, std::optional<std::string>("/etc/agent/sandbox.json"));
  EXPECT_TRUE(a.allow_writable_settings);
}

Result<wire::InitArgs> parsed(const std::vector<std::string>& options) {
  std::vector<std::string> words = options;
  words.push_back("--");
  words.push_back("true");
  std::vector<const char*> ptrs;
  for (const auto& w : words) ptrs.push_back(w.c_str());
  return wire::parse(ptrs);
}

TEST(CommandArgs, InitOptionsGoThroughTheWireTable) {
  Policy policy;
  Plan plan;
  InitArgsInputs in;
  in.policy = &policy;
  in.plan = &plan;
  in.events_fd = 10;
  in.program_fd = 11;
  in.proxy_socket = "/run/vigil/s/proxy.sock";
  auto plain = parsed(vigil_init_options(in).args);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->events_fd, 10);
  EXPECT_EQ(plain->program_fd, 11);
  EXPECT_EQ(plain->command_fd, -1);
  EXPECT_EQ(plain->capture_fd, -1);
  EXPECT_FALSE(plain->capture_caps.has_value());
  EXPECT_EQ(plain->proxy_socket, "/run/vigil/s/proxy.sock");
  EXPECT_FALSE(plain->unix_broker);  // no gatekeeper, no list: the plain filter

  // A spare's hand-off socket and a change store: the same table, parsed back.
  in.command_fd = 12;
  in.capture_fd = 13;
  in.gatekeeper = true;
  policy.vigil.capture_caps.max_file_bytes = 100;
  policy.vigil.capture_caps.max_session_bytes = 1000;
  auto spare = parsed(vigil_init_options(in).args);
  ASSERT_TRUE(spare) << spare.error().message;
  EXPECT_EQ(spare->command_fd, 12);
  EXPECT_EQ(spare->capture_fd, 13);
  ASSERT_TRUE(spare->capture_caps.has_value());
  EXPECT_EQ(spare->capture_caps->file_bytes, 100u);
  EXPECT_EQ(spare->capture_caps->session_bytes, 1000u);
  EXPECT_TRUE(spare->unix_broker);  // the gatekeeper brokers even an empty list

  // What is left of the caps, and the sandbox's own trees (issue 31): no pre-images there.
  in.capture_left = 400;
  in.capture_skip = {"/dev", "/run/vigil/s/tmp"};
  auto left = parsed(vigil_init_options(in).args);
  ASSERT_TRUE(left) << left.error().message;
  EXPECT_EQ(left->capture_caps->session_bytes, 400u);
  ASSERT_EQ(left->capture_skip.size(), 2U);
  EXPECT_EQ(left->capture_skip[1].path, "/run/vigil/s/tmp");
}

TEST(CommandArgs, UnixSocketModes) {
  NetworkPolicy net;
  EXPECT_EQ(unix_sockets_mode(net, false), UnixSockets::kBlocked);
  EXPECT_EQ(unix_sockets_mode(net, true), UnixSockets::kBrokered);
  net.allow_unix_sockets = {"/run/x.sock"};
  EXPECT_EQ(unix_sockets_mode(net, false), UnixSockets::kBrokered);
  net.allow_all_unix_sockets = true;
  EXPECT_EQ(unix_sockets_mode(net, true), UnixSockets::kAll);
}

TEST(BwrapStatus, LinesAreTakenWhole) {
  BwrapStatus st;
  std::string buf = "{\"child-pid\": 41}\n{\"exit-co";
  parse_status_lines(&buf, false, &st);
  EXPECT_EQ(st.init_pid, 41);
  EXPECT_FALSE(st.have_exit_code);
  EXPECT_EQ(buf, "{\"exit-co");  // kept for the next read
  buf += "de\": 3}";
  parse_status_lines(&buf, false, &st);
  EXPECT_FALSE(st.have_exit_code);  // unterminated: not yet
  parse_status_lines(&buf, true, &st);
  EXPECT_TRUE(st.have_exit_code);
  EXPECT_EQ(st.exit_code, 3);
  EXPECT_TRUE(buf.empty());
  std::string junk = "not json\n[1,2]\n{\"child-pid\": \"x\"}\n";
  BwrapStatus none;
  parse_status_lines(&junk, true, &none);
  EXPECT_EQ(none.init_pid, -1);
  EXPECT_FALSE(none.have_exit_code);
}

}  // namespace
}  // namespace vigil
