// Connections vigil-init captured (vigil.network.capture; observer/inet_broker.h): a
// program ignored the proxy settings, its connect() was trapped, and vigil-init asks the
// proxy for the tunnel itself, on a listener of its own (ServerOptions::captured) that
// only vigil-init reaches (an O_PATH descriptor handed to it, never a path in the
// sandbox). Its CONNECT carries the caller's name in one header, which only a captured
// listener reads: a client of the ordinary listener that sends it is not believed.
// Either way the decision is the allowlist's, unchanged: the mark only attributes.
#pragma once

#include <string_view>

#include "proxy/events.h"
#include "proxy/http_head.h"

namespace vigil::proxy {

// The header vigil-init's CONNECT names the caller in ("comm (exe)").
inline constexpr std::string_view kCapturedProgramHeader = "Vigil-Program";
// Present (value "udp") when the caller sent a UDP datagram to host:port: nothing is
// carried, the request only asks for the refusal to be decided and recorded.
inline constexpr std::string_view kCapturedDatagramHeader = "Vigil-Datagram";
// net.decision's refused_by for it.
inline constexpr std::string_view kRefusedDatagram = "udp";

// Marks `d` captured, with the program the head names (capped at 200 bytes; "" when the
// header is absent). Pure.
void mark_captured(const http::RequestHead& head, NetDecision* d);

// A captured listener's CONNECT for a datagram (kCapturedDatagramHeader): `d` becomes
// the refusal of it, whatever the allowlist said (only TCP goes through the proxy), with
// a reason that says so. False for an ordinary CONNECT. Pure.
bool refuse_datagram(const http::RequestHead& head, NetDecision* d);

}  // namespace vigil::proxy
