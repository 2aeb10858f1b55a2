// Test-only: an SBPL (Seatbelt profile language) reader and a small evaluator of the
// subset vigil emits, so that generated profiles can be checked on a machine without
// sandbox-exec. The reader checks well-formedness (balanced parentheses, terminated
// strings, the top-level shape vigil promises); the evaluator answers "would this
// operation on this path be allowed?" with the parameters substituted.
//
// Seatbelt's precedence is documented only by observation, in two readings:
//   kLastMatch      every rule whose operation covers the request is considered in
//                   profile order, and the last one that matches wins;
//   kSpecificFirst  rules naming the exact operation (file-write-unlink) are considered
//                   first, last match wins; only if none matches do the wildcard rules
//                   (file-write*) decide (srt observed a specific deny surviving a later
//                   wildcard allow).
// vigil's profiles are written so that both readings agree; tests evaluate both.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "supervisor/core/policy/path_expand.h"

namespace vigil::sbpl {

struct Node {
  enum class Type { kSymbol, kString, kList } type = Type::kList;
  std::string text;            // symbol or string value
  std::vector<Node> children;  // list
  bool is_symbol(std::string_view s) const { return type == Type::kSymbol && text == s; }
  bool is_list() const { return type == Type::kList; }
};

struct ParseResult {
  std::vector<Node> forms;
  std::string error;  // empty when well-formed
};

inline ParseResult read_all(std::string_view s) {
  ParseResult out;
  std::vector<Node> stack;  // open lists
  std::size_t i = 0;
  auto fail = [&](const std::string& what) {
    out.error = what + " at offset " + std::to_string(i);
    return out;
  };
  auto emit = [&](Node n) {
    if (stack.empty()) {
      out.forms.push_back(std::move(n));
    } else {
      stack.back().children.push_back(std::move(n));
    }
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\n' || c == '\t') {
      ++i;
    } else if (c == ';') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '(') {
      stack.emplace_back();
      ++i;
    } else if (c == ')') {
      if (stack.empty()) return fail("unbalanced ')'");
      Node n = std::move(stack.back());
      stack.pop_back();
      emit(std::move(n));
      ++i;
    } else if (c == '"') {
      Node n;
      n.type = Node::Type::kString;
      ++i;
      bool closed = false;
      while (i < s.size()) {
        const char d = s[i++];
        if (d == '"') {
          closed = true;
          break;
        }
        if (d == '\\') {
          if (i >= s.size()) break;
          const char e = s[i++];
          if (e != '"' && e != '\\') return fail("unknown string escape");
          n.text += e;
        } else if (d == '\n') {
          return fail("newline inside a string");
        } else {
          n.text += d;
        }
      }
      if (!closed) return fail("unterminated string");
      emit(std::move(n));
    } else if (c == '#') {
      return fail("'#' syntax is not emitted by vigil");
    } else {
      Node n;
      n.type = Node::Type::kSymbol;
      while (i < s.size() && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '(' &&
             s[i] != ')' && s[i] != '"' && s[i] != ';') {
        n.text += s[i++];
      }
      emit(std::move(n));
    }
  }
  if (!stack.empty()) return fail("unbalanced '('");
  return out;
}

struct Rule {
  bool allow = false;
  std::vector<std::string> ops;
  std::vector<const Node*> filters;
  std::optional<std::string> message;
  std::size_t index = 0;  // position among the rules
};

struct Profile {
  ParseResult parsed;
  std::string default_message;
  std::vector<Rule> rules;
  std::string error;
};

