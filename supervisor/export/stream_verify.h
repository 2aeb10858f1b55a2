// `vigil verify --stream FILE`: checks what a collector wrote (rsyslog's file of the RFC 5424
// messages `vigil export --follow` sent, one per line, any prefix before the message) for
// completeness across every session and machine in it. Each record carries its host,
// session, seq and chain hash in the vigil@32473 structured data (export_item.h), so per
// (host, session) it names: a gap (seqs that never came), a reordering (a seq that came
// after a later one), a duplicate (a seq that came twice: a redelivery when the chain hash
// is the same, a conflict when not), a chain break (a record whose prev is not the chain
// hash of the seq before it), a record altered in transit (its vigil line does not hash to
// its chain), a record the exporter could not verify, and the exporter's own marks
// (broken: the chain or seal failed at the source; lost: records gone before export).
// Pure, and streaming: one line at a time, memory per record seen (not per byte).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil {

// One vigil record (or mark) read from a collected line.
struct StreamRecord {
  std::string host, session;
  std::uint64_t seq = 0;
  std::string chain, prev, fmt, mark, why;
  bool verified = true;
  bool cut = false;     // the payload was replaced (too long for a syslog message)
  bool ended = false;   // its MSGID is session.end
  std::string payload;  // the MSG after the structured data
};

// nullopt: the line holds no vigil@32473 element (another program's message). Error: it
// does, but malformed (what is wrong).
Result<std::optional<StreamRecord>> parse_stream_line(std::string_view line);

struct StreamProblem {
  std::size_t line = 0;  // 1-based line of the file where it shows (0: found at the end)
  std::string host, session;
  std::string what;      // "gap", "reordered", "conflict", "duplicate", "chain", "altered",
                         // "unverified", "broken", "lost", "malformed"
  std::string text;      // one sentence
};

struct StreamReport {
  // records: distinct (host, session, seq); a repeat is one of `duplicates`.
  std::size_t lines = 0, records = 0, other_lines = 0, duplicates = 0;
  std::size_t sessions = 0, hosts = 0, complete_sessions = 0;
  std::vector<StreamProblem> problems;
  // Problems other than duplicates (which at-least-once delivery may bring) — or all of
  // them under `exactly_once`.
  bool ok(bool exactly_once) const;
};

class StreamVerifier {
 public:
  void add_line(std::string_view line);
  StreamReport finish();

 private:
  struct Seen {
    std::string chain, prev;
  };
  struct Session {
    std::map<std::uint64_t, Seen> seen;
    std::uint64_t max_seq = 0;
    bool any = false;
    bool ended = false;
  };
  void check_link(const std::string& host, const std::string& session, Session& s,
                  std::uint64_t seq);
  void problem(std::string what, const StreamRecord& r, std::string text);
  std::map<std::pair<std::string, std::string>, Session> sessions_;
  StreamReport rep_;
};

// The report as text for a terminal: one line per problem, then a summary line.
std::string render_stream_report(const StreamReport& r, std::string_view file, bool exactly_once);

}  // namespace vigil
