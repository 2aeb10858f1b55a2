#include "supervisor/core/policy/git_config_edit.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "supervisor/core/policy/git_safety.h"

namespace vigil::git {
namespace {

// The physical lines of `text`, each with its "\n" (the last may have none).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

std::string_view content(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

// A value line that goes on to the next: it ends in an odd number of backslashes, outside
// a comment (a '#' or ';' outside quotes starts one, and a comment ends at the newline).
bool continues(std::string_view line) {
  const std::string_view c = content(line);
  bool quoted = false;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] == '\\') {
      ++i;
      continue;
    }
    if (c[i] == '"') quoted = !quoted;
    if (!quoted && (c[i] == '#' || c[i] == ';')) return false;
  }
  std::size_t n = 0;
  while (n < c.size() && c[c.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

bool header_line(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '[';
}

std::string header_of(const ConfigEntry& e) {
  if (!e.has_subsection) return "[" + e.section + "]\n";
  std::string sub;
  for (const char c : e.subsection) {
    if (c == '"' || c == '\\') sub.push_back('\\');
    sub.push_back(c);
  }
  return "[" + e.section + " \"" + sub + "\"]\n";
}

using Fact = std::tuple<std::string, std::string, bool>;
Fact fact(const ConfigEntry& e) { return {e.key(), e.value, e.has_value}; }

}  // namespace

Result<KeyRemoval> remove_config_keys(std::string_view text, const std::vector<std::string>& keys) {
  auto entries = parse_config(text);
  VIGIL_TRY(entries);
  const std::vector<std::string_view> lines = split_lines(text);
  const std::set<std::string> drop(keys.begin(), keys.end());
  std::vector<bool> removed(lines.size(), false);
  std::vector<Fact> want_kept;
  KeyRemoval out;
  std::string last_header;
  for (const ConfigEntry& e : *entries) {
    if (drop.count(e.key()) == 0) {
      want_kept.push_back(fact(e));
      continue;
    }
    if (e.line < 1 || static_cast<std::size_t>(e.line) > lines.size())
      return make_error(Errc::kInvalidPolicy, "a key's line is not in the file");
    std::size_t i = static_cast<std::size_t>(e.line) - 1;
    if (header_line(lines[i]))
      return make_error(Errc::kInvalidPolicy,
                        "line " + std::to_string(e.line) + " holds a section header and a key");
    const std::string header = header_of(e);
    if (header != last_header) out.restore += header;
    last_header = header;
    for (;; ++i) {
      removed[i] = true;
      out.lines.emplace_back(content(lines[i]));
      out.restore += std::string(content(lines[i])) + "\n";
      if (!continues(lines[i]) || i + 1 >= lines.size()) break;
    }
  }
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (!removed[i]) out.kept += lines[i];
  // What is left must read back as exactly the entries not removed, in order.
  auto again = parse_config(out.kept);
  if (!again) return make_error(Errc::kInvalidPolicy, "what is left does not parse: " + again.error().message);
  std::vector<Fact> kept;
  for (const ConfigEntry& e : *again) kept.push_back(fact(e));
  if (kept != want_kept)
    return make_error(Errc::kInvalidPolicy, "what is left does not read back as the other keys");
  return out;
}

}  // namespace vigil::git
