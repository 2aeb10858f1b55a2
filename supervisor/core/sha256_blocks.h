// SHA-256's compression function over whole 64-byte blocks, in two implementations: the
// portable one, and one with the x86 SHA extensions (SHA-NI), which the session log's
// hash chain and the change capture's content hashes use where the CPU has them (about
// 5x less time per block). Both give the same state for the same input; the unit tests
// compare them on random inputs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace vigil::sha256_detail {

using State = std::array<std::uint32_t, 8>;
using Compress = void (*)(State& h, const std::uint8_t* p, std::size_t blocks);

void compress_portable(State& h, const std::uint8_t* p, std::size_t blocks);
// nullptr when this build or this CPU has no SHA extensions.
Compress compress_cpu();
// compress_cpu() when there is one, else compress_portable (decided once).
Compress compress_best();

}  // namespace vigil::sha256_detail
