#include "supervisor/agent/mcp_resources.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <utility>

#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/unique_fd.h"

extern char** environ;

namespace vigil {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPrefix = "vigil://session/";
constexpr std::chrono::seconds kViewDeadline{60};

struct View {
  std::string_view name;
  std::string_view flag;  // "" for the timeline, replay's default
  std::string_view description;
};
constexpr std::array<View, 6> kViews = {{
    {"timeline", "", "every record of the session in order, as `vigil replay` shows it"},
    {"violations", "--annotate", "the <sandbox_violations> blocks the model was given, checked against the events"},
    {"writes", "--writes", "every path created, written, renamed or deleted, with its verdict"},
    {"network", "--net", "the network decisions"},
    {"changes", "--changes", "what the session changed, per path (undo reads the same)"},
    {"diff", "--diff", "the content of each change: a unified diff for text"},
}};

const View* view_named(std::string_view name) {
  for (const auto& v : kViews) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

// A command number as the log has it: 1 to 10^12, digits only, no leading zero.
std::optional<std::string> command_number(std::string_view s) {
  if (s.empty() || s.size() > 12 || s[0] == '0') return std::nullopt;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::string(s);
}

// Runs `argv` (argv[0] absolute) with stdout on a pipe, for at most kViewDeadline; what it
// printed (at most `cap` bytes, `cut` when it printed more) and how it ended.
struct Captured {
  std::string out;
  bool cut = false;
  int status = -1;
};
Result<Captured> capture(const std::vector<std::string>& argv, std::size_t cap) {
  auto out = make_pipe();
  VIGIL_TRY(out);
  auto err = make_pipe();
  VIGIL_TRY(err);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return system_error("fork");
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::dup2(out->write.get(), 1);
    ::dup2(err->write.get(), 2);
    ::execve(cargv[0], cargv.data(), environ);
    ::_exit(127);
  }
  out->write.reset();
  err->write.reset();
  Captured c;
  std::string errors;
  const auto deadline = std::chrono::steady_clock::now() + kViewDeadline;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p[2] = {{out_open ? out->read.get() : -1, POLLIN, 0}, {err_open ? err->read.get() : -1, POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (p[i].revents == 0) continue;
      const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      std::string& to = i == 0 ? c.out : errors;
      const std::size_t room = (i == 0 ? cap : 4096) - std::min(to.size(), i == 0 ? cap : std::size_t{4096});
      to.append(buf, std::min(room, static_cast<std::size_t>(n)));
      if (i == 0 && static_cast<std::size_t>(n) > room) {
        c.cut = true;
        out_open = err_open = false;  // enough: the rest is not read
      }
    }
  }
  if (out_open || err_open || c.cut) ::kill(pid, SIGKILL);  // past the deadline, or cut
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (!c.cut && (out_open || err_open))
    return make_error(Errc::kSystem, "vigil replay took longer than 60 s");
  // replay exits 1 when the log does not verify (a session still writing it is not
  // sealed yet): what it printed is the view all the same, its warning first.
  if (!c.cut && c.status != 0 && c.out.empty())
    return make_error(Errc::kSystem, "vigil replay failed: " + errors);
  if (!errors.empty() && !c.cut) c.out = errors + c.out;
  return c;
}

}  // namespace

std::optional<McpResource> mcp_resource_of(std::string_view uri) {
  if (!uri.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = uri.substr(kPrefix.size());
  McpResource r;
  if (rest == "log") {
    r.raw_log = true;
    return r;
  }
  std::optional<std::string> command;
  if (rest.starts_with("commands/")) {
    rest.remove_prefix(9);
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    command = command_number(rest.substr(0, slash));
    if (!command) return std::nullopt;
    rest.remove_prefix(slash + 1);
  }
  const View* v = view_named(rest);
  if (v == nullptr) return std::nullopt;
  if (!v->flag.empty()) r.replay_flags.emplace_back(v->flag);
  if (command) {
    r.replay_flags.emplace_back("--command");
    r.replay_flags.push_back(*command);
  }
  return r;
}

json mcp_resource_list() {
  json list = json::array({{{"uri", "vigil://session/log"},
                            {"name", "log"},
                            {"title", "The session log"},
                            {"description", "every record, hash-chained (JSON lines; `vigil replay` reads it)"},
                            {"mimeType", "application/x-ndjson"}}});
  for (const auto& v : kViews) {
    list.push_back({{"uri", std::string(kPrefix) + std::string(v.name)},
                    {"name", v.name},
                    {"description", v.description},
                    {"mimeType", "text/plain"}});
  }
  return list;
}

json mcp_resource_templates() {
  json list = json::array();
  for (const auto& v : kViews) {
    list.push_back({{"uriTemplate", std::string(kPrefix) + "commands/{command}/" + std::string(v.name)},
                    {"name", "command-" + std::string(v.name)},
                    {"description", std::string(v.description) + ", for one command (its number in the log)"},
                    {"mimeType", "text/plain"}});
  }
  return list;
}

Result<std::string> read_mcp_resource(std::string_view uri, const std::string& log) {
  const auto r = mcp_resource_of(uri);
  if (!r) return make_error(Errc::kNotFound, "no such resource (resources/list and resources/templates/list name them)");
  if (r->raw_log) {
    UniqueFd fd(::open(log.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return system_error("cannot read the session log " + log);
    std::string text;
    char buf[65536];
    ssize_t n;
    while (text.size() <= kMaxResourceBytes && (n = ::read(fd.get(), buf, sizeof buf)) > 0)
      text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxResourceBytes) {
      text.resize(kMaxResourceBytes);
      text += "\n[cut at 8 MiB: the whole log is " + log + "]\n";
    }
    return text;
  }
  // This very binary, even if a newer one was installed at its path since it started.
  std::vector<std::string> argv = {"/proc/self/exe", "replay"};
  argv.insert(argv.end(), r->replay_flags.begin(), r->replay_flags.end());
  argv.push_back("--");
  argv.push_back(log);
  auto c = capture(argv, kMaxResourceBytes);
  VIGIL_TRY(c);
  if (c->cut) c->out += "\n[cut at 8 MiB: `vigil replay` shows it all]\n";
  return c->out;
}

}  // namespace vigil
