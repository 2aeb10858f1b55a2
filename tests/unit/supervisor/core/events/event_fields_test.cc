// The field table (supervisor/core/events/event_fields.h) is the one list of every kind's
// fields. The reader takes names, types, presence and bounds from it; these tests hold the
// writer (serialize), the validator's bounds, vigil-init's lines (observer/*.cc) and
// docs/events.md to it, over every kind and every field.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/events/event_fields.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil::events {
namespace {

using ojson = nlohmann::ordered_json;

const std::string kHex64(64, 'a');

// Records of every kind, together setting every field of its row (one record cannot:
// exit_code and signal exclude each other, `unguarded` and `ignored` too).
std::vector<Body> every_field() {
  std::vector<Body> out;
  SessionStart s;
  s.argv = {"bash", "-c", "true"};
  s.cwd = "/w";
  s.backend = "bwrap";
  s.policy_digest = kHex64;
  s.versions = {"0.1.0", "0.8.0", "6.1.0"};
  s.log = "/s/x.jsonl";
  s.key_id = "0123456789abcdef";
  s.witness = "gatekeeper";
  s.scope = HostScope{{"/w"}, {"/w/.cache"}};
  out.push_back(s);
  out.push_back(ProcExec{7, 1, {"/bin/true"}, "/w", true, "/usr/bin/true"});
  FsWrite denied{7, "renameat2", "b", "/w/b", 1, Verdict::kDenied, "nope", "a", "/w/a", "", "EROFS"};
  denied.ignored = "ignoreViolations[0]";
  denied.rule_id = "filesystem.allowWrite[0] \"/w\"";
  out.push_back(denied);
  out.push_back(FsWrite{7, "mkdir", "s/.vscode", "/w/s/.vscode", 0, Verdict::kAllowed, "ok", "",
                        "", ".vscode", "0"});
  NetDecision d;
  d.proto = NetProto::kConnect;
  d.host = "example.org";
  d.port = 443;
  d.rule = "r";
  d.reason = "not allowed";
  d.refused_by = "not-allowed";
  d.address = "192.0.2.1";
  d.guard_check = "metadata";
  d.ignored = "ignoreViolations[1]";
  d.rule_id = "network.deniedDomains[0]";
  d.captured = true;
  d.program = "curl (/usr/bin/curl)";
  out.push_back(d);
  out.push_back(NetUpstreamFailure{NetProto::kHttp, "a.b", 80, "192.0.2.2", "connection refused"});
  out.push_back(IoStdout{"out"});
  out.push_back(IoStderr{"err"});
  out.push_back(ObserverStats{3, 1, 2});
  out.push_back(Annotation{"<sandbox_violations>\n</sandbox_violations>\n", true});
  out.push_back(SessionEnd{0, std::nullopt, 5, {{"fs.denied", 2}}, "limit: pids", kHex64});
  out.push_back(SessionEnd{std::nullopt, 9, 5, {}, {}, {}});
  out.push_back(FsQuarantine{"/w/.git/config", "git-config", "runs a program", "/q/1",
                             {"[core]", "fsmonitor = x"}, "[core]\nfsmonitor = x\n"});
  out.push_back(CommandStart{{"make"}, "/w"});
  out.push_back(CommandEnd{0, std::nullopt, 1, {}});
  out.push_back(CommandEnd{std::nullopt, 15, 1, {{"fs.denied", 1}}});
  out.push_back(PolicyUpdate{{"a.example"}, {"b.example"}});
  out.push_back(LogTruncated{10, 5, 20, 0, kHex64, kHex64});
  out.push_back(NetAsk{3, NetProto::kConnect, "pypi.org", 443, "192.0.2.3", 60000});
  out.push_back(NetAskAnswer{3, "always", "pypi.org:443", "/w/sandbox.json", "refused", "tty"});
  out.push_back(LimitReached{"pids", "the sandbox reached its cap of 64"});
  FsImage img;
  img.phase = "pre";
  img.path = "/w/l";
  img.type = "symlink";
  img.size = 3;
  img.mode = 0777;
  img.uid = 1000;
  img.gid = 1000;
  img.sha256 = kHex64;
  img.target = "x";
  img.stored = true;
  img.note = "kept";
  img.best_effort = true;
  out.push_back(img);
  out.push_back(FsRead{7, "openat", "p", "/w/p", "hidden by denyRead"});
  out.push_back(NetUnix{7, "connect", "SOCK_STREAM", "p", "/w/p", NetVerdict::kDenied, "r",
                        "EACCES"});
  out.push_back(CommandCancel{"client", "cancel", "why", 2000});
  NetRequest q;
  q.method = "GET";
  q.host = "api.example.com";
  q.port = 443;
  q.path = "/v1";
  q.status = 403;
  q.bytes_up = 1;
  q.bytes_down = 2;
  q.secret_injected = true;
  q.verdict = NetVerdict::kDenied;
  q.rule = "vigil.network.requestRules[0]";
  q.reason = "DELETE is not allowed";
  out.push_back(q);
  return out;
}

Event envelope(Body b) {
  Event e;
  e.session = "s-1";
  e.prev = std::string(kGenesisPrev);
  e.src = Source::kSupervisor;
  e.body = std::move(b);
  return e;
}

// A record's own fields as written: the keys between `kind` and `prev`.
std::vector<std::string> written_fields(const std::string& line) {
  const ojson j = ojson::parse(line);
  std::vector<std::string> out;
  bool in_body = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "prev") break;
    if (in_body) out.push_back(it.key());
    if (it.key() == "kind") in_body = true;
  }
  return out;
}

