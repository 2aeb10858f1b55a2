#include "supervisor/export/export_cursor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <set>

#include "supervisor/core/base/bounded_json.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

using json = nlohmann::json;
constexpr std::size_t kMaxCursorBytes = 64 * 1024 * 1024;

bool is_hash(const std::string& s, bool empty_ok) {
  if (s.empty()) return empty_ok;
  if (s.size() != 64) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

json log_json(const FollowedLog& l) {
  const ChainState& c = l.chain;
  return {{"name", l.name},          {"dev", l.dev},
          {"ino", l.ino},            {"offset", l.offset},
          {"done", l.done},          {"session", c.session},
          {"next_seq", c.next_seq},  {"prev", c.prev_hash},
          {"prev_t", c.prev_t},      {"key_id", c.key_id},
          {"first", c.first_hash},   {"ended", c.ended},
          {"sealed", c.sealed},      {"broken", c.broken}};
}

// Reads the one object's fields into `l`; "" or what is wrong.
std::string read_log(const json& j, FollowedLog* l) {
  if (!j.is_object()) return "a log entry is not an object";
  static const std::set<std::string> kKeys = {"name", "dev", "ino", "offset", "done",
                                              "session", "next_seq", "prev", "prev_t",
                                              "key_id", "first", "ended", "sealed", "broken"};
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (kKeys.count(k) == 0) return "unknown key " + k;
  }
  for (const auto& k : kKeys)
    if (!j.contains(k)) return "missing key " + k;
  auto u64 = [&](const char* k, std::uint64_t* out) {
    if (!j[k].is_number_unsigned()) return false;
    *out = j[k].get<std::uint64_t>();
    return true;
  };
  auto str = [&](const char* k, std::string* out) {
    if (!j[k].is_string()) return false;
    *out = j[k].get<std::string>();
    return true;
  };
  auto flag = [&](const char* k, bool* out) {
    if (!j[k].is_boolean()) return false;
    *out = j[k].get<bool>();
    return true;
  };
  ChainState& c = l->chain;
  if (!u64("dev", &l->dev) || !u64("ino", &l->ino) || !u64("offset", &l->offset) ||
      !u64("next_seq", &c.next_seq) || !u64("prev_t", &c.prev_t))
    return "a number is not a whole number >= 0";
  if (!str("name", &l->name) || !str("session", &c.session) || !str("prev", &c.prev_hash) ||
      !str("key_id", &c.key_id) || !str("first", &c.first_hash) || !str("broken", &c.broken))
    return "a text field is not a string";
  if (!flag("done", &l->done) || !flag("ended", &c.ended) || !flag("sealed", &c.sealed))
    return "a flag is not true or false";
  if (!is_hash(c.prev_hash, true) || !is_hash(c.first_hash, true)) return "a hash is not 64 hex digits";
  if (l->name.find('/') != std::string::npos) return "a log name holds a '/'";
  return "";
}

}  // namespace

std::string cursor_json(const ExportCursor& c) {
  json logs = json::array();
  for (const auto& l : c.logs) logs.push_back(log_json(l));
  const json j = {{"version", 1}, {"spool_acked", c.spool_acked}, {"logs", logs}};
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

Result<ExportCursor> parse_cursor(std::string_view text, std::string_view source) {
  auto bad = [&](const std::string& why) -> Error {
    return make_error(Errc::kInvalidPolicy,
                      std::string(source) + " is not an export cursor vigil wrote (" + why +
                          "): remove it to export every log again from its start");
  };
  BoundedJsonBuilder builder(4);
  if (!sax_parse_json_text(text.begin(), text.end(), &builder, true)) return bad("not JSON");
  const json& j = builder.root();
  if (!j.is_object() || j.size() != 3 || !j.contains("version") || j["version"] != 1 ||
      !j.contains("spool_acked") || !j["spool_acked"].is_number_unsigned() ||
      !j.contains("logs") || !j["logs"].is_array())
    return bad("expected {\"version\":1,\"spool_acked\":N,\"logs\":[...]}");
  ExportCursor c;
  c.spool_acked = j["spool_acked"].get<std::uint64_t>();
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (const auto& e : j["logs"]) {
    FollowedLog l;
    if (auto why = read_log(e, &l); !why.empty()) return bad(why);
    if (!seen.insert({l.dev, l.ino}).second) return bad("a file is listed twice");
    c.logs.push_back(std::move(l));
  }
  return c;
}

Result<ExportCursor> load_cursor(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) return ExportCursor{};
    return system_error("cannot open the export cursor " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + path);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return make_error(Errc::kRefused, path + " is not a regular file of ours closed to others: "
                                             "refusing to trust it as the export cursor");
  }
  auto text = read_fd_text(fd.get(), kMaxCursorBytes, "the export cursor");
  VIGIL_TRY(text);
  return parse_cursor(*text, path);
}

Result<void> save_cursor(const std::string& path, const ExportCursor& c) {
  const std::string tmp = path + ".new";
  ::unlink(tmp.c_str());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return system_error("cannot create " + tmp);
  VIGIL_TRY_VOID(write_all(fd.get(), cursor_json(c), "the export cursor"));
  if (::fsync(fd.get()) != 0) return system_error("cannot sync " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return system_error("cannot rename " + tmp);
  return {};
}

}  // namespace vigil
