// The filter tables as data: every row names a syscall this machine has, tests only the
// bits the kernel reads, says why; compile refuses what it cannot express instead of
// skipping it; and the golden disassembly (tests/data/filters/<filter>.txt) matches byte
// for byte, so any change to a filter is a reviewed diff.
//
// Regenerate the golden files after an intended change (then review `git diff`):
//   VIGIL_UPDATE_GOLDEN=1 build/tests/vigil_unit_tests --gtest_filter='FilterGolden.*'
#include "filters/filter_specs.h"

#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/bpf_disasm.h"
#include "filters/notify_filter.h"
#include "filters/sandbox_program.h"
#include "filters/syscall_names.h"

namespace vigil {
namespace {

TEST(FilterSpecs, EveryRowIsWellFormed) {
  std::set<std::string_view> names;
  std::vector<const FilterSpec*> specs(worker_filters().begin(), worker_filters().end());
  specs.push_back(&unix_broker_filter());
  specs.push_back(&unix_open_filter());
  specs.push_back(&net_capture_filter());
  for (const FilterSpec* spec : specs) {
    EXPECT_TRUE(names.insert(spec->name).second) << "duplicate filter name " << spec->name;
    EXPECT_FALSE(spec->purpose.empty());
    EXPECT_EQ(spec->default_action, allow_action()) << spec->name;
    EXPECT_EQ(spec->bad_arch, kill_process_action()) << spec->name;
    std::set<std::string> rows;
    for (const FilterRule& r : spec->rules) {
      SCOPED_TRACE(std::string(spec->name) + ": " + describe(r));
      EXPECT_TRUE(native_syscall_number(r.syscall).has_value());
      EXPECT_FALSE(r.why.empty());
      EXPECT_NE(r.action, spec->default_action);
      EXPECT_TRUE(rows.insert(describe(r)).second) << "duplicate row";
      for (const ArgTest& t : r.when) {
        if (!t.used()) continue;
        EXPECT_LE(t.arg, 5);
        // Every argument we test is an int to the kernel: a mask above bit 31 would let
        // upper bits the kernel ignores decide the verdict.
        EXPECT_EQ(t.mask >> 32, 0u) << t.text;
        EXPECT_NE(t.mask, 0u) << t.text;
        EXPECT_EQ(t.value & ~t.mask, 0u) << t.text << ": a value outside its mask never matches";
        EXPECT_FALSE(t.text.empty());
      }
    }
  }
}

TEST(FilterSpecs, DescribeReadsLikeTheTable) {
  EXPECT_EQ(describe(unix_block_filter().rules[0]), "socket(domain == AF_UNIX)");
  EXPECT_EQ(describe(errno_action(EPERM)), "ERRNO(EPERM)");
  EXPECT_EQ(describe(errno_action(ENOSYS)), "ERRNO(ENOSYS)");
  EXPECT_EQ(describe(kill_process_action()), "KILL_PROCESS");
  EXPECT_EQ(describe(allow_action()), "ALLOW");
  EXPECT_EQ(seccomp_ret(errno_action(EPERM)),
            static_cast<std::uint32_t>(SECCOMP_RET_ERRNO | EPERM));
}

TEST(FilterSpecs, UnixSocketModesKeepTheRestOfTheClassClosed) {
  // Every mode keeps vsock and io_uring refused; only the broker traps connect(), and it
  // refuses nothing without a line (datagram sockets go to vigil-init).
  for (UnixSockets mode : {UnixSockets::kBlocked, UnixSockets::kBrokered, UnixSockets::kAll}) {
    const auto specs = worker_filters(mode);
    ASSERT_EQ(specs.size(), 3u);
    std::set<std::string> rows;
    for (const FilterRule& r : specs[2]->rules) rows.insert(describe(r) + " " + describe(r.action));
    SCOPED_TRACE(std::string(specs[2]->name));
    EXPECT_TRUE(rows.count("socket(domain == AF_VSOCK) ERRNO(EPERM)"));
    EXPECT_TRUE(rows.count("io_uring_setup ERRNO(EPERM)"));
    EXPECT_EQ(rows.count("connect NOTIFY"), mode == UnixSockets::kBrokered ? 1u : 0u);
    EXPECT_EQ(rows.count("socket(domain == AF_UNIX) ERRNO(EPERM)"), mode == UnixSockets::kBlocked ? 1u : 0u);
    EXPECT_EQ(rows.count("socket(domain == AF_UNIX, type == SOCK_DGRAM) NOTIFY"),
              mode == UnixSockets::kBrokered ? 1u : 0u);
    EXPECT_EQ(rows.count("socketpair(domain == AF_UNIX, type == SOCK_DGRAM) ERRNO(EPERM)"),
              mode == UnixSockets::kAll ? 0u : 1u);
  }
  EXPECT_FALSE(sandbox_program(false, UnixSockets::kBrokered).ok())
      << "the broker's trap needs the observer's listener";
  EXPECT_TRUE(sandbox_program(true, UnixSockets::kBrokered).ok());
  EXPECT_TRUE(sandbox_program(false, UnixSockets::kAll).ok());
}

TEST(FilterSpecs, WorkerFiltersInInstallOrder) {
  const auto all = worker_filters();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->name, "arch");
  EXPECT_EQ(all[1]->name, "namespaces");
  EXPECT_EQ(all[2]->name, "unix-block");
}

TEST(FilterSyscallNames, ResolvesThroughLibseccompAndTheOneTable) {
  EXPECT_EQ(native_syscall_number("socket"), SYS_socket);
  EXPECT_EQ(native_syscall_number("mount_setattr"), SYS_mount_setattr);
  EXPECT_FALSE(native_syscall_number("no_such_syscall").has_value());
  EXPECT_EQ(syscall_name(native_audit_arch(), SYS_socket), "socket");
  // open_tree_attr: libseccomp 2.5.4 cannot name it, so it comes from our table; once
  // libseccomp or the kernel headers know it, they must agree with the table.
  const auto ota = native_syscall_number("open_tree_attr");
  ASSERT_TRUE(ota.has_value());
  EXPECT_EQ(syscall_name(native_audit_arch(), *ota), "open_tree_attr");
#ifdef SYS_open_tree_attr
  EXPECT_EQ(*ota, SYS_open_tree_attr);
#endif
#if defined(__x86_64__)
  EXPECT_EQ(arch_name(native_audit_arch()), "x86_64");
#endif
}

TEST(FilterCompile, RefusesRowsItCannotExpress) {
  static constexpr FilterRule kUnknown[] = {
      {"no_such_syscall", {}, errno_action(EPERM), "test"},
  };
  const FilterSpec unknown{"t", "t", allow_action(), kill_process_action(), kUnknown};
  auto r = compile_filter(unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no_such_syscall"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("row 1"), std::string::npos) << r.error().message;

  // A syscall x86_64 does not have (libseccomp gives a negative pseudo-number).
  static constexpr FilterRule kPseudo[] = {{"socketcall", {}, errno_action(EPERM), "test"}};
#if defined(__x86_64__)
  EXPECT_FALSE(
      compile_filter(FilterSpec{"t", "t", allow_action(), kill_process_action(), kPseudo}).ok());
#endif

  // A row whose action is the default would be a silent no-op: libseccomp refuses it.
  static constexpr FilterRule kNoop[] = {{"read", {}, allow_action(), "test"}};
  EXPECT_FALSE(
      compile_filter(FilterSpec{"t", "t", allow_action(), kill_process_action(), kNoop}).ok());

  static constexpr FilterRule kBadArg[] = {
      {"read", {ArgTest{6, 1, 1, "arg6"}}, errno_action(EPERM), "test"}};
  EXPECT_FALSE(
      compile_filter(FilterSpec{"t", "t", allow_action(), kill_process_action(), kBadArg}).ok());
}

TEST(FilterCompile, CombinesOnlyTablesThatCannotDisagree) {
  auto all = compile_combined(worker_filters());
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_FALSE(compile_combined({}).ok());

  // Two tables with rows on one syscall: the stack and one program could answer
  // differently, so combining them is refused.
  static constexpr FilterRule kMoreUnshare[] = {
      {"unshare",
       {ArgTest{0, 0x40000000, 0x40000000, "flags & CLONE_NEWNET"}},
       errno_action(EACCES),
       "test"}};
  static constexpr FilterSpec kOverlap{"overlap", "t", allow_action(), kill_process_action(),
                                       kMoreUnshare};
  const FilterSpec* with_overlap[] = {&namespaces_filter(), &kOverlap};
  auto r = compile_combined(with_overlap);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("also has rows for this syscall"), std::string::npos)
      << r.error().message;

  static constexpr FilterSpec kKillByDefault{
      "strict", "t", kill_process_action(), kill_process_action(), {}};
  const FilterSpec* mixed[] = {&namespaces_filter(), &kKillByDefault};
  EXPECT_FALSE(compile_combined(mixed).ok());
}

TEST(FilterCompile, ProgramsFitAndEndInAReturn) {
  for (const FilterSpec* spec : worker_filters()) {
    auto prog = compile_filter(*spec);
    ASSERT_TRUE(prog.ok()) << prog.error().message;
    EXPECT_GT(prog->size(), 0u);
    EXPECT_LE(prog->size(), 256u) << spec->name << ": every instruction costs each syscall";
    EXPECT_EQ(BPF_CLASS(prog->back().code), BPF_RET);
    const sock_fprog fp = as_fprog(*prog);
    EXPECT_EQ(fp.len, prog->size());
    EXPECT_EQ(fp.filter, prog->data());
  }
}

// ---- disassembly ----------------------------------------------------------------------

TEST(FilterDisasm, EveryRowHasAReturnPath) {
  for (const FilterSpec* spec : worker_filters()) {
    auto prog = compile_filter(*spec);
    ASSERT_TRUE(prog.ok());
    const Disassembly d = disassemble(*spec, *prog);
    EXPECT_TRUE(d.rows_never_returned.empty()) << d.text;
    EXPECT_EQ(d.text.find("WARNING"), std::string::npos) << d.text;
    for (std::size_t r = 0; r < spec->rules.size(); ++r) {
      // Each row shows up at a return, with its rationale.
      const std::string ref = "<- #" + std::to_string(r + 1) + " " + describe(spec->rules[r]) +
                              ": " + std::string(spec->rules[r].why);
      EXPECT_NE(d.text.find(ref), std::string::npos) << ref << "\n" << d.text;
    }
  }
}

TEST(FilterDisasm, CombinedProgramKeepsEveryRow) {
  auto prog = compile_combined(worker_filters());
  ASSERT_TRUE(prog.ok());
  const Disassembly d = disassemble_combined(worker_filters(), *prog);
  EXPECT_TRUE(d.rows_never_returned.empty()) << d.text;
  EXPECT_NE(d.text.find("<- unix-block#1 socket(domain == AF_UNIX): "), std::string::npos)
      << d.text;
  EXPECT_NE(d.text.find("<- namespaces#5 clone3: "), std::string::npos) << d.text;
}

TEST(FilterDisasm, ReportsARowTheProgramLost) {
  // The unix-block table read against the namespaces program: none of its rows return.
  auto prog = compile_filter(namespaces_filter());
  ASSERT_TRUE(prog.ok());
  const Disassembly d = disassemble(unix_block_filter(), *prog);
  EXPECT_EQ(d.rows_never_returned.size(), unix_block_filter().rules.size());
  EXPECT_NE(d.text.find("WARNING: no path returns #1 socket(domain == AF_UNIX)"),
            std::string::npos);
}

TEST(FilterDisasm, SurvivesProgramsLibseccompDoesNotWrite) {
  const sock_filter odd[] = {
      BPF_STMT(BPF_LD | BPF_IMM, 7),
      BPF_STMT(BPF_MISC | BPF_TAX, 0),
      BPF_STMT(BPF_ST, 1),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 1),
      BPF_STMT(BPF_JMP | BPF_JA, 0),
      BPF_STMT(BPF_RET | BPF_A, 0),
      {0xffff, 0, 0, 0},
  };
  const Disassembly d = disassemble(unix_block_filter(), odd);
  EXPECT_NE(d.text.find("ld    #0x7"), std::string::npos) << d.text;
  EXPECT_NE(d.text.find("jgt   x"), std::string::npos) << d.text;
  EXPECT_NE(d.text.find("?     code=0xffff"), std::string::npos) << d.text;
}

