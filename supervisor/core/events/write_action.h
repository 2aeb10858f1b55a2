// The one word each write is shown by: the syscall table stores it per call
// (supervisor/core/events/syscall_table.h), write_action() refines it by the call's flags,
// and `replay --writes`, the <sandbox_violations> block and the HTML report all print
// to_string() of it (tests/unit/supervisor/replay/write_words_test.cc pins the three
// views to it over every row of the table).
#pragma once

#include <cstdint>
#include <string_view>

namespace vigil::events {

// What a write-intent call does, in the plain words the model is shown ("create",
// "delete", "change mode"); the syscall's name stays in the log. Declaration order is
// the order a line lists them in.
enum class WriteAction : std::uint8_t {
  kCreate,
  kWrite,
  kDelete,
  kRename,
  kLink,
  kChangeMode,
  kChangeOwner,
  kChangeTimes,
  kChangeAttributes,
  kRead,  // fs.read: an open of a hidden path (not a write; shares the block's verbs)
};
inline constexpr int kWriteActionCount = 10;

const char* to_string(WriteAction a);

// The action of one recorded write: the table's word for a Linux call (an open* is a
// create only with O_CREAT|O_EXCL: O_CREAT alone also opens an existing file, as `>>`
// and touch do, which is a write), the Seatbelt operation's for a macOS report; "write"
// for a name vigil does not know.
WriteAction write_action(std::string_view syscall, std::uint64_t flags);

}  // namespace vigil::events
