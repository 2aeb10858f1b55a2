// The small pure pieces of a Seatbelt profile, table-tested on their own
// (declared in seatbelt/profile_builder.h): regex escaping, path values, the mandatory-deny
// regexes, the /private twins, the log tag.
#include <algorithm>
#include <array>

#include "seatbelt/profile_builder.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

// macOS PATH_MAX: the kernel refuses longer paths, so no rule needs one.
constexpr std::size_t kMaxPathBytes = 1024;

bool is_ascii_printable(char c) { return c >= 0x20 && c < 0x7f; }

}  // namespace

bool valid_log_tag(std::string_view tag) {
  if (tag.size() < 8 || tag.size() > 64) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Result<std::string> regex_escape(std::string_view literal, bool fold_case) {
  // ']' and '}' are ordinary outside a bracket or a bound, and POSIX leaves a backslash
  // before an ordinary character undefined (libstdc++'s ERE rejects "\\]"): they stay
  // bare, which both ERE and ECMAScript read as themselves.
  static constexpr std::string_view kMeta = ".[(){*+?^$|\\";
  std::string out;
  for (char c : literal) {
    if (!is_ascii_printable(c)) {
      return make_error(Errc::kInvalidPolicy, "regex_escape: control or non-ASCII byte");
    }
    if (kMeta.find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else if (fold_case && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      const char lower = static_cast<char>(c | 0x20);
      const char upper = static_cast<char>(lower & ~0x20);
      out += '[';
      out += lower;
      out += upper;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

Result<void> check_path_value(std::string_view value) {
  if (value.empty() || value[0] != '/')
    return make_error(Errc::kInvalidPolicy, "not an absolute path");
  if (value.find('\0') != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy, "the path contains a NUL byte");
  }
  if (value.size() > kMaxPathBytes) {
    return make_error(Errc::kInvalidPolicy, "the path is " + std::to_string(value.size()) +
                                                " bytes long; macOS paths are at most " +
                                                std::to_string(kMaxPathBytes));
  }
  if (!is_valid_utf8(value)) {
    return make_error(Errc::kInvalidPolicy,
                      "the path is not valid UTF-8 (macOS file names always are)");
  }
  return {};
}

std::string mandatory_deny_regex(const MandatoryDeny& deny) {
  // The list is ours and plain ASCII: escaping cannot fail (a table test holds it to that).
  return "^.*/" + regex_escape(deny.relpath, true).value() + "(/.*)?$";
}

std::vector<std::string> mandatory_head_regexes() {
  std::vector<std::string> out;
  for (const auto& d : mandatory_denies()) {
    const auto slash = d.relpath.find('/');
    if (slash == std::string_view::npos) continue;
    std::string re = "^.*/" + regex_escape(d.relpath.substr(0, slash), true).value() + "$";
    if (std::find(out.begin(), out.end(), re) == out.end()) out.push_back(std::move(re));
  }
  return out;
}

std::vector<std::string> private_twins(std::string_view path) {
  static constexpr std::array<std::string_view, 3> kLinked = {"/tmp", "/var", "/etc"};
  std::vector<std::string> out{std::string(path)};
  for (const auto top : kLinked) {
    const std::string priv = "/private" + std::string(top);
    if (path_is_under(path, top)) {
      out.push_back(priv + std::string(path.substr(top.size())));
    } else if (path_is_under(path, priv)) {
      out.push_back(std::string(top) + std::string(path.substr(priv.size())));
    }
  }
  return out;
}

}  // namespace vigil
