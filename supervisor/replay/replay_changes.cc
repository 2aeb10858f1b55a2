#include "supervisor/launch/session_base.h"
#include "supervisor/replay/replay_changes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>
#include <unordered_map>

#include "supervisor/core/events/content_pack.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/replay/line_diff.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using events::escape_for_terminal;

std::string octal(std::uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::string step_line(const changes::Step& s) {
  std::string l = seconds(s.t) + "  pid " + std::to_string(s.pid) +
                  (s.cmd ? " [command " + std::to_string(*s.cmd) + "]" : "") + "  " + s.action +
                  (s.other.empty() ? "" : " " + s.other) + " [" + s.syscall + "]";
  if (s.argv) l += "  " + *s.argv;
  return l;
}

// A side of a text diff: its bytes, or why there are none.
struct Side {
  bool text = false;  // absent or a readable text file
  std::string bytes;
  std::string label;  // "/dev/null" or the path
  std::string why;    // not readable
};

Side side_of(const std::optional<changes::State>& s, const std::string& path, const ContentFn& read) {
  Side out;
  out.label = path;
  if (s && s->type == "absent") {
    out.text = true;
    out.label = "/dev/null";
    return out;
  }
  if (!s || s->type != "file") return out;
  Content c = read(s->image);
  if (!c.ok) {
    out.why = c.why;
    return out;
  }
  out.bytes = std::move(c.bytes);
  out.text = looks_like_text(out.bytes);
  return out;
}

std::string size_hash(const std::optional<changes::State>& s) {
  if (!s || s->type == "absent") return "absent";
  if (s->type != "file") return s->type;
  return std::to_string(s->image.size) + " bytes, sha256 " +
         (s->image.sha256.empty() ? std::string("unknown") : s->image.sha256);
}

}  // namespace

ContentFn store_reader(std::string dir) {
  return stored_content_reader(dir.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(dir)},
                               kMaxDiffBytes);
}

ContentFn store_reader(std::vector<std::string> dirs) {
  return stored_content_reader(std::move(dirs), kMaxDiffBytes);
}

Result<changes::ChangeSet> change_set_of(const Feed& feed) {
  changes::ChangeSetBuilder b(session_base_dir());
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    b.take(r.event);
    return true;
  }));
  return b.finish();
}

std::string describe_state(const changes::State& s) {
  if (s.type == "absent") return "absent";
  if (s.type == "existed") return "existed (not recorded)";
  const events::FsImage& i = s.image;
  // A directory known from mkdir/rmdir/rename only has no image (no mode, no owner).
  if (s.type == "dir" && i.phase.empty()) return "directory";
  std::string d = s.type == "other" ? std::string("not a file")
                  : s.type == "dir"  ? std::string("directory")
                                     : s.type;
  if (s.type == "file") d += " " + std::to_string(i.size) + " bytes";
  if (s.type == "symlink") d += " -> " + i.target;
  d += ", mode " + octal(i.mode) + ", owner " + std::to_string(i.uid) + ":" + std::to_string(i.gid);
  if (!i.sha256.empty()) d += ", sha256 " + i.sha256;
  if (!i.note.empty()) d += " (" + i.note + ")";
  return d;
}

void print_changes(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                   const Out& out) {
  if (!cs.capture_seen) {
    out("(this log has no change capture (fs.image records): vigil.capture was off, or the log "
        "is older; what is below comes from the write records alone)\n");
  }
  std::size_t n[4] = {0, 0, 0, 0};
  for (const changes::PathChange& c : cs.paths) {
    if (!selected(c, only)) continue;
    ++n[static_cast<int>(c.net)];
    std::string s = std::string(to_string(c.net)) + " " +
                    (c.net == changes::Net::kRenamed
                         ? escape_for_terminal(c.renamed_from) + " -> " + escape_for_terminal(c.path)
                         : escape_for_terminal(c.path));
    if (c.replaced) s += " (over an existing file)";
    if (c.content_changed_after_rename) s += " (and changed after the move)";
    if (c.best_effort) s += " [best-effort: no gatekeeper on this kernel]";
    s += "\n  before  " + (c.before ? escape_for_terminal(describe_state(*c.before)) : "unknown") +
         "\n  after   " + (c.after ? escape_for_terminal(describe_state(*c.after)) : "unknown") +
         "\n";
    if (!c.steps.empty()) {
      const changes::Step& last = c.steps.back();
      s += "  by      pid " + std::to_string(last.pid) +
           (last.cmd ? " [command " + std::to_string(*last.cmd) + "]" : "") + " " +
           (last.argv ? escape_for_terminal(*last.argv) : std::string("(no exec recorded)")) + "\n";
    }
    for (const changes::Step& st : c.steps) s += "  step    " + escape_for_terminal(step_line(st)) + "\n";
    if (c.more_steps > 0) s += "  ...     " + std::to_string(c.more_steps) + " more step(s)\n";
    out(s);
  }
  out(std::to_string(n[0] + n[1] + n[2] + n[3]) + " path(s) changed: " + std::to_string(n[0]) +
      " created, " + std::to_string(n[1]) + " modified, " + std::to_string(n[2]) + " deleted, " +
      std::to_string(n[3]) + " renamed; " + std::to_string(cs.temporary) +
      " made and removed again, " + std::to_string(cs.unchanged) + " written back unchanged\n");
  if (cs.unlisted_paths > 0) {
    out("(" + std::to_string(cs.unlisted_paths) + " record(s) name paths past the first " +
        std::to_string(changes::ChangeSetBuilder::kMaxPaths) +
        ", which are not followed: vigil replay --writes lists them)\n");
  }
  if (cs.sandbox_only > 0) {
    out("(" + std::to_string(cs.sandbox_only) +
        " path(s) in the sandbox's own trees (its /dev, /proc, temp dir) are not the host's "
        "and not listed: vigil replay --writes lists them)\n");
  }
}

