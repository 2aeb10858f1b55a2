// The event schema's vocabulary: kind, source, protocol and verdict names, the plain word
// for each write, and the limits. The parsers are in
// event_read.cc, the serialiser in event_write.cc, the value checks in event_validate.cc.
#include "supervisor/core/events/event_schema.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <type_traits>
#include <utility>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil::events {
namespace {

constexpr std::array<const char*, 23> kKindNames = {
    "session.start",        "proc.exec",     "fs.write",      "net.decision",
    "net.upstream_failure", "io.stdout",     "io.stderr",     "observer.stats",
    "annotation",           "session.end",   "fs.quarantine", "command.start",
    "command.end",          "policy.update", "log.truncated", "net.ask",
    "net.ask.answer",       "limit.reached", "fs.image",      "fs.read",
    "net.unix",             "command.cancel", "net.request",
};
static_assert(std::variant_size_v<Body> == kKindNames.size());

}  // namespace

const char* to_string(Source s) {
  switch (s) {
    case Source::kObserver:
      return "observer";
    case Source::kProxy:
      return "proxy";
    case Source::kSupervisor:
      return "supervisor";
  }
  return "?";
}

const char* to_string(Kind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kKindNames.size() ? kKindNames[i] : "?";
}

std::optional<Kind> kind_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (s == kKindNames[i]) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

Kind kind_of(const Body& b) { return static_cast<Kind>(b.index()); }

Limits Limits::log() {
  Limits l;
  l.max_line = 8 * 1024 * 1024;
  l.max_argv = 4096;
  l.max_arg = 128 * 1024;
  l.max_data = 1024 * 1024;
  l.max_text = 4096;
  return l;
}

namespace {

// The plain word the model is shown for a write (the syscall stays in the log). Linux
// calls take theirs from the one syscall table's action (core/events/syscall_table.h);
// the Seatbelt operations a macOS kernel report names (supervisor/orchestrator/macos_session.h), where
// no syscall is known, are listed here.
struct WriteName {
  std::string_view name;
  WriteAction action;
};
constexpr WriteName kSeatbelt[] = {
    {"file-write-create", WriteAction::kCreate},
    {"file-write-data", WriteAction::kWrite},
    {"file-write-flags", WriteAction::kChangeAttributes},
    {"file-write-mode", WriteAction::kChangeMode},
    {"file-write-owner", WriteAction::kChangeOwner},
    {"file-write-setugid", WriteAction::kChangeMode},
    {"file-write-times", WriteAction::kChangeTimes},
    {"file-write-unlink", WriteAction::kDelete},
    {"file-write-xattr", WriteAction::kChangeAttributes},
    {"file-link", WriteAction::kLink},
};

std::optional<WriteAction> lookup(std::span<const WriteName> table, std::string_view name) {
  for (const auto& w : table)
    if (w.name == name) return w.action;
  return std::nullopt;
}

// The action of a known write name; nullopt when vigil does not accept the name.
std::optional<WriteAction> base_action(std::string_view name) {
  // Linux: exactly the calls of the one syscall table, execs aside (they are proc.exec).
  if (const WriteSyscall* row = find_write_syscall(name)) {
    if (row->emulation == Emulation::kExec) return std::nullopt;
    return row->action;
  }
  return lookup(kSeatbelt, name);
}

}  // namespace

bool is_known_write_syscall(std::string_view name) { return base_action(name).has_value(); }

bool is_call_result(std::string_view s) {
  if (s == "0") return true;
  // An errno name: E and upper-case letters or digits (E2BIG), nothing else.
  return s.size() >= 2 && s.size() <= 32 && s[0] == 'E' &&
         std::all_of(s.begin() + 1, s.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
         });
}

WriteAction write_action(std::string_view syscall, std::uint64_t flags) {
  const std::optional<WriteAction> a = base_action(syscall);
  if (!a) return WriteAction::kWrite;
  // O_CREAT|O_EXCL (0100|0200 on every Linux ABI vigil runs on) is sure to create; O_CREAT
  // alone also opens an existing file (`>>`, touch), which is a write.
  if (*a == WriteAction::kWrite && syscall.starts_with("open") && (flags & 0300U) == 0300U)
    return WriteAction::kCreate;
  return *a;
}

const char* to_string(WriteAction a) {
  switch (a) {
    case WriteAction::kWrite:
      return "write";
    case WriteAction::kCreate:
      return "create";
    case WriteAction::kDelete:
      return "delete";
    case WriteAction::kRename:
      return "rename";
    case WriteAction::kLink:
      return "link";
    case WriteAction::kChangeMode:
      return "change mode";
    case WriteAction::kChangeOwner:
      return "change owner";
    case WriteAction::kChangeTimes:
      return "change times";
    case WriteAction::kChangeAttributes:
      return "change attributes";
    case WriteAction::kRead:
      return "read";
  }
  return "write";
}

// One home for the escaping: supervisor/core/base/display_text.h.
std::string escape_for_terminal(std::string_view s) { return escape_text(s, TextSink::kTerminal); }

std::string escape_for_html(std::string_view s) { return escape_text(s, TextSink::kHtml); }

}  // namespace vigil::events
