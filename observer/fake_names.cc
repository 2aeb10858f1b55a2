#include "observer/fake_names.h"

#include <algorithm>

namespace vigil::init {

std::optional<std::uint32_t> FakeNames::address_of(const std::string& name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  // Offset 0 (198.18.0.0) is never given out: a zeroed address must not mean a name.
  if (names_.size() + 1 >= kFakeV4Size) return std::nullopt;
  names_.push_back(name);
  const std::uint32_t a = kFakeV4Base + static_cast<std::uint32_t>(names_.size());
  by_name_.emplace(name, a);
  return a;
}

std::optional<std::string> FakeNames::name_of(std::uint32_t v4) const {
  if (!is_fake(v4)) return std::nullopt;
  const std::uint32_t offset = v4 - kFakeV4Base;
  if (offset == 0 || offset > names_.size()) return std::nullopt;
  return names_[offset - 1];
}

bool FakeNames::is_fake_v6(const std::array<std::uint8_t, 16>& v6) {
  if (!std::equal(kFakeV6Prefix.begin(), kFakeV6Prefix.end(), v6.begin())) return false;
  // Bytes 6..11 are zero; the last four carry the IPv4 form.
  return std::all_of(v6.begin() + 6, v6.begin() + 12, [](std::uint8_t b) { return b == 0; });
}

std::optional<std::string> FakeNames::name_of_v6(const std::array<std::uint8_t, 16>& v6) const {
  if (!is_fake_v6(v6)) return std::nullopt;
  const std::uint32_t v4 = (std::uint32_t{v6[12]} << 24) | (std::uint32_t{v6[13]} << 16) |
                           (std::uint32_t{v6[14]} << 8) | std::uint32_t{v6[15]};
  return name_of(v4);
}

std::array<std::uint8_t, 16> FakeNames::v6_of(std::uint32_t v4) {
  std::array<std::uint8_t, 16> out{};
  std::copy(kFakeV6Prefix.begin(), kFakeV6Prefix.end(), out.begin());
  out[12] = static_cast<std::uint8_t>(v4 >> 24);
  out[13] = static_cast<std::uint8_t>(v4 >> 16);
  out[14] = static_cast<std::uint8_t>(v4 >> 8);
  out[15] = static_cast<std::uint8_t>(v4);
  return out;
}

}  // namespace vigil::init
