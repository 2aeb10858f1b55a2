// `vigil replay LOG`: opens the log and runs one view over it (the views:
// replay_text.cc, replay_html.cc, replay_commands.cc; every one reads the log record by
// record, so a log of any size is replayed in bounded memory).
#include "supervisor/replay/replay_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "supervisor/log/session_log.h"  // capture_dirs_for()
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/log/log_key.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/launch/session_base.h"
#include "proxy/domain_matcher.h"

namespace vigil {

namespace {


// The session's content stores, as this user's state directory places them: one for
// `vigil run`, one per command for an agent session (session, serve, mcp).
replay::ContentFn store_of(const std::string& session) {
  auto dirs = capture_dirs_for(session, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  return replay::store_reader(dirs ? *dirs : std::vector<std::string>{});
}

// PATH arguments as absolute paths (a relative one is the working directory's).
std::vector<std::string> absolute_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (std::string p : paths) {
    if (p.empty() || p[0] != '/') {
      char cwd[4096];
      p = (::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string()) + "/" + p;
    }
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    out.push_back(std::move(p));
  }
  return out;
}

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

// display-safe: the views build their text with escape_for_terminal/escape_for_html
void print(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// The report file, written piece by piece as the view makes it.
class ReportFile {
 public:
  Result<void> open(const std::string& path) {
    path_ = path;
    fd_ =
        UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd_) return system_error("cannot write " + path);
    return {};
  }
  void write(std::string_view rest) {
    if (!error_.empty()) return;
    if (auto r = write_all(fd_.get(), rest, path_); !r) error_ = r.error().message;
  }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  UniqueFd fd_;
  std::string error_;
};

// This user's key, to check a sealed log with (supervisor/log/log_key.h); never created here.
std::optional<std::string> user_log_key() {
  auto path = log_key_path();
  if (!path) return std::nullopt;
  auto k = load_log_key(*path);
  if (k) return std::move(k).value();
  if (k.error().code != Errc::kNotFound) {
    print_warning(k.error().message);
  }
  return std::nullopt;
}

// The `--annotate` view: the recorded block, and whether the events explain it.
int show_annotation(const replay::AnnotationCheck& c) {
  if (c.match) {
    print(c.text);  // equal to the recomputed block, which is escaped by construction
    return 0;
  }
  // They differ: the recorded bytes are not vouched for, so each line is shown
  // escaped (the line breaks kept, so the block stays readable).
  std::string shown;
  std::size_t start = 0;
  while (start < c.text.size()) {
    const std::size_t nl = std::min(c.text.find('\n', start), c.text.size());
    shown += events::escape_for_terminal(std::string_view(c.text).substr(start, nl - start));
    if (nl < c.text.size()) shown += '\n';
    start = nl + 1;
  }
  print(shown);
  print_error("the recorded annotation (" + std::to_string(c.text.size()) + " bytes" +
              (c.recorded ? "" : ", no annotation record") +
              ") differs from the one recomputed from the events (" +
              std::to_string(c.recomputed.size()) + " bytes) at byte " +
              std::to_string(c.first_difference));
  return 1;
}

// `--policy NEW.json`: the new settings are loaded as `vigil run` would load them in the
// session's working directory (the mandatory-deny scan reads the host as it is now).
Result<void> replay_under_policy(const replay::Feed& feed, const std::string& settings,
                                 const replay::Out& out) {
  std::string cwd;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) cwd = s->cwd;
    return false;  // session.start is the first record
  }));
  if (cwd.empty()) return make_error(Errc::kInvalidPolicy, "replay --policy: the log has no session.start");
  struct stat st {};
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(Errc::kInvalidPolicy,
                      "replay --policy: the session's working directory " + cwd +
                          " is not there any more; relative settings paths are resolved "
                          "against it: recreate it (mkdir -p) and try again");
  }
  PlanRequest req;
  req.settings_path = settings;
  req.use_home_settings = false;
  req.allow_writable_settings = true;  // nothing runs under it
  req.cwd = cwd;
  req.placeholders = false;
  req.refuse_missing_at_call = gatekeeper_in_force();
  auto prepared = prepare_sandbox(req);
  VIGIL_TRY(prepared);
  auto matcher = proxy::DomainMatcher::build(prepared->policy.net);
  VIGIL_TRY(matcher);
  replay::PolicyUnderTest next{settings, &prepared->policy, &prepared->plan, &*matcher,
                               session_base_dir()};
  return replay::stream_policy_diff(feed, next, out);
}

}  // namespace

