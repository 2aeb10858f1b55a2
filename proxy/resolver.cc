#include "proxy/resolver.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>
#include <optional>
#include <thread>

namespace vigil::proxy {
namespace {

namespace asio = boost::asio;
using Addresses = std::vector<IpAddress>;

Result<Addresses> lookup_blocking(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;  // no AAAA answers on a host without IPv6
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    if (rc == EAI_NONAME || rc == EAI_NODATA) return make_error(Errc::kNotFound, "no such host");
    return make_error(Errc::kSystem, std::string("resolver failed: ") + ::gai_strerror(rc));
  }
  Addresses out;
  for (const addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    std::optional<IpAddress> a;
    if (ai->ai_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      asio::ip::address_v4::bytes_type b{};
      std::memcpy(b.data(), &sin->sin_addr, 4);
      a = asio::ip::address_v4(b);
    } else if (ai->ai_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      asio::ip::address_v6::bytes_type b{};
      std::memcpy(b.data(), &sin6->sin6_addr, 16);
      a = asio::ip::address_v6(b, sin6->sin6_scope_id);
    }
    if (a && std::find(out.begin(), out.end(), *a) == out.end()) out.push_back(*a);
  }
  ::freeaddrinfo(res);
  if (out.empty()) return make_error(Errc::kNotFound, "no address for host");
  return out;
}

class SystemResolver final : public Resolver {
 public:
  SystemResolver(asio::any_io_executor ex, std::size_t max_in_flight)
      : ex_(std::move(ex)), max_(max_in_flight), shared_(std::make_shared<Shared>()) {}

  ~SystemResolver() override { shutdown(); }

  void shutdown() override {
    // After this, no lookup thread posts to the executor (which may be gone next).
    std::lock_guard lock(shared_->mu);
    shared_->alive = false;
  }

  asio::awaitable<Result<Addresses>> resolve(std::string name,
                                             std::chrono::milliseconds timeout) override {
    if (shared_->in_flight.load() >= max_) {
      co_return make_error(Errc::kSystem, "too many DNS lookups in flight");
    }
    // The coroutine owns the timer; the lookup thread holds only a weak reference, so
    // nothing bound to the io_context is ever destroyed on that thread.
    auto pending = std::make_shared<Pending>(ex_);
    pending->timer.expires_after(timeout);
    ++shared_->in_flight;
    std::thread([shared = shared_, weak = std::weak_ptr<Pending>(pending), ex = ex_,
                 name]() mutable {
      Result<Addresses> r = lookup_blocking(name);
      --shared->in_flight;
      std::lock_guard lock(shared->mu);
      if (!shared->alive) return;
      asio::post(ex, [weak = std::move(weak), r = std::move(r)]() mutable {
        if (auto p = weak.lock()) {
          p->result.emplace(std::move(r));
          p->timer.cancel();
        }
      });
    }).detach();
    co_await pending->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!pending->result) co_return make_error(Errc::kSystem, "DNS lookup timed out");
    co_return std::move(*pending->result);
  }

 private:
  struct Shared {
    std::mutex mu;
    bool alive = true;
    std::atomic<std::size_t> in_flight{0};
  };
  struct Pending {
    explicit Pending(const asio::any_io_executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    std::optional<Result<Addresses>> result;
  };

  asio::any_io_executor ex_;
  std::size_t max_;
  std::shared_ptr<Shared> shared_;
};

class StaticResolver final : public Resolver {
 public:
  explicit StaticResolver(std::map<std::string, Addresses> table) : table_(std::move(table)) {}

  asio::awaitable<Result<Addresses>> resolve(std::string name, std::chrono::milliseconds) override {
    const auto it = table_.find(name);
    if (it == table_.end() || it->second.empty())
      co_return make_error(Errc::kNotFound, "no such host");
    co_return it->second;
  }

 private:
  std::map<std::string, Addresses> table_;
};

}  // namespace

std::shared_ptr<Resolver> make_system_resolver(asio::any_io_executor ex,
                                               std::size_t max_in_flight) {
  return std::make_shared<SystemResolver>(std::move(ex), max_in_flight);
}

std::shared_ptr<Resolver> make_static_resolver(
    std::map<std::string, std::vector<IpAddress>> table) {
  return std::make_shared<StaticResolver>(std::move(table));
}

}  // namespace vigil::proxy
