// srt's agent channel (docs/protocol.md, "srt's agent channel"), the pure half: splitting
// the peer's bytes into lines, reading one line, and the lines vigil sends. No I/O here:
// agent_channel.h is the thin shell that owns the descriptor.
//
// The protocol is srt's (version 1): newline-delimited JSON on one stream socket.
//   vigil -> harness   {"type":"hello","protocol_version":1}
//                      {"type":"permission_request","id":"pr_1","resource":{...},
//                       "operation":"connect","description":"..."}
//                      {"type":"blocked","resource":{...},"operation":"...","description":"..."}
//   harness -> vigil   {"type":"hello","protocol_version":1}
//                      {"type":"permission_response","id":"pr_1","behavior":"allow"|"deny"}
// Anything but an exact "allow" is a deny; unknown message types are ignored (so a newer
// harness still works), what is not JSON is counted against the peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/report/annotation.h"

namespace vigil::agent_channel {

inline constexpr int kProtocolVersion = 1;
// The environment variable naming the descriptor, as srt names it.
inline constexpr const char* kFdVariable = "SANDBOX_AGENT_CHANNEL_FD";
// A line the peer sends may be this long (srt's own cap); past it without a newline, the
// peer is broken and the channel is closed.
inline constexpr std::size_t kMaxLineBytes = 1U << 20;
// Blocked notices held until the peer's hello (srt's number), and in all not yet written.
inline constexpr std::size_t kMaxQueuedBlocked = 100;
// Text of one description: a path or a reason is cut past it.
inline constexpr std::size_t kMaxDescriptionBytes = 2048;

// Splits a byte stream into lines ('\n'; a '\r' before it is dropped). Lines that are
// empty or only blanks are left out.
class LineSplitter {
 public:
  // Appends `bytes` and moves every complete line into `lines`. False: a line grew past
  // kMaxLineBytes without its newline (nothing more should be fed).
  bool feed(std::string_view bytes, std::vector<std::string>& lines);
  std::size_t buffered() const { return partial_.size(); }

 private:
  std::string partial_;
};

enum class PeerKind {
  kHello,               // `version` says which; only kProtocolVersion completes the handshake
  kPermissionResponse,  // `id`, `allow`
  kIgnored,             // a well-formed message of a type vigil does not know
  kInvalid,             // not the protocol: `why` says how
};

struct PeerMessage {
  PeerKind kind = PeerKind::kInvalid;
  std::optional<std::int64_t> version;  // hello: protocol_version when an integer
  std::string id;                       // permission_response
  bool allow = false;                   // permission_response: behavior is exactly "allow"
  std::string why;                      // kInvalid / kIgnored: for the line on stderr
};

// One line from the peer.
PeerMessage parse_peer_line(std::string_view line);

// What vigil sends, each one line ending in '\n'.
std::string hello_line();
// A request off the allow list: `entry` is "host:port" ([v6]:port), `proto` "http"/...
std::string permission_request_line(const std::string& id, const std::string& host,
                                    std::uint16_t port, const std::string& entry,
                                    const std::string& proto);
// A denial that went into the <sandbox_violations> block (a denied entry, or one the
// backstop quarantined when `quarantined`).
std::string blocked_line(const Violation& v, bool quarantined = false);

// "pr_N" -> N (none: not an id of that shape).
std::optional<std::uint64_t> request_number(std::string_view id);

}  // namespace vigil::agent_channel
