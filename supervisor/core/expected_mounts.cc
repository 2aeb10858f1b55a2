#include "supervisor/core/expected_mounts.h"

#include <charconv>

namespace vigil {
namespace {

// The next NUL-terminated field from `rest`, or nullopt when there is no terminator.
bool next_field(std::string_view* rest, std::string_view* field) {
  const auto nul = rest->find('\0');
  if (nul == std::string_view::npos) return false;
  *field = rest->substr(0, nul);
  rest->remove_prefix(nul + 1);
  return true;
}

// Plain decimal as the encoder writes it: no sign, no leading zero (one spelling per
// number, so a list has exactly one encoding).
bool parse_u64(std::string_view s, std::uint64_t* out) {
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string encode_expected_mounts(std::span<const ExpectedMount> mounts) {
  std::string out;
  for (const auto& m : mounts) {
    for (const std::string& field : {m.path, std::to_string(m.dev), std::to_string(m.ino)}) {
      out += field;
      out.push_back('\0');
    }
  }
  return out;
}

Result<std::vector<ExpectedMount>> decode_expected_mounts(std::string_view wire) {
  std::vector<ExpectedMount> out;
  while (!wire.empty()) {
    std::string_view path, dev, ino;
    if (!next_field(&wire, &path) || !next_field(&wire, &dev) || !next_field(&wire, &ino)) {
      return make_error(Errc::kInternal, "expected mounts: truncated record");
    }
    if (path.empty() || path.front() != '/') {
      return make_error(Errc::kInternal, "expected mounts: path is not absolute");
    }
    ExpectedMount m;
    m.path = std::string(path);
    if (!parse_u64(dev, &m.dev) || !parse_u64(ino, &m.ino)) {
      return make_error(Errc::kInternal, "expected mounts: bad number for " + m.path);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace vigil
