// The Asio shell around the pure parts (http_head, chunked, socks5, egress): it reads
// bytes, hands them to a parser, acts on the result, and moves bytes. One coroutine per
// client connection, one watchdog timer per connection for every deadline, fixed
// buffers per direction (a read is issued only once the previous bytes are written, so
// a slow reader slows its writer: back-pressure with no queue).
#include "proxy/server.h"

#include "proxy/ask.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <utility>

#include "proxy/chunked.h"
#include "proxy/egress.h"
#include "proxy/parent_proxy.h"
#include "proxy/socks5.h"

namespace vigil::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using GenericSocket = asio::generic::stream_protocol::socket;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

namespace {

// GCC 12 miscompiles a co_await inside an if/while condition or a ?: (the frame is
// resumed in a bad state: SIGILL/SIGSEGV; reproduced in 20 lines, clang is fine). Every
// co_await here is therefore its own statement: `const bool ok = co_await ...;`.
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// After the proxy's last response on a connection, how long it keeps reading (and
// discarding) so that closing does not turn into a RST that destroys the response
// still in flight to the client.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr std::size_t kLingerBytes = 256 * 1024;
// How long a request may wait for metadata.google.internal's answer at start-up.
constexpr std::chrono::milliseconds kMetadataLookupTimeout{3000};
// How stale the interface-address snapshot may get.
constexpr std::chrono::milliseconds kHostAddressTtl{1000};
// After the last connection closes and this much time passes with none open, the kept
// buffers are unmapped and the heap's free pages handed back to the OS (glibc keeps them
// otherwise: a burst of 1,500 connections would pin ~20 MB for the rest of the session).
constexpr std::chrono::milliseconds kTrimAfterIdle{1000};

// A buffer's storage: its own anonymous mapping, not the malloc heap. Buffers are the
// big per-connection allocations (64 KiB per direction). In the heap, a burst of 1,500
// connections spread them over ~140 MB of brk space with small objects that outlive the
// burst scattered between them (Asio's reactor keeps one state per socket it ever held
// at once, in a pool it never frees), and malloc_trim cannot give back the page heading
// each free gap: 2-3 MB more stayed resident after every connection had closed. A
// mapping goes back whole. Falls back to the heap if the kernel refuses a mapping.
class BufferStorage {
 public:
  BufferStorage() = default;
  explicit BufferStorage(std::size_t bytes) : size_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      data_ = static_cast<char*>(p);
      mapped_ = true;
    } else {
      heap_ = std::make_unique_for_overwrite<char[]>(bytes);
      data_ = heap_.get();
    }
  }
  ~BufferStorage() {
    if (mapped_) ::munmap(data_, size_);
  }
  BufferStorage(BufferStorage&& o) noexcept
      : size_(std::exchange(o.size_, 0)),
        data_(std::exchange(o.data_, nullptr)),
        mapped_(std::exchange(o.mapped_, false)),
        heap_(std::move(o.heap_)) {}
  BufferStorage& operator=(BufferStorage&& o) noexcept {
    BufferStorage taken(std::move(o));  // this one's old storage goes with `taken`
    std::swap(size_, taken.size_);
    std::swap(data_, taken.data_);
    std::swap(mapped_, taken.mapped_);
    std::swap(heap_, taken.heap_);
    return *this;
  }
  char* get() const { return data_; }
  std::size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  std::size_t size_ = 0;
  char* data_ = nullptr;
  bool mapped_ = false;
  std::unique_ptr<char[]> heap_;  // only when the mapping failed
};

