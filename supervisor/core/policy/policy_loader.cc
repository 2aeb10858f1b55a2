#include "supervisor/core/policy/policy_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <span>
#include <vector>

#include "supervisor/core/policy/glob.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/policy/settings_json.h"
#include "supervisor/core/base/unique_fd.h"

#include "supervisor/core/policy/policy_loader_detail.h"

namespace vigil {
namespace detail {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::null:
      return "null";
    default:
      return "something else";
  }
}

}  // namespace detail

using detail::Loader;

Result<Policy> parse_policy(std::string text, std::string_view source, const LoadContext& ctx) {
  auto doc = parse_settings_json(std::move(text), source);
  VIGIL_TRY(doc);
  Policy p = default_policy(ctx);
  p.source = std::string(source);
  // A settings file replaces the default's writable cwd: it says exactly what is writable.
  p.fs.allow_write.clear();
  Loader loader(*doc, source, ctx, &p);
  VIGIL_TRY_VOID(loader.load());
  return p;
}

Result<Policy> load_policy_fd(int fd, const std::string& source, const LoadContext& ctx) {
  auto text = read_fd_text(fd, kMaxSettingsBytes, "settings file " + source);
  VIGIL_TRY(text);
  return parse_policy(std::move(text).value(), source, ctx);  // it reports an oversize file
}

Result<UniqueFd> open_settings_file(const std::string& path) {
  // Checked before the open so that the open's errno needs no carrying through Result.
  if (struct stat st {}; ::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    return make_error(Errc::kInvalidPolicy, "settings file " + path + " does not exist");
  }
  return open_regular_file(path, "settings file");
}

Result<Policy> load_policy_file(const std::string& path, const LoadContext& ctx) {
  auto fd = open_settings_file(path);
  VIGIL_TRY(fd);
  return load_policy_fd(fd->get(), path, ctx);
}

Policy default_policy(const LoadContext& ctx) {
  Policy p;
  p.source = "<embedded default>";
  p.cwd = ctx.cwd;
  p.home = ctx.home;
  PathRule cwd;
  cwd.written = ".";
  cwd.literal = lexically_normal(ctx.cwd);
  cwd.resolved = resolve_symlinks(cwd.literal);
  cwd.origin = "default: the working directory";
  cwd.kind = PathKind::kDir;
  p.fs.allow_write.push_back(std::move(cwd));
  return p;
}

}  // namespace vigil