// The shape vigil promises: (version 1), then (deny default (with message "...")), then
// only (allow|deny OPERATION... FILTER... [(with message "...")]) forms.
inline std::unique_ptr<Profile> load(std::string_view text) {
  auto p = std::make_unique<Profile>();
  p->parsed = read_all(text);
  if (!p->parsed.error.empty()) {
    p->error = p->parsed.error;
    return p;
  }
  const auto& f = p->parsed.forms;
  if (f.size() < 2 || !f[0].is_list() || f[0].children.size() != 2 ||
      !f[0].children[0].is_symbol("version") || f[0].children[1].text != "1") {
    p->error = "first form is not (version 1)";
    return p;
  }
  const Node& d = f[1];
  if (!d.is_list() || d.children.size() != 3 || !d.children[0].is_symbol("deny") ||
      !d.children[1].is_symbol("default") || !d.children[2].is_list() ||
      d.children[2].children.size() != 3 || !d.children[2].children[0].is_symbol("with") ||
      !d.children[2].children[1].is_symbol("message") ||
      d.children[2].children[2].type != Node::Type::kString) {
    p->error = "second form is not (deny default (with message \"...\"))";
    return p;
  }
  p->default_message = d.children[2].children[2].text;
  for (std::size_t k = 2; k < f.size(); ++k) {
    const Node& n = f[k];
    if (!n.is_list() || n.children.empty() ||
        !(n.children[0].is_symbol("allow") || n.children[0].is_symbol("deny"))) {
      p->error = "form " + std::to_string(k) + " is not an allow/deny rule";
      return p;
    }
    Rule r;
    r.allow = n.children[0].text == "allow";
    r.index = p->rules.size();
    for (std::size_t c = 1; c < n.children.size(); ++c) {
      const Node& ch = n.children[c];
      if (ch.type == Node::Type::kSymbol) {
        if (!r.filters.empty()) {
          p->error = "operation after a filter in form " + std::to_string(k);
          return p;
        }
        r.ops.push_back(ch.text);
      } else if (ch.is_list() && ch.children.size() == 3 && ch.children[0].is_symbol("with") &&
                 ch.children[1].is_symbol("message")) {
        if (c + 1 != n.children.size()) {
          p->error = "(with message) is not last in form " + std::to_string(k);
          return p;
        }
        r.message = ch.children[2].text;
      } else if (ch.is_list()) {
        r.filters.push_back(&ch);
      } else {
        p->error = "a bare string in form " + std::to_string(k);
        return p;
      }
    }
    if (r.ops.empty()) {
      p->error = "rule without an operation in form " + std::to_string(k);
      return p;
    }
    p->rules.push_back(std::move(r));
  }
  return p;
}

enum class Precedence { kLastMatch, kSpecificFirst };

struct Request {
  std::string op;          // "file-write-create", "network-outbound", "mach-lookup", ...
  std::string path;        // file ops
  std::string remote;      // network-outbound: "localhost:3128", "93.184.216.34:443"
  std::string name;        // mach-lookup: the service
  std::string vnode_type;  // "DIRECTORY", "REGULAR-FILE", or empty when unknown
};

struct Evaluator {
  const Profile* profile;
  std::map<std::string, std::string> params;
  mutable std::string error;  // a missing parameter, an unknown filter
  mutable std::map<std::string, std::regex> regex_cache = {};  // compiling is the slow part

  std::optional<std::string> value(const Node& n) const {
    if (n.type == Node::Type::kString) return n.text;
    if (n.is_list() && n.children.size() == 2 && n.children[0].is_symbol("param") &&
        n.children[1].type == Node::Type::kString) {
      auto it = params.find(n.children[1].text);
      if (it == params.end()) {
        error = "missing parameter " + n.children[1].text;
        return std::nullopt;
      }
      return it->second;
    }
    error = "not a string or (param ...)";
    return std::nullopt;
  }

