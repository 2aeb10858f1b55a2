// The launch check (supervisor/launch/launch_check.h): a plan, the host's mount table and the
// table bwrap built, each row with the verdict the supervisor must give before the
// sandbox is released.
#include "supervisor/launch/launch_check.h"

#include <gtest/gtest.h>

#include <map>

namespace vigil {
namespace {

// The argv of a session in workspace /w: a denyRead directory /w/secret, a protected
// /w/.bashrc, a placeholder /w/.mcp.json, a pinned /w/.git with read-only hooks, the
// session's temp dir, a kernel mask and the proxy socket last.
std::vector<BwrapArg> argv() {
  return {
      {{"--die-with-parent"}, ""},
      {{"--unshare-all"}, ""},
      {{"--cap-drop", "ALL"}, ""},
      {{"--ro-bind", "/", "/"}, ""},
      {{"--dev", "/dev"}, ""},
      {{"--proc", "/proc"}, ""},
      {{"--bind", "/w", "/w"}, ""},
      {{"--tmpfs", "/w/secret"}, ""},
      {{"--ro-bind", "/w/.bashrc", "/w/.bashrc"}, ""},
      {{"--ro-bind", "/dev/null", "/w/.mcp.json"}, ""},
      {{"--bind", "/w/.git", "/w/.git"}, ""},
      {{"--ro-bind", "/w/.git/hooks", "/w/.git/hooks"}, ""},
      {{"--bind", "/tmp/s/tmp", "/tmp/s/tmp"}, ""},
      {{"--tmpfs", "/sys/firmware", "--remount-ro", "/sys/firmware"}, ""},
      {{"--ro-bind", "/tmp/s/proxy.sock", "/tmp/s/proxy.sock"}, ""},
      {{"--setenv", "TMPDIR", "/tmp/s/tmp"}, ""},
      {{"--block-fd", "5"}, ""},
      {{"--chdir", "/w"}, ""},
      {{"--", "/usr/libexec/vigil/vigil-init", "--", "--bind", "/", "/evil"}, ""},
  };
}

constexpr const char* kHost =
    "1 0 254:0 / / rw - ext4 /dev/vda rw\n"
    "2 1 0:30 / /mnt/hosttmp rw - tmpfs tmpfs rw\n"
    "3 1 0:5 / /dev rw - devtmpfs udev rw\n"
    "4 1 0:21 / /proc rw - proc proc rw\n"
    "5 1 0:22 / /sys rw - sysfs sysfs rw\n"
    "6 1 0:40 / /w/build rw - ext4 /dev/vdb rw\n"
    "7 1 0:41 / /srv/data rw - xfs /dev/vdc rw\n";

// What bwrap builds from argv() on that host, as the sandbox's mountinfo shows it.
constexpr const char* kSandbox =
    "100 99 254:0 / / ro - ext4 /dev/vda rw\n"
    "101 100 0:30 / /mnt/hosttmp ro - tmpfs tmpfs rw\n"
    "102 100 0:5 / /dev ro - devtmpfs udev rw\n"
    "103 100 0:21 / /proc ro - proc proc rw\n"
    "104 100 0:22 / /sys ro - sysfs sysfs rw\n"
    "105 100 0:40 / /w/build ro - ext4 /dev/vdb rw\n"
    "106 100 0:41 / /srv/data ro - xfs /dev/vdc rw\n"
    "110 100 0:50 / /dev rw - tmpfs tmpfs rw\n"
    "111 110 0:5 /null /dev/null rw - devtmpfs udev rw\n"
    "112 110 0:5 /urandom /dev/urandom rw - devtmpfs udev rw\n"
    "113 110 0:51 / /dev/pts rw - devpts devpts rw\n"
    "114 103 0:52 / /proc rw - proc proc rw\n"
    "120 100 254:0 /w /w rw - ext4 /dev/vda rw\n"
    "121 120 0:40 / /w/build rw - ext4 /dev/vdb rw\n"
    "122 120 0:53 / /w/secret rw - tmpfs tmpfs rw\n"
    "123 120 254:0 /w/.bashrc /w/.bashrc ro - ext4 /dev/vda rw\n"
    "124 120 0:5 /null /w/.mcp.json ro - devtmpfs udev rw\n"
    "125 120 254:0 /w/.git /w/.git rw - ext4 /dev/vda rw\n"
    "126 125 254:0 /w/.git/hooks /w/.git/hooks ro - ext4 /dev/vda rw\n"
    "127 100 254:0 /tmp/s/tmp /tmp/s/tmp rw - ext4 /dev/vda rw\n"
    "128 104 0:54 / /sys/firmware ro - tmpfs tmpfs rw\n"
    "129 100 254:0 /tmp/s/proxy.sock /tmp/s/proxy.sock ro - ext4 /dev/vda rw\n";

const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> kIds = {
    {"/w", {1, 10}}, {"/w/.git", {1, 11}}, {"/tmp/s/tmp", {1, 12}}};

std::optional<std::pair<std::uint64_t, std::uint64_t>> identity(const std::string& p) {
  auto it = kIds.find(p);
  if (it == kIds.end()) return std::nullopt;
  return it->second;
}

std::vector<ExpectedMount> writable() {
  return {{"/w", 1, 10}, {"/w/.git", 1, 11}, {"/tmp/s/tmp", 1, 12}};
}

std::vector<init::Mount> parse(const std::string& text) {
  auto r = init::parse_mountinfo(text);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r ? *r : std::vector<init::Mount>{};
}

// kSandbox with the line of mount `id` replaced (or, for an unknown id, `line` added).
std::string with_line(const std::string& id, const std::string& line) {
  std::string out;
  bool replaced = false;
  size_t pos = 0;
  const std::string text = kSandbox;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string cur = text.substr(pos, nl - pos + 1);
    if (cur.starts_with(id + " ")) {
      out += line;
      replaced = true;
    } else {
      out += cur;
    }
    pos = nl + 1;
  }
  return replaced ? out : out + line;
}

TEST(LaunchCheck, PlannedMountsComeFromTheArgvInOrder) {
  const auto planned = planned_mounts(argv());
  using K = PlannedMount::Kind;
  const std::vector<PlannedMount> want = {
      {K::kBind, "/", "/", false},
      {K::kDev, "", "/dev", true},
      {K::kFresh, "", "/proc", true},
      {K::kBind, "/w", "/w", true},
      {K::kFresh, "", "/w/secret", true},
      {K::kBind, "/w/.bashrc", "/w/.bashrc", false},
      {K::kBind, "/dev/null", "/w/.mcp.json", false},
      {K::kBind, "/w/.git", "/w/.git", true},
      {K::kBind, "/w/.git/hooks", "/w/.git/hooks", false},
      {K::kBind, "/tmp/s/tmp", "/tmp/s/tmp", true},
      {K::kFresh, "", "/sys/firmware", true},
      {K::kBind, "/tmp/s/proxy.sock", "/tmp/s/proxy.sock", false},
  };
  EXPECT_EQ(planned, want);  // the command's "--bind / /evil" is not an option of bwrap's
  // An option it does not know stops the walk of that group, never shifts the operands.
  EXPECT_TRUE(planned_mounts({{{"--unknown", "--bind", "/a", "/b"}, ""}}).empty());
  EXPECT_TRUE(planned_mounts({{{"--bind", "/a"}, ""}}).empty());
}

TEST(LaunchCheck, TheTableIsFinalOnceBwrapHasPivotedAndMountedTheLast) {
  const std::string last = "/tmp/s/proxy.sock";
  EXPECT_TRUE(table_is_final(parse(kSandbox), last));
  // Still building under its temporary root.
  EXPECT_FALSE(table_is_final(
      parse("1 0 0:60 / / rw - tmpfs tmpfs rw\n"
            "2 1 0:60 /newroot /newroot rw - tmpfs tmpfs rw\n"
            "3 2 254:0 /tmp/s/proxy.sock /newroot/tmp/s/proxy.sock ro - ext4 /dev/vda rw\n"),
      last));
  EXPECT_FALSE(table_is_final(parse("1 0 0:60 / / rw - tmpfs tmpfs rw\n"
                                    "2 1 254:0 / /oldroot rw - ext4 /dev/vda rw\n"),
                              last));
  // The host's table, copied with the new namespace: the last mount is not there yet.
  EXPECT_FALSE(table_is_final(parse(kHost), last));
}

struct Row {
  const char* what;
  std::string sandbox;
  std::vector<ExpectedMount> writable;
  const char* names;  // empty: allowed; else a text the refusal must hold
  bool deny_read_srv = false;  // the plan also has a denyRead tmpfs at /srv
};

TEST(LaunchCheck, EveryMountMustBePlannedOrCarriedFromTheHost) {
  auto wrong_ino = writable();
  wrong_ino[1].ino = 42;
  auto missing = writable();
  missing.push_back({"/w/gone", 1, 13});
  const Row rows[] = {
      {"as planned", kSandbox, writable(), ""},
      {"a host mount inside a writable root stays writable there", kSandbox, writable(), ""},
      {"another of bwrap's device nodes",
       with_line("200", "200 110 0:5 /zero /dev/zero rw - devtmpfs udev rw\n"), writable(), ""},
      {"a pin's source swapped: the mount point holds another directory", kSandbox, wrong_ino,
       "/w/.git is not the directory"},
      {"a planned writable mount is not there (its destination was swapped)", kSandbox, missing,
       "/w/gone"},
      {"a workspace directory laid read-only over vigil-init's directory",
       with_line("200", "200 100 254:0 /w/evil /usr/libexec/vigil ro - ext4 /dev/vda rw\n"),
       writable(), "/usr/libexec/vigil"},
      {"/dev/null laid over a file outside the workspace",
       with_line("200", "200 100 0:5 /null /home/u/.bashrc ro - devtmpfs udev rw\n"), writable(),
       "/home/u/.bashrc"},
      {"a writable bind that followed a swapped-in symlink outside",
       with_line("200", "200 100 254:0 /home/u /home/u rw - ext4 /dev/vda rw\n"), writable(),
       "/home/u"},
      {"a mount where the host has one, but of another filesystem",
       with_line("106", "106 100 0:99 / /srv/data ro - xfs /dev/vdc rw\n"), writable(),
       "/srv/data"},
      {"a host device node that bwrap's /dev does not make",
       with_line("200", "200 110 0:5 /sda /dev/sda rw - devtmpfs udev rw\n"), writable(),
       "/dev/sda"},
      {"a host mount bwrap could not make read-only",
       with_line("106", "106 100 0:41 / /srv/data rw - xfs /dev/vdc rw\n"), writable(),
       "filesystem.denyRead"},
      {"the same mount hidden under a denyRead tmpfs, as that message advises",
       with_line("106", "106 100 0:41 / /srv/data rw - xfs /dev/vdc rw\n") +
           "200 100 0:55 / /srv rw - tmpfs tmpfs rw\n",
       writable(), "", true},
  };
  auto args = argv();
  args.insert(args.begin() + 8, BwrapArg{{"--tmpfs", "/srv"}, "denyRead /srv"});
  const auto planned = planned_mounts(argv());
  const auto planned_srv = planned_mounts(args);
  const auto host = parse(kHost);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const auto sandbox = parse(row.sandbox);
    LaunchTables t;
    t.planned = row.deny_read_srv ? planned_srv : planned;
    t.writable = row.writable;
    t.sandbox = &sandbox;
    t.host = &host;
    const auto r = check_launch_table(t, identity);
    const std::string names = row.names;
    EXPECT_EQ(r.ok(), names.empty()) << (r ? "" : r.error().message);
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, Errc::kRefused);
      EXPECT_NE(r.error().message.find(names), std::string::npos) << r.error().message;
    }
  }
}

}  // namespace
}  // namespace vigil
