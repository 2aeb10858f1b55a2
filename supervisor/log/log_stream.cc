#include "supervisor/log/log_stream.h"

#include "supervisor/log/log_key.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

namespace {
constexpr std::size_t kBlock = 64 * 1024;
}  // namespace

LineReader::LineReader(int fd, std::size_t max_line) : fd_(fd), max_line_(max_line) {}
LineReader::LineReader(std::string_view text, std::size_t max_line)
    : text_(text), max_line_(max_line) {}

bool LineReader::fill() {
  if (fd_ < 0) {
    const std::string_view piece = text_.substr(0, kBlock);
    text_.remove_prefix(piece.size());
    buf_.append(piece);
    eof_ = piece.empty();
    return true;
  }
  char block[kBlock];
  while (true) {
    const ssize_t n = ::read(fd_, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = std::strerror(errno);
      return false;
    }
    buf_.append(block, static_cast<std::size_t>(n));
    eof_ = n == 0;
    return true;
  }
}

LineReader::Got LineReader::next(std::string* line) {
  bool skipping = false;  // inside a line longer than max_line_: dropped as it is read
  std::size_t scanned = pos_;
  while (true) {
    const auto nl = buf_.find('\n', scanned);
    if (nl != std::string::npos) {
      if (!skipping) line->assign(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      return skipping ? Got::kTooLong : Got::kLine;
    }
    if (buf_.size() - pos_ > max_line_ || skipping) {
      skipping = true;
      buf_.clear();
      pos_ = 0;
    }
    if (eof_) {
      if (pos_ < buf_.size() || skipping) {
        if (!skipping) line->assign(buf_, pos_);
        pos_ = buf_.size();
        return Got::kTail;
      }
      return Got::kEnd;
    }
    buf_.erase(0, pos_);
    pos_ = 0;
    scanned = buf_.size();
    if (!fill()) return Got::kError;
  }
}

namespace {

struct Rec {
  std::string hash;
  std::optional<events::Event> ev;
  std::string err;
};

// A log's lines as records, one at a time; once the chain broke, the rest is only counted
// (a report's `records` is every complete line).
class RecordStream {
 public:
  explicit RecordStream(LineReader& in) : in_(in) {}

  // The next complete line as a record; false at the end (or at a line with no newline:
  // tail()).
  bool pull(Rec* r) {
    switch (in_.next(&line_)) {
      case LineReader::Got::kLine: {
        ++n_;
        r->hash = sha256_hex(line_);
        auto e = events::parse_log_record(line_);
        r->ev.reset();
        r->err.clear();
        if (e) {
          r->ev = std::move(*e);
        } else {
          r->err = e.error().message;
        }
        return true;
      }
      case LineReader::Got::kTooLong:
        ++n_;
        r->hash.clear();
        r->ev.reset();
        r->err = "longer than any record vigil writes";
        return true;
      case LineReader::Got::kTail:
        tail_ = true;
        return false;
      case LineReader::Got::kEnd:
      case LineReader::Got::kError:
        return false;
    }
    return false;
  }

  // Counts the lines left; returns every complete line's count.
  std::size_t drain() {
    while (true) {
      const auto got = in_.next(&line_);
      if (got != LineReader::Got::kLine && got != LineReader::Got::kTooLong) break;
      ++n_;
    }
    return n_;
  }

  std::size_t lines() const { return n_; }
  bool tail() const { return tail_; }

 private:
  LineReader& in_;
  std::string line_;
  std::size_t n_ = 0;  // complete lines read so far
  bool tail_ = false;
};

// Where the chain broke, and why, in words for the reader.
struct Break {
  std::size_t at;
  std::string why;
};

std::string record(std::size_t i) { return "record " + std::to_string(i); }

// Record 0 opens the session and the chain.
std::optional<Break> check_first(const events::Event& e) {
  if (e.kind() != events::Kind::kSessionStart) return Break{0, "record 0 is not session.start"};
  if (e.seq != 0)
    return Break{0, "record 0 has seq " + std::to_string(e.seq) + ": earlier records are missing"};
  if (e.prev != events::kGenesisPrev)
    return Break{0, "record 0's prev is not the genesis value (64 zeros)"};
  return std::nullopt;
}

// Record i's seq is not i: reordered (seq i comes later: read on to see) or deleted.
Break seq_break(std::size_t i, const events::Event& e, const Rec* next, RecordStream& s) {
  const std::string r = record(i);
  if (e.seq < i) {
    return {i, r + " has seq " + std::to_string(e.seq) +
                   ", which came before: duplicated or out of order"};
  }
  std::optional<std::size_t> later;
  if (next != nullptr && next->ev && next->ev->seq == i) later = i + 1;
  for (Rec probe; !later && next != nullptr && s.pull(&probe);) {
    if (probe.ev && probe.ev->seq == i) later = s.lines() - 1;
  }
  if (later) {
    return {i, r + " is out of order: it has seq " + std::to_string(e.seq) + ", and seq " +
                   std::to_string(i) + " comes later, at record " + std::to_string(*later)};
  }
  return {i, "the record with seq " + std::to_string(i) + " is missing (deleted): " + r +
                 " has seq " + std::to_string(e.seq)};
}

// Record i (i > 0) against the one before it, and, to tell which of two changed, the
// one after (`next`, none at the end).
std::optional<Break> check_link(std::size_t i, const Rec& prev, const Rec& cur, const Rec* next,
                                RecordStream& s, const std::string& session,
                                std::uint64_t prev_t) {
  const events::Event& e = *cur.ev;
  const std::string r = record(i);
  if (e.session != session) return Break{i, r + " belongs to another session (" + e.session + ")"};
  if (e.kind() == events::Kind::kSessionStart) return Break{i, r + " is a second session.start"};
  if (e.seq != i) return seq_break(i, e, next, s);
  if (e.prev != prev.hash) {
    // Which record changed? An edit inside record i-1 breaks only the link
    // (i-1 -> i); an edit of record i's own prev also breaks (i -> i+1).
    if (next != nullptr && next->ev && next->ev->prev != cur.hash) {
      return Break{i, r + " was altered: its prev does not match " + record(i - 1) + ", and " +
                          record(i + 1) + "'s prev does not match it"};
    }
    return Break{i - 1, record(i - 1) + " was altered: its hash does not match the prev of " + r +
                            (next == nullptr
                                 ? " (or the prev of the last record, " + r + ", was edited)"
                                 : "")};
  }
  if (e.t < prev_t) return Break{i, r + "'s time goes backwards: records were reordered or edited"};
  return std::nullopt;
}

// The seal (supervisor/log/log_key.h) of an intact, complete log: the chain alone does
// not prove the log is the one vigil wrote; a keyed log's session.end carries an HMAC only
// the user's key can make.
VerifyReport check_seal(VerifyReport rep, std::size_t end_at, const events::Event& end_event,
                        std::optional<std::string_view> key) {
  const auto& end_body = std::get<events::SessionEnd>(end_event.body);
  const std::string r = record(end_at);
  auto refuse = [&](std::string why) {
    rep.ok = false;
    rep.broken_at = end_at;
    rep.why = std::move(why);
    return rep;
  };
  if (rep.key_id.empty()) {
    if (!end_body.mac.empty())
      return refuse(r + " is sealed, but session.start names no key: it was edited");
    return rep;  // an unkeyed log: render_verify says what that does not prove
  }
  if (end_body.mac.empty()) {
    return refuse(r + " (session.end) has no seal, but session.start names key " + rep.key_id +
                  ": the end was forged or the log replaced");
  }
  if (!key) {
    rep.why = "sealed with key " + rep.key_id + ", but there is no key to check the seal with";
    return rep;
  }
  if (log_key_id(*key) != rep.key_id) {
    rep.why = "sealed with key " + rep.key_id + ", not with this user's key (" +
              log_key_id(*key) + "): the seal cannot be checked here";
    return rep;
  }
  events::Event unsealed = end_event;
  std::get<events::SessionEnd>(unsealed.body).mac.clear();
  if (log_seal(*key, events::serialize(unsealed)) != end_body.mac) {
    return refuse(r + " (session.end) does not match its seal: the log was replaced, or "
                      "records were removed or edited and the chain recomputed");
  }
  rep.sealed = true;
  return rep;
}

}  // namespace

VerifyReport verify_log_lines(LineReader& in, std::optional<std::string_view> key) {
  VerifyReport rep;
  RecordStream s(in);
  auto broken = [&](Break b) {
    rep.records = s.drain();
    rep.ok = false;
    rep.broken_at = b.at;
    rep.why = std::move(b.why);
    return rep;
  };
  Rec prev, cur, next;
  if (!s.pull(&cur)) {
    return broken({0, s.tail() ? "record 0 is incomplete (no newline): the log was truncated"
                               : "empty log: no session.start record"});
  }
  bool have_next = s.pull(&next);
  std::string session;
  std::uint64_t prev_t = 0;
  std::optional<std::size_t> end_at;
  std::optional<events::Event> end_event;  // the session.end, for its seal
  for (std::size_t i = 0;; ++i) {
    if (!cur.ev) {
      return broken({i, i == 0 ? "not a session log vigil wrote: its first line is not a vigil "
                                 "record (" + cur.err + ")"
                               : record(i) + " is not a valid record (" + cur.err +
                                     "): it was edited"});
    }
    const events::Event& e = *cur.ev;
    if (end_at)
      return broken({i, record(i) + " comes after session.end: records were appended to a "
                                    "finished log"});
    auto bad = i == 0 ? check_first(e)
                      : check_link(i, prev, cur, have_next ? &next : nullptr, s, session, prev_t);
    if (bad) return broken(std::move(*bad));
    if (i == 0) {
      session = e.session;
      rep.key_id = std::get<events::SessionStart>(e.body).key_id;
    }
    if (e.kind() == events::Kind::kSessionEnd) {
      end_at = i;
      end_event = e;
    }
    prev_t = e.t;
    prev = std::move(cur);
    if (!have_next) break;
    cur = std::move(next);
    have_next = s.pull(&next);
  }
  rep.records = s.lines();
  if (s.tail()) {
    return broken({rep.records, record(rep.records) +
                                    " is incomplete (no newline): the log was truncated"});
  }
  rep.ok = true;
  rep.head = prev.hash;
  rep.complete = end_at.has_value();
  if (!rep.complete) {
    rep.why = "intact, but ends without session.end after record " +
              std::to_string(rep.records - 1) +
              ": the session crashed, is still running, or its last records were removed" +
              (rep.key_id.empty() ? "" : " (a keyed log: its sealed session.end is missing)");
    return rep;
  }
  return check_seal(std::move(rep), *end_at, *end_event, key);
}

Result<UniqueFd> open_session_log(const std::string& path) {
  auto fd = open_regular_file(path, "session log");
  if (!fd) return fd;
  LineReader in(fd->get(), events::Limits::log().max_line);
  std::string first;
  const auto got = in.next(&first);
  if (got == LineReader::Got::kError) return system_error("cannot read " + path);
  if (got == LineReader::Got::kEnd)
    return make_error(Errc::kInvalidPolicy, path + " is empty: not a session log vigil wrote");
  auto e = got == LineReader::Got::kLine
               ? events::parse_log_record(first)
               : Result<events::Event>(make_error(Errc::kInvalidPolicy, "no complete first line"));
  if (!e || e->kind() != events::Kind::kSessionStart) {
    return make_error(Errc::kInvalidPolicy,
                      path +
                          " is not a session log vigil wrote: its first line is not a "
                          "session.start record" +
                          (e ? std::string() : " (" + e.error().message + ")"));
  }
  if (::lseek(fd->get(), 0, SEEK_SET) != 0) return system_error("cannot rewind " + path);
  return fd;
}

Result<void> for_each_record_line(int fd, std::string_view filter,
                                  const std::function<void(const std::string&)>& take) {
  const bool all = filter == "all";
  const bool prefix = filter.size() > 2 && filter.substr(filter.size() - 2) == ".*";
  const std::string_view stem = prefix ? filter.substr(0, filter.size() - 1) : filter;
  LineReader in(fd, events::Limits::log().max_line);
  std::string line;
  while (true) {
    const auto got = in.next(&line);
    if (got == LineReader::Got::kError) return system_error("cannot read the session log");
    if (got == LineReader::Got::kEnd || got == LineReader::Got::kTail) return {};
    if (got != LineReader::Got::kLine) continue;
    auto e = events::parse_log_record(line);
    if (!e) continue;
    const std::string_view kind = events::to_string(e->kind());
    if (all || (prefix ? kind.substr(0, stem.size()) == stem : kind == filter)) take(line);
  }
}

VerifyReport verify_log_text(std::string_view text, std::optional<std::string_view> key) {
  LineReader in(text, events::Limits::log().max_line);
  return verify_log_lines(in, key);
}

Result<VerifyReport> verify_log(const std::string& path, std::optional<std::string_view> key) {
  auto fd = open_regular_file(path, "session log");
  VIGIL_TRY(fd);
  LineReader in(fd->get(), events::Limits::log().max_line);
  VerifyReport report = verify_log_lines(in, key);
  if (!in.error().empty())
    return make_error(Errc::kSystem, "cannot read " + path + ": " + in.error());
  return report;
}

}  // namespace vigil