int run_replay(const ReplayArgs& a) {
  const int modes = int{a.annotate} + int{a.writes} + int{a.net} + int{a.verify} +
                    int{!a.json.empty()} + int{!a.html.empty()} + int{a.changes} + int{a.diff} +
                    int{!a.policy.empty()};
  if (modes > 1)
    return fail(
        "replay: give at most one of --annotate, --writes, --net, --verify, --json, --html, "
        "--changes, --diff, --policy");
  if (!a.paths.empty() && !a.changes && !a.diff)
    return fail("replay: PATH arguments go with --changes or --diff (the log is one argument)");

  // Every view reads the log record by record (replay_feed.h): memory is bounded
  // whatever the log's size, and a view that needs totals first reads it twice.
  const std::optional<std::string> key = user_log_key();
  const auto key_view = key ? std::optional<std::string_view>(*key) : std::nullopt;
  if (a.verify) {
    auto verify = verify_log(a.log, key_view);
    if (!verify) return fail(verify.error().message);
    print(replay::render_verify(*verify));
    // An unkeyed log (from before logs were sealed) passes on its chain, and says so; a
    // keyed one passes only with its seal checked.
    const bool seal_ok = verify->key_id.empty() || verify->sealed;
    return verify->ok && verify->complete && seal_ok ? 0 : 1;
  }
  auto opened = open_session_log(a.log);
  if (!opened) return fail(opened.error().message);
  const int fd = opened->get();
  if (!a.json.empty()) {
    if (auto known = replay::check_kind_filter(a.json); !known) return fail(known.error().message);
    auto streamed = for_each_record_line(fd, a.json, [](const std::string& line) {
      // The line parsed as canonical: pure ASCII, no control bytes, safe to print as is.
      print(line + "\n");
    });
    if (!streamed) return fail(streamed.error().message);
    return 0;
  }
  // The chain is checked first (one pass), so that a view of a log that is not whole
  // says so before anything else.
  if (::lseek(fd, 0, SEEK_SET) != 0) return fail(system_error("cannot rewind " + a.log).message);
  LineReader lines(fd, events::Limits::log().max_line);
  const VerifyReport verify = verify_log_lines(lines, key_view);
  if (!lines.error().empty()) return fail("cannot read " + a.log + ": " + lines.error());
  replay::Feed feed = replay::feed_of_fd(fd);
  if (a.command) {
    auto one = replay::command_feed(std::move(feed), *a.command, a.log);
    if (!one) return fail("replay: " + one.error().message);
    feed = std::move(one).value();
  }
  // Every other view still shows what it can, but says first that the log is not whole.
  if (!verify.ok) {
    print_warning("this log does not verify (record " +
                  std::to_string(verify.broken_at.value_or(0)) + ": " + verify.why +
                  "); showing what can be read");
  }
  if (!a.policy.empty()) {
    auto shown = replay_under_policy(feed, a.policy, [](std::string_view piece) { print(piece); });
    if (!shown) return fail(shown.error().message);
    return 0;
  }
  if (a.annotate) {
    auto c = replay::check_annotation(feed);
    if (!c) return fail(c.error().message);
    return show_annotation(*c);
  }
  const replay::Out to_stdout = [](std::string_view piece) { print(piece); };
  Result<void> shown;
  if (a.changes || a.diff) {
    auto cs = replay::change_set_of(feed);
    if (!cs) return fail(cs.error().message);
    const auto only = absolute_paths(a.paths);
    if (a.changes) {
      replay::print_changes(*cs, only, to_stdout);
    } else {
      replay::print_diffs(*cs, only, store_of(cs->session), to_stdout);
    }
  } else if (a.writes) {
    shown = replay::stream_writes(feed, to_stdout);
  } else if (a.net) {
    shown = replay::stream_net(feed, to_stdout);
  } else if (!a.html.empty()) {
    ReportFile report;
    if (auto o = report.open(a.html); !o) return fail(o.error().message);
    shown = replay::stream_html(
        feed, verify, a.log, [&report](std::string_view piece) { report.write(piece); },
        store_of);
    if (shown && !report.error().empty()) return fail(report.error());
    if (shown) print_error("wrote " + a.html);
  } else {
    shown = replay::stream_timeline(feed, to_stdout);
  }
  if (!shown) return fail(shown.error().message);
  return 0;
}


}  // namespace vigil
