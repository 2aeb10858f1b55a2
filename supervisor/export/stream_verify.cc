#include "supervisor/export/stream_verify.h"

#include <charconv>
#include <set>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/export/export_item.h"

namespace vigil {
namespace {

constexpr std::size_t kMaxParams = 16;

// Parses the PARAMs of the element starting after "[vigil@32473" up to its ']'; the index
// after it, or nullopt (with `why`).
std::optional<std::size_t> parse_params(std::string_view line, std::size_t at,
                                        std::map<std::string, std::string>* out, std::string* why) {
  while (at < line.size()) {
    if (line[at] == ']') return at + 1;
    if (line[at] != ' ') break;
    ++at;
    const auto eq = line.find('=', at);
    if (eq == std::string_view::npos || eq == at || eq - at > 32) break;
    std::string name(line.substr(at, eq - at));
    if (eq + 1 >= line.size() || line[eq + 1] != '"') break;
    std::string value;
    std::size_t i = eq + 2;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      value.push_back(line[i]);
    }
    if (i >= line.size()) break;
    if (out->size() >= kMaxParams || !out->emplace(std::move(name), std::move(value)).second) {
      *why = "too many or repeated parameters";
      return std::nullopt;
    }
    at = i + 1;
  }
  if (why->empty()) *why = "its structured data is not well formed";
  return std::nullopt;
}

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string range(std::uint64_t a, std::uint64_t b) {
  return a == b ? "seq " + std::to_string(a) : "seqs " + std::to_string(a) + ".." + std::to_string(b);
}

}  // namespace

Result<std::optional<StreamRecord>> parse_stream_line(std::string_view line) {
  const std::string open = "[" + std::string(kSyslogSdId);
  const auto at = line.find(open);
  if (at == std::string_view::npos) return std::optional<StreamRecord>();
  std::map<std::string, std::string> p;
  std::string why;
  auto end = parse_params(line, at + open.size(), &p, &why);
  auto bad = [](std::string w) { return make_error(Errc::kInvalidPolicy, std::move(w)); };
  if (!end) return bad(why);
  StreamRecord r;
  auto take = [&](const char* k, std::string* v) {
    if (auto it = p.find(k); it != p.end()) *v = it->second;
  };
  take("host", &r.host);
  take("session", &r.session);
  take("chain", &r.chain);
  take("prev", &r.prev);
  take("fmt", &r.fmt);
  take("mark", &r.mark);
  take("why", &r.why);
  std::string seq, verified, cut;
  take("seq", &seq);
  take("verified", &verified);
  take("cut", &cut);
  if (r.session.empty() || r.session.size() > 64) return bad("no session (or one longer than an id)");
  const auto [e, ec] = std::from_chars(seq.data(), seq.data() + seq.size(), r.seq);
  if (seq.empty() || ec != std::errc() || e != seq.data() + seq.size()) return bad("seq is not a number");
  if (!r.prev.empty() && !is_hex64(r.prev)) return bad("prev is not 64 hex digits");
  if (r.mark.empty()) {
    if (!is_hex64(r.chain)) return bad("chain is not 64 hex digits");
    r.verified = verified == "1";
  } else if (r.mark != "broken" && r.mark != "lost") {
    return bad("unknown mark");
  }
  r.cut = !cut.empty();
  // The MSGID (the record's kind) is the word just before the structured data.
  r.ended = r.mark.empty() && line.substr(0, at).ends_with(" session.end ");
  if (*end < line.size() && line[*end] == ' ') r.payload = std::string(line.substr(*end + 1));
  return std::optional<StreamRecord>(std::move(r));
}

bool StreamReport::ok(bool exactly_once) const {
  for (const auto& p : problems)
    if (exactly_once || p.what != "duplicate") return false;
  return true;
}

void StreamVerifier::problem(std::string what, const StreamRecord& r, std::string text) {
  rep_.problems.push_back({rep_.lines, r.host, r.session, std::move(what), std::move(text)});
}

