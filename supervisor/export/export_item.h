// What `vigil export --follow` sends for each record of a session log, and for each thing
// it must say about a session (a broken chain, records lost before they were exported),
// and the wire forms of it: a JSON line (stdout, a file), an RFC 5424 syslog message with
// octet-counting framing (RFC 6587 3.4.1, over TCP or TLS: RFC 5425) and a journald
// native-protocol datagram. Every form carries the session id, the record's sequence
// number and its chain hash (sha256 of the record's line, which the next record names as
// its prev), so a receiver can prove that nothing is missing, repeated or out of order
// (`vigil verify --stream`, supervisor/export/stream_verify.h). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// The SD-ID of the structured data element. 32473 is the enterprise number RFC 5612
// reserves for documentation: vigil has none of its own, and a receiver matches the name.
inline constexpr std::string_view kSyslogSdId = "vigil@32473";

struct ExportItem {
  enum class Mark { kNone, kBroken, kLost };
  std::string host;
  std::string session;
  std::uint64_t seq = 0;
  std::string chain;         // sha256 of the record's line ("" for a mark)
  std::string prev;          // the record's prev ("" when the line is not a record)
  std::string kind;          // the record's kind ("fs.write"), "" when not a record
  bool verified = false;     // the chain and seal checks held up to this record
  Mark mark = Mark::kNone;   // a mark says something about the session, at `seq`
  std::string why;           // a mark's reason
  std::string format;        // "vigil" (payload = the record's line) or "ocsf"
  std::string payload;       // the JSON line sent ("" for a record with no OCSF class)
  std::optional<std::uint64_t> time_ms;  // the record's time, ms since the epoch
};

std::string_view to_string(ExportItem::Mark m);

// The JSON line for stdout or a file (no newline): the payload of a record; a mark as
// {"vigil_export":"broken"|"lost","host":...,"session":...,"seq":N,"why":...}. "" when a
// record has nothing to say in this format (no OCSF class).
std::string export_json_line(const ExportItem& item);

// Largest syslog message vigil sends (the receiver must accept it: rsyslog's
// maxMessageSize, docs/fleet.md). A longer record goes as its SD with a stub payload
// saying so (cut="BYTES"): its chain still links.
inline constexpr std::size_t kMaxSyslogMessage = 64 * 1024;

// "<PRI>1 TIMESTAMP HOST vigil - MSGID [vigil@32473 ...] MSG", RFC 5424.
std::string syslog_message(const ExportItem& item);
// RFC 6587 octet counting: "LEN SP MSG".
std::string octet_frame(std::string_view message);

// A journald native-protocol datagram (systemd's "Native Journal Protocol"): MESSAGE,
// PRIORITY, SYSLOG_IDENTIFIER and VIGIL_* fields; a value holding a newline in the
// binary form.
std::string journald_datagram(const ExportItem& item);

// The host name as a syslog HOSTNAME: printable ASCII without spaces, at most 255 bytes,
// "-" when empty.
std::string syslog_host_name(std::string_view host);

}  // namespace vigil
