// The observer's connect() under vigil.network.capture (observer/inet_broker.h): TCP to
// anything but the sandbox's loopback is carried through the proxy on a thread of the
// idle pool (the proxy's answer can take seconds; every other process's calls go on).
#include <memory>

#include "observer/idle_threads.h"
#include "observer/inet_broker.h"
#include "observer/notify_loop.h"

namespace vigil::init {

void Observer::handle_inet(const Notification& n) {
  InetCall call = prepare_inet_connect(n, *listener_, *options_.fake_names);
  switch (call.step) {
    case InetCall::Step::kGone:
      ++stats_.vanished;
      return;
    case InetCall::Step::kNotInet:
      // A unix socket: the unix broker decides where its table is in force; with every
      // unix socket allowed (network.allowAllUnixSockets) the call is the kernel's.
      if (options_.unix_broker) {
        handle_unix(n);
      } else {
        listener_->answer_continue(n.id);
      }
      return;
    case InetCall::Step::kContinue:
      // Loopback: the kernel reads the address again, which can reach only the
      // sandbox's own network namespace (inet_broker.h, step 3).
      listener_->answer_continue(n.id);
      return;
    case InetCall::Step::kAnswer:
      listener_->answer(n.id, 0, call.error);
      return;
    case InetCall::Step::kDatagram:
      // Quick (a local socket, connected on loopback): answered on this thread.
      capture_datagram_call(std::move(call), n, *listener_, *options_.capture_route);
      return;
    case InetCall::Step::kCapture:
      break;
  }
  ++stats_.blocking;
  auto c = std::make_shared<InetCall>(std::move(call));  // std::function needs a copyable task
  run_on_idle_thread([listener = listener_, route = options_.capture_route, n, c] {
    capture_inet_call(std::move(*c), n, *listener, *route);
  });
}

}  // namespace vigil::init