void StreamVerifier::check_link(const std::string& host, const std::string& session, Session& s,
                                std::uint64_t seq) {
  auto cur = s.seen.find(seq);
  auto before = seq > 0 ? s.seen.find(seq - 1) : s.seen.end();
  if (cur == s.seen.end() || before == s.seen.end() || cur->second.prev.empty()) return;
  if (cur->second.prev != before->second.chain) {
    rep_.problems.push_back({rep_.lines, host, session, "chain",
                             "seq " + std::to_string(seq) + "'s prev is not the chain hash of seq " +
                                 std::to_string(seq - 1) + ": a record was edited or replaced"});
  }
}

void StreamVerifier::add_line(std::string_view line) {
  ++rep_.lines;
  auto parsed = parse_stream_line(line);
  if (!parsed) {
    rep_.problems.push_back({rep_.lines, "", "", "malformed",
                             "a vigil record that cannot be read: " + parsed.error().message});
    return;
  }
  if (!*parsed) {
    ++rep_.other_lines;
    return;
  }
  const StreamRecord& r = **parsed;
  Session& s = sessions_[{r.host, r.session}];
  const std::string at = "seq " + std::to_string(r.seq);
  if (r.mark == "broken") {
    problem("broken", r, "the exporter found the session's chain or seal broken at " + at + ": " + r.why);
    return;
  }
  if (r.mark == "lost") {
    problem("lost", r, "the exporter lost records from " + at + " on: " + r.why);
    return;
  }
  if (auto it = s.seen.find(r.seq); it != s.seen.end()) {
    ++rep_.duplicates;
    if (it->second.chain == r.chain) {
      problem("duplicate", r, at + " came again (a redelivery: the same chain hash)");
    } else {
      problem("conflict", r, at + " came twice with different chain hashes: one of them is forged or edited");
    }
    return;
  }
  if (s.any && r.seq < s.max_seq) {
    problem("reordered", r, at + " came after seq " + std::to_string(s.max_seq));
  }
  if (!r.verified) problem("unverified", r, at + " was sent after its chain broke at the source: it proves nothing");
  if (r.fmt == "vigil" && !r.cut && !r.payload.empty() && sha256_hex(r.payload) != r.chain) {
    problem("altered", r, at + "'s record does not hash to its chain hash: it was altered after it was sent");
  }
  ++rep_.records;  // distinct records: a repeat is counted in `duplicates`
  s.seen.emplace(r.seq, Seen{r.chain, r.prev});
  if (!s.any || r.seq > s.max_seq) s.max_seq = r.seq;
  s.any = true;
  if (r.ended) s.ended = true;
  check_link(r.host, r.session, s, r.seq);
  check_link(r.host, r.session, s, r.seq + 1);
}

StreamReport StreamVerifier::finish() {
  std::set<std::string> hosts;
  for (auto& [key, s] : sessions_) {
    hosts.insert(key.first);
    if (!s.any) continue;
    ++rep_.sessions;
    if (s.ended) ++rep_.complete_sessions;
    std::uint64_t expect = 0;
    for (const auto& [seq, seen] : s.seen) {
      (void)seen;
      if (seq > expect) {
        rep_.problems.push_back({0, key.first, key.second, "gap",
                                 range(expect, seq - 1) + " never came"});
      }
      expect = seq + 1;
    }
  }
  rep_.hosts = hosts.size();
  return std::move(rep_);
}

std::string render_stream_report(const StreamReport& r, std::string_view file, bool exactly_once) {
  std::string out;
  for (const auto& p : r.problems) {
    out += std::string(file) + (p.line > 0 ? ":" + std::to_string(p.line) : std::string()) + ": " +
           p.what + ": " + escape_text(p.host) + " " + escape_text(p.session) + ": " +
           escape_text(p.text) + "\n";
  }
  const bool good = r.ok(exactly_once);
  out += std::string(file) + ": " + (good ? "intact" : "NOT intact") + ": " +
         std::to_string(r.records) + " record(s) of " + std::to_string(r.sessions) +
         " session(s) from " + std::to_string(r.hosts) + " host(s) (" +
         std::to_string(r.complete_sessions) + " ended), " + std::to_string(r.duplicates) +
         " duplicate(s), " + std::to_string(r.problems.size()) + " problem(s), " +
         std::to_string(r.other_lines) + " other line(s)\n";
  return out;
}

}  // namespace vigil
