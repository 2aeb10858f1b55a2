#include "supervisor/log/session_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "supervisor/core/base/regular_file.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/log/log_key.h"
#include "supervisor/core/events/record_line.h"

namespace vigil {
namespace {

using events::Event;

bool is_session_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (const char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return s != "." && s != "..";
}

Result<void> check_private_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return system_error("cannot stat " + dir);
  return judge_log_dir(dir, st, ::geteuid(), "keep session logs there");
}

nlohmann::json rules_json(const std::vector<PathRule>& rules) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rules) {
    // The session's own temp dir is a fresh path every run: it is not part of the policy
    // (docs/events.md: two runs of one policy share a digest). That a temp dir is
    // writable at all is implied by every policy.
    if (r.session_temp) continue;
    a.push_back({{"written", r.written},
                 {"literal", r.literal},
                 {"resolved", r.resolved},
                 {"origin", r.origin},
                 {"kind", static_cast<int>(r.kind)},
                 {"first_missing", r.first_missing},
                 {"first_missing_exists", r.first_missing_exists},
                 {"session_temp", r.session_temp}});
  }
  return a;
}

}  // namespace

Result<void> judge_log_dir(const std::string& dir, const struct stat& st, uid_t me,
                           std::string_view refusing) {
  const std::string why = "; refusing to " + std::string(refusing);
  if (!S_ISDIR(st.st_mode))
    return make_error(Errc::kRefused, dir + " is not a directory (a symlink?)" + why);
  if (st.st_uid != me) {
    return make_error(Errc::kRefused, dir + " is owned by uid " + std::to_string(st.st_uid) +
                                          ", not by us (someone else may have made it)" + why);
  }
  if ((st.st_mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return make_error(Errc::kRefused, dir + " is writable by other users (mode " + mode + ")" +
                                          why + " (chmod go-w it if it is yours)");
  }
  return {};
}

std::string new_session_id() {
  std::uint8_t rnd[6] = {};
  std::size_t got = 0;
  while (got < sizeof rnd) {
    const ssize_t n = ::getrandom(rnd + got, sizeof rnd - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // no entropy source: the timestamp and pid below still separate runs
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof rnd) {
    const auto mix =
        static_cast<std::uint64_t>(::getpid()) ^
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (std::size_t i = 0; i < sizeof rnd; ++i) rnd[i] = static_cast<std::uint8_t>(mix >> (8 * i));
  }
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32] = {};
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = std::string(stamp) + "-";
  for (const std::uint8_t b : rnd) {
    id += kHex[b >> 4];
    id += kHex[b & 0xf];
  }
  return id;
}

Result<std::string> capture_dir_for(const std::string& id, const char* xdg_state_home,
                                    const char* home) {
  auto log = default_log_path(id, xdg_state_home, home);
  if (!log) return std::move(log).error();
  // <state>/vigil/sessions/<id>.jsonl -> <state>/vigil/captures/<id>
  const std::string& p = *log;
  return p.substr(0, p.rfind("/sessions/")) + "/captures/" + id;
}

long store_name_order(std::string_view name, std::string_view id) {
  if (name == id) return 0;
  if (name.size() <= id.size() + 1 || !name.starts_with(id) || name[id.size()] != '-') return -1;
  const std::string_view n = name.substr(id.size() + 1);
  if (n.size() > 9 || n.front() == '0') return -1;
  long v = 0;
  for (const char c : n) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v + 1;
}

Result<std::vector<std::string>> capture_dirs_for(const std::string& id, const char* xdg_state_home,
                                                  const char* home) {
  auto mine = capture_dir_for(id, xdg_state_home, home);
  if (!mine) return std::move(mine).error();
  const std::string root = mine->substr(0, mine->rfind('/'));
  std::vector<std::pair<long, std::string>> found;
  if (DIR* d = ::opendir(root.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const long order = store_name_order(e->d_name, id);
      if (order >= 0 && e->d_type == DT_DIR) found.emplace_back(order, root + "/" + e->d_name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

Result<std::string> default_log_path(std::string_view session_id, const char* xdg_state_home,
                                     const char* home) {
  if (!is_session_id(session_id)) return make_error(Errc::kInternal, "not a session id");
  auto dir = vigil_state_dir(xdg_state_home, home);
  if (!dir) {
    return make_error(Errc::kNotFound, "no place for the session log: " + dir.error().message +
                                           " (pass --log PATH)");
  }
  return *dir + "/sessions/" + std::string(session_id) + ".jsonl";
}

Result<void> prepare_log_dir(const std::string& log_path) {
  const auto slash = log_path.rfind('/');
  if (slash == std::string::npos || slash == 0)
    return make_error(Errc::kInternal, "log path has no directory");
  const std::string sessions = log_path.substr(0, slash);
  const auto slash2 = sessions.rfind('/');
  if (slash2 == std::string::npos) return make_error(Errc::kInternal, "log path has no directory");
  const std::string vigil_dir = sessions.substr(0, slash2);
  // mkdir -p, 0700 for every component we create (umask may only narrow it).
  for (std::size_t pos = 1; pos <= sessions.size(); ++pos) {
    if (pos != sessions.size() && sessions[pos] != '/') continue;
    const std::string dir = sessions.substr(0, pos);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      const int err = errno;
      return make_error(Errc::kRefused,
                        "cannot create the session log directory " + sessions + " (" + dir + ": " +
                            std::strerror(err) +
                            "); pass --log PATH, or set XDG_STATE_HOME to a directory you can "
                            "write");
    }
  }
  if (auto r = check_private_dir(vigil_dir); !r) return r;
  return check_private_dir(sessions);
}

std::string canonical_policy_json(const Policy& p) {
  nlohmann::json j;  // std::map-backed: keys sorted, so the text is canonical
  j["source"] = p.source;
  j["cwd"] = p.cwd;
  j["home"] = p.home;
  j["filesystem"] = {{"denyRead", rules_json(p.fs.deny_read)},
                     {"allowRead", rules_json(p.fs.allow_read)},
                     {"allowWrite", rules_json(p.fs.allow_write)},
                     {"denyWrite", rules_json(p.fs.deny_write)},
                     {"mandatoryDenySearchDepth", p.fs.mandatory_deny_search_depth},
                     {"allowGitConfig", p.fs.allow_git_config}};
  j["network"] = {{"allowedDomains", p.net.allowed_domains},
                  {"deniedDomains", p.net.denied_domains},
                  {"deniedDomainReasons", p.net.denied_domain_reasons},
                  {"deniedResolvedAddresses", p.net.denied_resolved_addresses},
                  {"allowLocalBinding", p.net.allow_local_binding},
                  {"allowUnixSockets", p.net.allow_unix_sockets},
                  {"allowMachLookup", p.net.allow_mach_lookup}};
  // Only when on: the digests of every policy written before the key was honoured stay.
  if (p.net.allow_all_unix_sockets) j["network"]["allowAllUnixSockets"] = true;
  j["macos"] = {{"enableWeakerNetworkIsolation", p.macos.enable_weaker_network_isolation},
                {"allowAppleEvents", p.macos.allow_apple_events},
                {"allowPty", p.macos.allow_pty}};
  j["vigil"] = {
      {"observerOverflow",
       p.vigil.observer_overflow == VigilOptions::Overflow::kBlock ? "block" : "drop"},
      {"observerSyncWakeUp", p.vigil.observer_sync_wake_up},
      {"logMaxOutputBytes", p.vigil.log_max_output_bytes},
      {"logKeep", p.vigil.log_keep ? nlohmann::json(*p.vigil.log_keep) : nlohmann::json(nullptr)},
      {"gitWritableRepository", p.vigil.git_writable_repository}};
  // Only when on: the digests of policies written before the key stay what they were.
  if (p.vigil.observer_reads) j["vigil"]["observerReads"] = true;
  j["bwrapPath"] = p.bwrap_path ? nlohmann::json(*p.bwrap_path) : nlohmann::json(nullptr);
  // Paths need not be UTF-8; `replace` keeps this from throwing (the digest then covers
  // U+FFFD for such bytes, which is still stable for the same policy).
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::string policy_digest(const Policy& p) { return sha256_hex(canonical_policy_json(p)); }

// ---- SessionLog ------------------------------------------------------------------------

struct SessionLog::State {
  std::mutex mu;
  UniqueFd fd;
  std::string path;
  std::string session;
  Clock clock;
  std::string head{events::kGenesisPrev};
  std::uint64_t next_seq = 0;
  std::uint64_t last_t = 0;
  bool failed = false;
  Listener listener;
  std::string key;  // seals session.end when set (log_key.h)
  int held = 0;         // hold_writes() depth
  std::string pending;  // whole lines kept while held

  // Writes the held lines (under mu).
  Result<void> write_pending() {
    if (pending.empty()) return {};
    auto w = write_all(fd.get(), pending, "the session log");
    pending.clear();
    if (!w) failed = true;
    return w;
  }
};

SessionLog::SessionLog(std::unique_ptr<State> s) : s_(std::move(s)) {}
SessionLog::SessionLog(SessionLog&&) noexcept = default;
SessionLog& SessionLog::operator=(SessionLog&&) noexcept = default;
SessionLog::~SessionLog() {
  if (!s_) return;  // moved from
  std::lock_guard lock(s_->mu);
  if (s_->fd) (void)s_->write_pending();  // what was held is not lost with the object
}

Result<SessionLog::Reserved> SessionLog::reserve(const std::string& path) {
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd && errno == EEXIST) {
    return make_error(Errc::kRefused, "session log " + path +
                                          " exists already: vigil never appends to or replaces a "
                                          "log; choose a new path for --log");
  }
  if (!fd) return system_error("cannot create the session log " + path);
  return Reserved{std::move(fd), path};
}

Result<SessionLog> SessionLog::create(const std::string& path, std::string session_id,
                                      Clock clock) {
  if (!is_session_id(session_id)) {
    return make_error(Errc::kInternal, "session id must match [A-Za-z0-9._-]{1,64}");
  }
  auto reserved = reserve(path);
  VIGIL_TRY(reserved);
  return create(std::move(reserved).value(), std::move(session_id), std::move(clock));
}

Result<SessionLog> SessionLog::create(Reserved reserved, std::string session_id, Clock clock) {
  if (!is_session_id(session_id)) {
    return make_error(Errc::kInternal, "session id must match [A-Za-z0-9._-]{1,64}");
  }
  if (!reserved.fd) return make_error(Errc::kInternal, "session log: no file reserved");
  auto s = std::make_unique<State>();
  s->fd = std::move(reserved.fd);
  s->path = std::move(reserved.path);
  s->session = std::move(session_id);
  if (clock) {
    s->clock = std::move(clock);
  } else {
    const auto start = std::chrono::steady_clock::now();
    s->clock = [start] {
      return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - start)
                                            .count());
    };
  }
  return SessionLog(std::move(s));
}

Result<std::uint64_t> SessionLog::append(events::Source src, events::Body body,
                                         std::optional<std::uint64_t> cmd) {
  if (auto ok = events::validate(body, events::Limits::log()); !ok) {
    return make_error(Errc::kInternal,
                      std::string("session log: refusing a record that could not be read back: ") +
                          ok.error().message);
  }
  std::lock_guard lock(s_->mu);
  if (!s_->fd) return make_error(Errc::kInternal, "session log is closed");
  if (s_->failed)
    return make_error(Errc::kSystem, "session log: an earlier write failed; not appending");
  Event e;
  e.seq = s_->next_seq;
  // Never backwards, whatever the clock does: verify checks time order.
  e.t = std::max(s_->clock(), s_->last_t);
  e.session = s_->session;
  e.src = src;
  e.cmd = cmd;
  e.prev = s_->head;
  e.body = std::move(body);
  // fs.write, the record a busy command makes most, is printed directly (the same bytes).
  std::optional<std::string> fast = events::serialize_fast(e);
  std::string line = fast ? std::move(*fast) : events::serialize(e);
  if (auto* end = std::get_if<events::SessionEnd>(&e.body); end != nullptr && !s_->key.empty()) {
    // The seal covers the line as it would be without it, and through prev every record
    // before it (supervisor/log/log_key.h).
    end->mac = log_seal(s_->key, line);
    line = events::serialize(e);
  }
  if (line.size() > events::Limits::log().max_line) {
    return make_error(Errc::kInternal, "session log: record longer than a log line may be");
  }
  line += '\n';
  if (s_->held > 0) {
    s_->pending += line;
    if (s_->pending.size() >= kHeldBytes) VIGIL_TRY_VOID(s_->write_pending());
  } else if (auto w = write_all(s_->fd.get(), line, "the session log"); !w) {
    s_->failed = true;
    return w.error();
  }
  line.pop_back();
  s_->head = sha256_hex(line);
  s_->last_t = e.t;
  ++s_->next_seq;
  if (s_->listener) s_->listener(e, line);
  return e.seq;
}

void SessionLog::hold_writes() {
  std::lock_guard lock(s_->mu);
  ++s_->held;
}

Result<void> SessionLog::release_writes() {
  std::lock_guard lock(s_->mu);
  if (s_->held > 0) --s_->held;
  if (s_->held > 0 || !s_->fd) return {};
  return s_->write_pending();
}

void SessionLog::set_key(std::string key) {
  std::lock_guard lock(s_->mu);
  s_->key = std::move(key);
}

void SessionLog::set_listener(Listener l) {
  std::lock_guard lock(s_->mu);
  s_->listener = std::move(l);
}

const std::string& SessionLog::path() const { return s_->path; }
const std::string& SessionLog::session() const { return s_->session; }

std::string SessionLog::head() const {
  std::lock_guard lock(s_->mu);
  return s_->head;
}

std::uint64_t SessionLog::records() const {
  std::lock_guard lock(s_->mu);
  return s_->next_seq;
}

std::uint64_t SessionLog::elapsed_ns() const { return s_->clock(); }

Result<void> SessionLog::close() {
  std::lock_guard lock(s_->mu);
  if (!s_->fd) return {};
  auto held = s_->write_pending();
  // Start writing the log back to disk, without waiting for it. Every record is already
  // in the page cache (one write each), so a crash of vigil loses nothing; waiting for
  // the disk as fsync did cost 9-108 ms per `vigil run` on a busy ext4 (the journal
  // commit waits for everyone's metadata) and protected only against a power cut in
  // the few seconds before the kernel writes it back on its own.
  const int rc = ::sync_file_range(s_->fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
  const int err = errno;
  s_->fd.reset();
  // EINVAL/ESPIPE/EOPNOTSUPP: a file (a pipe, some FUSE or network fs) that cannot start
  // write-back; its data is in the kernel all the same.
  if (rc != 0 && err != EINVAL && err != ESPIPE && err != EOPNOTSUPP)
    return system_error("cannot write the session log " + s_->path + " back to disk", err);
  return held;
}

// ---- reading ---------------------------------------------------------------------------

Result<std::string> read_log_file(const std::string& path) {
  auto opened = open_regular_file(path, "session log");
  VIGIL_TRY(opened);
  UniqueFd fd = std::move(opened).value();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + path);
  if (static_cast<std::uint64_t>(st.st_size) > kMaxLogFileBytes) {
    return make_error(
        Errc::kInvalidPolicy,
        path + " is larger than " + std::to_string(kMaxLogFileBytes >> 20) +
            " MiB: this view reads the whole log; `vigil replay --verify` and `--json` "
            "read a log of any size");
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("cannot read " + path);
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxLogFileBytes) {
      return make_error(Errc::kInvalidPolicy, path + " grew past the size limit while being read");
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

namespace {

// Complete lines (without '\n'); `tail` gets an unterminated last fragment.
std::vector<std::string_view> split_lines(std::string_view text, std::string_view* tail) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      *tail = text;
      break;
    }
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace

LoadedLog load_log_text(std::string_view text) {
  LoadedLog out;
  std::string_view tail;
  const auto lines = split_lines(text, &tail);
  out.lines = lines.size();
  out.truncated_tail = !tail.empty();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto e = events::parse_log_record(lines[i]);
    if (!e) {
      out.unreadable.push_back({i, e.error().message});
      continue;
    }
    out.records.push_back(LogRecord{i, std::string(lines[i]), std::move(*e)});
  }
  return out;
}

Result<LoadedLog> load_log(const std::string& path) {
  auto text = read_log_file(path);
  VIGIL_TRY(text);
  return load_log_text(*text);
}

}  // namespace vigil
