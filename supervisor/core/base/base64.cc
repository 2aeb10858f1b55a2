#include "supervisor/core/base/base64.h"

#include <cstdint>

namespace vigil {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int digit_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

void base64_append(std::string& out, std::string_view in) {
  const std::size_t at = out.size();
  out.resize(at + (in.size() + 2) / 3 * 4);
  char* o = out.data() + at;
  auto byte = [&](std::size_t i) { return std::uint32_t{static_cast<unsigned char>(in[i])}; };
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    *o++ = kAlphabet[(v >> 18) & 63];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = kAlphabet[(v >> 6) & 63];
    *o++ = kAlphabet[v & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest > 0) {
    std::uint32_t v = byte(i) << 16;
    if (rest == 2) v |= byte(i + 1) << 8;
    *o++ = kAlphabet[(v >> 18) & 63];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
}

std::string base64_encode(std::string_view in) {
  std::string out;
  base64_append(out, in);
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = k >= 4 - static_cast<std::size_t>(pad) ? 0 : digit_value(in[i + k]);
      if (d < 0) return std::nullopt;
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    // Canonical only: the bits below the last whole byte must be zero.
    if ((pad == 1 && (v & 0xffU) != 0) || (pad == 2 && (v & 0xffffU) != 0)) return std::nullopt;
    out += static_cast<char>((v >> 16) & 0xffU);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xffU);
    if (pad < 1) out += static_cast<char>(v & 0xffU);
  }
  return out;
}

}  // namespace vigil
