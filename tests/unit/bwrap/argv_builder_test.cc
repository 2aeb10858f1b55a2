// Plan -> bubblewrap argv: a golden token list for a representative plan, one row per
// OpKind/shape/exists combination, the `--args FD` serialisation, and paths that a shell
// would split staying single tokens.
#include "bwrap/argv_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace vigil {
namespace {

using Tokens = std::vector<std::string>;

const Tokens kPrologue = {"--die-with-parent",
                          "--new-session",
                          "--unshare-all",
                          "--cap-drop",
                          "ALL",
                          "--ro-bind",
                          "/",
                          "/",
                          "--dev",
                          "/dev",
                          "--proc",
                          "/proc"};

PlanOp op(OpKind kind, std::string path, bool exists = true, DenyShape shape = DenyShape::kDir,
          std::string origin = "o") {
  return PlanOp{kind, std::move(path), std::move(origin), "why", exists, shape};
}

Tokens concat(Tokens a, const Tokens& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ArgvBuilderTest, GoldenRepresentativePlan) {
  Plan plan;
  plan.ops = {
      op(OpKind::kHide, "/home/u/.ssh", true, DenyShape::kDir, "filesystem.denyRead[0]"),
      op(OpKind::kWritable, "/home/u/proj", true, DenyShape::kDir, "filesystem.allowWrite[0]"),
      op(OpKind::kWritable, "/tmp/vigil-1234", true, DenyShape::kDir, "session temp dir"),
      op(OpKind::kHide, "/home/u/.netrc", true, DenyShape::kFile, "filesystem.denyRead[1]"),
      op(OpKind::kReopenRead, "/home/u/.ssh/known_hosts", true, DenyShape::kFile,
         "filesystem.allowRead[0]"),
      op(OpKind::kPin, "/home/u/proj/.git", true, DenyShape::kDir, "mandatory: .git/hooks"),
      op(OpKind::kDenyWrite, "/home/u/proj/.bashrc", false, DenyShape::kFile, "mandatory: .bashrc"),
      op(OpKind::kDenyWrite, "/home/u/proj/.vscode", false, DenyShape::kDir, "mandatory: .vscode"),
      op(OpKind::kDenyWrite, "/home/u/proj/.git/hooks", true, DenyShape::kDir,
         "mandatory: .git/hooks"),
  };
  BwrapInputs in;
  in.plan = &plan;
  in.cwd = "/home/u/proj";
  in.setenv = {{"HTTP_PROXY", "http://127.0.0.1:3128"}, {"TMPDIR", "/tmp/vigil-1234"}};
  in.json_status_fd = 5;
  in.command = {"bash", "-c", "make test"};
  const auto args = build_bwrap_args(in);

  const Tokens want = {
      "--die-with-parent",
      "--new-session",
      "--unshare-all",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/home/u/.ssh",
      "--bind",
      "/home/u/proj",
      "/home/u/proj",
      "--bind",
      "/tmp/vigil-1234",
      "/tmp/vigil-1234",
      "--ro-bind",
      "/dev/null",
      "/home/u/.netrc",
      "--ro-bind",
      "/home/u/.ssh/known_hosts",
      "/home/u/.ssh/known_hosts",
      "--bind",
      "/home/u/proj/.git",
      "/home/u/proj/.git",
      "--ro-bind",
      "/dev/null",
      "/home/u/proj/.bashrc",
      "--ro-bind",
      "/dev/null",
      "/home/u/proj/.vscode",
      "--ro-bind",
      "/home/u/proj/.git/hooks",
      "/home/u/proj/.git/hooks",
      "--setenv",
      "HTTP_PROXY",
      "http://127.0.0.1:3128",
      "--setenv",
      "TMPDIR",
      "/tmp/vigil-1234",
      "--json-status-fd",
      "5",
      "--chdir",
      "/home/u/proj",
      "--",
      "bash",
      "-c",
      "make test",
  };
  EXPECT_EQ(flatten(args), want);

  // One BwrapArg per logical option, each with the rule that produced it.
  ASSERT_EQ(args.size(), 7u + plan.ops.size() + 2u + 1u + 1u + 1u);
  EXPECT_EQ(args[7].rule, "filesystem.denyRead[0]: why");
  EXPECT_EQ(args[13].rule, "mandatory: .bashrc: why (placeholder: does not exist yet)");
  EXPECT_EQ(args[14].rule, "mandatory: .vscode: why (placeholder: does not exist yet)");
  EXPECT_EQ(args[15].rule, "mandatory: .git/hooks: why");
  for (const auto& a : args) {
    EXPECT_FALSE(a.tokens.empty());
    EXPECT_FALSE(a.rule.empty());
  }
}

// Each op, alone in a plan, becomes exactly these tokens after the prologue.
TEST(ArgvBuilderTest, EachOpKindMapsToItsFlag) {
  struct Row {
    std::string name;
    PlanOp op;
    Tokens tokens;
  };
  const std::vector<Row> rows = {
      {"hidden dir -> tmpfs", op(OpKind::kHide, "/s", true, DenyShape::kDir), {"--tmpfs", "/s"}},
      {"hidden file -> /dev/null read-only",
       op(OpKind::kHide, "/s.txt", true, DenyShape::kFile),
       {"--ro-bind", "/dev/null", "/s.txt"}},
      {"re-open dir",
       op(OpKind::kReopenRead, "/h/pub", true, DenyShape::kDir),
       {"--ro-bind", "/h/pub", "/h/pub"}},
      {"re-open file",
       op(OpKind::kReopenRead, "/h/f", true, DenyShape::kFile),
       {"--ro-bind", "/h/f", "/h/f"}},
      {"writable", op(OpKind::kWritable, "/w"), {"--bind", "/w", "/w"}},
      {"pin", op(OpKind::kPin, "/w/a"), {"--bind", "/w/a", "/w/a"}},
      {"deny existing dir",
       op(OpKind::kDenyWrite, "/w/d", true, DenyShape::kDir),
       {"--ro-bind", "/w/d", "/w/d"}},
      {"deny existing file",
       op(OpKind::kDenyWrite, "/w/f", true, DenyShape::kFile),
       {"--ro-bind", "/w/f", "/w/f"}},
      {"placeholder dir -> /dev/null too",
       op(OpKind::kDenyWrite, "/w/.vscode", false, DenyShape::kDir),
       {"--ro-bind", "/dev/null", "/w/.vscode"}},
      {"placeholder file -> /dev/null",
       op(OpKind::kDenyWrite, "/w/.bashrc", false, DenyShape::kFile),
       {"--ro-bind", "/dev/null", "/w/.bashrc"}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    Plan plan;
    plan.ops = {r.op};
    BwrapInputs in;
    in.plan = &plan;
    in.command = {"true"};
    EXPECT_EQ(flatten(build_bwrap_args(in)), concat(concat(kPrologue, r.tokens), {"--", "true"}));
  }
}

TEST(ArgvBuilderTest, NoPlanNoOptionalOptions) {
  BwrapInputs in;
  in.command = {"ls"};
  EXPECT_EQ(flatten(build_bwrap_args(in)), concat(kPrologue, {"--", "ls"}));
  in.json_status_fd = 0;  // fd 0 is a valid fd number
  EXPECT_EQ(flatten(build_bwrap_args(in)),
            concat(kPrologue, {"--json-status-fd", "0", "--", "ls"}));
  in.json_status_fd = -1;
  in.command.clear();
  EXPECT_EQ(flatten(build_bwrap_args(in)), concat(kPrologue, {"--"}));
}

// enableWeakerNestedSandbox: the only change is the missing --proc (the container's
// /proc stays, from the read-only bind of /); the namespaces, the /dev and the masks
// are the same, and the rule says what the sandbox gives up.
TEST(ArgvBuilderTest, WeakerNestedSandboxKeepsTheContainersProc) {
  BwrapInputs in;
  in.command = {"ls"};
  in.kernel_masks = {{"/proc/sys", MaskKind::kReadOnly, true, "sysctl"}};
  const Tokens normal = flatten(build_bwrap_args(in));
  in.weaker_nested = true;
  const auto args = build_bwrap_args(in);
  const Tokens weaker = flatten(args);
  Tokens expected = normal;
  const auto proc = std::find(expected.begin(), expected.end(), "--proc");
  ASSERT_NE(proc, expected.end());
  expected.erase(proc, proc + 2);
  EXPECT_EQ(weaker, expected);
  EXPECT_EQ(std::count(weaker.begin(), weaker.end(), "--unshare-all"), 1);
  EXPECT_EQ(std::count(weaker.begin(), weaker.end(), "/proc/sys"), 2) << "the masks stay";
  bool said = false;
  for (const auto& a : args)
    said = said || a.rule.find("every process of the container") != std::string::npos;
  EXPECT_TRUE(said) << "explain must show the weakening";
}

// An agent session's command (supervisor/launch/session_netns.h): bwrap keeps the
// session's network namespace it was started in; the only change is --share-net right
// after --unshare-all, and its rule says what the sandbox shares.
TEST(ArgvBuilderTest, SessionNetKeepsTheSessionsNamespace) {
  BwrapInputs in;
  in.command = {"ls"};
  const Tokens own = flatten(build_bwrap_args(in));
  EXPECT_EQ(std::count(own.begin(), own.end(), "--share-net"), 0);
  in.session_net = true;
  const auto args = build_bwrap_args(in);
  const Tokens shared = flatten(args);
  Tokens expected = own;
  expected.insert(std::find(expected.begin(), expected.end(), "--unshare-all") + 1, "--share-net");
  EXPECT_EQ(shared, expected);
  bool said = false;
  for (const auto& a : args)
    said = said || (a.tokens == Tokens{"--share-net"} &&
                    a.rule.find("only loopback") != std::string::npos);
  EXPECT_TRUE(said) << "explain must say which namespace the command shares";
}

// Each kind of kernel mask as a row, and their place: after every policy mount (a
// setting cannot undo one), before the session's own late binds.
TEST(ArgvBuilderTest, KernelMasks) {
  struct Row {
    KernelMask mask;
    Tokens tokens;
  };
  const Row rows[] = {
      {{"/proc/sys", MaskKind::kReadOnly, true, "w"}, {"--ro-bind", "/proc/sys", "/proc/sys"}},
      {{"/proc/sysrq-trigger", MaskKind::kReadOnly, false, "w"},
       {"--ro-bind", "/proc/sysrq-trigger", "/proc/sysrq-trigger"}},
      {{"/proc/keys", MaskKind::kEmpty, false, "w"}, {"--ro-bind", "/s/empty", "/proc/keys"}},
      {{"/sys/firmware", MaskKind::kEmpty, true, "w"},
       {"--tmpfs", "/sys/firmware", "--remount-ro", "/sys/firmware"}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(r.mask.path));
    Plan plan;
    plan.ops = {op(OpKind::kWritable, "/proc")};  // a policy that would open /proc up
    BwrapInputs in;
    in.plan = &plan;
    in.kernel_masks = {r.mask};
    in.empty_file = "/s/empty";
    in.late_ro_binds = {"/s/proxy.sock"};
    in.command = {"true"};
    const auto args = build_bwrap_args(in);
    const Tokens want = concat(
        concat(concat(kPrologue, {"--bind", "/proc", "/proc"}), r.tokens),
        {"--ro-bind", "/s/proxy.sock", "/s/proxy.sock", "--", "true"});
    EXPECT_EQ(flatten(args), want);
    EXPECT_EQ(args[8].rule, "kernel mask: w");  // 7 prologue options, the plan's one
  }
  // Without an empty file, /dev/null.
  BwrapInputs bare;
  bare.kernel_masks = {{"/proc/kcore", MaskKind::kEmpty, false, "w"}};
  EXPECT_EQ(flatten(build_bwrap_args(bare)),
            concat(kPrologue, {"--ro-bind", "/dev/null", "/proc/kcore", "--"}));
  // The table holds what the issue of root sandboxes names, each path absolute and once.
  std::set<std::string_view> seen;
  for (const auto& m : kernel_masks()) {
    EXPECT_TRUE(m.path.starts_with("/proc/") || m.path.starts_with("/sys/")) << m.path;
    EXPECT_TRUE(seen.insert(m.path).second) << m.path;
  }
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
                        "/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
                        "/sys/firmware"}) {
    EXPECT_TRUE(seen.count(p)) << p;
  }
}