// Storages of finished connections, kept for the next ones: a mapping per connection
// (mmap, first-touch faults, munmap) halved the new-tunnel rate. Bounded, so a burst
// hands back all but kKeep at once, and emptied when the server goes idle. Used only on
// the server's io_context thread.
class BufferCache {
 public:
  static constexpr std::size_t kKeep = 64;
  BufferStorage take(std::size_t bytes) {
    if (!free_.empty() && free_.back().size() == bytes) {
      BufferStorage s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
    return BufferStorage(bytes);
  }
  void give(BufferStorage s) {
    if (s && free_.size() < kKeep) free_.push_back(std::move(s));
  }
  void clear() {
    free_.clear();
    free_.shrink_to_fit();
  }

 private:
  std::vector<BufferStorage> free_;
};

// A fixed-capacity byte buffer: bytes arrive at the end, leave from the front. Storage is
// taken on first use, so an idle connection costs only its bookkeeping. `cache` must
// outlive the buffer.
class Buffer {
 public:
  Buffer(std::size_t capacity, BufferCache* cache) : cap_(capacity), cache_(cache) {}
  ~Buffer() { cache_->give(std::move(data_)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::string_view view() const {
    if (!data_) return {};
    return {data_.get() + begin_, end_ - begin_};
  }
  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  bool full() const { return begin_ == 0 && end_ == cap_; }
  void consume(std::size_t n) {
    begin_ += std::min(n, size());
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // Free space at the end (the live bytes are moved to the front when that frees some).
  asio::mutable_buffer prepare() {
    // Fresh anonymous pages: only those actually written become resident.
    if (!data_) data_ = cache_->take(cap_);
    if (begin_ > 0 && end_ == cap_) {
      std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    return {data_.get() + end_, cap_ - end_};
  }
  void commit(std::size_t n) { end_ += n; }

 private:
  BufferStorage data_;
  std::size_t cap_;
  BufferCache* cache_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

std::vector<IpAddress> interface_addresses() {
  std::vector<IpAddress> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
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

void set_nodelay(int fd) {
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The outcome of connecting upstream for one request.
struct UpstreamResult {
  enum class Outcome { kConnected, kRefused, kFailed };
  Outcome outcome = Outcome::kFailed;
  int http_status = 502;
  socks5::Reply socks_reply = socks5::Reply::kGeneralFailure;
  std::string message;  // kFailed: for the 502 body
};

}  // namespace

class Connection;

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  Impl(asio::io_context& io, DomainMatcher matcher, std::vector<AddressBlock> denied,
       ServerOptions options, std::shared_ptr<Resolver> resolver, std::shared_ptr<EventSink> sink,
       std::optional<ParentRoute> parent)
      : io_(io),
        matcher_(std::move(matcher)),
        parent_(std::move(parent)),
        options_(options),
        resolver_(std::move(resolver)),
        sink_(std::move(sink)),
        acceptor_(io),
        slot_event_(io),
        grace_timer_(io),
        metadata_event_(io),
        trim_timer_(io) {
    guard_.denied = std::move(denied);
    guard_.allow_loopback = options_.test_allow_loopback;
    options_.buffer_bytes = std::max(options_.buffer_bytes, options_.max_head_bytes + 1);
    slot_event_.expires_at(Clock::time_point::max());
    metadata_event_.expires_at(Clock::time_point::max());
  }

  Result<void> listen(const ListenAddress& where);
  Result<void> adopt(UniqueFd fd);
  void start();
  void begin_shutdown();
  void force_abort();
  void connection_finished(Connection* c);

  // --- used by connections ---
  asio::io_context& io() { return io_; }
  const ServerOptions& options() const { return options_; }
  BufferCache* buffer_cache() { return &buffer_cache_; }
  const DomainMatcher& matcher() const { return matcher_; }
  const std::optional<ParentRoute>& parent() const { return parent_; }
  Resolver& resolver() { return *resolver_; }
  void shutdown_resolver() { resolver_->shutdown(); }
  bool stopping() const { return stopping_; }
  ServerStats& stats() { return stats_; }
  void emit(const NetDecision& d) {
    ++(d.verdict == Verdict::kAllow ? stats_.allowed : stats_.denied);
    sink_->on_decision(d);
  }
  void emit(const UpstreamFailure& f) {
    ++stats_.upstream_failures;
    sink_->on_upstream_failure(f);
  }
  // The guard's inputs as of now (interface addresses refreshed at most once a second).
  const GuardContext& guard_context();
  // Waits (bounded) for the metadata.google.internal lookup started by the first connection.
  asio::awaitable<void> metadata_ready();

  std::function<void()> on_stopped_;
  ListenAddress bound_;

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> lookup_metadata();
  void check_stopped();
  void stop_listening();
  void spawn_connection(UniqueFd fd);

  asio::io_context& io_;
  DomainMatcher matcher_;
  std::optional<ParentRoute> parent_;  // network.parentProxy: allowed traffic goes through it
  ServerOptions options_;
  std::shared_ptr<Resolver> resolver_;
  std::shared_ptr<EventSink> sink_;
  GuardContext guard_;
  Clock::time_point host_addresses_at_{};

  asio::basic_socket_acceptor<asio::generic::stream_protocol> acceptor_;
  asio::generic::stream_protocol protocol_{AF_UNIX, 0};
  std::string unix_path_;  // unlinked at stop, if it is still our socket
  dev_t unix_dev_ = 0;
  ino_t unix_ino_ = 0;

  std::unordered_set<Connection*> connections_;
  asio::steady_timer slot_event_;  // cancelled when a connection slot frees up
  asio::steady_timer grace_timer_;
  asio::steady_timer metadata_event_;  // cancelled when the metadata lookup is done
  asio::steady_timer trim_timer_;
  bool trim_pending_ = false;
  BufferCache buffer_cache_;
  bool metadata_started_ = false;
  bool metadata_done_ = false;
  bool started_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
  ServerStats stats_;
};

// One client connection and (at most) one upstream connection.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class Phase {
    kFirstByte,   // accepted, nothing received yet
    kIdle,        // between keep-alive requests, nothing of the next one received
    kHead,        // reading a request head / SOCKS handshake
    kWaiting,     // resolving (the resolver has its own deadline)
    kConnecting,  // upstream connect: a deadline closes only the upstream socket
    kStreaming,   // relaying: the idle deadline moves with every byte
    kClosing,     // final response written, lingering
  };

  Connection(std::shared_ptr<Server::Impl> server, GenericSocket client)
      : srv_(std::move(server)),
        client_(std::move(client)),
        upstream_(srv_->io()),
        watchdog_(srv_->io()),
        in_(srv_->options().buffer_bytes, srv_->buffer_cache()),
        up_in_(srv_->options().buffer_bytes, srv_->buffer_cache()) {}

  void start() {
    set_phase(Phase::kFirstByte, srv_->options().first_byte_timeout);
    auto self = shared_from_this();
    asio::co_spawn(srv_->io(), watch(), [self](std::exception_ptr) {});
    asio::co_spawn(srv_->io(), serve(), [self](std::exception_ptr) { self->finish(); });
  }

  Phase phase() const { return phase_; }

  // Closes both sockets: every pending operation completes with an error and the
  // coroutines unwind.
  void abort() {
    error_code ec;
    client_.close(ec);
    upstream_.close(ec);
    upstream_open_ = false;
    if (ask_timer_) ask_timer_->cancel();  // a held request ends with its connection
    // Cut mid-connect: the decision goes out now, not when the connect would have
    // settled (vigil run stops the io_context right after aborting; it may never resume).
    emit_unsettled({});
  }

 private:
  // --- deadlines ---------------------------------------------------------------------
  void set_phase(Phase p, std::chrono::milliseconds limit) {
    phase_ = p;
    set_deadline(Clock::now() + limit);
  }
  void set_deadline(Clock::time_point t) {
    deadline_ = t;
    if (t < watchdog_.expiry()) watchdog_.cancel();  // re-arm earlier
  }
  // Traffic moves the idle deadline of a streaming connection.
  void touch() {
    if (phase_ == Phase::kStreaming) deadline_ = Clock::now() + srv_->options().idle_timeout;
  }

  asio::awaitable<void> watch() {
    while (!finished_) {
      watchdog_.expires_at(deadline_);
      co_await watchdog_.async_wait(kNoThrow);
      if (finished_) break;
      if (Clock::now() < deadline_) continue;  // moved later, or re-armed earlier
      deadline_ = Clock::time_point::max();
      if (phase_ == Phase::kConnecting) {
        connect_timed_out_ = true;
        error_code ec;
        upstream_.close(ec);
      } else {
        abort();
      }
    }
  }

  void finish() {
    finished_ = true;
    watchdog_.cancel();
    abort();
    srv_->connection_finished(this);
  }

  // --- I/O helpers -------------------------------------------------------------------
  template <class Socket>
  asio::awaitable<bool> read_into(Socket& s, Buffer& b) {
    if (b.full()) co_return false;
    auto [ec, n] = co_await s.async_read_some(b.prepare(), kNoThrow);
    if (ec || n == 0) co_return false;
    b.commit(n);
    touch();
    co_return true;
  }

  template <class Socket>
  asio::awaitable<bool> write_all(Socket& s, std::string_view data) {
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(data.data(), data.size()), kNoThrow);
    (void)n;
    if (!ec) touch();
    co_return !ec;
  }

  // Two pieces in one gathered write (one segment, one wake-up of the reader).
  template <class Socket>
  asio::awaitable<bool> write_all(Socket& s, std::string_view first, std::string_view second) {
    const std::array<asio::const_buffer, 2> bufs = {asio::buffer(first.data(), first.size()),
                                                    asio::buffer(second.data(), second.size())};
    auto [ec, n] = co_await asio::async_write(s, bufs, kNoThrow);
    (void)n;
    if (!ec) touch();
    co_return !ec;
  }

  // The last thing said on a connection: write it, then close gracefully.
  // Takes the bytes by value: they must live in this frame across the suspension.
  asio::awaitable<void> final_reply(std::string data) {
    const bool written = co_await write_all(client_, data);
    if (!written) co_return;
    co_await linger();
  }

  asio::awaitable<void> linger() {
    set_phase(Phase::kClosing, kLingerTime);
    error_code ec;
    client_.shutdown(asio::socket_base::shutdown_send, ec);
    std::size_t discarded = 0;
    while (discarded < kLingerBytes) {
      in_.consume(in_.size());
      auto [rec, n] = co_await client_.async_read_some(in_.prepare(), kNoThrow);
      if (rec || n == 0) break;
      discarded += n;
    }
  }

  // Copies one direction of a tunnel until EOF (then half-closes the other side) or an
  // error (then aborts both). Bytes already buffered go first (a TLS ClientHello sent
  // right behind the CONNECT, SOCKS early data).
  template <class From, class To>
  asio::awaitable<void> pump(From& from, To& to, Buffer& buf, std::uint64_t& counter) {
    while (true) {
      if (!buf.empty()) {
        const std::size_t n = buf.size();
        const bool written = co_await write_all(to, buf.view());
        if (!written) {
          abort();
          co_return;
        }
        counter += n;
        buf.consume(n);
      }
      auto [ec, n] = co_await from.async_read_some(buf.prepare(), kNoThrow);
      if (ec == asio::error::eof) {
        error_code sec;
        to.shutdown(asio::socket_base::shutdown_send, sec);
        co_return;
      }
      if (ec) {
        abort();
        co_return;
      }
      buf.commit(n);
      touch();
    }
  }

  asio::awaitable<void> tunnel() {
    set_phase(Phase::kStreaming, srv_->options().idle_timeout);
    auto self = shared_from_this();
    bool up_done = false;
    asio::steady_timer both(srv_->io(), Clock::time_point::max());
    asio::co_spawn(srv_->io(), pump(client_, upstream_, in_, srv_->stats().bytes_up),
                   [self, &up_done, &both](std::exception_ptr) {
                     up_done = true;
                     both.cancel();
                   });
    co_await pump(upstream_, client_, up_in_, srv_->stats().bytes_down);
    // The other direction may still run (half-close): wait for it.
    while (!up_done) {
      auto [wec] = co_await both.async_wait(kNoThrow);
      (void)wec;
    }
  }

  // --- routing -----------------------------------------------------------------------
  asio::awaitable<void> serve() {
    const bool got = co_await read_into(client_, in_);
    if (!got) co_return;
    set_phase(Phase::kHead, srv_->options().head_timeout);
    const auto first = static_cast<unsigned char>(in_.view().front());
    if (first == 0x05) {
      co_await serve_socks5();
    } else if (first == 0x04) {
      co_await serve_socks4();
    } else {
      co_await serve_http();
    }
  }

  // --- upstream ----------------------------------------------------------------------
  // Resolve once, guard, connect to an address that passed. Emits the decision (allowed,
  // or refused by the guard) and, on failure, an upstream failure.
  asio::awaitable<UpstreamResult> connect_upstream(TargetDecision& d) {
    UpstreamResult r;
    std::vector<IpAddress> resolved;
    if (held_addresses_) {
      // Allowed when asked: the addresses the guard passed before the question, never a
      // second resolution.
      resolved = std::move(*held_addresses_);
      held_addresses_.reset();
    } else if (d.needs_resolution()) {
      set_phase(Phase::kWaiting, srv_->options().resolve_timeout + std::chrono::seconds(5));
      auto addrs = co_await srv_->resolver().resolve(d.host->text, srv_->options().resolve_timeout);
      if (!addrs) {
        srv_->emit(d.event);  // the allowlist allowed it; the lookup failed
        r.message = "could not resolve " + d.event.host + " (" + addrs.error().message + ")";
        r.socks_reply = socks5::Reply::kHostUnreachable;
        srv_->emit(UpstreamFailure{d.event.proto, d.event.host, d.event.port, "", r.message});
        co_return r;
      }
      resolved = std::move(*addrs);
      co_await srv_->metadata_ready();
    } else if (auto lit = literal_address(d)) {
      resolved.push_back(*lit);
    }
    const std::vector<IpAddress> passing = choose_addresses(d, resolved, srv_->guard_context());
    if (passing.empty()) {
      srv_->emit(d.event);
      r.outcome = UpstreamResult::Outcome::kRefused;
      r.http_status = 403;
      r.socks_reply = socks5::Reply::kNotAllowed;
      co_return r;
    }
    // An allowed decision is emitted once the connect is settled, naming the address the
    // bytes go to: emitted before, it named the first address, and when that one failed
    // and a later one answered, the log showed an address never connected to.
    unsettled_ = d.event;
    drop_upstream();
    set_phase(Phase::kConnecting, srv_->options().connect_timeout);
    connect_timed_out_ = false;
    if (const auto& route = srv_->parent()) {
      if (const ProxyEndpoint* via = route->via(d.event.proto, d.event.host, d.event.port)) {
        co_return co_await connect_via_parent(d, *via, passing.front());
      }
    }
    error_code last;
    IpAddress last_address;
    for (const auto& addr : passing) {
      last_address = addr;
      const int fd = ::socket(addr.is_v4() ? AF_INET : AF_INET6,
                              SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) {
        last = error_code(errno, boost::system::system_category());
        continue;
      }
      UniqueFd owned(fd);
      error_code ec;
      upstream_.assign(addr.is_v4() ? tcp::v4() : tcp::v6(), owned.get(), ec);
      if (ec) {
        last = ec;
        continue;
      }
      (void)owned.release();  // the socket owns it now
      auto [cec] = co_await upstream_.async_connect(tcp::endpoint(addr, d.event.port), kNoThrow);
      if (!cec) {
        set_nodelay(upstream_.native_handle());
        upstream_open_ = true;
        upstream_key_ = d.event.host + ":" + std::to_string(d.event.port);
        upstream_address_ = addr;
        emit_unsettled(addr.to_string());
        r.outcome = UpstreamResult::Outcome::kConnected;
        set_phase(Phase::kStreaming, srv_->options().idle_timeout);
        co_return r;
      }
      last = cec;
      error_code ignored;
      upstream_.close(ignored);
      if (connect_timed_out_ || !client_.is_open()) break;
    }
    if (connect_timed_out_) {
      r.http_status = 504;
      r.socks_reply = socks5::Reply::kTtlExpired;
      r.message = "connecting to " + d.event.host + " (" + last_address.to_string() + ") port " +
                  std::to_string(d.event.port) + " timed out";
    } else {
      r.http_status = 502;
      r.socks_reply = last == asio::error::connection_refused ? socks5::Reply::kConnectionRefused
                                                              : socks5::Reply::kHostUnreachable;
      r.message = "connecting to " + d.event.host + " (" + last_address.to_string() + ") port " +
                  std::to_string(d.event.port) + " failed: " + last.message();
    }
    emit_unsettled({});  // allowed; the address is the first one tried
    srv_->emit(UpstreamFailure{d.event.proto, d.event.host, d.event.port, last_address.to_string(),
                               r.message});
    co_return r;
  }

  // The decision is made (allow list, address guard): the bytes go out through the
  // parent proxy, which is asked with CONNECT for the name the client gave. The answer
  // head is read one byte at a time so that no byte of the tunnel after it is taken.
  asio::awaitable<UpstreamResult> connect_via_parent(TargetDecision& d, const ProxyEndpoint& via,
                                                     const IpAddress& guarded) {
    UpstreamResult r;
    r.http_status = 502;
    r.socks_reply = socks5::Reply::kGeneralFailure;
    auto fail = [&](const std::string& what) {
      r.message = "parent proxy " + via.text() + ": " + what;
      error_code ignored;
      upstream_.close(ignored);
      emit_unsettled({});
      srv_->emit(UpstreamFailure{d.event.proto, d.event.host, d.event.port, via.text(), r.message});
      return r;
    };
    std::vector<IpAddress> addrs;
    error_code pec;
    const IpAddress literal = asio::ip::make_address(via.host, pec);
    if (!pec) {
      addrs.push_back(literal);
    } else {
      auto found = co_await srv_->resolver().resolve(via.host, srv_->options().resolve_timeout);
      if (!found) co_return fail("could not resolve (" + found.error().message + ")");
      addrs = std::move(*found);
    }
    bool connected = false;
    std::string why = "no address";
    for (const auto& addr : addrs) {
      const int fd = ::socket(addr.is_v4() ? AF_INET : AF_INET6,
                              SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) continue;
      UniqueFd owned(fd);
      error_code ec;
      upstream_.assign(addr.is_v4() ? tcp::v4() : tcp::v6(), owned.get(), ec);
      if (ec) continue;
      (void)owned.release();
      auto [cec] = co_await upstream_.async_connect(tcp::endpoint(addr, via.port), kNoThrow);
      if (!cec) {
        connected = true;
        break;
      }
      why = cec.message();
      error_code ignored;
      upstream_.close(ignored);
      if (connect_timed_out_ || !client_.is_open()) break;
    }
    if (!connected) co_return fail(connect_timed_out_ ? "connect timed out" : why);
    if (!co_await write_all(upstream_, connect_request(d.event.host, d.event.port)))
      co_return fail("writing CONNECT failed");
    std::string head;
    char c = 0;
    while (!head.ends_with("\r\n\r\n")) {
      if (head.size() >= srv_->options().max_head_bytes) co_return fail("answer head too large");
      auto [ec, n] = co_await upstream_.async_read_some(asio::buffer(&c, 1), kNoThrow);
      if (ec || n == 0) co_return fail("closed before answering the CONNECT");
      head.push_back(c);
    }
    auto code = parse_connect_reply(head);
    if (!code) co_return fail(code.error().message);
    if (*code < 200 || *code > 299) {
      co_return fail("answered " + head.substr(0, head.find('\r')) + " to CONNECT " + d.event.host +
                     ":" + std::to_string(d.event.port));
    }
    set_nodelay(upstream_.native_handle());
    upstream_open_ = true;
    upstream_key_ = d.event.host + ":" + std::to_string(d.event.port);
    upstream_address_ = guarded;      // what a reused connection is judged by again
    emit_unsettled(d.event.address);  // the guarded address; the parent dialled it by name
    r.outcome = UpstreamResult::Outcome::kConnected;
    set_phase(Phase::kStreaming, srv_->options().idle_timeout);
    co_return r;
  }

  // Emits the allowed decision of the connect in progress, if any, once: `address` is
  // the one connected to, empty when none was (the first address tried stays).
  void emit_unsettled(const std::string& address) {
    if (!unsettled_) return;
    NetDecision d = std::move(*unsettled_);
    unsettled_.reset();
    if (!address.empty()) d.address = address;
    srv_->emit(d);
  }

  // A kept-alive upstream is reusable only if the server has neither closed it nor sent
  // anything unasked (servers close idle connections on their own schedule).
  bool upstream_idle_and_open() {
    char byte = 0;
    const ssize_t n = ::recv(upstream_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    drop_upstream();
    return false;
  }

  void drop_upstream() {
    error_code ec;
    upstream_.close(ec);
    upstream_open_ = false;
    up_in_.consume(up_in_.size());
  }

  // --- ask mode (proxy/ask.h) ----------------------------------------------------------
  // A host refused only because it is off the allow list, with an Asker: resolved and
  // guarded first (what the guard refuses is refused, never asked: `d` becomes that
  // refusal), then held until the answer. Allowed, `d` becomes an allowed decision
  // (rule "ask:once" / "ask:session" / "ask:always") and connect_upstream uses the
  // guarded addresses. Anything else leaves `d` a refusal, its reason saying why.
  asio::awaitable<void> ask_if_off_list(TargetDecision& d) {
    if (!srv_->options().asker || d.allowed() || d.event.refused_by != RefusedBy::kNotAllowed ||
        !d.host) {
      co_return;
    }
    TargetDecision held = d;
    held.event.verdict = Verdict::kAllow;
    held.event.refused_by = RefusedBy::kNone;
    std::vector<IpAddress> resolved;
    if (held.needs_resolution()) {
      set_phase(Phase::kWaiting, srv_->options().resolve_timeout + std::chrono::seconds(5));
      auto addrs =
          co_await srv_->resolver().resolve(held.host->text, srv_->options().resolve_timeout);
      if (!addrs) co_return;  // nowhere to connect: refused as off the list, not asked
      resolved = std::move(*addrs);
      co_await srv_->metadata_ready();
    } else if (auto lit = literal_address(held)) {
      resolved.push_back(*lit);
    }
    std::vector<IpAddress> passing = choose_addresses(held, resolved, srv_->guard_context());
    if (passing.empty()) {
      d = std::move(held);
      co_return;
    }
    AskQuestion q{d.event.proto, d.event.host, d.event.port, passing.front().to_string(),
                  srv_->options().ask_timeout};
    const AskAnswer a = co_await hold(std::move(q));
    set_phase(Phase::kHead, srv_->options().head_timeout);
    if (!allows(a)) {
      d.event.reason += a == AskAnswer::kDeny      ? " (asked: the answer was deny)"
                        : a == AskAnswer::kTimeout ? " (asked: no answer in time)"
                                                   : " (asked: the request ended first)";
      co_return;
    }
    held.event.rule = std::string("ask:") + to_string(a);
    held.event.reason = std::string("allowed when asked (") + to_string(a) + ")";
    held_addresses_ = std::move(passing);
    d = std::move(held);
  }

  // Asks and waits for the first of: the answer, the timeout, the connection's end.
  asio::awaitable<AskAnswer> hold(AskQuestion q) {
    const auto timeout = q.timeout;
    ask_timer_ = std::make_shared<asio::steady_timer>(srv_->io());
    std::weak_ptr<asio::steady_timer> weak = ask_timer_;
    auto ticket = std::make_shared<AskTicket>(std::move(q), [ex = srv_->io().get_executor(), weak] {
      asio::post(ex, [weak] {
        if (auto t = weak.lock()) t->cancel();
      });
    });
    // However the hold ends (even the coroutine destroyed with the io_context), the ticket
    // is answered and can no longer post to this io_context.
    struct Release {
      std::shared_ptr<AskTicket> t;
      ~Release() {
        t->answer(AskAnswer::kCancelled);
        t->detach();
      }
    } release{ticket};
    set_phase(Phase::kWaiting, timeout + std::chrono::seconds(5));
    srv_->options().asker->ask(ticket);
    ask_timer_->expires_after(timeout);
    while (!ticket->result()) {
      auto [ec] = co_await ask_timer_->async_wait(kNoThrow);
      if (!ec) {
        ticket->answer(AskAnswer::kTimeout);
      } else if (!client_.is_open()) {
        ticket->answer(AskAnswer::kCancelled);
      }
      // Claimed by another thread that has not published it yet: its wake cancels this.
      if (!ticket->result()) ask_timer_->expires_at(Clock::time_point::max());
    }
    ask_timer_.reset();
    co_return *ticket->result();
  }

  // --- SOCKS ---------------------------------------------------------------------------
  static std::span<const std::uint8_t> bytes(std::string_view v) {
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size()};
  }

  template <std::size_t N>
  asio::awaitable<bool> write_bytes(std::array<std::uint8_t, N> b) {
    const bool written =
        co_await write_all(client_, std::string_view(reinterpret_cast<const char*>(b.data()), N));
    co_return written;
  }

  asio::awaitable<void> serve_socks4() {
    // Best effort for the event: SOCKS4 carries the port and IPv4 address up front.
    NetDecision d;
    d.proto = Proto::kSocks4;
    const auto b = bytes(in_.view());
    if (b.size() >= 8) {
      d.port = static_cast<std::uint16_t>((b[2] << 8) | b[3]);
      char text[INET_ADDRSTRLEN] = {};
      if (::inet_ntop(AF_INET, b.data() + 4, text, sizeof text) != nullptr) d.host = text;
    }
    d.refused_by = RefusedBy::kUnsupportedProtocol;
    d.reason = "SOCKS4 is not supported: use SOCKS5 (socks5h://)";
    srv_->emit(d);
    co_await write_bytes(socks5::socks4_rejection());
    co_await linger();
  }

  asio::awaitable<void> serve_socks5() {
    socks5::Greeting g;
    while ((g = socks5::parse_greeting(bytes(in_.view()))).state ==
           socks5::ParseState::kIncomplete) {
      const bool got = co_await read_into(client_, in_);
      if (!got) co_return;
    }
    if (g.state == socks5::ParseState::kError) co_return;
    in_.consume(g.size);
    const bool sent = co_await write_bytes(socks5::method_reply(g.offers_no_auth));
    if (!sent || !g.offers_no_auth) co_return;

    socks5::Request req;
    while ((req = socks5::parse_request(bytes(in_.view()))).state ==
           socks5::ParseState::kIncomplete) {
      const bool got = co_await read_into(client_, in_);
      if (!got) co_return;
    }
    if (req.state == socks5::ParseState::kError) {
      co_await write_bytes(socks5::reply(req.reply));
      co_return;
    }
    in_.consume(req.size);
    TargetDecision d = decide_target(srv_->matcher(), Proto::kSocks5, req.host, req.port);
    co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
    if (!d.allowed()) {
      srv_->emit(d.event);
      co_await write_bytes(socks5::reply(socks5::Reply::kNotAllowed));
      co_return;
    }
    const UpstreamResult up = co_await connect_upstream(d);
    if (up.outcome != UpstreamResult::Outcome::kConnected) {
      co_await write_bytes(socks5::reply(up.socks_reply));
      co_return;
    }
    const bool sent_ok = co_await write_bytes(socks5::reply(socks5::Reply::kSucceeded));
    if (!sent_ok) co_return;
    co_await tunnel();
  }

  // --- HTTP ----------------------------------------------------------------------------
  asio::awaitable<void> http_error(int status, std::string kind, std::string message) {
    co_await final_reply(http::error_response(status, kind, message));
  }

  asio::awaitable<void> serve_http() {
    bool first = true;
    while (true) {
      if (!first) {
        set_phase(in_.empty() ? Phase::kIdle : Phase::kHead,
                  in_.empty() ? srv_->options().idle_timeout : srv_->options().head_timeout);
      }
      http::HeadScan scan;
      http::HeadParse<http::RequestHead> p;
      while (
          (p = http::parse_request_head(in_.view(), &scan, srv_->options().max_head_bytes)).state ==
          http::ParseState::kIncomplete) {
        if (srv_->stopping() && in_.empty()) co_return;
        const bool got = co_await read_into(client_, in_);
        if (!got) co_return;
        if (phase_ == Phase::kIdle) set_phase(Phase::kHead, srv_->options().head_timeout);
      }
      first = false;
      if (p.state == http::ParseState::kError) {
        co_await http_error(p.error.status, "bad-request", p.error.message);
        co_return;
      }
      in_.consume(p.size);
      if (http::iequals(p.head.method, "CONNECT")) {
        co_await serve_connect(p.head);
        co_return;
      }
      const bool more = co_await serve_request(p.head);
      if (!more) co_return;
    }
  }

  asio::awaitable<void> serve_connect(const http::RequestHead& head) {
    const http::TargetParse t = http::parse_authority_form(head.target);
    if (!t.ok) {
      co_await http_error(t.error.status, "bad-request", t.error.message);
      co_return;
    }
    TargetDecision d =
        decide_target(srv_->matcher(), Proto::kConnect, t.target.host, t.target.port);
    co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
    if (!d.allowed()) {
      srv_->emit(d.event);
      co_await final_reply(http::refusal_response(d.event.reason));
      co_return;
    }
    const UpstreamResult up = co_await connect_upstream(d);
    if (up.outcome == UpstreamResult::Outcome::kRefused) {
      co_await final_reply(http::refusal_response(d.event.reason));
      co_return;
    }
    if (up.outcome == UpstreamResult::Outcome::kFailed) {
      co_await http_error(up.http_status, "upstream-unreachable", up.message);
      co_return;
    }
    const bool sent = co_await write_all(client_, http::connect_established());
    if (!sent) co_return;
    co_await tunnel();
  }

  // One absolute-form request and its response. Returns whether the client connection
  // carries on with another request.
  asio::awaitable<bool> serve_request(const http::RequestHead& head) {
    const http::TargetParse t = http::parse_absolute_form(head.target);
    if (!t.ok) {
      co_await http_error(t.error.status, "bad-request", t.error.message);
      co_return false;
    }
    const http::FramingResult framing = http::request_framing(head);
    if (!framing.ok) {
      co_await http_error(framing.error.status, "bad-request", framing.error.message);
      co_return false;
    }
    // A new decision for every request, even on a connection that already has an
    // upstream: the policy speaks about each host:port, not about connections.
    TargetDecision d = decide_target(srv_->matcher(), Proto::kHttp, t.target.host, t.target.port);
    co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
    if (!d.allowed()) {
      srv_->emit(d.event);
      co_await final_reply(http::refusal_response(d.event.reason));
      co_return false;
    }
    const std::string key = d.event.host + ":" + std::to_string(d.event.port);
    const bool reuse =
        upstream_open_ && upstream_.is_open() && key == upstream_key_ && upstream_idle_and_open();
    if (reuse) {
      held_addresses_.reset();
      // Same host:port as the open upstream: the address was guarded when it was
      // connected; judge it again (interface addresses may have changed) instead of
      // resolving again.
      std::vector<IpAddress> passing =
          choose_addresses(d, {upstream_address_}, srv_->guard_context());
      if (passing.empty()) {
        drop_upstream();
        srv_->emit(d.event);
        co_await final_reply(http::refusal_response(d.event.reason));
        co_return false;
      }
      srv_->emit(d.event);
      set_phase(Phase::kStreaming, srv_->options().idle_timeout);
    } else {
      // A different host gets its own upstream connection.
      const UpstreamResult up = co_await connect_upstream(d);
      if (up.outcome == UpstreamResult::Outcome::kRefused) {
        co_await final_reply(http::refusal_response(d.event.reason));
        co_return false;
      }
      if (up.outcome == UpstreamResult::Outcome::kFailed) {
        co_await http_error(up.http_status, "upstream-unreachable", up.message);
        co_return false;
      }
    }

    const bool keep_client = http::client_wants_keep_alive(head) && !srv_->stopping();
    const std::string upstream_head =
        http::upstream_request_head(head, t.target, *d.host, !keep_client);
    const bool sent = co_await write_all(upstream_, upstream_head);
    if (!sent) {
      co_await http_error(502, "upstream-unreachable",
                          "the upstream connection closed before the request");
      co_return false;
    }

    // The request body flows while the response is read: a server may answer before
    // the body is complete (100-continue, early errors), and a client may wait for that.
    auto self = shared_from_this();
    body_done_ = framing.framing.kind == http::BodyFraming::Kind::kNone;
    body_failed_ = false;
    if (!body_done_) {
      asio::co_spawn(srv_->io(), relay_request_body(framing.framing),
                     [self](std::exception_ptr) {});
    }
    const Next next = co_await relay_response(head.method, keep_client);
    if (!body_done_ || body_failed_) {
      // The server answered before the whole body arrived (or the body broke): there is
      // no telling where the next request would start, and the body relay still owns
      // the client's read side. Cut.
      abort();
      co_return false;
    }
    if (next == Next::kKeep && !srv_->stopping()) co_return true;
    if (next != Next::kAbort) {
      co_await linger();
    }
    co_return false;
  }

  asio::awaitable<void> relay_request_body(http::BodyFraming framing) {
    std::uint64_t remaining = framing.length;
    http::ChunkedScanner chunks;
    while (true) {
      if (in_.empty()) {
        const bool got = co_await read_into(client_, in_);
        if (!got) {
          body_failed_ = true;
          co_return;
        }
      }
      std::size_t take = 0;
      bool done = false;
      if (framing.kind == http::BodyFraming::Kind::kLength) {
        take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, in_.size()));
        remaining -= take;
        done = remaining == 0;
      } else {
        const auto step = chunks.feed(in_.view());
        if (step.error) {
          body_failed_ = true;
          abort();
          co_return;
        }
        take = step.consumed;
        done = step.done;
      }
      const bool written = co_await write_all(upstream_, in_.view().substr(0, take));
      if (!written) {
        body_failed_ = true;
        co_return;
      }
      srv_->stats().bytes_up += take;
      in_.consume(take);
      if (done) break;
    }
    body_done_ = true;
  }

