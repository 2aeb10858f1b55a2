// The checked undo plan (supervisor/backstop/undo_plan.h, issue 32): plan first, then act.
// Tables of change sets (made by the real ChangeSetBuilder from records as vigil writes
// them), host states and store answers, and what make_plan() must say: every step checked,
// and one step that cannot be done refuses the whole plan, naming the path, why, and a fix.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/backstop/undo_plan.h"
#include "supervisor/replay/change_set.h"

namespace vigil::undo {
namespace {

constexpr std::uint64_t kTrunc = O_WRONLY | O_TRUNC;
constexpr std::uint64_t kCreate = O_WRONLY | O_CREAT | O_EXCL;

// Records as a session leaves them: writes and the images around them.
class Records {
 public:
  Records& write(const std::string& syscall, const std::string& path, std::uint64_t flags = 0) {
    events::FsWrite w;
    w.pid = 2;
    w.syscall = syscall;
    w.path = w.resolved = path;
    w.flags = flags;
    w.verdict = Verdict::kAllowed;
    w.result = "0";
    return add(w);
  }
  Records& image(const std::string& phase, const std::string& path, const std::string& type,
                 const std::string& sha = "") {
    events::FsImage i;
    i.phase = phase;
    i.path = path;
    i.type = type;
    i.mode = 0644;
    i.size = sha.size();
    i.sha256 = sha;
    i.stored = type == "file";
    return add(i);
  }
  changes::ChangeSet changes() const {
    changes::ChangeSetBuilder b;
    for (const events::Event& e : events_) b.take(e);
    return b.finish();
  }

