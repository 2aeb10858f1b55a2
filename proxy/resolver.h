// The name-resolution seam. The proxy resolves an allowed name exactly once and
// connects to an address from that answer; tests swap in a static table so that a name
// can resolve to 127.0.0.1 (and prove the address guard refuses it).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proxy/address_guard.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Resolves a canonical host name (never an IP literal) for a TCP connection. Completes
  // on the awaiting coroutine's executor; never throws. Errors: Errc::kNotFound (no such
  // name), Errc::kSystem (timeout, resolver failure, too many lookups in flight).
  virtual boost::asio::awaitable<Result<std::vector<IpAddress>>> resolve(
      std::string name, std::chrono::milliseconds timeout) = 0;
  // After this, nothing is posted to the executor any more: lookups still in flight end
  // as timeouts. Server::~Server calls it, so that a lookup thread finishing late never
  // posts into an io_context that is being destroyed. Thread-safe.
  virtual void shutdown() {}
};

// getaddrinfo(3), each lookup on its own short-lived detached thread (Asio's resolver
// runs every lookup of an io_context on ONE thread, so a single slow name would stall
// every other). At most `max_in_flight` lookups at once; beyond that a lookup fails at
// once rather than queueing without bound. A lookup still running when the resolver is
// destroyed finishes on its thread and is discarded. `ex` must outlive the resolver.
std::shared_ptr<Resolver> make_system_resolver(boost::asio::any_io_executor ex,
                                               std::size_t max_in_flight = 64);

// A fixed table (tests, `vigil proxy --test-resolve`): a name not in it does not exist.
std::shared_ptr<Resolver> make_static_resolver(std::map<std::string, std::vector<IpAddress>> table);

}  // namespace vigil::proxy