  bool matches(const Node& f, const Request& r) const {
    if (!f.is_list() || f.children.empty() || f.children[0].type != Node::Type::kSymbol) {
      error = "malformed filter";
      return false;
    }
    const std::string& k = f.children[0].text;
    auto arg = [&](std::size_t i) -> std::optional<std::string> {
      if (f.children.size() <= i) {
        error = "filter " + k + " lacks an argument";
        return std::nullopt;
      }
      return value(f.children[i]);
    };
    const bool file_op = r.op.starts_with("file-");
    if (k == "require-all" || k == "require-any") {
      const bool all = k == "require-all";
      for (std::size_t i = 1; i < f.children.size(); ++i) {
        const bool m = matches(f.children[i], r);
        if (all && !m) return false;
        if (!all && m) return true;
      }
      return all;
    }
    if (k == "require-not") return f.children.size() == 2 && !matches(f.children[1], r);
    if (k == "literal") {
      const auto v = arg(1);
      return file_op && v && r.path == *v;
    }
    if (k == "subpath") {
      const auto v = arg(1);
      return file_op && v && path_is_under(r.path, *v);
    }
    if (k == "regex") {
      const auto v = arg(1);
      if (!file_op || !v) return false;
      auto it = regex_cache.find(*v);
      if (it == regex_cache.end())
        it = regex_cache.emplace(*v, std::regex(*v, std::regex::extended)).first;
      return std::regex_search(r.path, it->second);
    }
    if (k == "vnode-type") {
      return f.children.size() == 2 && f.children[1].type == Node::Type::kSymbol &&
             r.vnode_type == f.children[1].text;
    }
    if (k == "remote" || k == "local") {
      // (remote ip "localhost:PORT"): the destination. A (local ip ...) filter on an
      // outbound connect is modelled as Seatbelt evaluates it: against the unbound
      // source, which "localhost" (and "*") matches -- i.e. it matches every connect.
      if (f.children.size() != 3 || !f.children[1].is_symbol("ip")) {
        return false;  // unix-socket forms: not modelled, never match
      }
      const auto v = value(f.children[2]);
      if (!v || r.op != "network-outbound") return false;
      if (k == "local") return true;
      if (*v == r.remote) return true;
      return v->ends_with(":*") && r.remote.starts_with(v->substr(0, v->size() - 1));
    }
    if (k == "global-name") {
      const auto v = arg(1);
      return r.op == "mach-lookup" && v && *v == r.name;
    }
    if (k == "global-name-prefix") {
      const auto v = arg(1);
      return r.op == "mach-lookup" && v && r.name.starts_with(*v);
    }
    // Filters on other operations (sysctl-name, iokit-property, target, socket-domain...)
    // never match the requests these tests make.
    return false;
  }

  static bool covers(const std::string& rule_op, const std::string& op) {
    if (rule_op == op) return true;
    return rule_op.ends_with("*") && op.starts_with(rule_op.substr(0, rule_op.size() - 1));
  }

  static bool rule_has_op(const Rule& rule, const Request& r, bool exact_only, bool wildcard_only) {
    for (const auto& o : rule.ops) {
      const bool exact = o == r.op;
      const bool wild = !exact && covers(o, r.op);
      if ((exact && !wildcard_only) || (wild && !exact_only)) return true;
    }
    return false;
  }

  bool rule_matches(const Rule& rule, const Request& r) const {
    if (rule.filters.empty()) return true;
    for (const Node* f : rule.filters) {
      if (matches(*f, r)) return true;  // several filters in one rule are alternatives
    }
    return false;
  }

  struct Verdict {
    bool allow = false;
    const Rule* rule = nullptr;  // nullptr: the default
  };

  Verdict decide(const Request& r, Precedence prec) const {
    auto last = [&](bool exact_only, bool wildcard_only) -> const Rule* {
      const Rule* found = nullptr;
      for (const auto& rule : profile->rules) {
        if (rule_has_op(rule, r, exact_only, wildcard_only) && rule_matches(rule, r)) found = &rule;
      }
      return found;
    };
    const Rule* hit = nullptr;
    if (prec == Precedence::kLastMatch) {
      hit = last(false, false);
    } else {
      hit = last(true, false);
      if (hit == nullptr) hit = last(false, true);
    }
    return Verdict{hit != nullptr && hit->allow, hit};
  }
};

}  // namespace vigil::sbpl