  enum class Next { kKeep, kClose, kAbort };

  // Relays 1xx responses and the final response, and says what the client connection
  // does next. Never reads from the client (the request body relay may be doing so);
  // the caller lingers or aborts. Keeps the upstream open only when it can be reused.
  asio::awaitable<Next> relay_response(std::string method, bool keep_client) {
    bool sent_anything = false;
    while (true) {
      http::HeadScan scan;
      http::HeadParse<http::ResponseHead> p;
      while ((p = http::parse_response_head(up_in_.view(), &scan, srv_->options().max_head_bytes))
                 .state == http::ParseState::kIncomplete) {
        const bool got = co_await read_into(upstream_, up_in_);
        if (!got) {
          drop_upstream();
          if (sent_anything) co_return Next::kAbort;
          std::string reply = http::error_response(502, "upstream-unreachable",
                                                   "the upstream server closed without a response");
          const bool sent = co_await write_all(client_, reply);
          co_return sent ? Next::kClose : Next::kAbort;
        }
      }
      if (p.state == http::ParseState::kError) {
        drop_upstream();
        if (sent_anything) co_return Next::kAbort;
        std::string reply = http::error_response(502, "bad-upstream-response", p.error.message);
        const bool sent = co_await write_all(client_, reply);
        co_return sent ? Next::kClose : Next::kAbort;
      }
      up_in_.consume(p.size);
      const http::FramingResult f = http::response_framing(p.head, method);
      if (!f.ok || p.head.status == 101) {
        drop_upstream();
        if (sent_anything) co_return Next::kAbort;
        std::string reply = http::error_response(
            502, "bad-upstream-response",
            f.ok ? "upstream switched protocols (upgrades are not proxied)" : f.error.message);
        const bool sent = co_await write_all(client_, reply);
        co_return sent ? Next::kClose : Next::kAbort;
      }
      if (p.head.status < 200) {  // 100 Continue, 103 Early Hints: forward, then the real one
        std::string interim = http::client_response_head(p.head, false);
        const bool sent = co_await write_all(client_, interim);
        if (!sent) co_return Next::kAbort;
        sent_anything = true;
        continue;
      }
      const bool close_client =
          !keep_client || f.framing.kind == http::BodyFraming::Kind::kUntilClose;
      std::string response_head = http::client_response_head(p.head, close_client);
      // The head goes out with the first body bytes (relay_response_body).
      const bool body_ok = co_await relay_response_body(f.framing, std::move(response_head));
      if (!body_ok) co_return Next::kAbort;  // truncated: the client must see the cut
      const bool reusable =
          !close_client && http::upstream_keeps_alive(p.head, f.framing) && up_in_.empty();
      if (!reusable) drop_upstream();
      co_return close_client ? Next::kClose : Next::kKeep;
    }
  }