std::vector<std::string> names(Kind k) {
  std::vector<std::string> out;
  for (const FieldSpec& f : fields_of(k)) out.emplace_back(f.name);
  return out;
}

TEST(EventFieldsTest, EveryKindHasARowAndTheSamplesCoverEveryKind) {
  std::set<Kind> seen;
  for (const Body& b : every_field()) seen.insert(kind_of(b));
  EXPECT_EQ(seen.size(), std::variant_size_v<Body>);
  for (std::size_t i = 0; i < std::variant_size_v<Body>; ++i) {
    const Kind k = static_cast<Kind>(i);
    SCOPED_TRACE(to_string(k));
    EXPECT_FALSE(fields_of(k).empty());
    std::set<std::string_view> unique;
    for (const FieldSpec& f : fields_of(k)) {
      EXPECT_TRUE(unique.insert(f.name).second) << "named twice: " << f.name;
      const bool bytes = f.type == FieldType::kBytes || f.type == FieldType::kData ||
                         f.type == FieldType::kBytesArray;
      EXPECT_EQ(bytes, f.bound != Bound::kNone) << f.name << ": a byte string has a bound";
      if (f.type == FieldType::kInteger) {
        EXPECT_LT(f.lo, f.hi) << f.name;
      }
    }
  }
}

// The writer writes the row's fields, in the row's order, and every one of them when it
// has something to say; what it leaves out is optional.
TEST(EventFieldsTest, TheWriterWritesEachKindsRowInOrder) {
  std::map<Kind, std::set<std::string>> written;
  for (const Body& b : every_field()) {
    const Kind k = kind_of(b);
    SCOPED_TRACE(to_string(k));
    const std::vector<std::string> got = written_fields(serialize(envelope(b)));
    const std::vector<std::string> row = names(k);
    std::size_t at = 0;
    for (const std::string& name : got) {
      while (at < row.size() && row[at] != name) {
        const FieldSpec* f = field_of(k, row[at]);
        EXPECT_EQ(f->presence, Presence::kOptional) << "a required field left out: " << row[at];
        ++at;
      }
      ASSERT_LT(at, row.size()) << name << ": not in the row, or out of its order";
      written[k].insert(name);
      ++at;
    }
  }
  for (const auto& [k, set] : written) {
    SCOPED_TRACE(to_string(k));
    for (const std::string& name : names(k)) EXPECT_EQ(set.count(name), 1u) << name << ": never written";
  }
}

// A record with one field changed, as a canonical line (a plain ASCII value).
std::string with_field(const Body& b, const std::string& name, const ojson& value) {
  ojson j = ojson::parse(serialize(envelope(b)));
  j[name] = value;
  return j.dump(-1, ' ', true);
}

std::string without_field(const Body& b, const std::string& name) {
  ojson j = ojson::parse(serialize(envelope(b)));
  j.erase(name);
  return j.dump(-1, ' ', true);
}

