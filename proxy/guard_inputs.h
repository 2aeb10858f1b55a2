// What the address guard must know about this machine, kept current for the server:
// its interface addresses (refreshed at most once a second) and what
// metadata.google.internal resolves to (looked up once, when the first client connects).
//
// A failure to list the interface addresses is never silent: the context then carries
// the error, and the guard refuses every address it would otherwise have had to compare
// with them (address_guard.h, GuardCheck::kHostAddressesUnknown), naming the cause. An
// empty list would have let the "this machine" check pass everything.
//
// Used on the server's io_context thread only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <vector>

#include "proxy/address_guard.h"
#include "proxy/resolver.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

// This machine's interface addresses (getifaddrs); an error (Errc::kSystem, naming
// getifaddrs and errno) when they cannot be listed.
Result<std::vector<IpAddress>> interface_addresses();

// Where the interface addresses come from: interface_addresses() unless a test injects
// another source (e.g. one that fails).
using HostAddressLister = std::function<Result<std::vector<IpAddress>>()>;

class GuardInputs {
 public:
  // `lister` null = interface_addresses().
  GuardInputs(boost::asio::io_context& io, std::vector<AddressBlock> denied, bool allow_loopback,
              HostAddressLister lister);

  // The guard's inputs as of now. When listing the interface addresses fails, the result
  // has host_addresses_error set (and the guard refuses), until a later refresh works.
  const GuardContext& current();

  // Resolves metadata.google.internal once; requests wait for it (bounded) through
  // metadata_ready(). Keep the owner alive while it runs.
  boost::asio::awaitable<void> lookup_metadata(Resolver& resolver);
  boost::asio::awaitable<void> metadata_ready();
  // Wakes every waiter (the server stopped).
  void cancel();

 private:
  HostAddressLister lister_;
  GuardContext guard_;
  std::chrono::steady_clock::time_point listed_at_{};
  boost::asio::steady_timer metadata_event_;  // cancelled when the lookup is done
  bool metadata_done_ = false;
};

}  // namespace vigil::proxy