  // Relays the body, sending `head` (the response head) together with the first body
  // bytes: a small response then reaches the client as one segment.
  asio::awaitable<bool> relay_response_body(http::BodyFraming framing, std::string head) {
    using Kind = http::BodyFraming::Kind;
    if (framing.kind == Kind::kNone) {
      const bool sent = co_await write_all(client_, head);
      co_return sent;
    }
    std::uint64_t remaining = framing.length;
    http::ChunkedScanner chunks;
    while (true) {
      if (up_in_.empty()) {
        if (!head.empty()) {  // nothing of the body yet: do not hold the head back for it
          const bool sent = co_await write_all(client_, head);
          if (!sent) co_return false;
          head.clear();
        }
        auto [ec, n] = co_await upstream_.async_read_some(up_in_.prepare(), kNoThrow);
        if (ec == asio::error::eof && framing.kind == Kind::kUntilClose) co_return true;
        if (ec || n == 0) co_return false;  // truncated: the client must see the cut
        up_in_.commit(n);
        touch();
      }
      std::size_t take = up_in_.size();
      bool done = false;
      if (framing.kind == Kind::kLength) {
        take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, take));
        remaining -= take;
        done = remaining == 0;
      } else if (framing.kind == Kind::kChunked) {
        const auto step = chunks.feed(up_in_.view());
        if (step.error) co_return false;
        take = step.consumed;
        done = step.done;
      }
      const bool written = co_await write_all(client_, head, up_in_.view().substr(0, take));
      if (!written) co_return false;
      head.clear();
      srv_->stats().bytes_down += take;
      up_in_.consume(take);
      if (done) co_return true;
    }
  }

  std::shared_ptr<Server::Impl> srv_;
  GenericSocket client_;
  tcp::socket upstream_;
  asio::steady_timer watchdog_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Phase phase_ = Phase::kFirstByte;
  Buffer in_;     // client -> proxy
  Buffer up_in_;  // upstream -> proxy
  bool finished_ = false;
  bool connect_timed_out_ = false;
  bool body_done_ = true;
  bool body_failed_ = false;
  // The kept-alive upstream of an HTTP connection, for the next request to the same
  // host:port.
  bool upstream_open_ = false;
  std::string upstream_key_;
  IpAddress upstream_address_;
  // An allowed decision whose connect has not settled yet (connect_upstream).
  std::optional<NetDecision> unsettled_;
  // Ask mode: the addresses guarded before the question (connect_upstream takes them),
  // and the timer a held request waits on.
  std::optional<std::vector<IpAddress>> held_addresses_;
  std::shared_ptr<asio::steady_timer> ask_timer_;
};

