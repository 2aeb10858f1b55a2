// SHA-256 against the FIPS 180-4 / NIST example vectors, the padding boundaries (55/56
// and 63/64/65 bytes: one or two final blocks), and streaming in odd-sized pieces.
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/sha256_blocks.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace vigil {
namespace {

struct Vector {
  std::string name;
  std::string input;
  std::string hex;
};

std::vector<Vector> vectors() {
  return {
      {"empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc (FIPS 180-4 one block)", "abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"448 bits (two blocks)", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"896 bits",
       "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmn"
       "opqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {"one million a", std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
      {"55 a (length fits the last block)", std::string(55, 'a'),
       "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {"56 a (length needs another block)", std::string(56, 'a'),
       "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {"63 a", std::string(63, 'a'),
       "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {"64 a", std::string(64, 'a'),
       "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {"65 a", std::string(65, 'a'),
       "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {"119 a", std::string(119, 'a'),
       "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {"120 a", std::string(120, 'a'),
       "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {"128 a", std::string(128, 'a'),
       "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
}

TEST(Sha256Test, KnownVectors) {
  for (const auto& v : vectors()) {
    SCOPED_TRACE(v.name);
    EXPECT_EQ(sha256_hex(v.input), v.hex);
  }
}

TEST(Sha256Test, StreamingInPiecesEqualsOneShot) {
  for (const auto& v : vectors()) {
    for (const std::size_t piece :
         {std::size_t{1}, std::size_t{3}, std::size_t{63}, std::size_t{64}, std::size_t{65}}) {
      SCOPED_TRACE(v.name + " in pieces of " + std::to_string(piece));
      Sha256 s;
      for (std::size_t i = 0; i < v.input.size(); i += piece)
        s.update(std::string_view(v.input).substr(i, piece));
      EXPECT_EQ(to_hex(s.finish()), v.hex);
    }
  }
}

TEST(Sha256Test, BinaryInputWithNulBytes) {
  const std::string bytes("\0\xff\0", 3);
  EXPECT_EQ(sha256_hex(bytes).size(), 64U);
  EXPECT_NE(sha256_hex(bytes), sha256_hex(std::string("\0\xff", 2)));
}

// The CPU's SHA instructions and the portable code give the same state on every input:
// random blocks from random starting states, one to many blocks per call (the vectors
// above go through whichever this CPU uses; this pins the other one to it too).
TEST(Sha256Test, CpuExtensionsEqualThePortableCode) {
  const sha256_detail::Compress cpu = sha256_detail::compress_cpu();
  if (cpu == nullptr) GTEST_SKIP() << "this CPU has no SHA extensions: only the portable code runs";
  std::mt19937_64 rng(20261202);
  for (int trial = 0; trial < 500; ++trial) {
    sha256_detail::State a{};
    for (auto& w : a) w = static_cast<std::uint32_t>(rng());
    sha256_detail::State b = a;
    const std::size_t blocks = 1 + static_cast<std::size_t>(rng() % 9);
    std::string data(blocks * 64, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
    sha256_detail::compress_portable(a, p, blocks);
    cpu(b, p, blocks);
    ASSERT_EQ(a, b) << "trial " << trial << ", " << blocks << " blocks";
  }
  EXPECT_EQ(sha256_detail::compress_best(), cpu);
}

}  // namespace
}  // namespace vigil