TEST(ArgvBuilderTest, ArgsFdSerialisation) {
  Plan plan;
  plan.ops = {op(OpKind::kWritable, "/w")};
  BwrapInputs in;
  in.plan = &plan;
  in.cwd = "/w";
  in.command = {"echo", "--tmpfs", "/"};  // looks like options: must stay out of the fd
  const auto args = build_bwrap_args(in);

  const std::string ser = serialize_options_for_args_fd(args);
  std::string want;
  for (const auto& t : concat(kPrologue, {"--bind", "/w", "/w", "--chdir", "/w"})) {
    want += t;
    want.push_back('\0');
  }
  EXPECT_EQ(ser, want);
  ASSERT_FALSE(ser.empty());
  EXPECT_EQ(ser.back(), '\0');  // NUL after every token, the last one too
  EXPECT_EQ(ser.find("echo"), std::string::npos);
  EXPECT_EQ(ser.find(std::string("\0--\0", 4)), std::string::npos);

  EXPECT_EQ(command_tokens(args), (Tokens{"--", "echo", "--tmpfs", "/"}));
  // Options + command = the flat list.
  std::vector<std::string> split;
  std::string cur;
  for (const char c : ser) {
    if (c == '\0') {
      split.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  EXPECT_EQ(concat(split, command_tokens(args)), flatten(args));
}

TEST(ArgvBuilderTest, EmptyArgsAreSafe) {
  EXPECT_EQ(serialize_options_for_args_fd({}), "");
  EXPECT_TRUE(command_tokens({}).empty());
  EXPECT_TRUE(flatten({}).empty());
}

// Paths and values with spaces, newlines, quotes and shell syntax are single tokens,
// byte-for-byte.
TEST(ArgvBuilderTest, AwkwardPathsStaySingleTokens) {
  const std::vector<std::string> paths = {
      "/home/u/my project",        "/home/u/line\nbreak", "/home/u/it's \"quoted\"",
      "/home/u/$(rm -rf ~)`x`;|&", "/home/u/--bind",      "/home/u/tab\there",
      "/home/u/caf\xc3\xa9",
  };
  for (const auto& p : paths) {
    SCOPED_TRACE(p);
    Plan plan;
    plan.ops = {op(OpKind::kWritable, p), op(OpKind::kHide, p + "/s", true, DenyShape::kFile)};
    BwrapInputs in;
    in.plan = &plan;
    in.cwd = p;
    in.setenv = {{"V", p}};
    in.command = {p, "arg with space"};
    const auto args = build_bwrap_args(in);
    const Tokens tail = {
        "--bind", p, p,         "--ro-bind", "/dev/null", p + "/s", "--setenv",
        "V",      p, "--chdir", p,           "--",        p,        "arg with space"};
    EXPECT_EQ(flatten(args), concat(kPrologue, tail));
    // In the fd each one is still exactly one NUL-terminated token.
    const std::string ser = serialize_options_for_args_fd(args);
    std::size_t count = 0;
    for (const char c : ser) count += c == '\0' ? 1 : 0;
    EXPECT_EQ(count, kPrologue.size() + tail.size() - 3);  // minus "--", command and its arg
  }
}

}  // namespace
}  // namespace vigil
