// build_cap_plan (supervisor/core/policy/cap_plan.h): which mechanism enforces each cap, for each
// kind of host; and vigil.limits in the settings.
#include "supervisor/core/policy/cap_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "supervisor/core/policy/policy_loader.h"

namespace vigil {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

HostLimits v2_host() {
  HostLimits h;
  h.cgroup2_dir = "/sys/fs/cgroup/user.slice/run.scope";
  h.cgroup2_memory = true;
  h.nproc_per_userns = true;
  h.mem_total_bytes = 16 * kGiB;
  return h;
}
HostLimits v1_root_host() {
  HostLimits h;
  h.root = true;
  h.nproc_per_userns = true;
  h.cgroup1_pids_dir = "/sys/fs/cgroup/pids";
  h.cgroup1_memory_dir = "/sys/fs/cgroup/memory/x";
  h.mem_total_bytes = 8 * kGiB;
  return h;
}
HostLimits bare_root_host() {
  HostLimits h;
  h.root = true;
  return h;
}
HostLimits bare_user_host() {
  HostLimits h;
  h.nproc_per_userns = true;
  h.mem_total_bytes = 8 * kGiB;
  return h;
}

std::string rlimits_text(const CapPlan& p) {
  std::string s;
  for (const auto& r : p.rlimits) s += r.name + "=" + std::to_string(r.value) + " ";
  return s;
}
std::string writes_text(const CapPlan& p) {
  std::string s;
  for (const auto& w : p.writes) s += w.parent_dir + "/" + w.file + "=" + w.value + " ";
  return s;
}

TEST(CapPlan, Table) {
  LimitsOptions defaults;
  LimitsOptions low;
  low.processes = 64;
  low.memory_bytes = 256u << 20;
  low.max_file_bytes = 1u << 20;
  low.timeout_s = 5;
  LimitsOptions none;
  none.processes = 0;
  none.memory_bytes = 0;
  none.max_file_bytes = 0;
  struct Row {
    const char* name;
    LimitsOptions want;
    HostLimits host;
    CapVia procs, mem, file;
    std::string rlimits;
    std::string writes;
    bool counts;
  };
  const std::vector<Row> rows = {
      {"v2 delegated: both caps in the cgroup", low, v2_host(), CapVia::kCgroup2, CapVia::kCgroup2,
       CapVia::kRlimit, "fsize=1048576 ",
       "/sys/fs/cgroup/user.slice/run.scope/pids.max=72 "
       "/sys/fs/cgroup/user.slice/run.scope/memory.max=268435456 "
       "/sys/fs/cgroup/user.slice/run.scope/memory.swap.max=0 "
       "/sys/fs/cgroup/user.slice/run.scope/memory.oom.group=1 ",
       false},
      {"v1 as root", low, v1_root_host(), CapVia::kCgroup1, CapVia::kCgroup1, CapVia::kRlimit,
       "fsize=1048576 ",
       "/sys/fs/cgroup/pids/pids.max=72 /sys/fs/cgroup/memory/x/memory.limit_in_bytes=268435456 "
       "/sys/fs/cgroup/memory/x/memory.memsw.limit_in_bytes=268435456 ",
       false},
      {"no cgroup, a user: rlimits", low, bare_user_host(), CapVia::kRlimit, CapVia::kRlimit,
       CapVia::kRlimit, "nproc=72 data=268435456 fsize=1048576 ", "", true},
      {"defaults: memory is half the host", defaults, bare_user_host(), CapVia::kRlimit,
       CapVia::kRlimit, CapVia::kRlimit, "nproc=4104 data=4294967296 fsize=8589934592 ", "",
       true},
      {"all caps off: nothing", none, bare_user_host(), CapVia::kNone, CapVia::kNone,
       CapVia::kNone, "", "", false},
      {"root with caps off needs no cgroup", none, bare_root_host(), CapVia::kNone,
       CapVia::kNone, CapVia::kNone, "", "", false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = build_cap_plan(r.want, r.host);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->processes_via, r.procs);
    EXPECT_EQ(p->memory_via, r.mem);
    EXPECT_EQ(p->file_via, r.file);
    EXPECT_EQ(rlimits_text(*p), r.rlimits);
    EXPECT_EQ(writes_text(*p), r.writes);
    EXPECT_EQ(p->count_processes, r.counts);
    EXPECT_EQ(p->timeout_s, r.want.timeout_s);
  }
}

TEST(CapPlan, AProcessCapNothingCanEnforceIsAnErrorNamingTheFix) {
  struct Row {
    const char* name;
    HostLimits host;
    const char* says;
  };
  HostLimits root_bare;
  root_bare.root = true;
  root_bare.nproc_per_userns = true;
  HostLimits old_kernel;  // RLIMIT_NPROC per uid across the host
  const std::vector<Row> rows = {
      {"root is exempt from RLIMIT_NPROC", root_bare, "root is exempt from RLIMIT_NPROC"},
      {"before 5.14", old_kernel, "before Linux 5.14"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    auto p = build_cap_plan(LimitsOptions{}, r.host);
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find(r.says), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find("systemd-run --user --scope"), std::string::npos);
    EXPECT_NE(p.error().message.find("vigil.limits.processes to 0"), std::string::npos);
  }
}

TEST(CapPlan, DescribeAndDetailNameTheCapAndTheSetting) {
  LimitsOptions low;
  low.processes = 64;
  low.memory_bytes = 256u << 20;
  auto p = build_cap_plan(low, bare_user_host());
  ASSERT_TRUE(p);
  EXPECT_EQ(describe_cap_plan(*p),
            "processes 64 (RLIMIT_NPROC, this sandbox's user namespace), memory 256.0 MiB "
            "(RLIMIT_DATA, per process), file size 8.0 GiB (RLIMIT_FSIZE), timeout none");
  EXPECT_NE(limit_detail("pids", *p).find("cap of 64"), std::string::npos);
  EXPECT_NE(limit_detail("pids", *p).find("vigil.limits.processes"), std::string::npos);
  EXPECT_NE(limit_detail("memory", *p).find("vigil.limits.memoryBytes"), std::string::npos);
  EXPECT_NE(limit_detail("file size", *p).find("vigil.limits.maxFileBytes"), std::string::npos);
}

TEST(CapPlan, SettingsKeys) {
  const LoadContext ctx{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};
  auto p = parse_policy(
      R"({"vigil":{"limits":{"processes":64,"memoryBytes":1048576,"maxFileBytes":0,
          "timeoutSeconds":2.5}}})",
      "s.json", ctx);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->vigil.limits.processes, 64u);
  EXPECT_EQ(p->vigil.limits.memory_bytes, std::optional<std::uint64_t>(1048576));
  EXPECT_EQ(p->vigil.limits.max_file_bytes, 0u);
  EXPECT_EQ(p->vigil.limits.timeout_s, std::optional<double>(2.5));

  auto d = parse_policy("{}", "s.json", ctx);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->vigil.limits, LimitsOptions{});
  EXPECT_EQ(d->vigil.limits.processes, 4096u);

  struct Bad {
    const char* text;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {R"({"vigil":{"limits":{"procs":1}}})", "unknown key vigil.limits.procs"},
      {R"({"vigil":{"limits":{"processes":-1}}})", "vigil.limits.processes"},
      {R"({"vigil":{"limits":{"processes":3}}})", "must be 0 (no cap) or at least 16, got 3"},
      {R"({"vigil":{"limits":{"memoryBytes":"1G"}}})", "vigil.limits.memoryBytes"},
      {R"({"vigil":{"limits":{"timeoutSeconds":0}}})", "vigil.limits.timeoutSeconds"},
      {R"({"vigil":{"limits":[]}})", "vigil.limits"},
  };
  for (const auto& b : bad) {
    auto r = parse_policy(b.text, "s.json", ctx);
    ASSERT_FALSE(r) << b.text;
    EXPECT_NE(r.error().message.find(b.says), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace vigil
