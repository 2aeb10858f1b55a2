// What a session changed, from its records alone (supervisor/replay/change_set.h), and the undo
// plan made of it (supervisor/backstop/undo_plan.h): tables of record sequences as the real tools
// leave them (sed -i, rm -rf, mv, a chmod, a file written back as it was) and the change
// set each must give.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>

#include <map>
#include <string>
#include <vector>

#include "supervisor/replay/change_set.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/backstop/undo_plan.h"

namespace vigil::changes {
namespace {

using events::Event;
using events::FsImage;
using events::FsWrite;
using events::ProcExec;

class Log {
 public:
  Log& exec(std::int64_t pid, std::vector<std::string> argv) {
    return add(ProcExec{pid, 1, std::move(argv), "/w"});
  }
  Log& write(std::int64_t pid, const std::string& syscall, const std::string& path,
             std::uint64_t flags = 0, const std::string& from = "", const std::string& result = "0") {
    FsWrite w;
    w.pid = pid;
    w.syscall = syscall;
    w.path = w.resolved = path;
    w.flags = flags;
    w.verdict = Verdict::kAllowed;
    w.reason = "writable root";
    if (syscall.starts_with("rename") || syscall.starts_with("link")) w.from = w.from_resolved = from;
    if (syscall.starts_with("symlink")) w.from = from;
    w.result = result;
    return add(w);
  }
  Log& denied(const std::string& path) {
    FsWrite w;
    w.pid = 2;
    w.syscall = "openat";
    w.path = w.resolved = path;
    w.flags = O_WRONLY | O_CREAT;
    w.verdict = Verdict::kDenied;
    return add(w);
  }
  Log& image(const std::string& phase, const std::string& path, const std::string& type,
             const std::string& sha = "", std::uint32_t mode = 0644, bool stored = true) {
    FsImage i;
    i.phase = phase;
    i.path = path;
    i.type = type;
    i.mode = type == "absent" ? 0 : mode;
    i.size = sha.size();
    i.sha256 = sha;
    i.stored = stored && type == "file";
    if (type == "symlink") i.target = sha;
    return add(i);
  }
  Log& pre(const std::string& path, const std::string& type, const std::string& sha = "",
           std::uint32_t mode = 0644) {
    return image("pre", path, type, sha, mode);
  }
  Log& post(const std::string& path, const std::string& type, const std::string& sha = "",
            std::uint32_t mode = 0644) {
    return image("post", path, type, sha, mode);
  }
  Log& command(std::uint64_t id) {
    cmd_ = id;
    return *this;
  }
  ChangeSet changes() const {
    ChangeSetBuilder b;
    for (const Event& e : events_) b.take(e);
    return b.finish();
  }

