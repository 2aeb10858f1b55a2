// libFuzzer target for the Seatbelt `log stream` parser (and, for inputs starting with
// 'P', the profile builder's no-splicing guarantee). Beyond "no crash, no UB, no
// exception", it checks what the supervisor relies on:
//  - every violation is well-formed: pid in 1..INT32_MAX, a process name of at most 64
//    bytes, an operation of [a-z0-9*_-], a count >= 1, a host:port target only when the
//    port parsed, a path target only when it starts with '/';
//  - a violation only ever comes from a line ending with this session's tag;
//  - every error is a value with the parser's prefix;
//  - built from hostile paths, a profile is either refused or made of printable ASCII,
//    well-formed, with every (param ...) declared.
// Built only with -DVIGIL_FUZZ=ON and clang (see seatbelt/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "seatbelt/log_parser.h"
#include "seatbelt/profile_builder.h"
#include "tests/unit/seatbelt/sbpl_eval.h"

namespace {

[[noreturn]] void fail() { std::abort(); }

const std::string kTag = "vigil_0123456789abcdef";

void check(const vigil::Result<vigil::SeatbeltLogEvent>& e) {
  if (!e.ok()) {
    if (e.error().message.rfind("seatbelt log: ", 0) != 0) fail();
    return;
  }
  if (e->kind != vigil::SeatbeltLogEvent::Kind::kViolation) return;
  const auto& v = e->violation;
  if (v.pid < 1 || v.pid > 0x7fffffff) fail();
  if (v.process.empty() || v.process.size() > 64) fail();
  if (v.operation.empty()) fail();
  for (char c : v.operation) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '*' || c == '_'))
      fail();
  }
  if (v.count < 1) fail();
  using T = vigil::SeatbeltViolation::Target;
  if (v.kind == T::kPath && (v.target.empty() || v.target[0] != '/')) fail();
  if (v.kind == T::kHostPort && v.host.empty()) fail();
  if (v.kind == T::kNone && !v.target.empty()) fail();
}

void fuzz_log(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  static_cast<void>(vigil::parse_sandbox_report(all));
  vigil::SeatbeltLogReader reader(kTag);
  std::size_t start = 0;
  bool saw_tag = false;  // the tag, literally, on some line so far (JSON may spell it \u...)
  while (start <= all.size()) {
    const std::size_t nl = all.find('\n', start);
    const std::string_view line =
        all.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    saw_tag = saw_tag || line.find(kTag) != std::string_view::npos;
    const bool escaped_json =
        !line.empty() && line[0] == '{' && line.find("\\u") != std::string_view::npos;
    for (const auto& e : reader.feed(line)) {
      check(e);
      // A violation only ever comes from a message that ends with this session's tag.
      if (e.ok() && e->kind == vigil::SeatbeltLogEvent::Kind::kViolation && !saw_tag &&
          !escaped_json)
        fail();
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  for (const auto& e : reader.finish()) check(e);
}

// Every (param "X") in the tree names a declared parameter. (Walked directly: evaluating
// rules would compile std::regex objects and slow the fuzzer twentyfold.)
bool all_params_declared(const vigil::sbpl::Node& n, const std::set<std::string>& declared) {
  if (!n.is_list()) return true;
  if (n.children.size() == 2 && n.children[0].is_symbol("param")) {
    return n.children[1].type == vigil::sbpl::Node::Type::kString &&
           declared.count(n.children[1].text) == 1;
  }
  for (const auto& c : n.children) {
    if (!all_params_declared(c, declared)) return false;
  }
  return true;
}

// 'P' then records of [kind byte][length byte][bytes]: paths for the policy's lists.
void fuzz_profile(const std::uint8_t* data, std::size_t size) {
  vigil::Policy policy;
  std::size_t i = 1;
  int n = 0;
  while (i + 2 <= size && n < 16) {
    const std::uint8_t kind = data[i];
    const std::size_t len = data[i + 1];
    i += 2;
    if (i + len > size) break;
    vigil::PathRule r;
    // The loader hands the builder absolute paths only.
    r.literal = "/" + std::string(reinterpret_cast<const char*>(data + i), len);
    r.resolved = r.literal;
    r.origin = "fuzz[" + std::to_string(n) + "]";
    r.kind = (kind & 0x10) != 0 ? vigil::PathKind::kFile : vigil::PathKind::kDir;
    i += len;
    ++n;
    switch (kind % 4) {
      case 0:
        policy.fs.deny_read.push_back(r);
        break;
      case 1:
        policy.fs.allow_read.push_back(r);
        break;
      case 2:
        policy.fs.allow_write.push_back(r);
        break;
      default:
        policy.fs.deny_write.push_back(r);
        break;
    }
  }
  const vigil::Plan plan = vigil::build_plan(policy, {});
  auto p = vigil::build_seatbelt_profile(vigil::SeatbeltInputs{&policy, &plan, {kTag, {3128}}});
  if (!p.ok()) {
    if (p.error().code != vigil::Errc::kInvalidPolicy) fail();
    return;
  }
  for (char c : p->text) {
    if (c != '\n' && (c < 0x20 || c >= 0x7f)) fail();
  }
  auto prof = vigil::sbpl::load(p->text);
  if (!prof->error.empty()) fail();
  std::set<std::string> declared;
  for (const auto& x : p->params) declared.insert(x.name);
  for (const auto& form : prof->parsed.forms) {
    if (!all_params_declared(form, declared)) fail();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 0 && data[0] == 'P') {
    fuzz_profile(data, size);
  } else {
    fuzz_log(data, size);
  }
  return 0;
}
