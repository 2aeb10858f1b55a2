#include "proxy/tls_stream.h"

#include <algorithm>
#include <boost/asio/write.hpp>

#include "proxy/chunked.h"

namespace vigil::proxy::tls {
namespace {
constexpr std::size_t kRead = 16 * 1024;
}  // namespace

asio::awaitable<bool> read_more(Stream& s, std::string& buf) {
  const std::size_t old = buf.size();
  buf.resize(old + kRead);
  auto [ec, n] = co_await s.async_read_some(asio::buffer(buf.data() + old, kRead), kNoThrow);
  buf.resize(old + (ec ? 0 : n));
  co_return !ec && n > 0;
}

asio::awaitable<bool> write(Stream& s, std::string_view data) {
  auto [ec, n] = co_await asio::async_write(s, asio::buffer(data.data(), data.size()), kNoThrow);
  (void)n;
  co_return !ec;
}

asio::awaitable<std::int64_t> relay_body(Stream& from, std::string& buf, Stream& to,
                                         http::BodyFraming f, std::string_view head) {
  const bool none = f.kind == http::BodyFraming::Kind::kNone ||
                    (f.kind == http::BodyFraming::Kind::kLength && f.length == 0);
  if (none) co_return head.empty() || (co_await write(to, head)) ? 0 : -1;
  std::string first(head);  // the head, until the first body bytes go with it
  std::uint64_t total = 0;
  std::uint64_t remaining = f.length;
  http::ChunkedScanner chunks;
  while (true) {
    if (buf.empty() && !(co_await read_more(from, buf))) {
      const bool ok = f.kind == http::BodyFraming::Kind::kUntilClose;
      if (!first.empty() && !(co_await write(to, first))) co_return -1;
      co_return ok ? static_cast<std::int64_t>(total) : -1;
    }
    std::size_t take = buf.size();
    bool done = false;
    if (f.kind == http::BodyFraming::Kind::kLength) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, buf.size()));
      remaining -= take;
      done = remaining == 0;
    } else if (f.kind == http::BodyFraming::Kind::kChunked) {
      const auto step = chunks.feed(buf);
      if (step.error) co_return -1;
      take = step.consumed;
      done = step.done;
    }
    if (!first.empty()) {
      first.append(buf, 0, take);
      if (!(co_await write(to, first))) co_return -1;
      first.clear();
      first.shrink_to_fit();
    } else if (!(co_await write(to, std::string_view(buf).substr(0, take)))) {
      co_return -1;
    }
    total += take;
    buf.erase(0, take);
    if (done) co_return static_cast<std::int64_t>(total);
  }
}

}  // namespace vigil::proxy::tls
