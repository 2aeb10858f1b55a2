#include "supervisor/export/log_follower.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>

#include "supervisor/core/base/sha256.h"
#include "supervisor/log/log_retention.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

constexpr std::size_t kChunk = 1024 * 1024;
constexpr std::size_t kPassBudget = 4 * 1024 * 1024;  // bytes per log per pass: fairness

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Reads at `offset` up to the first newline, at most `max` bytes; nullopt when none.
std::optional<std::string> read_line_at(int fd, std::uint64_t offset, std::size_t max) {
  std::string out;
  char buf[64 * 1024];
  while (out.size() <= max) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset + out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    const std::string_view got(buf, static_cast<std::size_t>(n));
    if (const auto nl = got.find('\n'); nl != std::string_view::npos) {
      out.append(got.substr(0, nl));
      return out;
    }
    out.append(got);
  }
  return std::nullopt;
}

// Whether `name` in `dir_fd` begins with the record `log` began with (a log renamed, not
// a new file on a recycled inode).
bool same_first_record(int dir_fd, const std::string& name, const FollowedLog& log) {
  if (log.chain.first_hash.empty()) return log.offset == 0;
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return false;
  const auto first = read_line_at(fd.get(), 0, events::Limits::log().max_line);
  return first && sha256_hex(*first) == log.chain.first_hash;
}

std::string stem(const std::string& name) {
  return name.ends_with(".jsonl") ? name.substr(0, name.size() - 6) : name;
}

}  // namespace

LogFollower::LogFollower(FollowOptions opts, ExportCursor cursor) : opts_(std::move(opts)) {
  for (auto& l : cursor.logs) logs_.emplace(Id{l.dev, l.ino}, std::move(l));
}

ExportCursor LogFollower::cursor() const {
  ExportCursor c;
  for (const auto& [id, l] : logs_) c.logs.push_back(l);
  return c;
}

