#include "filters/program_wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace vigil {
namespace {

constexpr std::string_view kMagic = "VIGILBPF";
constexpr std::size_t kHeader = kMagic.size() + 4;
static_assert(sizeof(sock_filter) == 8, "struct sock_filter is 8 bytes on every Linux ABI");

}  // namespace

Result<std::string> encode_program(std::span<const sock_filter> program) {
  if (program.empty()) return make_error(Errc::kInternal, "seccomp program: empty");
  if (program.size() > kMaxProgramInstructions) {
    return make_error(Errc::kInternal, "seccomp program: " + std::to_string(program.size()) +
                                           " instructions, over the kernel's limit of " +
                                           std::to_string(kMaxProgramInstructions));
  }
  std::string out(kMagic);
  const auto n = static_cast<std::uint32_t>(program.size());
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(reinterpret_cast<const char*>(program.data()), program.size_bytes());
  return out;
}

Result<std::vector<sock_filter>> decode_program(std::string_view bytes) {
  if (bytes.size() < kHeader) {
    return make_error(Errc::kInvalidPolicy, "seccomp program: " + std::to_string(bytes.size()) +
                                                " bytes, shorter than its header");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return make_error(Errc::kInvalidPolicy, "seccomp program: not a vigil program (bad magic)");
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[kMagic.size() + i]))
         << (8 * i);
  }
  if (n == 0 || n > kMaxProgramInstructions) {
    return make_error(Errc::kInvalidPolicy, "seccomp program: instruction count " +
                                                std::to_string(n) + " is out of range (1.." +
                                                std::to_string(kMaxProgramInstructions) + ")");
  }
  const std::size_t body = bytes.size() - kHeader;
  if (body != std::size_t{n} * sizeof(sock_filter)) {
    return make_error(Errc::kInvalidPolicy, "seccomp program: " + std::to_string(n) +
                                                " instructions announced, " + std::to_string(body) +
                                                " bytes follow");
  }
  std::vector<sock_filter> program(n);
  std::memcpy(program.data(), bytes.data() + kHeader, body);
  return program;
}

Result<std::vector<sock_filter>> read_program(int fd) {
  std::string bytes;
  char chunk[8192];
  while (bytes.size() <= kMaxProgramWireBytes) {
    const ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      return system_error("reading the seccomp program");
    }
    if (r == 0) return decode_program(bytes);
    bytes.append(chunk, static_cast<std::size_t>(r));
  }
  return make_error(Errc::kInvalidPolicy, "seccomp program: longer than " +
                                              std::to_string(kMaxProgramWireBytes) + " bytes");
}

}  // namespace vigil
