// libFuzzer target for canonicalize_host. Beyond "no crash, no UB", it checks the
// properties the allowlist relies on:
//  - the canonical text is a fixed point (canonicalising it again changes nothing);
//  - a name is never something glibc's inet_aton would dial as a number, and an IPv4
//    result is the address inet_aton reads (the resolver's view of the same text);
//  - parse_inet_aton agrees with inet_aton on every input it can be compared on.
// Built only with -DVIGIL_FUZZ=ON and clang (see proxy/CMakeLists.txt).
#include <arpa/inet.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "proxy/host_canon.h"

namespace {

[[noreturn]] void fail() { std::abort(); }

// glibc accepts trailing whitespace and garbage after it; compare only inputs where
// that quirk cannot apply.
bool comparable_with_inet_aton(const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u == 0 || u <= 0x20 || u >= 0x7f) return false;
  }
  return !s.empty();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  using vigil::proxy::CanonicalHost;

  if (comparable_with_inet_aton(in)) {
    in_addr a{};
    const bool glibc = inet_aton(in.c_str(), &a) == 1;
    const auto ours = vigil::proxy::parse_inet_aton(in);
    if (glibc != ours.has_value()) fail();
    if (ours && ntohl(a.s_addr) != *ours) fail();
  }

  const auto r = vigil::proxy::canonicalize_host(in);
  if (!r.ok()) {
    if (r.error().message.empty()) fail();
    return 0;
  }
  const CanonicalHost& h = *r;
  if (h.text.empty() || h.text.size() > vigil::proxy::kMaxHostLength) fail();

  const auto again = vigil::proxy::canonicalize_host(h.text);
  if (!again.ok() || !(*again == h)) fail();

  in_addr a{};
  const bool numeric = inet_aton(h.text.c_str(), &a) == 1;
  switch (h.kind) {
    case CanonicalHost::Kind::kName:
      if (numeric) fail();
      for (char c : h.text) {
        if (c >= 'A' && c <= 'Z') fail();
      }
      if (h.embedded_ipv4) fail();
      break;
    case CanonicalHost::Kind::kIPv4:
      if (!numeric || h.text != vigil::proxy::format_ipv4(ntohl(a.s_addr))) fail();
      if (h.embedded_ipv4) fail();
      break;
    case CanonicalHost::Kind::kIPv6: {
      unsigned char b[16];
      if (inet_pton(AF_INET6, h.text.c_str(), b) != 1) fail();
      if (h.embedded_ipv4.has_value() != (h.embedding != vigil::proxy::Ipv4Embedding::kNone))
        fail();
      break;
    }
  }
  return 0;
}
