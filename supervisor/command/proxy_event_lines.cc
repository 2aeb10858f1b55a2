#include "supervisor/command/proxy_event_lines.h"

#include <utility>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {

ProxyEventLines::ProxyEventLines(UniqueFd fd, std::string session)
    : fd_(std::move(fd)), session_(std::move(session)) {}

void ProxyEventLines::on_decision(const events::NetDecision& d) { write(d); }
void ProxyEventLines::on_upstream_failure(const events::NetUpstreamFailure& f) { write(f); }

void ProxyEventLines::write(events::Body body) {
  std::lock_guard lock(mu_);
  events::Event e;
  e.seq = seq_++;
  e.t = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - start_)
                                        .count());
  e.session = session_;
  e.src = events::Source::kProxy;
  e.prev = prev_;
  e.body = std::move(body);
  const std::string line = events::serialize(e);
  // The chain moves on even if the write fails: the next line then points at one that is
  // missing, which a reader sees, instead of hiding the gap.
  prev_ = sha256_hex(line);
  // A full disk must not stop the proxy: the line is lost, the proxy goes on.
  (void)write_all(fd_.get(), line + "\n", "the proxy's event stream");
}

}  // namespace vigil
