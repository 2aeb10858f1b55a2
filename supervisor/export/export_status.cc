#include "supervisor/export/export_status.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "supervisor/core/base/bounded_json.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/log/session_log.h"

namespace vigil {

using json = nlohmann::json;

std::string status_json(const ExportStatus& s) {
  const json j = {{"pid", s.pid},
                  {"updated", s.updated},
                  {"target", s.target},
                  {"connected", s.connected},
                  {"spool_bytes", s.spool_bytes},
                  {"spool_cap", s.spool_cap},
                  {"spool_full", s.spool_full},
                  {"full_since", s.full_since},
                  {"broken_sessions", s.broken_sessions},
                  {"lost_marks", s.lost_marks}};
  return j.dump(-1, ' ', true, json::error_handler_t::replace) + "\n";
}

Result<ExportStatus> parse_status(std::string_view text) {
  BoundedJsonBuilder builder(2);
  const auto bad = make_error(Errc::kInvalidPolicy, "not an export status vigil wrote");
  if (!sax_parse_json_text(text.begin(), text.end(), &builder, true)) return bad;
  const json& j = builder.root();
  if (!j.is_object()) return bad;
  ExportStatus s;
  try {
    s.pid = j.at("pid").get<std::int64_t>();
    s.updated = j.at("updated").get<std::int64_t>();
    s.target = j.at("target").get<std::string>();
    s.connected = j.at("connected").get<bool>();
    s.spool_bytes = j.at("spool_bytes").get<std::uint64_t>();
    s.spool_cap = j.at("spool_cap").get<std::uint64_t>();
    s.spool_full = j.at("spool_full").get<bool>();
    s.full_since = j.at("full_since").get<std::int64_t>();
    s.broken_sessions = j.at("broken_sessions").get<std::uint64_t>();
    s.lost_marks = j.at("lost_marks").get<std::uint64_t>();
  } catch (const json::exception&) {
    return bad;
  }
  return s;
}

Result<std::string> default_export_dir(const char* xdg_state_home, const char* home) {
  auto state = vigil_state_dir(xdg_state_home, home);
  VIGIL_TRY(state);
  return *state + "/export";
}

Result<void> save_status(const std::string& path, const ExportStatus& s) {
  const std::string tmp = path + ".new";
  ::unlink(tmp.c_str());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return system_error("cannot create " + tmp);
  VIGIL_TRY_VOID(write_all(fd.get(), status_json(s), "the export status"));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return system_error("cannot rename " + tmp);
  return {};
}

Result<std::optional<ExportStatus>> load_status(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd && errno == ENOENT) return std::optional<ExportStatus>();
  if (!fd) return system_error("cannot open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    return make_error(Errc::kRefused, path + " is not a regular file of ours");
  auto text = read_fd_text(fd.get(), 64 * 1024, "the export status");
  VIGIL_TRY(text);
  auto s = parse_status(*text);
  if (!s) return make_error(Errc::kInvalidPolicy, path + ": " + s.error().message);
  return std::optional<ExportStatus>(std::move(*s));
}

std::string spool_full_warning(const ExportStatus& s, std::int64_t now) {
  if (!s.spool_full) return "";
  const std::int64_t mins = s.full_since > 0 && now > s.full_since ? (now - s.full_since) / 60 : 0;
  return "the export spool is FULL (" + std::to_string(s.spool_bytes) + " of " +
         std::to_string(s.spool_cap) + " bytes, for " + std::to_string(mins) +
         " min): the collector " + s.target +
         " is not taking records, and `vigil export --follow` (pid " + std::to_string(s.pid) +
         ") has stopped reading session logs; a log pruned now is lost to the collector. Fix "
         "the collector (or raise vigil.export.spoolMaxBytes)";
}

}  // namespace vigil