ChangeDiff diff_of(const changes::PathChange& c, const ContentFn& read) {
  ChangeDiff d;
  const std::string old_name = c.renamed_from.empty() ? c.path : c.renamed_from;
  const auto& b = c.before;
  const auto& a = c.after;
  auto type_of = [](const std::optional<changes::State>& s) {
    return s ? s->type : std::string("unknown");
  };
  std::string meta;
  if (b && a && b->has_image() && a->has_image()) {
    if (b->image.mode != a->image.mode)
      meta += "mode " + octal(b->image.mode) + " -> " + octal(a->image.mode) + "; ";
    if (b->image.uid != a->image.uid || b->image.gid != a->image.gid) {
      meta += "owner " + std::to_string(b->image.uid) + ":" + std::to_string(b->image.gid) +
              " -> " + std::to_string(a->image.uid) + ":" + std::to_string(a->image.gid) + "; ";
    }
  }
  if (type_of(b) == "symlink" || type_of(a) == "symlink") {
    d.summary = meta + "symlink: " + (type_of(b) == "symlink" ? "-> " + b->image.target : type_of(b)) +
                " => " + (type_of(a) == "symlink" ? "-> " + a->image.target : type_of(a));
    return d;
  }
  const bool file_or_absent_b = type_of(b) == "file" || type_of(b) == "absent";
  const bool file_or_absent_a = type_of(a) == "file" || type_of(a) == "absent";
  if (!file_or_absent_b || !file_or_absent_a) {
    d.summary = meta + type_of(b) + " => " + type_of(a);
    return d;
  }
  const Side sb = side_of(b, old_name, read);
  const Side sa = side_of(a, c.path, read);
  if (!sb.why.empty() || !sa.why.empty()) {
    d.summary = meta + (sb.why.empty() ? "" : "before " + sb.why) +
                (sb.why.empty() || sa.why.empty() ? "" : "; ") +
                (sa.why.empty() ? "" : "after " + sa.why) + "; " + size_hash(b) + " => " +
                size_hash(a);
    return d;
  }
  if (!sb.text || !sa.text) {
    d.summary = meta + "binary, " + std::to_string(b->type == "file" ? b->image.size : 0) +
                " -> " + std::to_string(a->type == "file" ? a->image.size : 0) +
                " bytes, sha256 " + (b->type == "file" ? b->image.sha256 : "(absent)") + " -> " +
                (a->type == "file" ? a->image.sha256 : "(absent)");
    return d;
  }
  LineDiff ld = unified_diff(sb.bytes, sa.bytes);
  d.shortened = ld.shortened;
  if (ld.lines.empty()) {
    d.summary = meta.empty() ? "content unchanged" : meta + "content unchanged";
    return d;
  }
  if (!meta.empty()) d.summary = meta.substr(0, meta.size() - 2);
  d.lines.push_back("--- " + sb.label);
  d.lines.push_back("+++ " + sa.label);
  for (auto& l : ld.lines) d.lines.push_back(std::move(l));
  return d;
}

void print_diffs(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                 const ContentFn& read, const Out& out) {
  std::size_t shown = 0;
  for (const changes::PathChange& c : cs.paths) {
    if (!selected(c, only)) continue;
    ++shown;
    const ChangeDiff d = diff_of(c, read);
    std::string s = "=== " + std::string(to_string(c.net)) + " " +
                    (c.renamed_from.empty() ? "" : escape_for_terminal(c.renamed_from) + " -> ") +
                    escape_for_terminal(c.path) + "\n";
    if (!d.summary.empty()) s += escape_for_terminal(d.summary) + "\n";
    if (d.shortened) s += "(over 2000 lines differ: the middle is shown replaced whole)\n";
    for (const std::string& l : d.lines)
      s += (l == kNoNewlineMarker ? l : escape_for_terminal(l)) + "\n";
    out(s);
  }
  if (shown == 0) out("(no changes" + std::string(only.empty() ? "" : " under the paths given") + ")\n");
}

}  // namespace vigil::replay