// --- Server::Impl ----------------------------------------------------------------------

const GuardContext& Server::Impl::guard_context() {
  const auto now = Clock::now();
  if (host_addresses_at_ == Clock::time_point{} || now - host_addresses_at_ > kHostAddressTtl) {
    guard_.host_addresses = interface_addresses();
    host_addresses_at_ = now;
  }
  return guard_;
}

asio::awaitable<void> Server::Impl::metadata_ready() {
  if (!metadata_done_) {
    auto [ec] = co_await metadata_event_.async_wait(kNoThrow);
    (void)ec;
  }
}

asio::awaitable<void> Server::Impl::lookup_metadata() {
  // GCE's metadata server is reached by name; whatever that name resolves to here is
  // refused like 169.254.169.254 (which is what it is on GCE, and link-local anyway).
  auto r = co_await resolver_->resolve("metadata.google.internal", kMetadataLookupTimeout);
  if (r) guard_.extra_metadata = std::move(*r);
  metadata_done_ = true;
  metadata_event_.cancel();
}

Result<void> Server::Impl::listen(const ListenAddress& where) {
  if (where.kind == ListenAddress::Kind::kUnix) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (where.path.empty() || where.path.size() >= sizeof sa.sun_path) {
      return make_error(Errc::kInvalidPolicy,
                        "unix socket path " + where.path + " is empty or longer than " +
                            std::to_string(sizeof sa.sun_path - 1) + " bytes");
    }
    std::memcpy(sa.sun_path, where.path.c_str(), where.path.size());
    struct stat st {};
    if (::lstat(where.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        return make_error(Errc::kRefused,
                          where.path + " exists and is not a socket: not replacing it");
      }
      // A socket file: replace it only if nobody is listening on it.
      UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!probe) return system_error("socket");
      if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) {
        return make_error(Errc::kRefused, where.path + ": another process is listening there");
      }
      if (::unlink(where.path.c_str()) != 0) return system_error("unlink " + where.path);
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return system_error("socket");
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
      return system_error("bind " + where.path);
    }
    if (::chmod(where.path.c_str(), 0600) != 0) return system_error("chmod " + where.path);
    if (::lstat(where.path.c_str(), &st) == 0) {
      unix_dev_ = st.st_dev;
      unix_ino_ = st.st_ino;
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) return system_error("listen " + where.path);
    unix_path_ = where.path;
    bound_ = where;
    return adopt(std::move(fd));
  }
  boost::system::error_code ec;
  const IpAddress addr = asio::ip::make_address(where.host, ec);
  if (ec) return make_error(Errc::kInvalidPolicy, "not an IP address: " + where.host);
  const tcp::endpoint ep(addr, where.port);
  UniqueFd fd(
      ::socket(addr.is_v4() ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return system_error("socket");
  const int one = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), ep.data(), static_cast<socklen_t>(ep.size())) != 0) {
    return system_error("bind " + where.text());
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) return system_error("listen " + where.text());
  bound_ = where;
  auto r = adopt(std::move(fd));
  if (!r) return r;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(acceptor_.native_handle(), reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    bound_.port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                                : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return {};
}

