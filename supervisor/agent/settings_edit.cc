#include "supervisor/agent/settings_edit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/policy/settings_json.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {

namespace {

// Where the settings parser says a container opened: just past its '[' or '{' (checked,
// so a change in the parser's bookkeeping is an error, never a misplaced insertion).
Result<std::size_t> opening(const SettingsJson& doc, const std::string& path, char bracket) {
  std::size_t at = 0;
  if (path.empty()) {
    at = doc.text.find_first_not_of(" \t\r\n");
    if (at == std::string::npos) return make_error(Errc::kInvalidPolicy, "empty settings file");
    ++at;
  } else if (auto it = doc.offsets.find(path); it != doc.offsets.end()) {
    at = it->second;
  }
  if (at == 0 || at > doc.text.size() || doc.text[at - 1] != bracket) {
    return make_error(Errc::kInternal, "settings file: cannot find where " +
                                           (path.empty() ? std::string("the file") : path) +
                                           " opens");
  }
  return at;
}

}  // namespace

Result<std::string> add_allowed_domain(std::string_view text, const std::string& entry,
                                       std::string_view source) {
  auto doc = parse_settings_json(std::string(text), source);
  VIGIL_TRY(doc);
  const nlohmann::json& root = doc->root;
  const auto fail = [&](const std::string& what) {
    return make_error(Errc::kInvalidPolicy, std::string(source) + ": " + what);
  };
  if (!root.is_object()) return fail("not a settings object");
  const std::string quoted = nlohmann::json(entry).dump();
  std::string path, insert;
  char bracket = '{';
  bool empty = false;
  auto net = root.find("network");
  if (net == root.end()) {
    insert = "\"network\": {\"allowedDomains\": [" + quoted + "]}";
    empty = root.empty();
  } else if (!net->is_object()) {
    return fail("network is not an object");
  } else if (auto list = net->find("allowedDomains"); list == net->end()) {
    path = "network";
    insert = "\"allowedDomains\": [" + quoted + "]";
    empty = net->empty();
  } else if (!list->is_array()) {
    return fail("network.allowedDomains is not an array");
  } else {
    if (std::find(list->begin(), list->end(), nlohmann::json(entry)) != list->end()) {
      return std::string(text);
    }
    path = "network.allowedDomains";
    bracket = '[';
    insert = quoted;
    empty = list->empty();
  }
  auto at = opening(*doc, path, bracket);
  VIGIL_TRY(at);
  std::string out(text);
  out.insert(*at, empty ? insert : insert + ", ");
  return out;
}

Result<void> add_allowed_domain_to_file(const std::string& path, const std::string& entry) {
  auto fd = open_regular_file(path, "settings file");
  VIGIL_TRY(fd);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return system_error("fstat " + path);
  auto text = read_fd_text(fd->get(), kMaxSettingsBytes, "settings file " + path);
  VIGIL_TRY(text);
  auto next = add_allowed_domain(*text, entry, path);
  VIGIL_TRY(next);
  if (*next == *text) return {};
  // The result must still be a settings file (the insertion is checked, not trusted).
  VIGIL_TRY_VOID(parse_settings_json(*next, path));
  // A symlinked settings file stays a symlink: the file it points to is replaced.
  const std::string real = fd_path(fd->get());
  const std::string target = real.empty() ? path : real;
  const std::string tmp = target + ".vigil-tmp-" + std::to_string(::getpid());
  UniqueFd out(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                      st.st_mode & 07777));
  if (!out) return system_error("create " + tmp + " (to replace " + path + ")");
  auto written = write_all_to(out.get(), *next);
  // Owned as before (root writing a user's file must not take it over); best effort for
  // an unprivileged writer, who can only own what it creates.
  if (::geteuid() == 0) (void)::fchown(out.get(), st.st_uid, st.st_gid);
  const bool synced = written && ::fsync(out.get()) == 0;
  out.reset();
  if (!synced || ::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno != 0 ? errno : EIO;
    ::unlink(tmp.c_str());
    return system_error("write " + target, err);
  }
  return {};
}

}  // namespace vigil
