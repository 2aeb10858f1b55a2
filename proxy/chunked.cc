#include "proxy/chunked.h"

#include <algorithm>
#include <limits>

namespace vigil::proxy::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// What may appear in a chunk extension or a trailer line: HTAB, SP, VCHAR, obs-text.
bool is_line_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

}  // namespace

ChunkedScanner::Step ChunkedScanner::fail(Step s, const char* message) {
  state_ = State::kError;
  s.error = true;
  s.message = message;
  return s;
}

// One byte after the last chunk: the trailer lines and the final CRLF. The error's
// message, or nullptr.
const char* ChunkedScanner::trailer_byte(char c) {
  switch (state_) {
    case State::kTrailerStart:
      if (c == '\r') {
        state_ = State::kFinalLf;
      } else if (c == '\n' || !is_line_byte(c) || c == ' ' || c == '\t') {
        return "malformed trailer line";
      } else {
        state_ = State::kTrailerLine;
        if (++trailer_bytes_ > kMaxTrailerBytes) return "trailer too long";
      }
      return nullptr;
    case State::kTrailerLine:
      if (c == '\r') {
        state_ = State::kTrailerLf;
      } else if (!is_line_byte(c)) {
        return "control byte in a trailer line";
      } else if (++trailer_bytes_ > kMaxTrailerBytes) {
        return "trailer too long";
      }
      return nullptr;
    case State::kTrailerLf:
      if (c != '\n') return "trailer line not ended by CRLF";
      state_ = State::kTrailerStart;
      return nullptr;
    case State::kFinalLf:
      if (c != '\n') return "chunked body not ended by CRLF";
      state_ = State::kDone;
      return nullptr;
    default:
      return nullptr;
  }
}

ChunkedScanner::Step ChunkedScanner::feed(std::string_view bytes) {
  Step s;
  if (state_ == State::kError) return fail(s, "chunked body already failed");
  std::size_t i = 0;
  while (i < bytes.size() && state_ != State::kDone) {
    const char c = bytes[i];
    switch (state_) {
      case State::kSizeFirst:
      case State::kSize: {
        const int h = hex_value(c);
        if (h >= 0) {
          if (++size_digits_ > kMaxSizeDigits) return fail(s, "chunk size too long");
          if (remaining_ > (std::numeric_limits<std::uint64_t>::max() >> 4)) {
            return fail(s, "chunk size overflows");
          }
          remaining_ = (remaining_ << 4) | static_cast<std::uint64_t>(h);
          state_ = State::kSize;
          ++i;
          break;
        }
        if (state_ == State::kSizeFirst) return fail(s, "chunk size is not hexadecimal");
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (c == ';' || c == ' ' || c == '\t') {
          state_ = State::kExtension;
        } else {
          return fail(s, "junk after the chunk size");
        }
        ++i;
        break;
      }
      case State::kExtension:
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (!is_line_byte(c)) {
          return fail(s, "control byte in a chunk extension");
        } else if (++extension_bytes_ > kMaxExtensionBytes) {
          return fail(s, "chunk extensions too long");
        }
        ++i;
        break;
      case State::kSizeLf:
        if (c != '\n') return fail(s, "chunk size line not ended by CRLF");
        ++i;
        size_digits_ = 0;
        state_ = remaining_ == 0 ? State::kTrailerStart : State::kData;
        break;
      case State::kData: {
        const std::uint64_t avail = bytes.size() - i;
        const std::uint64_t take = std::min(avail, remaining_);
        i += static_cast<std::size_t>(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (c != '\r') return fail(s, "chunk data not followed by CRLF");
        state_ = State::kDataLf;
        ++i;
        break;
      case State::kDataLf:
        if (c != '\n') return fail(s, "chunk data not followed by CRLF");
        state_ = State::kSizeFirst;
        ++i;
        break;
      case State::kTrailerStart:
      case State::kTrailerLine:
      case State::kTrailerLf:
      case State::kFinalLf:
        if (const char* bad = trailer_byte(c)) return fail(s, bad);
        ++i;
        break;
      case State::kDone:
      case State::kError:
        break;
    }
  }
  s.consumed = i;
  s.done = state_ == State::kDone;
  return s;
}

}  // namespace vigil::proxy::http