// The reader reads what the row says: every sample reads back, a required field left out
// is missing, a field of the wrong type is named, and a field not in the row is unknown.
TEST(EventFieldsTest, TheReaderReadsEachKindsRow) {
  for (const Body& b : every_field()) {
    const Kind k = kind_of(b);
    SCOPED_TRACE(to_string(k));
    auto back = parse_log_record(serialize(envelope(b)));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->body, b);
    for (const std::string& name : written_fields(serialize(envelope(b)))) {
      const FieldSpec* f = field_of(k, name);
      SCOPED_TRACE(name);
      if (f->presence == Presence::kRequired) {
        auto missing = parse_log_record(without_field(b, name));
        ASSERT_FALSE(missing.ok());
        EXPECT_EQ(missing.error().message, "missing field " + name);
      }
      auto wrong = parse_log_record(with_field(b, name, nullptr));
      ASSERT_FALSE(wrong.ok());
      EXPECT_EQ(wrong.error().message.rfind(name + ": ", 0), 0u) << wrong.error().message;
      if (f->type == FieldType::kInteger) {
        auto over = parse_log_record(with_field(b, name, f->hi + 1));
        ASSERT_FALSE(over.ok());
        EXPECT_NE(over.error().message.find(name + ": out of range"), std::string::npos)
            << over.error().message;
      }
    }
    auto unknown = parse_log_record(with_field(b, "zz_not_a_field", 1));
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().message, "unknown field \"zz_not_a_field\"");
  }
}

// A byte string one byte over its row's bound is refused by the reader, and the validator
// (which checks what the supervisor writes, never read) holds the same bound.
TEST(EventFieldsTest, TheReaderAndTheValidatorHoldEachFieldsBound) {
  const Limits big = Limits::log();
  const std::string value = "/" + std::string(63, 'v');
  for (const Body& b : every_field()) {
    const Kind k = kind_of(b);
    SCOPED_TRACE(to_string(k));
    for (const std::string& name : written_fields(serialize(envelope(b)))) {
      const FieldSpec* f = field_of(k, name);
      if (f->bound == Bound::kNone) continue;
      SCOPED_TRACE(name);
      const ojson v = f->type == FieldType::kBytesArray ? ojson::array({value}) : ojson(value);
      Limits small = big;
      std::size_t* bound = f->bound == Bound::kPath   ? &small.max_path
                           : f->bound == Bound::kText ? &small.max_text
                           : f->bound == Bound::kArg  ? &small.max_arg
                                                      : &small.max_data;
      *bound = value.size() - 1;
      auto refused = parse_log_record(with_field(b, name, v), small);
      ASSERT_FALSE(refused.ok()) << "the reader let " << name << " past its bound";
      EXPECT_NE(refused.error().message.find(name + ": "), std::string::npos)
          << refused.error().message;
      // `unguarded` is a protected name (".vscode"): no 64-byte value is one.
      if (k == Kind::kFsWrite && name == "unguarded") continue;
      auto read = parse_log_record(with_field(b, name, v), big);
      ASSERT_TRUE(read.ok()) << read.error().message;
      EXPECT_TRUE(validate(read->body, big).ok());
      EXPECT_FALSE(validate(read->body, small).ok()) << "the validator let it past its bound";
    }
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kRepo = std::string(VIGIL_TEST_DATA_DIR) + "/../..";

// vigil-init writes its lines field by field (observer/event_line.h): every field it
// writes is in its kind's row, with a writer call of the row's type, and it writes every
// required field. Read from the sources, so a field added on one side only fails here.
TEST(EventFieldsTest, VigilInitWritesItsKindsRows) {
  const std::regex line_re(R"re(EventLine\s*\w*\s*\([^,;]+,\s*"([a-z_.]+)"\s*\))re");
  const std::regex call_re(
      R"re(\.(bytes_array|bytes|unsigned_number|number|boolean)\(\s*"([a-z_0-9]+)")re");
  const std::map<std::string, std::set<FieldType>> types = {
      {"bytes", {FieldType::kBytes, FieldType::kWord, FieldType::kData}},
      {"bytes_array", {FieldType::kBytesArray}},
      {"number", {FieldType::kInteger}},
      {"unsigned_number", {FieldType::kCount, FieldType::kInteger}},
      {"boolean", {FieldType::kBoolean}},
  };
  std::set<std::string> kinds;
  for (const char* file : {"observer/write_record.cc", "observer/notify_loop.cc",
                           "observer/unix_broker.cc", "observer/capture.cc"}) {
    SCOPED_TRACE(file);
    const std::string src = slurp(kRepo + "/" + file);
    ASSERT_FALSE(src.empty());
    std::vector<std::pair<std::size_t, std::string>> starts;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), line_re);
         it != std::sregex_iterator(); ++it)
      starts.emplace_back(it->position(), (*it)[1]);
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const std::string& kind_name = starts[i].second;
      SCOPED_TRACE(kind_name);
      const auto kind = kind_from_string(kind_name);
      ASSERT_TRUE(kind.has_value());
      kinds.insert(kind_name);
      // A line's calls: up to its finish().
      const std::size_t end = src.find("finish()", starts[i].first);
      ASSERT_NE(end, std::string::npos);
      const std::string body = src.substr(starts[i].first, end - starts[i].first);
      std::set<std::string> keys;
      for (auto it = std::sregex_iterator(body.begin(), body.end(), call_re);
           it != std::sregex_iterator(); ++it) {
        const std::string key = (*it)[2];
        const FieldSpec* f = field_of(*kind, key);
        ASSERT_NE(f, nullptr) << key << ": not in the row";
        EXPECT_EQ(types.at((*it)[1]).count(f->type), 1u) << key << ": written as " << (*it)[1];
        keys.insert(key);
      }
      for (const FieldSpec& f : fields_of(*kind)) {
        if (f.presence == Presence::kRequired) {
          EXPECT_EQ(keys.count(std::string(f.name)), 1u) << f.name << ": never written";
        }
      }
    }
  }
  // The kinds the untrusted parser takes from the sandbox (event_read.cc).
  EXPECT_EQ(kinds, (std::set<std::string>{"fs.write", "proc.exec", "fs.read", "observer.stats",
                                          "net.unix", "fs.image"}));
}