 private:
  Log& add(events::Body body) {
    Event e;
    e.seq = events_.size();
    e.t = e.seq * 1000;
    e.session = "s-1";
    e.cmd = cmd_;
    e.body = std::move(body);
    events_.push_back(std::move(e));
    return *this;
  }
  std::vector<Event> events_;
  std::optional<std::uint64_t> cmd_;
};

// One line per change: "net path [from] before => after".
std::vector<std::string> summary(const ChangeSet& cs) {
  std::vector<std::string> out;
  for (const PathChange& c : cs.paths) {
    std::string s = std::string(to_string(c.net)) + " " + c.path;
    if (!c.renamed_from.empty()) s += " from " + c.renamed_from;
    auto side = [](const std::optional<State>& st) {
      if (!st) return std::string("?");
      return st->type + (st->image.sha256.empty() ? "" : ":" + st->image.sha256) +
             (st->has_image() ? ":" + std::to_string(st->image.mode) : "");
    };
    out.push_back(s + " " + side(c.before) + " => " + side(c.after));
  }
  return out;
}

const std::uint64_t kCreateExcl = O_WRONLY | O_CREAT | O_EXCL;
const std::uint64_t kTrunc = O_WRONLY | O_CREAT | O_TRUNC;

struct Case {
  const char* name;
  Log log;
  std::vector<std::string> want;
  std::uint64_t temporary = 0;
  std::uint64_t unchanged = 0;
};

TEST(ChangeSet, NetResultPerPath) {
  std::vector<Case> cases;
  // sed -i: a temporary file renamed over the original (which had its pre image taken).
  cases.push_back({"sed -i",
                   Log()
                       .exec(3, {"sed", "-i", "s/1/10/", "calc.py"})
                       .write(3, "openat", "/w/sedAbc", kCreateExcl)
                       .write(3, "fchmod", "/w/sedAbc")
                       .pre("/w/calc.py", "file", "h1", 0640)
                       .write(3, "renameat2", "/w/calc.py", 0, "/w/sedAbc")
                       .post("/w/calc.py", "file", "h2", 0640)
                       .post("/w/sedAbc", "absent"),
                   {"modified /w/calc.py file:h1:416 => file:h2:416"},
                   1});
  // rm -rf t: files first, then the directories (their pre images carry their modes).
  cases.push_back({"rm -rf",
                   Log()
                       .pre("/w/t/a", "file", "ha")
                       .write(4, "unlinkat", "/w/t/a")
                       .pre("/w/t/s", "dir", "", 0750)
                       .write(4, "unlinkat", "/w/t/s", AT_REMOVEDIR)
                       .pre("/w/t", "dir", "", 0755)
                       .write(4, "unlinkat", "/w/t", AT_REMOVEDIR)
                       .post("/w/t/a", "absent")
                       .post("/w/t/s", "absent")
                       .post("/w/t", "absent"),
                   {"deleted /w/t dir => absent", "deleted /w/t/a file:ha:420 => absent",
                    "deleted /w/t/s dir => absent"}});
  // mv of a directory: no images of directories after the session, the move is the record.
  cases.push_back({"mv dir",
                   Log().write(5, "renameat2", "/w/d2", 0, "/w/d").post("/w/d", "absent"),
                   {"renamed /w/d2 from /w/d existed => dir"}});
  // mv of a file onto a new name: the content it had is what the new name holds.
  cases.push_back({"mv file",
                   Log()
                       .write(5, "rename", "/w/b", 0, "/w/a")
                       .post("/w/a", "absent")
                       .post("/w/b", "file", "ha"),
                   {"renamed /w/b from /w/a file:ha:420 => file:ha:420"}});
  // mv over an existing file: the replaced one is kept as the rename's replaced_before.
  cases.push_back({"mv over",
                   Log()
                       .pre("/w/b", "file", "hb")
                       .write(5, "rename", "/w/b", 0, "/w/a")
                       .post("/w/a", "absent")
                       .post("/w/b", "file", "ha"),
                   {"renamed /w/b from /w/a file:ha:420 => file:ha:420"}});
  cases.push_back({"created",
                   Log().write(2, "openat", "/w/new", kTrunc).post("/w/new", "file", "hn"),
                   {"created /w/new absent => file:hn:420"}});
  cases.push_back({"written back as it was",
                   Log().pre("/w/f", "file", "h1").write(2, "openat", "/w/f", kTrunc).post("/w/f", "file", "h1"),
                   {}, 0, 1});
  cases.push_back({"chmod of a file nothing else touched",
                   Log().write(2, "fchmodat", "/w/f").post("/w/f", "file", "h1", 0755),
                   {"modified /w/f existed => file:h1:493"}});
  // A second command's pre image of a file the first made is not the session's before.
  cases.push_back({"made in one command, changed in the next",
                   Log()
                       .command(1)
                       .write(2, "openat", "/w/x", kTrunc)
                       .post("/w/x", "file", "h1")
                       .command(2)
                       .pre("/w/x", "file", "h1")
                       .write(2, "openat", "/w/x", kTrunc)
                       .post("/w/x", "file", "h2"),
                   {"created /w/x absent => file:h2:420"}});
  cases.push_back({"denied and failed calls change nothing",
                   Log().denied("/w/no").write(2, "unlinkat", "/w/gone", 0, "", "ENOENT"),
                   {}});
  cases.push_back({"mkdir and a file in it",
                   Log().write(2, "mkdir", "/w/m").write(2, "openat", "/w/m/f", kCreateExcl).post("/w/m/f", "file", "hf"),
                   {"created /w/m absent => dir", "created /w/m/f absent => file:hf:420"}});
  cases.push_back({"symlink replaced by a file",
                   Log()
                       .pre("/w/l", "symlink", "target")
                       .write(2, "unlink", "/w/l")
                       .write(2, "openat", "/w/l", kCreateExcl)
                       .post("/w/l", "file", "hl"),
                   {"modified /w/l symlink:target:420 => file:hl:420"}});
  for (const Case& c : cases) {
    const ChangeSet cs = c.log.changes();
    EXPECT_EQ(summary(cs), c.want) << c.name;
    EXPECT_EQ(cs.temporary, c.temporary) << c.name;
    EXPECT_EQ(cs.unchanged, c.unchanged) << c.name;
  }
}

TEST(ChangeSet, StepsNameTheProcessAndTheOtherName) {
  const ChangeSet cs = Log()
                           .exec(3, {"sed", "-i", "s/a b/c/", "f"})
                           .pre("/w/f", "file", "h1")
                           .write(3, "renameat2", "/w/f", 0, "/w/sedX")
                           .post("/w/f", "file", "h2")
                           .changes();
  ASSERT_EQ(cs.paths.size(), 1U);
  ASSERT_EQ(cs.paths[0].steps.size(), 1U);
  const Step& s = cs.paths[0].steps[0];
  EXPECT_EQ(s.pid, 3);
  ASSERT_TRUE(s.argv);
  EXPECT_EQ(*s.argv, "sed -i 's/a b/c/' f");
  EXPECT_EQ(s.action, "rename");
  EXPECT_EQ(s.other, "from /w/sedX");
}

TEST(ChangeSet, StepsPerPathAreBoundedAndCounted) {
  Log log;
  log.pre("/w/f", "file", "h1");
  for (int i = 0; i < 40; ++i) log.write(2, "openat", "/w/f", O_WRONLY | O_APPEND);
  log.post("/w/f", "file", "h2");
  const ChangeSet cs = log.changes();
  ASSERT_EQ(cs.paths.size(), 1U);
  EXPECT_EQ(cs.paths[0].steps.size(), ChangeSetBuilder::kMaxSteps);
  EXPECT_EQ(cs.paths[0].more_steps, 40 - ChangeSetBuilder::kMaxSteps);
}

TEST(ChangeSet, SaysWhenTheLogHasNoCapture) {
  EXPECT_FALSE(Log().write(2, "openat", "/w/f", kTrunc).changes().capture_seen);
  EXPECT_TRUE(Log().post("/w/f", "absent").changes().capture_seen);
}

// ---- the undo plan ----------------------------------------------------------------------

using undo::HostState;
using undo::Op;

undo::LookFn host(std::map<std::string, HostState> m) {
  return [m](const std::string& p) {
    auto it = m.find(p);
    return it == m.end() ? HostState{"absent", "", "", ""} : it->second;
  };
}

std::vector<std::string> plan_text(const std::vector<undo::Step>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    out.push_back(std::string(to_string(s.op)) + " " + s.path + (s.to.empty() ? "" : " -> " + s.to) +
                  (s.conflict.empty() ? "" : " CONFLICT") + (s.cannot.empty() ? "" : " CANNOT"));
  }
  return out;
}

TEST(UndoPlan, NewestFirstAndConflictsNamed) {
  const ChangeSet cs = Log()
                           .pre("/w/t/a", "file", "ha")
                           .write(4, "unlinkat", "/w/t/a")
                           .pre("/w/t", "dir", "", 0700)
                           .write(4, "unlinkat", "/w/t", AT_REMOVEDIR)
                           .write(3, "openat", "/w/sedX", kCreateExcl)
                           .pre("/w/calc", "file", "h1")
                           .write(3, "renameat2", "/w/calc", 0, "/w/sedX")
                           .write(2, "mkdir", "/w/m")
                           .write(2, "openat", "/w/m/f", kCreateExcl)
                           .write(5, "rename", "/w/b", 0, "/w/a")
                           .post("/w/t/a", "absent")
                           .post("/w/t", "absent")
                           .post("/w/calc", "file", "h2")
                           .post("/w/m/f", "file", "hf")
                           .post("/w/a", "absent")
                           .post("/w/b", "file", "hb")
                           .changes();
  const auto plan = undo::plan_undo(cs, {}, host({{"/w/calc", {"file", "h2", "", ""}},
                                                  {"/w/m", {"dir", "", "", ""}},
                                                  {"/w/m/f", {"file", "hf", "", ""}},
                                                  {"/w/b", {"file", "hb", "", ""}}}));
  EXPECT_EQ(plan_text(plan),
            (std::vector<std::string>{"move back /w/b -> /w/a", "remove /w/m/f", "remove directory /w/m",
                                      "restore /w/calc", "make directory /w/t", "restore /w/t/a"}));
  EXPECT_EQ(plan[4].want.image.mode, 0700U) << "the directory's own mode, from its pre image";

  // Changed on the host since: each is a conflict, left alone.
  const auto changed = undo::plan_undo(cs, {}, host({{"/w/calc", {"file", "other", "", ""}},
                                                     {"/w/m/f", {"file", "hf", "", ""}},
                                                     {"/w/m", {"dir", "", "", ""}},
                                                     {"/w/t", {"dir", "", "", ""}},
                                                     {"/w/a", {"file", "x", "", ""}},
                                                     {"/w/b", {"file", "hb", "", ""}}}));
  EXPECT_EQ(plan_text(changed),
            (std::vector<std::string>{"move back /w/b -> /w/a CONFLICT", "remove /w/m/f",
                                      "remove directory /w/m", "restore /w/calc CONFLICT",
                                      "make directory /w/t CONFLICT", "restore /w/t/a"}));
  // Only what is asked for.
  EXPECT_EQ(plan_text(undo::plan_undo(cs, {"/w/t"}, host({}))),
            (std::vector<std::string>{"make directory /w/t", "restore /w/t/a"}));
}

TEST(UndoPlan, ContentNotKeptCannotBeRestored) {
  Log log;
  log.image("pre", "/w/big", "file", "hbig", 0644, /*stored=*/false)
      .write(2, "openat", "/w/big", kTrunc)
      .post("/w/big", "file", "h2");
  const auto plan = undo::plan_undo(log.changes(), {}, host({{"/w/big", {"file", "h2", "", ""}}}));
  EXPECT_EQ(plan_text(plan), std::vector<std::string>{"restore /w/big CANNOT"});
}

// A pre image with no write naming its path (a forged line: vigil-init runs in the
// sandbox) never makes undo write there.
TEST(UndoPlan, AnImageAloneIsNotAChangeToUndo) {
  const ChangeSet cs = Log().pre("/home/u/.bashrc", "file", "evil").post("/home/u/.bashrc", "file", "real").changes();
  EXPECT_EQ(plan_text(undo::plan_undo(cs, {}, host({{"/home/u/.bashrc", {"file", "real", "", ""}}}))),
            std::vector<std::string>{"restore /home/u/.bashrc CANNOT"});
}

TEST(UndoPlan, MismatchNamesWhatIsThereNow) {
  State file{"file", {}};
  file.image.sha256 = "aaaaaaaaaaaaaaaa";
  EXPECT_EQ(undo::mismatch(file, HostState{"file", "aaaaaaaaaaaaaaaa", "", ""}), "");
  EXPECT_NE(undo::mismatch(file, HostState{"file", "bbbbbbbbbbbbbbbb", "", ""}).find("bbbbbbbbbbbb"),
            std::string::npos);
  EXPECT_NE(undo::mismatch(file, HostState{"unreachable", "", "", "a symlink on the way to it"})
                .find("a symlink on the way"),
            std::string::npos);
  EXPECT_EQ(undo::mismatch(State{"absent", {}}, HostState{"absent", "", "", ""}), "");
  EXPECT_NE(undo::mismatch(std::nullopt, HostState{"absent", "", "", ""}), "");
}

}  // namespace
}  // namespace vigil::changes