std::string golden_path(std::string_view name) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/filters/" + std::string(name) + ".txt";
}

TEST(FilterGolden, DisassemblyMatchesTheReviewedFiles) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the golden files hold x86_64 syscall numbers";
#endif
  const char* update = std::getenv("VIGIL_UPDATE_GOLDEN");
  const bool write = update != nullptr && std::string(update) == "1";
  // One file per table, plus the one-program layout ("combined").
  std::vector<std::pair<std::string, std::string>> dumps;
  for (const FilterSpec* spec : worker_filters()) {
    auto prog = compile_filter(*spec);
    ASSERT_TRUE(prog.ok());
    dumps.emplace_back(std::string(spec->name), disassemble(*spec, *prog).text);
  }
  auto combined = compile_combined(worker_filters());
  ASSERT_TRUE(combined.ok());
  dumps.emplace_back("combined", disassemble_combined(worker_filters(), *combined).text);
  // The program vigil ships: what sandbox_program(true) hands vigil-init, the worker's
  // tables and the observer's in one program, annotated against those tables (a row the
  // shipped program lost or gained shows up as a diff here too).
  auto shipped = sandbox_program(true);
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  std::vector<const FilterSpec*> shipped_specs(worker_filters().begin(), worker_filters().end());
  shipped_specs.push_back(&notify_filter());
  dumps.emplace_back("shipped", disassemble_combined(shipped_specs, *shipped).text);
  // The unix-socket tables network.allowUnixSockets / allowAllUnixSockets pick, and the
  // program shipped with the broker, which is what `vigil run` hands vigil-init wherever
  // the gatekeeper is in force (a connect() row that lost its trap shows up here); the
  // plain "shipped" program above is the one for kernels without it.
  for (const FilterSpec* spec : {&unix_broker_filter(), &unix_open_filter(), &net_capture_filter()}) {
    auto prog = compile_filter(*spec);
    ASSERT_TRUE(prog.ok()) << prog.error().message;
    dumps.emplace_back(std::string(spec->name), disassemble(*spec, *prog).text);
  }
  auto brokered = sandbox_program(true, UnixSockets::kBrokered);
  ASSERT_TRUE(brokered.ok()) << brokered.error().message;
  const auto broker_workers = worker_filters(UnixSockets::kBrokered);
  std::vector<const FilterSpec*> brokered_specs(broker_workers.begin(), broker_workers.end());
  brokered_specs.push_back(&notify_filter());
  dumps.emplace_back("shipped-unix-broker", disassemble_combined(brokered_specs, *brokered).text);
  // vigil.network.capture with every unix socket allowed: the one mode whose worker tables
  // lack a connect() trap, so net-capture's joins them (shipped-capture-unix-open.txt).
  // With the broker (the default where the gatekeeper runs) its connect() row serves.
  auto captured = sandbox_program(true, UnixSockets::kAll, false, /*capture=*/true);
  ASSERT_TRUE(captured.ok()) << captured.error().message;
  const auto open_workers = worker_filters(UnixSockets::kAll);
  std::vector<const FilterSpec*> captured_specs(open_workers.begin(), open_workers.end());
  captured_specs.push_back(&net_capture_filter());
  captured_specs.push_back(&notify_filter());
  dumps.emplace_back("shipped-capture-unix-open",
                     disassemble_combined(captured_specs, *captured).text);
  auto brokered_capture = sandbox_program(true, UnixSockets::kBrokered, false, true);
  ASSERT_TRUE(brokered_capture.ok());
  // The broker's connect() trap serves capture: the same program.
  ASSERT_EQ(brokered_capture->size(), brokered->size());
  EXPECT_EQ(std::memcmp(brokered_capture->data(), brokered->data(),
                        brokered->size() * sizeof(sock_filter)),
            0);
  // The observer's filter, derived from the one syscall table (observer.txt).
  auto observer = compile_filter(notify_filter());
  ASSERT_TRUE(observer.ok());
  dumps.emplace_back("observer", disassemble(notify_filter(), *observer).text);
  // vigil.observer.reads: every open and openat trapped, whatever the flags
  // (observer-reads.txt; only those two rows differ from observer.txt).
  auto reads = compile_filter(notify_filter(true));
  ASSERT_TRUE(reads.ok());
  dumps.emplace_back("observer-reads", disassemble(notify_filter(true), *reads).text);
  for (const auto& [name, got] : dumps) {
    const std::string path = golden_path(name);
    if (write) {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << got;
      std::printf("wrote %s\n", path.c_str());
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "missing " << path << " (VIGIL_UPDATE_GOLDEN=1 writes it)";
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(got, want.str()) << name << " changed; if intended, rerun with "
                               << "VIGIL_UPDATE_GOLDEN=1 and review the diff of " << path;
  }
}

TEST(FilterGolden, ExplainPrintsEveryFilter) {
  auto text = explain_filters();
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const FilterSpec* spec : worker_filters()) {
    EXPECT_NE(text->find("# filter \"" + std::string(spec->name) + "\""), std::string::npos);
  }
  auto one = explain_filters(FilterLayout::kCombined);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_NE(one->find("# combined filter: arch + namespaces + unix-block"), std::string::npos);
}

}  // namespace
}  // namespace vigil