Result<void> Server::Impl::adopt(UniqueFd fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return system_error("getsockname");
  const int family = ss.ss_family;
  if (family != AF_UNIX && family != AF_INET && family != AF_INET6) {
    return make_error(Errc::kUnsupported,
                      "the proxy listens on AF_UNIX, AF_INET or AF_INET6 sockets only");
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) != 0) {
    return system_error("fcntl");
  }
  protocol_ = asio::generic::stream_protocol(family, family == AF_UNIX ? 0 : IPPROTO_TCP);
  error_code ec;
  acceptor_.assign(protocol_, fd.get(), ec);
  if (ec) return make_error(Errc::kSystem, "cannot watch the listening socket: " + ec.message());
  (void)fd.release();  // the acceptor owns it now
  if (bound_.path.empty() && bound_.host.empty()) {
    if (family == AF_UNIX) {
      bound_.kind = ListenAddress::Kind::kUnix;
      bound_.path = reinterpret_cast<sockaddr_un*>(&ss)->sun_path;
    } else {
      bound_.kind = ListenAddress::Kind::kTcp;
      char text[INET6_ADDRSTRLEN] = {};
      const void* src =
          family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr);
      ::inet_ntop(family, src, text, sizeof text);
      bound_.host = text;
      bound_.port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                            : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    }
  }
  return {};
}

