#include "proxy/guard_inputs.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

namespace vigil::proxy {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// How long a request may wait for metadata.google.internal's answer at start-up.
constexpr std::chrono::milliseconds kMetadataLookupTimeout{3000};
// How stale the interface-address snapshot may get.
constexpr std::chrono::milliseconds kHostAddressTtl{1000};

}  // namespace

Result<std::vector<IpAddress>> interface_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return system_error("getifaddrs");
  std::vector<IpAddress> out;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      asio::ip::address_v4::bytes_type b{};
      std::memcpy(b.data(), &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, 4);
      out.emplace_back(asio::ip::address_v4(b));
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      asio::ip::address_v6::bytes_type b{};
      std::memcpy(b.data(), &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr, 16);
      out.emplace_back(asio::ip::address_v6(b));
    }
  }
  ::freeifaddrs(list);
  return out;
}

GuardInputs::GuardInputs(asio::io_context& io, std::vector<AddressBlock> denied,
                         bool allow_loopback, HostAddressLister lister)
    : lister_(lister ? std::move(lister) : HostAddressLister(interface_addresses)),
      metadata_event_(io) {
  guard_.denied = std::move(denied);
  guard_.allow_loopback = allow_loopback;
  metadata_event_.expires_at(Clock::time_point::max());
}

const GuardContext& GuardInputs::current() {
  const auto now = Clock::now();
  if (listed_at_ == Clock::time_point{} || now - listed_at_ > kHostAddressTtl) {
    auto listed = lister_();
    if (listed) {
      guard_.host_addresses = std::move(*listed);
      guard_.host_addresses_error.clear();
    } else {
      // Not an empty list (that would pass every address as "not this machine"): the
      // guard refuses, and says why.
      guard_.host_addresses.clear();
      guard_.host_addresses_error = listed.error().message;
    }
    listed_at_ = now;
  }
  return guard_;
}

asio::awaitable<void> GuardInputs::lookup_metadata(Resolver& resolver) {
  // GCE's metadata server is reached by name; whatever that name resolves to here is
  // refused like 169.254.169.254 (which is what it is on GCE, and link-local anyway).
  auto r = co_await resolver.resolve("metadata.google.internal", kMetadataLookupTimeout);
  if (r) guard_.extra_metadata = std::move(*r);
  metadata_done_ = true;
  metadata_event_.cancel();
}

asio::awaitable<void> GuardInputs::metadata_ready() {
  if (!metadata_done_) {
    auto [ec] = co_await metadata_event_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
}

void GuardInputs::cancel() { metadata_event_.cancel(); }

}  // namespace vigil::proxy
