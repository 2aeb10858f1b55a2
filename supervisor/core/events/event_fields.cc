// The field table of every kind of record (event_fields.h). Order is the canonical order
// serialize() writes; docs/events.md's table of kinds lists the same names in the same
// order (held together by tests/unit/supervisor/core/events/event_fields_test.cc).
#include "supervisor/core/events/event_fields.h"

#include <array>

#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events {
namespace {

using detail::kMaxPid;
using B = Bound;
using F = FieldType;
constexpr Presence kReq = Presence::kRequired;
constexpr Presence kOpt = Presence::kOptional;

constexpr FieldSpec kPid{"pid", F::kInteger, kReq, B::kNone, 1, kMaxPid};
constexpr FieldSpec kPort{"port", F::kInteger, kReq, B::kNone, 0, 65535};
constexpr FieldSpec kExitCode{"exit_code", F::kInteger, kOpt, B::kNone, 0, 255};
constexpr FieldSpec kSignal{"signal", F::kInteger, kOpt, B::kNone, 1, 64};

constexpr FieldSpec kSessionStart[] = {
    {"argv", F::kBytesArray, kReq, B::kArg},  {"cwd", F::kBytes, kReq, B::kPath},
    {"backend", F::kWord, kReq},              {"policy_digest", F::kWord, kReq},
    {"versions", F::kObject, kReq},           {"log", F::kBytes, kOpt, B::kPath},
    {"key_id", F::kWord, kOpt},               {"witness", F::kWord, kOpt},
    {"scope", F::kObject, kOpt},
};
constexpr FieldSpec kProcExec[] = {
    kPid,
    {"ppid", F::kInteger, kReq, B::kNone, 0, kMaxPid},
    {"argv", F::kBytesArray, kReq, B::kArg},
    {"cwd", F::kBytes, kReq, B::kPath},
    {"truncated", F::kBoolean, kOpt},
    {"exe", F::kBytes, kOpt, B::kPath},
};
constexpr FieldSpec kFsWrite[] = {
    kPid,
    {"syscall", F::kWord, kReq},
    {"path", F::kBytes, kReq, B::kPath},
    {"resolved", F::kBytes, kReq, B::kPath},
    {"flags", F::kCount, kReq},
    {"verdict", F::kWord, kReq},
    {"reason", F::kBytes, kReq, B::kText},
    {"from", F::kBytes, kOpt, B::kPath},
    {"from_resolved", F::kBytes, kOpt, B::kPath},
    {"unguarded", F::kBytes, kOpt, B::kText},
    {"result", F::kWord, kOpt},
    {"ignored", F::kBytes, kOpt, B::kText},
    {"rule_id", F::kBytes, kOpt, B::kText},
};
constexpr FieldSpec kNetDecision[] = {
    {"proto", F::kWord, kReq},
    {"host", F::kBytes, kReq, B::kText},
    kPort,
    {"verdict", F::kWord, kReq},
    {"rule", F::kBytes, kReq, B::kText},
    {"reason", F::kBytes, kReq, B::kText},
    {"refused_by", F::kBytes, kOpt, B::kText},
    {"address", F::kBytes, kOpt, B::kText},
    {"guard_check", F::kBytes, kOpt, B::kText},
    {"ignored", F::kBytes, kOpt, B::kText},
    {"rule_id", F::kBytes, kOpt, B::kText},
    {"captured", F::kBoolean, kOpt},
    {"program", F::kBytes, kOpt, B::kText},
};
constexpr FieldSpec kNetUpstreamFailure[] = {
    {"proto", F::kWord, kReq},
    {"host", F::kBytes, kReq, B::kText},
    kPort,
    {"address", F::kBytes, kOpt, B::kText},
    {"what", F::kBytes, kReq, B::kText},
};
constexpr FieldSpec kIo[] = {{"data", F::kData, kReq, B::kData}};
constexpr FieldSpec kObserverStats[] = {
    {"events", F::kCount, kReq}, {"dropped", F::kCount, kReq}, {"held", F::kCount, kReq}};
constexpr FieldSpec kAnnotation[] = {
    {"text", F::kBytes, kReq, B::kData}, {"newline_before", F::kBoolean, kOpt}};
constexpr FieldSpec kSessionEnd[] = {
    kExitCode,
    kSignal,
    {"duration_ns", F::kCount, kReq},
    {"counters", F::kObject, kReq},
    {"reason", F::kBytes, kOpt, B::kText},
    {"mac", F::kWord, kOpt},
};
constexpr FieldSpec kFsQuarantine[] = {
    {"path", F::kBytes, kReq, B::kPath},
    {"rule", F::kBytes, kReq, B::kText},
    {"reason", F::kBytes, kReq, B::kText},
    {"moved_to", F::kBytes, kOpt, B::kPath},
    {"removed", F::kBytesArray, kOpt, B::kText},
    {"restore", F::kBytes, kOpt, B::kData},
};
constexpr FieldSpec kCommandStart[] = {
    {"argv", F::kBytesArray, kReq, B::kArg}, {"cwd", F::kBytes, kReq, B::kPath}};
constexpr FieldSpec kCommandEnd[] = {
    kExitCode, kSignal, {"duration_ns", F::kCount, kReq}, {"counters", F::kObject, kReq}};
constexpr FieldSpec kPolicyUpdate[] = {
    {"add", F::kBytesArray, kReq, B::kText}, {"remove", F::kBytesArray, kReq, B::kText}};
// Logs before issue 38.4 carry max_output_bytes alone: the rest is optional to read.
constexpr FieldSpec kLogTruncated[] = {
    {"max_output_bytes", F::kCount, kReq}, {"omitted_bytes", F::kCount, kOpt},
    {"stdout_bytes", F::kCount, kOpt},     {"stderr_bytes", F::kCount, kOpt},
    {"stdout_sha256", F::kWord, kOpt},     {"stderr_sha256", F::kWord, kOpt},
};
constexpr FieldSpec kNetAsk[] = {
    {"ask", F::kCount, kReq},
    {"proto", F::kWord, kReq},
    {"host", F::kBytes, kReq, B::kText},
    {"port", F::kInteger, kReq, B::kNone, 1, 65535},
    {"address", F::kBytes, kOpt, B::kText},
    {"timeout_ms", F::kCount, kReq},
};
constexpr FieldSpec kNetAskAnswer[] = {
    {"ask", F::kCount, kReq},
    {"answer", F::kWord, kReq},
    {"entry", F::kBytes, kOpt, B::kText},
    {"written", F::kBytes, kOpt, B::kPath},
    {"error", F::kBytes, kOpt, B::kText},
    {"via", F::kWord, kOpt},
};
constexpr FieldSpec kLimitReached[] = {
    {"limit", F::kBytes, kReq, B::kText}, {"detail", F::kBytes, kReq, B::kText}};
constexpr FieldSpec kFsImage[] = {
    {"phase", F::kWord, kReq},
    {"path", F::kBytes, kReq, B::kPath},
    {"type", F::kWord, kReq},
    {"size", F::kCount, kOpt},
    {"mode", F::kInteger, kOpt, B::kNone, 0, 07777},
    {"uid", F::kInteger, kOpt, B::kNone, 0, 0xffffffffLL},
    {"gid", F::kInteger, kOpt, B::kNone, 0, 0xffffffffLL},
    {"sha256", F::kWord, kOpt},
    {"target", F::kBytes, kOpt, B::kPath},
    {"stored", F::kBoolean, kOpt},
    {"note", F::kBytes, kOpt, B::kText},
    {"best_effort", F::kBoolean, kOpt},
};
constexpr FieldSpec kFsRead[] = {
    kPid,
    {"syscall", F::kWord, kReq},
    {"path", F::kBytes, kReq, B::kPath},
    {"resolved", F::kBytes, kReq, B::kPath},
    {"reason", F::kBytes, kReq, B::kText},
};
constexpr FieldSpec kNetUnix[] = {
    kPid,
    {"syscall", F::kWord, kReq},
    {"type", F::kWord, kReq},
    {"path", F::kBytes, kReq, B::kPath},
    {"resolved", F::kBytes, kReq, B::kPath},
    {"verdict", F::kWord, kReq},
    {"reason", F::kBytes, kReq, B::kText},
    {"result", F::kWord, kReq},
};
constexpr FieldSpec kCommandCancel[] = {
    {"by", F::kWord, kReq},
    {"via", F::kBytes, kReq, B::kText},
    {"reason", F::kBytes, kOpt, B::kText},
    {"grace_ms", F::kCount, kReq},
};
// secret_injected is always written (false included); older writers may leave it out.
constexpr FieldSpec kNetRequest[] = {
    {"method", F::kBytes, kReq, B::kText},
    {"host", F::kBytes, kReq, B::kText},
    kPort,
    {"path", F::kBytes, kReq, B::kPath},
    {"status", F::kInteger, kReq, B::kNone, 0, 999},
    {"bytes_up", F::kCount, kReq},
    {"bytes_down", F::kCount, kReq},
    {"secret_injected", F::kBoolean, kOpt},
    {"verdict", F::kWord, kReq},
    {"rule", F::kBytes, kOpt, B::kText},
    {"reason", F::kBytes, kOpt, B::kText},
};

// Row i is Kind i (the Body variant's order).
constexpr std::array<std::span<const FieldSpec>, std::variant_size_v<Body>> kTable = {
    kSessionStart, kProcExec,      kFsWrite,      kNetDecision,   kNetUpstreamFailure,
    kIo,           kIo,            kObserverStats, kAnnotation,   kSessionEnd,
    kFsQuarantine, kCommandStart,  kCommandEnd,   kPolicyUpdate,  kLogTruncated,
    kNetAsk,       kNetAskAnswer,  kLimitReached, kFsImage,       kFsRead,
    kNetUnix,      kCommandCancel, kNetRequest,
};

}  // namespace

std::span<const FieldSpec> fields_of(Kind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kTable.size() ? kTable[i] : std::span<const FieldSpec>{};
}

const FieldSpec* field_of(Kind kind, std::string_view name) {
  for (const FieldSpec& f : fields_of(kind)) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::size_t bound_size(Bound b, const Limits& lim) {
  switch (b) {
    case Bound::kPath:
      return lim.max_path;
    case Bound::kText:
      return lim.max_text;
    case Bound::kArg:
      return lim.max_arg;
    case Bound::kData:
      return lim.max_data;
    case Bound::kNone:
      break;
  }
  return 0;
}

}  // namespace vigil::events