// docs/events.md's table of kinds names each row's fields in the row's order, and marks
// optional (*`name`*) only fields the row says are optional.
TEST(EventFieldsTest, TheDocsListEachKindsRow) {
  const std::string doc = slurp(kRepo + "/docs/events.md");
  const std::size_t from = doc.find("\n## Kinds\n");
  ASSERT_NE(from, std::string::npos);
  const std::size_t to = doc.find("\n## ", from + 1);
  std::istringstream table(doc.substr(from, to - from));
  std::set<std::string> documented;
  const std::regex kind_re(R"re(`([a-z_.]+)`)re");
  const std::regex italic_re(R"re(\*`([a-z_0-9]+)`\*)re");
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::size_t c1 = line.find(" | ");
    const std::size_t c2 = line.find(" | ", c1 + 3);
    ASSERT_NE(c2, std::string::npos) << line;
    const std::string kinds_cell = line.substr(0, c1);
    const std::string cell = line.substr(c2 + 3);
    for (auto it = std::sregex_iterator(kinds_cell.begin(), kinds_cell.end(), kind_re);
         it != std::sregex_iterator(); ++it) {
      const std::string kind_name = (*it)[1];
      SCOPED_TRACE(kind_name);
      const auto kind = kind_from_string(kind_name);
      ASSERT_TRUE(kind.has_value());
      documented.insert(kind_name);
      std::size_t at = 0;
      for (const FieldSpec& f : fields_of(*kind)) {
        const std::string tick = "`" + std::string(f.name) + "`";
        const std::size_t pos = cell.find(tick, at);
        ASSERT_NE(pos, std::string::npos) << f.name << ": not listed, or out of order";
        at = pos + tick.size();
      }
      for (auto it2 = std::sregex_iterator(cell.begin(), cell.end(), italic_re);
           it2 != std::sregex_iterator(); ++it2) {
        const FieldSpec* f = field_of(*kind, (*it2)[1].str());
        ASSERT_NE(f, nullptr) << (*it2)[1] << ": marked optional but not in the row";
        EXPECT_EQ(f->presence, Presence::kOptional) << f->name << ": marked optional";
      }
    }
  }
  EXPECT_EQ(documented.size(), std::variant_size_v<Body>);
}

}  // namespace
}  // namespace vigil::events