 private:
  Records& add(events::Body body) {
    events::Event e;
    e.seq = events_.size();
    e.session = "s-1";
    e.cmd = 1;
    e.body = std::move(body);
    events_.push_back(std::move(e));
    return *this;
  }
  std::vector<events::Event> events_;
};

// A session that modified /w/a, made /w/new and deleted /w/gone.
changes::ChangeSet three_changes(const std::string& modified = "/w/a") {
  return Records()
      .image("pre", modified, "file", "h-a-before")
      .write("openat", modified, kTrunc)
      .write("openat", "/w/new", kCreate)
      .image("pre", "/w/gone", "file", "h-gone")
      .write("unlinkat", "/w/gone")
      .write("utimensat", "/w/t")
      .image("post", modified, "file", "h-a-after")
      .image("post", "/w/new", "file", "h-new")
      .image("post", "/w/gone", "absent")
      .changes();
}

struct Row {
  const char* name;
  std::map<std::string, HostState> host;  // else as the session left it
  std::map<std::string, std::string> store;  // sha -> why it cannot be read ("" : present)
  bool force = false;
  std::vector<std::string> refused;  // "PATH: words in why"
};

LookFn host_of(const std::map<std::string, HostState>& differ) {
  const std::map<std::string, HostState> left = {{"/w/a", {"file", "h-a-after", "", ""}},
                                                 {"/w/new", {"file", "h-new", "", ""}},
                                                 {"/w/t", {"file", "h-t", "", ""}}};
  return [differ, left](const std::string& p) {
    if (auto it = differ.find(p); it != differ.end()) return it->second;
    if (auto it = left.find(p); it != left.end()) return it->second;
    return HostState{"absent", "", "", ""};
  };
}

TEST(UndoCheckedPlan, OneStepThatCannotBeDoneRefusesTheWholePlan) {
  const std::vector<Row> rows = {
      {"all present", {}, {}, false, {}},
      {"a pre-image missing from the store",
       {},
       {{"h-gone", "not in the store (/s/h-gone)"}},
       false,
       {"/w/gone: pre-image (sha256 h-gone) cannot be read back: not in the store"}},
      {"a pre-image replaced in the store",
       {},
       {{"h-a-before", "the stored copy does not match its hash (/s/h-a-before)"}},
       false,
       {"/w/a: does not match its hash"}},
      {"changed on the host since", {{"/w/a", {"file", "other", "", ""}}}, {}, false, {"/w/a: CONFLICT"}},
      {"changed on the host since, forced", {{"/w/a", {"file", "other", "", ""}}}, {}, true, {}},
      {"a symlink planted where a file is restored",
       {{"/w/gone", {"symlink", "", "/etc/passwd", ""}}},
       {},
       false,
       {"/w/gone: CONFLICT: changed on the host since the session: it is a symlink to /etc/passwd"}},
      {"a symlink planted on the way",
       {{"/w/gone", {"unreachable", "", "", "a symlink on the way to it"}}},
       {},
       true,
       {"/w/gone: cannot be reached: a symlink on the way to it"}},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const CheckFn check = [&r](const events::FsImage& img) {
      auto it = r.store.find(img.sha256);
      return it == r.store.end() ? std::string() : it->second;
    };
    const Plan plan = make_plan(three_changes(), {}, host_of(r.host), check, r.force);
    std::vector<std::string> steps;
    for (const Step& s : plan.steps) steps.push_back(step_text(s));
    // The same steps whatever is refused: the plan says what it would have done.
    EXPECT_EQ(steps, (std::vector<std::string>{"restore /w/gone", "remove /w/new", "restore /w/a"}));
    EXPECT_EQ(plan.times_only, 1U) << "/w/t had only its times set";
    EXPECT_EQ(plan.ok(), r.refused.empty());
    ASSERT_EQ(plan.refused.size(), r.refused.size());
    for (std::size_t i = 0; i < r.refused.size(); ++i) {
      const std::string want = r.refused[i];
      const std::string path = want.substr(0, want.find(": "));
      const std::string words = want.substr(want.find(": ") + 2);
      EXPECT_EQ(plan.refused[i].path, path);
      EXPECT_NE(plan.refused[i].why.find(words), std::string::npos) << plan.refused[i].why;
      EXPECT_FALSE(plan.refused[i].fix.empty()) << "every refusal says what the user can do";
    }
  }
}

// A name with `.` or `..` is never a change (the builder leaves it out of the host
// scope), and were one in a change set, the plan refuses it.
TEST(UndoCheckedPlan, NamesWithDotDotAreRefused) {
  for (const std::string& bad : std::vector<std::string>{"/w/../etc/passwd", "/w/./a", "/w//a"}) {
    SCOPED_TRACE(bad);
    const CheckFn present = [](const events::FsImage&) { return std::string(); };
    const LookFn host = [bad](const std::string& p) {
      return p == bad ? HostState{"file", "h-a-after", "", ""} : HostState{"absent", "", "", ""};
    };
    const changes::ChangeSet built = Records()
                                         .image("pre", bad, "file", "h-a-before")
                                         .write("openat", bad, kTrunc)
                                         .image("post", bad, "file", "h-a-after")
                                         .changes();
    EXPECT_TRUE(built.paths.empty()) << "the builder keeps only normal names";
    changes::ChangeSet cs;
    cs.scope.writable = {"/"};
    changes::PathChange c;
    c.path = bad;
    c.net = changes::Net::kModified;
    c.before = changes::State{"file", {}};
    c.before->image.sha256 = "h-a-before";
    c.before->image.stored = true;
    c.after = changes::State{"file", {}};
    c.after->image.sha256 = "h-a-after";
    c.steps.push_back(changes::Step{});
    c.steps.back().action = "write";
    cs.paths.push_back(c);
    const Plan plan = make_plan(cs, {}, host, present, /*force=*/true);
    ASSERT_EQ(plan.refused.size(), 1U);
    EXPECT_NE(plan.refused[0].why.find("`..`"), std::string::npos) << plan.refused[0].why;
    EXPECT_FALSE(plan.ok());
  }
}

TEST(UndoCheckedPlan, OnlyTheSelectedPathsAreChecked) {
  const CheckFn gone_missing = [](const events::FsImage& img) {
    return img.sha256 == "h-gone" ? std::string("not in the store") : std::string();
  };
  const Plan plan = make_plan(three_changes(), {"/w/a", "/w/new"}, host_of({}), gone_missing, false);
  EXPECT_TRUE(plan.ok());
  EXPECT_EQ(plan.steps.size(), 2U);
}

}  // namespace
}  // namespace vigil::undo