void Server::Impl::start() {
  if (started_) return;
  started_ = true;
  auto self = shared_from_this();
  // The metadata lookup waits for the first client (spawn_connection): most commands
  // never use the network, and a lookup at start cost every `vigil run` a thread and a
  // getaddrinfo (NSS modules, a DNS query) while the sandbox was starting.
  asio::co_spawn(io_, accept_loop(), [self](std::exception_ptr) {});
}

asio::awaitable<void> Server::Impl::accept_loop() {
  asio::steady_timer backoff(io_);
  while (!stopping_ && acceptor_.is_open()) {
    if (connections_.size() >= options_.max_connections) {
      // Full: leave new clients in the listen backlog until a connection ends.
      co_await slot_event_.async_wait(kNoThrow);
      slot_event_.expires_at(Clock::time_point::max());
      continue;
    }
    auto [ec] = co_await acceptor_.async_wait(asio::socket_base::wait_read, kNoThrow);
    if (ec || stopping_) break;
    while (connections_.size() < options_.max_connections) {
      // accept4: the new fd is CLOEXEC from birth (Asio's accept would leave a window
      // in which a fork elsewhere in the supervisor inherits it).
      const int fd =
          ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        spawn_connection(UniqueFd(fd));
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the pending client stays queued; retry shortly instead of
        // spinning on a readable listener.
        backoff.expires_after(std::chrono::milliseconds(100));
        co_await backoff.async_wait(kNoThrow);
      }
      break;  // EAGAIN and anything else: wait for readiness again
    }
  }
}

