// Pieces shared by the event schema's parts (event_read.cc, event_write.cc,
// event_validate.cc, event_schema.cc): not part of the schema's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "supervisor/core/events/event_schema.h"

namespace vigil::events {

// serialize(), or (legacy) with output chunks as text whenever they are valid UTF-8, as
// logs written before data_json() had them (event_write.cc).
std::string serialize_as(const Event& e, bool legacy);

namespace detail {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

inline constexpr std::int64_t kMaxPid = 4194304;  // PID_MAX_LIMIT on 64-bit Linux

inline bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Session ids and counter names end up in file names and report keys.
inline bool is_token(std::string_view s, std::size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace detail
}  // namespace vigil::events
