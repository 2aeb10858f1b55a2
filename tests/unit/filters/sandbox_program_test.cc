// The seccomp program's trip from the supervisor to vigil-init: the exact bytes, and every
// malformed message refused with its reason (vigil-init then never starts the command).
#include "filters/sandbox_program.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/notify_filter.h"
#include "filters/program_wire.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

std::string header(std::uint32_t n) {
  std::string h = "VIGILBPF";
  for (int shift = 0; shift < 32; shift += 8) h.push_back(static_cast<char>((n >> shift) & 0xff));
  return h;
}

bool same(const std::vector<sock_filter>& a, const std::vector<sock_filter>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(sock_filter)) == 0;
}

TEST(SandboxProgram, IsTheCombinedTablesWithAndWithoutTheObserver) {
  std::vector<const FilterSpec*> specs(worker_filters().begin(), worker_filters().end());
  auto plain = compile_combined(specs);
  specs.push_back(&notify_filter());
  auto observed = compile_combined(specs);
  ASSERT_TRUE(plain.ok() && observed.ok());
  auto a = sandbox_program(false);
  auto b = sandbox_program(true);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(same(*a, *plain));
  EXPECT_TRUE(same(*b, *observed));
  EXPECT_GT(b->size(), a->size());
}

TEST(SandboxProgram, RoundTripsByteForByte) {
  auto program = sandbox_program(true);
  ASSERT_TRUE(program.ok());
  auto wire = encode_program(*program);
  ASSERT_TRUE(wire.ok()) << wire.error().message;
  EXPECT_EQ(wire->size(), 12 + 8 * program->size());
  EXPECT_EQ(wire->substr(0, 12), header(static_cast<std::uint32_t>(program->size())));
  auto back = decode_program(*wire);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(same(*back, *program));
}

TEST(SandboxProgram, EncodeRefusesEmptyAndOversized) {
  EXPECT_FALSE(encode_program({}).ok());
  std::vector<sock_filter> too_long(kMaxProgramInstructions + 1, sock_filter{});
  EXPECT_FALSE(encode_program(too_long).ok());
  std::vector<sock_filter> at_limit(kMaxProgramInstructions, sock_filter{});
  EXPECT_TRUE(encode_program(at_limit).ok());
}

TEST(SandboxProgram, DecodeRefusesEveryMalformedMessage) {
  const std::string one_insn(8, '\x01');
  struct Case {
    const char* name;
    std::string bytes;
    const char* why;  // a piece of the message
  };
  const Case cases[] = {
      {"nothing (the supervisor closed without writing)", "", "shorter than its header"},
      {"header cut short", header(1).substr(0, 11), "shorter than its header"},
      {"bad magic", "VIGILBPX" + header(1).substr(8) + one_insn, "bad magic"},
      {"count zero", header(0), "out of range"},
      {"count over the kernel limit", header(kMaxProgramInstructions + 1), "out of range"},
      {"fewer bytes than announced", header(2) + one_insn, "2 instructions announced, 8 bytes"},
      {"more bytes than announced", header(1) + one_insn + "x", "1 instructions announced, 9"},
      {"a partial instruction", header(1) + one_insn.substr(0, 7), "7 bytes follow"},
  };
  for (const auto& c : cases) {
    auto r = decode_program(c.bytes);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.error().message.find(c.why), std::string::npos)
        << c.name << ": " << r.error().message;
  }
  auto ok = decode_program(header(1) + one_insn);
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ(ok->front().code, 0x0101);
}

// What vigil-init does: read to EOF, through a real pipe, in pieces larger than the pipe's
// buffer would be if it were small, and nothing when the writer gives up.
TEST(SandboxProgram, ReadsToEndOfPipe) {
  auto program = sandbox_program(true);
  ASSERT_TRUE(program.ok());
  auto wire = encode_program(*program);
  ASSERT_TRUE(wire.ok());
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd r(fds[0]), w(fds[1]);
  // No ASSERT in the writer: its early return would skip w.reset() and leave the reader
  // waiting for an end of file forever. std::jthread: joined on every way out.
  std::jthread writer([&] {
    for (std::size_t off = 0; off < wire->size(); off += 1000) {
      const std::size_t n = std::min<std::size_t>(1000, wire->size() - off);
      const bool whole = ::write(w.get(), wire->data() + off, n) == static_cast<ssize_t>(n);
      EXPECT_TRUE(whole) << "short write at " << off;
      if (!whole) break;
    }
    w.reset();
  });
  auto got = read_program(r.get());
  writer.join();
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(same(*got, *program));

  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd r2(fds[0]), w2(fds[1]);
  w2.reset();
  EXPECT_FALSE(read_program(r2.get()).ok());
}

TEST(SandboxProgram, ReadStopsAtTheBound) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd r(fds[0]), w(fds[1]);
  // The writer never closes: the reader must stop at the bound on its own. What it leaves
  // unread (under two of its reads) fits in the pipe, so the writer finishes too.
  std::jthread writer([&] {
    const std::string junk(kMaxProgramWireBytes + 4096, 'x');
    std::size_t off = 0;
    while (off < junk.size()) {
      const ssize_t n = ::write(w.get(), junk.data() + off, junk.size() - off);
      EXPECT_GT(n, 0);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
  });
  auto got = read_program(r.get());
  writer.join();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("longer than"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace vigil
