// SHA-256 (FIPS 180-4), for the session log's hash chain and the policy digest.
// Our own ~100 lines rather than a crypto library: vigil links its runtime statically
// and needs nothing else from one. Plain value type; not thread-safe (like any value);
// no allocation, no exceptions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vigil {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  void update(std::string_view data);
  void update(const void* data, std::size_t size);
  // Pads and returns the digest. The object must not be updated afterwards.
  Digest finish();

 private:
  void blocks(const std::uint8_t* p, std::size_t n);  // whole 64-byte blocks (sha256_blocks.h)

  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;     // bytes in buf_
  std::uint64_t total_ = 0;  // bytes hashed so far
};

Sha256::Digest sha256(std::string_view data);
// Lower-case hex, 64 characters.
std::string to_hex(const Sha256::Digest& d);
std::string sha256_hex(std::string_view data);
// HMAC-SHA256 (RFC 2104): the session log's seal (supervisor/log/log_key.h).
Sha256::Digest hmac_sha256(std::string_view key, std::string_view message);

}  // namespace vigil
