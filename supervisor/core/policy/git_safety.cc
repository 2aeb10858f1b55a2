#include "supervisor/core/policy/git_safety.h"

#include <algorithm>
#include <array>

namespace vigil::git {
namespace {

// The allowlist. Every entry names data git reads, never a program, a shell snippet, a
// file of further config, or a directory of programs. Keys with a subsection ("remote",
// "branch", "submodule") match any subsection name.
struct SafeKey {
  std::string_view section;
  bool subsection;  // the key has a subsection (remote.<name>.url), or has none (core.bare)
  std::string_view name;
};

constexpr std::array kSafeKeys = {
    // Written by `git init` / `git clone` on every platform: format and checkout data.
    SafeKey{"core", false, "repositoryformatversion"},
    SafeKey{"core", false, "filemode"},
    SafeKey{"core", false, "bare"},
    SafeKey{"core", false, "logallrefupdates"},
    SafeKey{"core", false, "ignorecase"},
    SafeKey{"core", false, "precomposeunicode"},
    SafeKey{"core", false, "symlinks"},
    // Line-ending and path-quoting choices: they change bytes git writes, run nothing.
    SafeKey{"core", false, "autocrlf"},
    SafeKey{"core", false, "eol"},
    SafeKey{"core", false, "safecrlf"},
    SafeKey{"core", false, "quotepath"},
    // `git submodule add` writes it in .git/modules/<name>/config: a directory, the
    // submodule's work tree.
    SafeKey{"core", false, "worktree"},
    // `git sparse-checkout` writes these (with extensions.worktreeConfig).
    SafeKey{"core", false, "sparsecheckout"},
    SafeKey{"core", false, "sparsecheckoutcone"},
    SafeKey{"index", false, "sparse"},
    // Repository extensions that only describe the storage. Any other extension makes
    // git refuse the repository, or (partialclone) is covered by remote.* below.
    SafeKey{"extensions", false, "objectformat"},
    SafeKey{"extensions", false, "worktreeconfig"},
    SafeKey{"extensions", false, "refstorage"},
    SafeKey{"extensions", false, "preciousobjects"},
    SafeKey{"extensions", false, "noop"},
    SafeKey{"extensions", false, "partialclone"},
    // Identity: strings. (Signing is not here: commit.gpgsign runs gpg.)
    SafeKey{"user", false, "name"},
    SafeKey{"user", false, "email"},
    SafeKey{"user", false, "useconfigonly"},
    SafeKey{"author", false, "name"},
    SafeKey{"author", false, "email"},
    SafeKey{"committer", false, "name"},
    SafeKey{"committer", false, "email"},
    SafeKey{"init", false, "defaultbranch"},
    // Remotes: where and what to fetch. Not uploadpack/receivepack (programs run on the
    // far side, which for a local path is this machine) nor vcs (a remote helper).
    // A URL's transport is gated by git's protocol.allow defaults (ext:: is never
    // allowed), and protocol.* is not on this list.
    SafeKey{"remote", true, "url"},
    SafeKey{"remote", true, "pushurl"},
    SafeKey{"remote", true, "fetch"},
    SafeKey{"remote", true, "push"},
    SafeKey{"remote", true, "tagopt"},
    SafeKey{"remote", true, "prune"},
    SafeKey{"remote", true, "mirror"},
    SafeKey{"remote", true, "promisor"},
    SafeKey{"remote", true, "partialclonefilter"},
    // Upstream tracking. (branch.<name>.rebase = interactive opens the user's own editor.)
    SafeKey{"branch", true, "remote"},
    SafeKey{"branch", true, "merge"},
    SafeKey{"branch", true, "rebase"},
    SafeKey{"branch", true, "pushremote"},
    SafeKey{"branch", true, "description"},
    // Submodules: where they come from and live. Not submodule.<name>.update, whose
    // "!command" form runs a shell command.
    SafeKey{"submodule", true, "url"},
    SafeKey{"submodule", true, "path"},
    SafeKey{"submodule", true, "active"},
    SafeKey{"submodule", true, "branch"},
    SafeKey{"submodule", true, "shallow"},
    // Everyday workflow switches: booleans and enum words.
    SafeKey{"pull", false, "rebase"},
    SafeKey{"pull", false, "ff"},
    SafeKey{"push", false, "default"},
    SafeKey{"push", false, "autosetupremote"},
    SafeKey{"fetch", false, "prune"},
    SafeKey{"merge", false, "ff"},
    SafeKey{"merge", false, "conflictstyle"},
    SafeKey{"rebase", false, "autosquash"},
    SafeKey{"rebase", false, "autostash"},
    SafeKey{"color", false, "ui"},
    // git-lfs writes its format version into every repository it touches. (Its filter
    // driver, filter.lfs.*, runs a program and is not here.)
    SafeKey{"lfs", false, "repositoryformatversion"},
};

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_key_char(char c) { return is_alpha(c) || is_digit(c) || c == '-'; }
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// git's get_next_char(): "\r\n" reads as '\n', and the end of the text as a '\n' that sets
// `eof`, so every construct that ends at a newline also ends at the end.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);
  }
  char next() {
    if (pos_ >= text_.size()) {
      eof_ = true;
      return '\n';
    }
    char c = text_[pos_++];
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    last_newline_ = c == '\n';
    if (last_newline_) ++line_;
    return c;
  }
  bool eof() const { return eof_; }
  // The line of the last character read (a newline belongs to the line it ends).
  int line() const { return last_newline_ ? line_ - 1 : line_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool eof_ = false;
  bool last_newline_ = false;
};

Error bad(const Reader& r, std::string_view what) {
  return make_error(Errc::kInvalidPolicy, "git config line " + std::to_string(r.line()) + ": " +
                                              std::string(what));
}

// "[section]", "[section \"sub\"]" or "[section.sub]", after the '['.
Result<void> read_header(Reader& r, ConfigEntry& cur) {
  std::string base;
  for (;;) {
    const char c = r.next();
    if (r.eof() || c == '\n') return bad(r, "unterminated section header");
    if (c == ']') break;
    if (is_space(c)) {
      // [section "subsection"]: spaces, then a quoted, case-sensitive name.
      char q = ' ';
      while (is_space(q)) {
        q = r.next();
        if (r.eof() || q == '\n') return bad(r, "unterminated section header");
      }
      if (q != '"') return bad(r, "a subsection must be quoted");
      std::string sub;
      for (;;) {
        char s = r.next();
        if (r.eof() || s == '\n') return bad(r, "unterminated subsection");
        if (s == '"') break;
        if (s == '\\') {
          s = r.next();
          if (r.eof() || s == '\n') return bad(r, "unterminated subsection");
        }
        sub.push_back(s);
      }
      if (r.next() != ']') return bad(r, "expected ']' after the subsection");
      base.push_back('.');
      base.append(sub);
      cur.has_subsection = true;
      break;
    }
    if (!is_key_char(c) && c != '.') return bad(r, "bad character in a section name");
    base.push_back(lower(c));
  }
  // The section is up to the first '.', the rest is the subsection (git matches the key
  // as a whole string, so [a.b], [a "b"] and [a.b "c"] all split the same way).
  const auto dot = base.find('.');
  cur.section = base.substr(0, dot);
  cur.has_subsection = dot != std::string::npos;
  cur.subsection = cur.has_subsection ? base.substr(dot + 1) : std::string();
  return {};
}

// A value after '=', up to the end of its (possibly continued) line. git's parse_value().
Result<std::string> read_value(Reader& r) {
  std::string value;
  bool quote = false, comment = false;
  std::size_t spaces = 0;
  for (;;) {
    char c = r.next();
    if (c == '\n') {
      if (quote) return bad(r, "unterminated quote");
      return value;
    }
    if (comment) continue;
    if (is_space(c) && !quote) {
      if (!value.empty()) ++spaces;
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    value.append(spaces, ' ');
    spaces = 0;
    if (c == '\\') {
      c = r.next();  // at the end of the text: '\n', a continuation into nothing, as git
      switch (c) {
        case '\n':
          continue;  // a continuation line
        case 't':
          c = '\t';
          break;
        case 'b':
          c = '\b';
          break;
        case 'n':
          c = '\n';
          break;
        case '\\':
        case '"':
          break;
        default:
          return bad(r, "unknown escape in a value");
      }
      value.push_back(c);
      continue;
    }
    if (c == '"') {
      quote = !quote;
      continue;
    }
    value.push_back(c);
  }
}

}  // namespace

std::string ConfigEntry::key() const {
  std::string k = section;
  if (has_subsection) k.append(".").append(subsection);
  return k.append(".").append(name);
}

Result<std::vector<ConfigEntry>> parse_config(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy, "git config holds a NUL byte");
  }
  std::vector<ConfigEntry> out;
  Reader r(text);
  ConfigEntry cur;
  bool in_section = false;
  for (;;) {
    const char c = r.next();
    if (r.eof()) return out;
    const int line = r.line();
    if (is_space(c)) continue;
    if (c == '#' || c == ';') {
      while (r.next() != '\n') {
      }
      continue;
    }
    if (c == '[') {
      cur = ConfigEntry{};
      VIGIL_TRY_VOID(read_header(r, cur));
      in_section = true;
      continue;  // a key may follow on the same line, as git allows
    }
    if (!is_alpha(c)) return bad(r, "a key must start with a letter");
    if (!in_section) return bad(r, "a key before any [section]");
    ConfigEntry e = cur;
    e.line = line;
    e.name.push_back(lower(c));
    char n = r.next();
    while (!r.eof() && is_key_char(n)) {
      e.name.push_back(lower(n));
      n = r.next();
    }
    while (n == ' ' || n == '\t') n = r.next();
    if (n == '=') {
      auto v = read_value(r);
      VIGIL_TRY(v);
      e.value = std::move(v).value();
      e.has_value = true;
    } else if (n != '\n') {
      return bad(r, "expected '=' after a key");
    }
    out.push_back(std::move(e));
  }
}

bool is_safe_key(const ConfigEntry& e) {
  return std::any_of(kSafeKeys.begin(), kSafeKeys.end(), [&](const SafeKey& k) {
    return k.section == e.section && k.subsection == e.has_subsection && k.name == e.name;
  });
}

ConfigVerdict judge_config(std::string_view text) {
  ConfigVerdict v;
  auto entries = parse_config(text);
  if (!entries) {
    v.safe = false;
    v.unsafe.push_back(entries.error().message);
    return v;
  }
  for (const auto& e : *entries) {
    if (is_safe_key(e)) continue;
    v.safe = false;
    std::string k = e.key();
    if (std::find(v.unsafe.begin(), v.unsafe.end(), k) == v.unsafe.end()) {
      v.unsafe.push_back(std::move(k));
    }
  }
  return v;
}

bool is_inert_hook(std::string_view name, bool is_regular_file) {
  constexpr std::string_view kSample = ".sample";
  return is_regular_file && name.size() > kSample.size() && name.ends_with(kSample);
}

}  // namespace vigil::git
