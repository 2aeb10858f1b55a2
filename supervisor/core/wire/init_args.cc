#include "supervisor/core/wire/init_args.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <climits>
#include <iterator>
#include <type_traits>
#include <variant>

#include "supervisor/core/base/display_text.h"

namespace vigil::wire {
namespace {

// What follows a flag, and so how it is written and read back.
enum class Kind {
  kSwitch,      // no value: the bool is true when given
  kFd,          // N: a descriptor, decimal, above 2
  kSocket,      // PATH: an absolute socket path
  kNamedPath,   // PATH ORIGIN, repeated: PATH absolute
  kHide,        // PATH ORIGIN, repeated, into `reads` (hides)
  kShow,        // PATH ORIGIN, repeated, into `reads` (shows)
  kRlimit,      // NAME=VALUE, repeated
  kCaps,        // FILE:SESSION
  kOverflow,    // "drop"
  kUnixSocket,  // PATH|@NAME, repeated
  kLoopback,    // ADDR: an IPv4 address in 127.0.0.0/8
};

using Field = std::variant<bool InitArgs::*, int InitArgs::*, std::string InitArgs::*,
                           std::optional<CaptureCaps> InitArgs::*, std::vector<Rlimit> InitArgs::*,
                           std::vector<NamedPath> InitArgs::*, std::vector<ReadEntry> InitArgs::*,
                           std::vector<std::string> InitArgs::*>;

struct Flag {
  std::string_view name;
  Kind kind;
  Field field;
  std::string_view what;
};

// Every flag of vigil-init, once. The order is the order option_args() writes them in.
constexpr Flag kFlags[] = {
    {"--proxy-socket", Kind::kSocket, &InitArgs::proxy_socket,
     "the socket vigil-init's proxy bridges (127.0.0.1:3128 and :1080) lead to"},
    {"--http-socket", Kind::kSocket, &InitArgs::http_socket,
     "the HTTP bridge's own socket (network.httpProxyPort)"},
    {"--socks-socket", Kind::kSocket, &InitArgs::socks_socket,
     "the SOCKS bridge's own socket (network.socksProxyPort)"},
    {"--loopback", Kind::kLoopback, &InitArgs::loopback,
     "the loopback address (127.0.0.0/8) the bridges and the DNS stub listen on (an agent "
     "session's command: its own; default 127.0.0.1)"},
    {"--outer-proc", Kind::kSwitch, &InitArgs::outer_proc,
     "/proc is the container's, not this namespace's (enableWeakerNestedSandbox)"},
    {"--events-fd", Kind::kFd, &InitArgs::events_fd,
     "the observer's event pipe (without it: filters only, no observer)"},
    {"--program-fd", Kind::kFd, &InitArgs::program_fd,
     "the seccomp program arrives here (without it: vigil-init compiles its own)"},
    {"--overflow", Kind::kOverflow, &InitArgs::overflow_drop,
     "drop: a full event pipe drops lines instead of blocking the caller"},
    {"--no-sync-wake-up", Kind::kSwitch, &InitArgs::no_sync_wake_up,
     "no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP"},
    {"--capture-fd", Kind::kFd, &InitArgs::capture_fd, "the pre-image store's directory"},
    {"--command-fd", Kind::kFd, &InitArgs::command_fd,
     "a warm session's spare: the command, its environment and stdio arrive here"},
    {"--env-fd", Kind::kFd, &InitArgs::env_fd,
     "the command's whole environment (a sealed memfd; supervisor/core/wire/env_block.h)"},
    {"--net-capture-fd", Kind::kFd, &InitArgs::net_capture_fd,
     "vigil.network.capture: the proxy's capture listener (O_PATH); connect() of TCP "
     "sockets is carried through it and names resolve through vigil-init's DNS stub"},
    {"--capture-caps", Kind::kCaps, &InitArgs::capture_caps,
     "the largest pre-image of one file and of the session, in bytes"},
    {"--capture-skip", Kind::kNamedPath, &InitArgs::capture_skip,
     "a tree of the sandbox's own (its /dev, /proc, temp dir): no pre-images there"},
    {"--rlimit", Kind::kRlimit, &InitArgs::rlimits, "a cap set on the command before its exec"},
    {"--unix-broker", Kind::kSwitch, &InitArgs::unix_broker,
     "the unix socket broker's filter is installed"},
    {"--unix-socket", Kind::kUnixSocket, &InitArgs::unix_sockets,
     "one entry of network.allowUnixSockets"},
    {"--refuse-create", Kind::kNamedPath, &InitArgs::refuse_create,
     "a missing denyWrite target refused when created"},
    {"--refuse-glob", Kind::kNamedPath, &InitArgs::refuse_glob,
     "names a deny glob matches refused when created"},
    {"--hide", Kind::kHide, &InitArgs::reads, "a hidden path (vigil.observer.reads)"},
    {"--show", Kind::kShow, &InitArgs::reads, "a path bound back in below a hidden one"},
};

constexpr std::string_view kRlimitNames[] = {"nproc", "data", "fsize"};

int arity(Kind k) {
  switch (k) {
    case Kind::kSwitch:
      return 0;
    case Kind::kNamedPath:
    case Kind::kHide:
    case Kind::kShow:
      return 2;
    default:
      return 1;
  }
}

bool repeated(Kind k) {
  return k == Kind::kNamedPath || k == Kind::kHide || k == Kind::kShow || k == Kind::kRlimit ||
         k == Kind::kUnixSocket;
}

std::string_view syntax(Kind k) {
  switch (k) {
    case Kind::kSwitch:
      return "";
    case Kind::kFd:
      return "N";
    case Kind::kSocket:
      return "PATH";
    case Kind::kNamedPath:
    case Kind::kHide:
    case Kind::kShow:
      return "PATH ORIGIN";
    case Kind::kRlimit:
      return "nproc|data|fsize=N";
    case Kind::kCaps:
      return "FILE:SESSION";
    case Kind::kOverflow:
      return "drop";
    case Kind::kUnixSocket:
      return "PATH|@NAME";
    case Kind::kLoopback:
      return "ADDR";
  }
  return "";
}

template <class T>
T& field(InitArgs& a, const Flag& f) {
  return a.*std::get<T InitArgs::*>(f.field);
}
template <class T>
const T& field(const InitArgs& a, const Flag& f) {
  return a.*std::get<T InitArgs::*>(f.field);
}

std::string_view name_of(Kind k) {
  for (const Flag& f : kFlags)
    if (f.kind == k) return f.name;
  return "";
}

Error bad(const Flag& f, std::string_view value, std::string_view expected) {
  return make_error(Errc::kInvalidPolicy, std::string(f.name) + " must be " +
                                              std::string(expected) + ", not \"" +
                                              escape_text(value) + "\"");
}

// Decimal digits only: no sign, no space, no base prefix, no overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (const char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

Result<void> read_value(InitArgs& a, const Flag& f, std::span<const char* const> v) {
  const std::string_view first = v[0];
  switch (f.kind) {
    case Kind::kSwitch:
      field<bool>(a, f) = true;
      return {};
    case Kind::kFd: {
      const auto n = parse_u64(first);
      if (!n || *n < 3 || *n > static_cast<std::uint64_t>(INT_MAX))
        return bad(f, first, "a descriptor number above 2 (0, 1 and 2 are the command's)");
      field<int>(a, f) = static_cast<int>(*n);
      return {};
    }
    case Kind::kSocket:
      if (first.empty() || first[0] != '/') return bad(f, first, "an absolute socket path");
      field<std::string>(a, f) = std::string(first);
      return {};
    case Kind::kNamedPath:
    case Kind::kHide:
    case Kind::kShow: {
      if (first.empty() || first[0] != '/') return bad(f, first, "an absolute path");
      if (f.kind == Kind::kNamedPath) {
        field<std::vector<NamedPath>>(a, f).push_back({std::string(first), v[1]});
      } else {
        field<std::vector<ReadEntry>>(a, f).push_back(
            {std::string(first), v[1], f.kind == Kind::kHide});
      }
      return {};
    }
    case Kind::kRlimit: {
      const auto eq = first.find('=');
      const std::string_view name = first.substr(0, eq);
      bool known = false;
      for (const auto n : kRlimitNames) known = known || n == name;
      const auto n = eq == std::string_view::npos ? std::nullopt : parse_u64(first.substr(eq + 1));
      if (!known || !n) return bad(f, first, "nproc=N, data=N or fsize=N (N in decimal)");
      field<std::vector<Rlimit>>(a, f).push_back({std::string(name), *n});
      return {};
    }
    case Kind::kCaps: {
      const auto colon = first.find(':');
      const auto file = parse_u64(first.substr(0, colon));
      const auto session =
          colon == std::string_view::npos ? std::nullopt : parse_u64(first.substr(colon + 1));
      if (!file || !session) return bad(f, first, "FILE:SESSION, two byte counts in decimal");
      field<std::optional<CaptureCaps>>(a, f) = CaptureCaps{*file, *session};
      return {};
    }
    case Kind::kOverflow:
      if (first != "drop") return bad(f, first, "drop (blocking is the default)");
      field<bool>(a, f) = true;
      return {};
    case Kind::kLoopback: {
      in_addr addr{};
      const std::string text(first);
      if (::inet_pton(AF_INET, text.c_str(), &addr) != 1 || (ntohl(addr.s_addr) >> 24) != 127)
        return bad(f, first, "an IPv4 loopback address (127.0.0.0/8), dotted decimal");
      field<std::string>(a, f) = text;
      return {};
    }
    case Kind::kUnixSocket:
      if (first.empty()) return bad(f, first, "a socket path or @NAME");
      field<std::vector<std::string>>(a, f).push_back(std::string(first));
      return {};
  }
  return make_error(Errc::kInternal, "unhandled flag " + std::string(f.name));
}

void write_value(const InitArgs& a, const Flag& f, std::vector<std::string>& out) {
  const std::string name(f.name);
  switch (f.kind) {
    case Kind::kSwitch:
      if (field<bool>(a, f)) out.push_back(name);
      return;
    case Kind::kFd:
      if (field<int>(a, f) != -1) out.insert(out.end(), {name, std::to_string(field<int>(a, f))});
      return;
    case Kind::kSocket:
    case Kind::kLoopback:
      if (!field<std::string>(a, f).empty())
        out.insert(out.end(), {name, field<std::string>(a, f)});
      return;
    case Kind::kNamedPath:
      for (const auto& p : field<std::vector<NamedPath>>(a, f))
        out.insert(out.end(), {name, p.path, p.origin});
      return;
    case Kind::kHide:
      // Hides and shows in their order: a show re-binds below the hide before it.
      for (const auto& r : field<std::vector<ReadEntry>>(a, f))
        out.insert(out.end(),
                   {std::string(r.hides ? f.name : name_of(Kind::kShow)), r.path, r.origin});
      return;
    case Kind::kShow:
      return;  // written with the hides, in order
    case Kind::kRlimit:
      for (const auto& r : field<std::vector<Rlimit>>(a, f))
        out.insert(out.end(), {name, r.name + "=" + std::to_string(r.value)});
      return;
    case Kind::kCaps:
      if (const auto& c = field<std::optional<CaptureCaps>>(a, f)) {
        out.insert(out.end(),
                   {name, std::to_string(c->file_bytes) + ":" + std::to_string(c->session_bytes)});
      }
      return;
    case Kind::kOverflow:
      if (field<bool>(a, f)) out.insert(out.end(), {name, "drop"});
      return;
    case Kind::kUnixSocket:
      for (const auto& s : field<std::vector<std::string>>(a, f)) out.insert(out.end(), {name, s});
      return;
  }
}

std::string flag_list() {
  std::string out;
  for (const Flag& f : kFlags) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

// Each descriptor is vigil-init's own: two options naming one pipe would have vigil-init
// read its program from its event pipe, or keep a descriptor open that it closes.
Result<void> check_fds_distinct(const InitArgs& a) {
  const Flag* fds[std::size(kFlags)];
  std::size_t n = 0;
  for (const Flag& f : kFlags)
    if (f.kind == Kind::kFd && field<int>(a, f) != -1) fds[n++] = &f;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (field<int>(a, *fds[i]) == field<int>(a, *fds[j])) {
        return make_error(Errc::kInvalidPolicy,
                          std::string(fds[j]->name) + " must be a descriptor of its own, not " +
                              std::to_string(field<int>(a, *fds[j])) + " which " +
                              std::string(fds[i]->name) + " names too");
      }
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> option_args(const InitArgs& args) {
  std::vector<std::string> out;
  for (const Flag& f : kFlags) write_value(args, f, out);
  return out;
}

std::vector<std::string> to_argv(const InitArgs& args) {
  auto out = option_args(args);
  out.push_back("--");
  out.insert(out.end(), args.command.begin(), args.command.end());
  return out;
}

Result<InitArgs> parse(std::span<const char* const> args) {
  InitArgs out;
  bool seen[std::size(kFlags)] = {};
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string_view word = args[i];
    if (word == "--") break;
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags)
      if (f.name == word) flag = &f;
    if (flag == nullptr) {
      return make_error(Errc::kInvalidPolicy, "unknown option \"" + escape_text(word) +
                                                  "\" (the options are " + flag_list() + ")");
    }
    const std::size_t row = static_cast<std::size_t>(flag - kFlags);
    if (seen[row] && !repeated(flag->kind))
      return make_error(Errc::kInvalidPolicy, std::string(flag->name) + " is given twice");
    seen[row] = true;
    const auto need = static_cast<std::size_t>(arity(flag->kind));
    if (args.size() - i - 1 < need) {
      return make_error(Errc::kInvalidPolicy, std::string(flag->name) + " needs " +
                                                  std::string(syntax(flag->kind)) + " after it");
    }
    VIGIL_TRY_VOID(read_value(out, *flag, args.subspan(i + 1, need)));
    i += need;
  }
  if (i + 1 >= args.size()) {
    return make_error(Errc::kInvalidPolicy,
                      "no command: vigil-init [OPTION]... -- CMD ARGS... (the command follows "
                      "\"--\")");
  }
  out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i + 1), args.end());
  VIGIL_TRY_VOID(check_fds_distinct(out));
  return out;
}

std::span<const std::string_view> rlimit_names() { return kRlimitNames; }

std::string usage() {
  std::string out = "usage: vigil-init [OPTION]... -- CMD ARGS...\n";
  for (const Flag& f : kFlags) {
    std::string head = "  " + std::string(f.name);
    if (!syntax(f.kind).empty()) head += " " + std::string(syntax(f.kind));
    if (head.size() < 34) head.resize(34, ' ');
    out += head + " " + std::string(f.what) + (repeated(f.kind) ? " (repeated)" : "") + "\n";
  }
  return out;
}

}  // namespace vigil::wire
