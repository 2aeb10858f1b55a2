// The DNS stub's names and the fake addresses it hands out (vigil.network.capture): one
// address per name, kept for the sandbox's life (one command: a warm session's next
// command starts a new vigil-init and a new table), so the connect broker
// (observer/inet_broker.h) maps an address back to the name it stood for.
//
// IPv4: 198.18.0.0/15 (RFC 2544, benchmarking: never routed on the Internet). IPv6: the
// same number under 64:ff9b:1::/48 (RFC 8215, local-use translation prefix: never routed
// either), so a name has one address per family and both lead to it. Neither range can
// be reached from the sandbox anyway (its network namespace has only lo): a fake address
// means something only to the broker. Pure; not thread-safe (the loop's thread only).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vigil::init {

inline constexpr std::uint32_t kFakeV4Base = 0xC6120000;  // 198.18.0.0
inline constexpr std::uint32_t kFakeV4Size = 1u << 17;   // a /15
// The first 6 bytes of the IPv6 form: 64:ff9b:1::/48.
inline constexpr std::array<std::uint8_t, 6> kFakeV6Prefix = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};

class FakeNames {
 public:
  // The address (host byte order, in the /15) of `name` (lower case, no trailing dot),
  // given out now if it has none yet; nullopt once the range is spent.
  std::optional<std::uint32_t> address_of(const std::string& name);
  // The name an address was given to, or nullopt.
  std::optional<std::string> name_of(std::uint32_t v4) const;
  std::optional<std::string> name_of_v6(const std::array<std::uint8_t, 16>& v6) const;
  static bool is_fake(std::uint32_t v4) { return (v4 & ~(kFakeV4Size - 1)) == kFakeV4Base; }
  static bool is_fake_v6(const std::array<std::uint8_t, 16>& v6);
  static std::array<std::uint8_t, 16> v6_of(std::uint32_t v4);

 private:
  std::map<std::string, std::uint32_t> by_name_;
  std::vector<std::string> names_;  // by offset - 1
};

}  // namespace vigil::init
