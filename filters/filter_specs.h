// The seccomp filters vigil-init's worker runs under, as data: one table per filter, one
// row per rule (syscall, argument tests, action, why). Nothing here links libseccomp or
// names a syscall number: filters/bpf_compile.h turns a table into BPF, and
// filters/bpf_disasm.h prints that BPF back with the row each jump and return came from.
// Every table is a constant with static storage; reading it is thread- and fork-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vigil {

enum class ActionKind : std::uint8_t {
  kAllow,        // run the call
  kErrno,        // fail it with `err`, the kernel never sees it
  kNotify,       // SECCOMP_RET_USER_NOTIF: a supervisor holding the listener decides
  kKillProcess,  // SIGSYS to the whole process, no handler runs
};

struct FilterAction {
  ActionKind kind = ActionKind::kAllow;
  int err = 0;  // the errno, for kErrno only
  friend constexpr bool operator==(const FilterAction&, const FilterAction&) = default;
};

constexpr FilterAction allow_action() { return {ActionKind::kAllow, 0}; }
constexpr FilterAction errno_action(int err) { return {ActionKind::kErrno, err}; }
constexpr FilterAction notify_action() { return {ActionKind::kNotify, 0}; }
constexpr FilterAction kill_process_action() { return {ActionKind::kKillProcess, 0}; }

// The 32-bit SECCOMP_RET_* value a BPF return of this action carries (the kernel ABI,
// which libseccomp's SCMP_ACT_* values equal).
std::uint32_t seccomp_ret(FilterAction a);
// "ALLOW", "ERRNO(EPERM)", "NOTIFY", "KILL_PROCESS".
std::string describe(FilterAction a);

// One argument test: (arg & mask) == value. It is the only comparison the tables use.
// Arguments the kernel reads as int (a socket domain or type, unshare/clone flags, whose
// upper 32 bits it drops) are tested with masks inside the low 32 bits, so a caller that
// sets upper bits cannot slip past a rule the kernel would still act on.
struct ArgTest {
  int arg = -1;  // 0..5; -1 marks an unused slot
  std::uint64_t mask = 0;
  std::uint64_t value = 0;
  std::string_view text;  // how it reads in explain output: "domain == AF_UNIX"
  bool used() const { return arg >= 0; }
};

inline constexpr std::size_t kMaxArgTests = 2;

struct FilterRule {
  std::string_view syscall;                  // as libseccomp names it
  std::array<ArgTest, kMaxArgTests> when{};  // all used tests must hold
  FilterAction action;
  std::string_view why;  // one line: what the call would let a command do
};

struct FilterSpec {
  std::string_view name;     // "unix-block"; also the golden file's stem
  std::string_view purpose;  // one line for explain
  FilterAction default_action;
  FilterAction bad_arch;  // a syscall from a non-native ABI (i386 int 0x80, x32 numbers)
  std::span<const FilterRule> rules;
};

// "socket(domain == AF_UNIX)" / "setns".
std::string describe(const FilterRule& r);

const FilterSpec& arch_filter();
const FilterSpec& namespaces_filter();
const FilterSpec& unix_block_filter();

// Which unix-socket table the worker gets (network.allowUnixSockets /
// allowAllUnixSockets): kBlocked refuses socket(AF_UNIX) (no list); kBrokered lets stream
// and seqpacket sockets be made and traps connect() and datagram sockets to vigil-init
// (a listener is needed: observer on); kAll leaves AF_UNIX alone.
enum class UnixSockets : std::uint8_t { kBlocked, kBrokered, kAll };
const FilterSpec& unix_broker_filter();
const FilterSpec& unix_open_filter();
std::span<const FilterSpec* const> worker_filters(UnixSockets unix);
// vigil.network.capture: connect() trapped (observer/inet_broker.h). Added to the worker's
// tables unless the unix broker's already traps it (UnixSockets::kBrokered).
const FilterSpec& net_capture_filter();

// Every worker filter, in the order vigil-init installs them (arch first, so the ABI
// check stands even if a later install fails half-way; order does not change verdicts:
// the kernel runs every filter and the strictest action wins).
std::span<const FilterSpec* const> worker_filters();

}  // namespace vigil
