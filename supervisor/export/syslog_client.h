// One connection to a syslog collector: RFC 5424 messages with octet-counting framing over
// TCP (RFC 6587) or TLS (RFC 5425, OpenSSL through Boost.Asio's ssl stream, the server
// checked against a CA file and the host name). Blocking, with a timeout on every step:
// it runs in the exporter's own process, never in a sandboxed command's path.
//
// Syslog over TCP has no acknowledgement, so "sent" is not "received": the exporter keeps
// what it sent in its spool until the kernel says the peer's TCP took every byte
// (unacked() == 0) and the connection then stayed up for a settling time; a connection
// that drops before resends the rest (at-least-once; supervisor/export/exporter.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

struct SyslogTarget {
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
  std::string ca_file;  // TLS: the CA that signed the collector's certificate
  friend bool operator==(const SyslogTarget&, const SyslogTarget&) = default;
};

// "syslog://HOST:PORT" or "syslog+tls://HOST:PORT" ("[::1]:6514" for IPv6). Pure.
Result<SyslogTarget> parse_syslog_url(std::string_view url);

// Whether this build has TLS (OpenSSL was found when it was configured).
bool syslog_tls_built();

class SyslogClient {
 public:
  ~SyslogClient();
  static Result<std::unique_ptr<SyslogClient>> connect(const SyslogTarget& target,
                                                       std::chrono::milliseconds timeout);
  // Writes all of `bytes`; an error means the connection is unusable.
  Result<void> send(std::string_view bytes, std::chrono::milliseconds timeout);
  // False once the peer closed or reset the connection (a syslog receiver never sends).
  bool alive() const;
  // Bytes written but not yet acknowledged by the peer's TCP (SIOCOUTQ).
  std::uint64_t unacked() const;

 private:
  struct Impl;
  explicit SyslogClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
