// What the server's lifecycle (server_impl.h) needs of a connection: whether it has
// nothing in flight, and a way to end it. The server holds its connections by this, so
// that the lifecycle's code needs nothing else of connection.h (which needs the server's
// internals: the other way round would be a loop).
#pragma once

namespace vigil::proxy {

class ConnectionHandle {
 public:
  virtual ~ConnectionHandle() = default;
  // True while no request is in flight (before its first byte, or between keep-alive
  // requests): a graceful shutdown ends these at once and gives the rest a grace period.
  virtual bool idle() const = 0;
  // Ends the connection now (both sockets closed, its coroutines unwound).
  virtual void abort() = 0;
};

}  // namespace vigil::proxy