void Server::Impl::spawn_connection(UniqueFd fd) {
  if (!metadata_started_) {
    // Runs while this client sends its request and its own host is resolved; a request
    // waits for it (bounded) only after that.
    metadata_started_ = true;
    asio::co_spawn(io_, lookup_metadata(), [self = shared_from_this()](std::exception_ptr) {});
  }
  const bool is_tcp = protocol_.family() != AF_UNIX;
  if (is_tcp) set_nodelay(fd.get());
  GenericSocket sock(io_);
  error_code ec;
  sock.assign(protocol_, fd.get(), ec);
  if (ec) return;  // fd closed by UniqueFd
  (void)fd.release();
  auto c = std::make_shared<Connection>(shared_from_this(), std::move(sock));
  connections_.insert(c.get());
  ++stats_.accepted;
  stats_.active = connections_.size();
  stats_.peak_active = std::max(stats_.peak_active, stats_.active);
  c->start();
}

void Server::Impl::connection_finished(Connection* c) {
  connections_.erase(c);
  stats_.active = connections_.size();
  slot_event_.cancel();
  if (connections_.empty() && !trim_pending_ && !stopping_) {
    trim_pending_ = true;
    trim_timer_.expires_after(kTrimAfterIdle);
    auto self = shared_from_this();
    trim_timer_.async_wait([self](const error_code& ec) {
      self->trim_pending_ = false;
      if (!ec && self->connections_.empty()) self->buffer_cache_.clear();
#if defined(__GLIBC__)
      if (!ec && self->connections_.empty()) ::malloc_trim(0);
#else
      (void)ec;
#endif
    });
  }
  check_stopped();
}

void Server::Impl::stop_listening() {
  stopping_ = true;
  error_code ec;
  acceptor_.close(ec);
  slot_event_.cancel();
  if (!unix_path_.empty()) {
    struct stat st {};
    // Only our own socket: something else may have been put at the path since.
    if (::lstat(unix_path_.c_str(), &st) == 0 && st.st_dev == unix_dev_ && st.st_ino == unix_ino_) {
      ::unlink(unix_path_.c_str());
    }
    unix_path_.clear();
  }
}

void Server::Impl::begin_shutdown() {
  if (stopping_) {
    force_abort();  // a second request to stop: no more grace
    return;
  }
  stop_listening();
  // Connections with nothing in flight go now; the rest get the grace period.
  std::vector<Connection*> idle;
  for (Connection* c : connections_) {
    if (c->phase() == Connection::Phase::kFirstByte || c->phase() == Connection::Phase::kIdle)
      idle.push_back(c);
  }
  for (Connection* c : idle) c->abort();
  grace_timer_.expires_after(options_.shutdown_grace);
  auto self = shared_from_this();
  grace_timer_.async_wait([self](const error_code& wec) {
    if (!wec) self->force_abort();
  });
  check_stopped();
}

void Server::Impl::force_abort() {
  if (!stopping_) stop_listening();
  std::vector<Connection*> all(connections_.begin(), connections_.end());
  for (Connection* c : all) c->abort();
  // Their sockets are closed: nothing more reaches or leaves them. A coroutine may still
  // be parked on a DNS answer or the metadata lookup (bounded by their own deadlines);
  // it finds closed sockets when it wakes. Stopping does not wait for that.
  connections_.clear();
  stats_.active = 0;
  check_stopped();
}

void Server::Impl::check_stopped() {
  if (!stopping_ || stopped_ || !connections_.empty()) return;
  stopped_ = true;
  grace_timer_.cancel();
  metadata_event_.cancel();
  trim_timer_.cancel();
  if (on_stopped_) {
    auto cb = std::move(on_stopped_);
    cb();
  }
}

// --- Server ------------------------------------------------------------------------------

Result<std::unique_ptr<Server>> Server::create(asio::io_context& io, const NetworkPolicy& net,
                                               ServerOptions options,
                                               std::shared_ptr<Resolver> resolver,
                                               std::shared_ptr<EventSink> sink) {
  if (!resolver || !sink)
    return make_error(Errc::kInternal, "proxy server needs a resolver and an event sink");
  auto matcher = DomainMatcher::build(net);
  VIGIL_TRY(matcher);
  auto denied = parse_denied_resolved_addresses(net.denied_resolved_addresses);
  VIGIL_TRY(denied);
  auto parent = build_parent_route(net.parent_proxy);
  VIGIL_TRY(parent);
  auto impl = std::make_shared<Impl>(io, std::move(*matcher), std::move(*denied), options,
                                     std::move(resolver), std::move(sink), std::move(*parent));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  // Connections hold the Impl; cut them so nothing outlives the Server's owner's
  // expectations (and the unix socket path is removed).
  auto impl = impl_;
  impl->on_stopped_ = nullptr;
  impl->force_abort();
  impl->shutdown_resolver();
}

Result<void> Server::listen(const ListenAddress& where) { return impl_->listen(where); }
Result<void> Server::listen_fd(UniqueFd fd) { return impl_->adopt(std::move(fd)); }
ListenAddress Server::local_address() const { return impl_->bound_; }
void Server::start() { impl_->start(); }

void Server::shutdown() {
  auto impl = impl_;
  asio::post(impl->io(), [impl] { impl->begin_shutdown(); });
}

void Server::abort() {
  auto impl = impl_;
  asio::post(impl->io(), [impl] { impl->force_abort(); });
}

void Server::on_stopped(std::function<void()> callback) {
  impl_->on_stopped_ = std::move(callback);
}

ServerStats Server::stats() const { return impl_->stats(); }

// --- listen addresses --------------------------------------------------------------------

std::string ListenAddress::text() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp:" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  ListenAddress a;
  const auto bad = [&text](const std::string& why) {
    return make_error(Errc::kInvalidPolicy,
                      "--listen " + quote_for_message(text) + ": " + why +
                          " (write unix:/path/to/socket or tcp:127.0.0.1:PORT)");
  };
  if (text.substr(0, 5) == "unix:") {
    a.kind = ListenAddress::Kind::kUnix;
    a.path = std::string(text.substr(5));
    if (a.path.empty() || a.path.front() != '/') return bad("the socket path must be absolute");
    return a;
  }
  if (text.substr(0, 4) != "tcp:") return bad("unknown kind");
  std::string_view rest = text.substr(4);
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find("]:");
    if (close == std::string_view::npos) return bad("missing ]:PORT");
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :PORT");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  boost::system::error_code ec;
  const IpAddress addr = asio::ip::make_address(std::string(host), ec);
  if (ec || !addr.is_loopback())
    return bad("the proxy listens on loopback only (127.0.0.1 or [::1])");
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("bad port");
  }
  unsigned value = 0;
  for (char c : port) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value > 65535) return bad("port out of range");
  a.kind = ListenAddress::Kind::kTcp;
  a.host = addr.to_string();
  a.port = static_cast<std::uint16_t>(value);
  return a;
}

}  // namespace vigil::proxy
