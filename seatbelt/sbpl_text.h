// Profile text that cannot carry a byte the user chose. Every piece of a generated
// Seatbelt profile is an Sbpl, and there are only four ways to make one:
//
//   "(allow process-exec)"_sbpl   a string literal in vigil's source: the literal operator
//                                 is consteval, so a runtime string does not compile;
//   Sbpl::param(name)             (param "NAME"), NAME of [A-Z0-9_] (checked): how every
//                                 user path reaches the profile (its value travels in argv);
//   Sbpl::quoted(text)            text as an SBPL string literal, escaped by sbpl_string,
//                                 which refuses control and non-ASCII bytes: nothing inside
//                                 can end the literal early (used for vigil's own regexes);
//   Sbpl::number(n)               decimal digits;
//
// and `a + b` of two of them. The profile builder's writer accepts nothing else, so "no
// user-controlled text ever becomes profile text" is held by the compiler, not by review.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "supervisor/core/base/result.h"

namespace vigil {

class SbplLiteral {
 public:
  consteval explicit SbplLiteral(std::string_view s) : s_(s) {}
  constexpr std::string_view view() const { return s_; }

 private:
  std::string_view s_;
};

namespace sbpl_literals {
consteval SbplLiteral operator""_sbpl(const char* s, std::size_t n) {
  return SbplLiteral(std::string_view(s, n));
}
}  // namespace sbpl_literals

// A fixed token as an SBPL string literal: "..." with \ and " escaped. Refuses control
// characters and non-ASCII so that no byte could ever end the literal early or be read
// differently by the profile compiler.
Result<std::string> sbpl_string(std::string_view fixed);

class Sbpl {
 public:
  Sbpl(SbplLiteral l)
      : text_(l.view()) {}  // NOLINT(google-explicit-constructor): literals read as text

  static Result<Sbpl> param(std::string_view name) {
    if (name.empty()) return make_error(Errc::kInternal, "sbpl: empty parameter name");
    for (char c : name) {
      if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
        return make_error(Errc::kInternal, "sbpl: parameter names are [A-Z0-9_]");
      }
    }
    return Sbpl("(param \"" + std::string(name) + "\")");
  }
  static Result<Sbpl> quoted(std::string_view text) {
    auto s = sbpl_string(text);
    VIGIL_TRY(s);
    return Sbpl(std::move(*s));
  }
  static Sbpl number(std::uint64_t n) { return Sbpl(std::to_string(n)); }

  friend Sbpl operator+(Sbpl a, const Sbpl& b) {
    a.text_ += b.text_;
    return a;
  }
  Sbpl& operator+=(const Sbpl& b) {
    text_ += b.text_;
    return *this;
  }
  friend bool operator==(const Sbpl& a, const Sbpl& b) { return a.text_ == b.text_; }

  const std::string& text() const { return text_; }

 private:
  explicit Sbpl(std::string checked) : text_(std::move(checked)) {}
  std::string text_;
};

}  // namespace vigil
