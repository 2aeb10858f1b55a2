// SHA-256 blocks with the x86 SHA extensions (sha256_blocks.h). Compiled for those
// instructions function by function (target attributes), and only called after CPUID says
// the CPU has them, so the binary still runs on CPUs without.
#include "supervisor/core/base/sha256_blocks.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define VIGIL_SHA_NI 1
#endif

namespace vigil::sha256_detail {

#ifdef VIGIL_SHA_NI
namespace {

bool cpu_has_sha() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool ssse3 = (c & (1u << 9)) != 0, sse41 = (c & (1u << 19)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return ssse3 && sse41 && (b & (1u << 29)) != 0;  // leaf 7 EBX bit 29: SHA
}

// The instructions keep the eight words as two vectors, (a, b, e, f) and (c, d, g, h),
// each from its highest lane down; sha256rnds2 does two rounds with the two round
// inputs (w + k) in the low lanes of its third operand. The message schedule is built
// four words at a time: W[i] = msg2(msg1(W[i-4], W[i-3]) + (W[i-2..i-1] shifted by a
// word), W[i-1]).
__attribute__((target("sha,sse4.1,ssse3"))) void compress_ni(State& h, const std::uint8_t* p,
                                                             std::size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[4]));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];
    for (int i = 0; i < 16; ++i) {
      __m128i wi;
      if (i < 4) {
        wi = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)),
                              byte_swap);
      } else {
        const __m128i w4 = w[i % 4], w3 = w[(i + 1) % 4], w2 = w[(i + 2) % 4],
                      w1 = w[(i + 3) % 4];
        wi = _mm_sha256msg2_epu32(
            _mm_add_epi32(_mm_sha256msg1_epu32(w4, w3), _mm_alignr_epi8(w1, w2, 4)), w1);
      }
      w[i % 4] = wi;
      __m128i in = _mm_add_epi32(wi, _mm_load_si128(reinterpret_cast<const __m128i*>(&kRoundK[4 * i])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, in);
      in = _mm_shuffle_epi32(in, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, in);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[4]), hgfe);
}

}  // namespace

Compress compress_cpu() {
  static const bool has = cpu_has_sha();
  return has ? &compress_ni : nullptr;
}
#else
Compress compress_cpu() { return nullptr; }
#endif

Compress compress_best() {
  static const Compress best = compress_cpu() != nullptr ? compress_cpu() : &compress_portable;
  return best;
}

}  // namespace vigil::sha256_detail