Result<LogFollower::Open> LogFollower::open_log(const FollowedLog& log) const {
  const std::string path = opts_.dir + "/" + log.name;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return system_error("cannot open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + path);
  if (st.st_dev != log.dev || st.st_ino != log.ino)
    return make_error(Errc::kNotFound, path + " was replaced while it was opened");
  Open o;
  const auto first = read_line_at(fd.get(), 0, events::Limits::log().max_line);
  if (log.offset > 0 && (!first || sha256_hex(*first) != log.chain.first_hash)) {
    return make_error(Errc::kRefused, path + " is not the file the cursor followed");
  }
  if (first) {
    if (auto e = events::parse_log_record(*first); e && e->kind() == events::Kind::kSessionStart) {
      if (auto ms = session_start_ms(e->session)) {
        o.ctx = OcsfContext{*ms, e->session, std::get<events::SessionStart>(e->body).versions.vigil};
      }
    }
  }
  o.fd = std::move(fd);
  return o;
}

bool LogFollower::emit_mark(FollowedLog& log, ExportItem::Mark m, std::string why,
                            const Emit& emit) {
  ExportItem mark;
  mark.host = opts_.host;
  mark.session = log.chain.session.empty() ? stem(log.name) : log.chain.session;
  mark.seq = log.chain.next_seq;
  mark.mark = m;
  mark.why = std::move(why);
  mark.format = opts_.format;
  std::vector<ExportItem> items{std::move(mark)};
  return emit(items);
}

bool LogFollower::emit_line(FollowedLog& log, Open& o, std::string_view line, const Emit& emit) {
  ChainState next = log.chain;
  ChainStep step = chain_step(next, line, opts_.key);
  ExportItem item;
  item.host = opts_.host;
  item.session = next.session.empty() ? stem(log.name) : next.session;
  item.seq = step.event ? step.event->seq : log.chain.next_seq;
  item.chain = step.hash;
  item.verified = step.verified;
  item.format = opts_.format;
  if (step.event) {
    const events::Event& e = *step.event;
    item.prev = e.prev;
    item.kind = std::string(events::to_string(e.kind()));
    if (e.kind() == events::Kind::kSessionStart && !o.ctx) {
      if (auto ms = session_start_ms(e.session))
        o.ctx = OcsfContext{*ms, e.session, std::get<events::SessionStart>(e.body).versions.vigil};
    }
    if (o.ctx) item.time_ms = o.ctx->start_ms + e.t / 1000000;
    if (opts_.format == "ocsf") {
      if (o.ctx) item.payload = ocsf_line(e, *o.ctx).value_or("");
    } else {
      item.payload = std::string(line);
    }
  } else if (opts_.format != "ocsf") {
    item.payload = std::string(line);
  }
  std::vector<ExportItem> items{std::move(item)};
  if (!step.broke.empty()) {
    ExportItem mark;
    mark.host = opts_.host;
    mark.session = items[0].session;
    mark.seq = items[0].seq;
    mark.mark = ExportItem::Mark::kBroken;
    mark.why = step.broke;
    mark.format = opts_.format;
    items.push_back(std::move(mark));
  }
  if (!emit(items)) return false;
  log.chain = std::move(next);
  log.offset += line.size() + 1;
  if (log.chain.ended) log.done = true;
  return true;
}

// Reads what is new in `log`, line by line; false when `emit` refused (stop the pass).
bool LogFollower::read_log(FollowedLog& log, Open& o, const Emit& emit, bool* more) {
  struct stat st {};
  if (::fstat(o.fd.get(), &st) != 0) return true;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < log.offset) {
    if (!emit_mark(log, ExportItem::Mark::kLost,
                   "the log shrank below what was exported (" + std::to_string(log.offset) +
                       " bytes): it was truncated or rewritten; records from seq " +
                       std::to_string(log.chain.next_seq) + " on are lost",
                   emit))
      return false;
    log.done = true;
    return true;
  }
  const std::size_t max_line = events::Limits::log().max_line;
  std::size_t budget = kPassBudget;
  std::string buf;
  while (log.offset < size && !log.done) {
    if (budget == 0) {
      if (more != nullptr) *more = true;
      return true;
    }
    const std::size_t want = std::min<std::uint64_t>(size - log.offset, std::max(kChunk, max_line + 1));
    buf.resize(want);
    const ssize_t n = ::pread(o.fd.get(), buf.data(), want, static_cast<off_t>(log.offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    const std::string_view got(buf.data(), static_cast<std::size_t>(n));
    std::size_t pos = 0;
    for (std::size_t nl; (nl = got.find('\n', pos)) != std::string_view::npos; pos = nl + 1) {
      if (!emit_line(log, o, got.substr(pos, nl - pos), emit)) return false;
      if (log.done) return true;
    }
    if (pos == 0) {
      if (got.size() <= max_line) return true;  // an incomplete last line: wait for the rest
      // A line longer than any record: its bytes are the record (it breaks the chain).
      const auto line = read_line_at(o.fd.get(), log.offset, std::size_t{1} << 31);
      if (!line) return true;
      if (!emit_line(log, o, *line, emit)) return false;
    }
    budget -= std::min(budget, pos == 0 ? got.size() : pos);
  }
  return true;
}

Result<void> LogFollower::poll(const Emit& emit, bool* more) {
  UniqueFd dfd(::open(opts_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dfd && errno == ENOENT) return {};  // no session yet
  if (!dfd) return system_error("cannot open the log directory " + opts_.dir);
  struct stat dst {};
  if (::fstat(dfd.get(), &dst) != 0) return system_error("cannot stat " + opts_.dir);
  VIGIL_TRY_VOID(judge_log_dir(opts_.dir, dst, ::geteuid(), "following its logs"));
  std::unique_ptr<DIR, DirCloser> d(::fdopendir(::dup(dfd.get())));
  if (!d) return system_error("cannot list " + opts_.dir);
  std::set<Id> present;
  while (const dirent* ent = ::readdir(d.get())) {
    const std::string name = ent->d_name;
    if (!is_log_file_name(name)) continue;
    struct stat st {};
    if (::fstatat(dfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const Id id{st.st_dev, st.st_ino};
    present.insert(id);
    auto [it, fresh] = logs_.try_emplace(id);
    if (!fresh && it->second.name != name && !same_first_record(dfd.get(), name, it->second)) {
      // The inode of a log removed since the last pass, recycled for a new one: a new log.
      open_.erase(id);
      it->second = FollowedLog{};
      fresh = true;
    }
    it->second.name = name;
    if (fresh) {
      it->second.dev = id.first;
      it->second.ino = id.second;
    }
  }
  // Every log here is held open as soon as it is seen: pruned or rotated away later, it is
  // still read to its end through this descriptor.
  for (auto& [id, log] : logs_) {
    if (log.done || open_.count(id) != 0 || present.count(id) == 0) continue;
    auto opened = open_log(log);
    if (!opened && opened.error().code == Errc::kRefused) {
      // The inode was recycled for another file: the old log is gone.
      if (!emit_mark(log, ExportItem::Mark::kLost,
                     "the log followed as " + log.name + " was replaced: " + opened.error().message,
                     emit))
        return {};
      log = FollowedLog{log.name, log.dev, log.ino, 0, {}, false};
      opened = open_log(log);
    }
    if (opened) open_.emplace(id, std::move(*opened));
  }
  for (auto it = logs_.begin(); it != logs_.end();) {
    FollowedLog& log = it->second;
    const Id id = it->first;
    auto o = open_.find(id);
    bool this_more = false;
    if (!log.done && o != open_.end() && !read_log(log, o->second, emit, &this_more)) return {};
    if (this_more && more != nullptr) *more = true;
    if (log.done && o != open_.end()) open_.erase(o), o = open_.end();
    if (present.count(id) != 0) {
      ++it;
      continue;
    }
    // Gone from the directory: read to its end while still open, then forgotten.
    if (!log.done && o == open_.end()) {
      if (!emit_mark(log, ExportItem::Mark::kLost,
                     "the log " + log.name + " was removed before it was read to its end: "
                     "records from seq " + std::to_string(log.chain.next_seq) + " on are lost",
                     emit))
        return {};
    } else if (o != open_.end()) {
      if (this_more) {
        ++it;
        continue;
      }
      open_.erase(o);
    }
    it = logs_.erase(it);
  }
  return {};
}

}  // namespace vigil
