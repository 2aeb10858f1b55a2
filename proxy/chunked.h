// Finds where a chunked message body ends without decoding it. The proxy forwards body
// bytes unchanged; it only needs to know where the next message starts, so that a
// keep-alive connection stays in step on both sides of the proxy.
//
// Strict on purpose (RFC 9112 §7.1): CRLF after every line (no bare LF), hex sizes with
// no prefix or sign, no whitespace before the size. A body that two parsers could
// split differently is how request smuggling starts, and a forwarding proxy is exactly
// the place where the two parsers meet.
//
// Pure; a value type; safe to use from any one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vigil::proxy::http {

class ChunkedScanner {
 public:
  // Bounds on the parts that carry no payload, so that a peer cannot make the proxy
  // scan without end inside one "line".
  static constexpr std::size_t kMaxExtensionBytes = 4096;
  static constexpr std::size_t kMaxTrailerBytes = 64 * 1024;
  static constexpr unsigned kMaxSizeDigits = 32;  // leading zeros included

  struct Step {
    std::size_t consumed = 0;  // bytes of `bytes` that belong to the body (a prefix)
    bool done = false;         // the body ended within them
    bool error = false;
    const char* message = "";  // error only: what was wrong
  };

  // Scans the next bytes of the body. After done or error, consumes nothing.
  Step feed(std::string_view bytes);

  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kError; }

 private:
  enum class State {
    kSizeFirst,     // first hex digit of a chunk size
    kSize,          // more hex digits, or the end of the size
    kExtension,     // after ';' (or BWS) up to CR
    kSizeLf,        // LF after the size line's CR
    kData,          // `remaining_` payload bytes
    kDataCr,        // CR after the payload
    kDataLf,        // LF after the payload
    kTrailerStart,  // start of a trailer line, or CR of the final empty line
    kTrailerLine,   // inside a trailer field line
    kTrailerLf,     // LF after a trailer line's CR
    kFinalLf,       // LF of the final empty line
    kDone,
    kError,
  };

  Step fail(Step s, const char* message);
  const char* trailer_byte(char c);  // the trailer states' step

  State state_ = State::kSizeFirst;
  std::uint64_t remaining_ = 0;
  unsigned size_digits_ = 0;
  std::size_t extension_bytes_ = 0;
  std::size_t trailer_bytes_ = 0;
};

}  // namespace vigil::proxy::http
