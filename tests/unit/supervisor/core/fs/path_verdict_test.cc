// The resolver as tables: (policy rules, protected paths, query path, access) -> (verdict,
// deciding rule). Rules are built directly as PathRule values (no filesystem): `kind` and
// `first_missing` say what the loader would have found. Plus the plan itself: the notes
// for rules without effect, the pins, and the mount order.
#include "supervisor/core/fs/path_verdict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

constexpr Verdict kA = Verdict::kAllowed;
constexpr Verdict kD = Verdict::kDenied;
constexpr Verdict kE = Verdict::kEphemeral;
constexpr Access kR = Access::kRead;
constexpr Access kW = Access::kWrite;

PathRule rule(const std::string& path, const std::string& origin, PathKind kind = PathKind::kDir,
              const std::string& first_missing = "") {
  PathRule r;
  r.written = path;
  r.literal = path;
  r.resolved = path;
  r.origin = origin;
  r.kind = kind;
  r.first_missing = kind == PathKind::kMissing && first_missing.empty() ? path : first_missing;
  return r;
}

const MandatoryDeny* mandatory(std::string_view relpath) {
  for (const auto& d : mandatory_denies()) {
    if (d.relpath == relpath) return &d;
  }
  ADD_FAILURE() << "no mandatory deny " << relpath;
  return nullptr;
}

ProtectedPath prot(const std::string& path, std::string_view relpath, bool exists = true) {
  const MandatoryDeny* d = mandatory(relpath);
  return ProtectedPath{path, d, exists, d != nullptr ? d->shape : DenyShape::kFile};
}

// A policy and the scan's findings; the plan is built once per row. Built with named
// setters so that a row says which rule list each path goes to.
struct Scenario {
  explicit Scenario(std::string n) : name(std::move(n)) {}
  Scenario& dr(std::vector<PathRule> v) {
    deny_read = std::move(v);
    return *this;
  }
  Scenario& ar(std::vector<PathRule> v) {
    allow_read = std::move(v);
    return *this;
  }
  Scenario& aw(std::vector<PathRule> v) {
    allow_write = std::move(v);
    return *this;
  }
  Scenario& dw(std::vector<PathRule> v) {
    deny_write = std::move(v);
    return *this;
  }
  Scenario& found(std::vector<ProtectedPath> v) {
    protected_paths = std::move(v);
    return *this;
  }
  Scenario& git_config() {
    allow_git_config = true;
    return *this;
  }

  Plan plan() const {
    Policy p;
    p.fs.deny_read = deny_read;
    p.fs.allow_read = allow_read;
    p.fs.allow_write = allow_write;
    p.fs.deny_write = deny_write;
    p.fs.allow_git_config = allow_git_config;
    return build_plan(p, protected_paths);
  }

  std::string name;
  std::vector<PathRule> deny_read, allow_read, allow_write, deny_write;
  std::vector<ProtectedPath> protected_paths;
  bool allow_git_config = false;
};

const std::string kDR0 = "filesystem.denyRead[0]", kDR1 = "filesystem.denyRead[1]";
const std::string kAR0 = "filesystem.allowRead[0]", kAR1 = "filesystem.allowRead[1]";
const std::string kAW0 = "filesystem.allowWrite[0]", kAW1 = "filesystem.allowWrite[1]";
const std::string kDW0 = "filesystem.denyWrite[0]", kDW1 = "filesystem.denyWrite[1]";
const std::string kDef = "default";

// --- the scenarios
// -----------------------------------------------------------------------------------

const Scenario kEmpty = Scenario("no rules");
const Scenario kWritableW = Scenario("allowWrite /w").aw({rule("/w", kAW0)});
const Scenario kWritableA = Scenario("allowWrite /a (prefix trap)").aw({rule("/a", kAW0)});
const Scenario kWritableRoot = Scenario("allowWrite / with denyWrite /etc and /a/b/c")
                                   .aw({rule("/", kAW0)})
                                   .dw({rule("/etc", kDW0), rule("/a/b/c", kDW1, PathKind::kFile)});
const Scenario kHideDir = Scenario("denyRead dir /s").dr({rule("/s", kDR0)});
const Scenario kHideFile =
    Scenario("denyRead file /f/secret.txt").dr({rule("/f/secret.txt", kDR0, PathKind::kFile)});
const Scenario kReopen =
    Scenario("denyRead /h, allowRead /h/pub and /h/pub2/file")
        .dr({rule("/h", kDR0)})
        .ar({rule("/h/pub", kAR0), rule("/h/pub2/file", kAR1, PathKind::kFile)});
const Scenario kReopenSame =
    Scenario("denyRead /h, allowRead /h").dr({rule("/h", kDR0)}).ar({rule("/h", kAR0)});
const Scenario kReopenOutside =
    Scenario("allowRead /o outside denyRead /h").dr({rule("/h", kDR0)}).ar({rule("/o", kAR0)});
const Scenario kReopenMissing = Scenario("allowRead of a missing path inside denyRead /h")
                                    .dr({rule("/h", kDR0)})
                                    .ar({rule("/h/missing", kAR0, PathKind::kMissing)});
const Scenario kWritableInHidden =
    Scenario("denyRead /h, allowWrite /h/w").dr({rule("/h", kDR0)}).aw({rule("/h/w", kAW0)});
const Scenario kHiddenInWritable = Scenario("allowWrite /w, denyRead /w/secret")
                                       .dr({rule("/w/secret", kDR0)})
                                       .aw({rule("/w", kAW0)});
const Scenario kDenyInWritable =
    Scenario("allowWrite /w, denyWrite /w/.env (file) and /w/cfg (dir)")
        .aw({rule("/w", kAW0)})
        .dw({rule("/w/.env", kDW0, PathKind::kFile), rule("/w/cfg", kDW1)});
const Scenario kWritableUnderDeny = Scenario("allowWrite /w, denyWrite /w/d, allowWrite /w/d/sub")
                                        .aw({rule("/w", kAW0), rule("/w/d/sub", kAW1)})
                                        .dw({rule("/w/d", kDW0)});
const Scenario kDenyParentOfWritable =
    Scenario("denyWrite /p, allowWrite /p/w").aw({rule("/p/w", kAW0)}).dw({rule("/p", kDW0)});
const Scenario kDenySameAsWritable =
    Scenario("allowWrite /w, denyWrite /w").aw({rule("/w", kAW0)}).dw({rule("/w", kDW0)});
const Scenario kDenyOutsideWritable =
    Scenario("denyWrite /etc, no writable root").dw({rule("/etc", kDW0)});
const Scenario kMandatory =
    Scenario("allowWrite /w with mandatory denies")
        .aw({rule("/w", kAW0)})
        .found({prot("/w/.git/hooks", ".git/hooks"), prot("/w/.git/config", ".git/config"),
                prot("/w/.bashrc", ".bashrc", /*exists=*/false),
                prot("/w/.vscode", ".vscode", /*exists=*/false),
                prot("/w/sub/.claude/commands", ".claude/commands"),
                prot("/elsewhere/.bashrc", ".bashrc")});
const Scenario kGitConfig =
    Scenario("allowWrite /w, allowGitConfig")
        .aw({rule("/w", kAW0)})
        .found({prot("/w/.git/hooks", ".git/hooks"), prot("/w/.git/config", ".git/config")})
        .git_config();
const Scenario kGitConfigOnly = Scenario("allowWrite /w, allowGitConfig, only .git/config found")
                                    .aw({rule("/w", kAW0)})
                                    .found({prot("/w/.git/config", ".git/config")})
                                    .git_config();
const Scenario kDenyInHidden =
    Scenario("allowWrite /w, denyRead /w/priv, denyWrite and mandatory inside it")
        .dr({rule("/w/priv", kDR0)})
        .aw({rule("/w", kAW0)})
        .dw({rule("/w/priv/.env", kDW0, PathKind::kFile)})
        .found({prot("/w/priv/.git/hooks", ".git/hooks")});
const Scenario kPlaceholder = Scenario("allowWrite /w, denyWrite of missing /w/a/b/c and /w/.npmrc")
                                  .aw({rule("/w", kAW0)})
                                  .dw({rule("/w/a/b/c", kDW0, PathKind::kMissing, "/w/a"),
                                       rule("/w/.npmrc", kDW1, PathKind::kMissing)});
const Scenario kSkipped =
    Scenario("denyRead of a missing path, allowWrite of a file and of a missing dir")
        .dr({rule("/gone", kDR0, PathKind::kMissing)})
        .aw({rule("/w/file.txt", kAW0, PathKind::kFile),
             rule("/nowhere", kAW1, PathKind::kMissing)});
const Scenario kNestedHide =
    Scenario("denyRead /h and /h/inner").dr({rule("/h", kDR0), rule("/h/inner", kDR1)});
const Scenario kNestedWritable = Scenario("allowWrite /w and /w/inner, denyWrite /w/inner/x")
                                     .aw({rule("/w", kAW0), rule("/w/inner", kAW1)})
                                     .dw({rule("/w/inner/x", kDW0)});

struct Row {
  const Scenario* setup;
  std::string path;
  Access access;
  Verdict verdict;
  std::string rule;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // --- defaults: reads open, writes closed
      // -----------------------------------------------------
      {&kEmpty, "/", kR, kA, kDef},
      {&kEmpty, "/", kW, kD, kDef},
      {&kEmpty, "/etc/passwd", kR, kA, kDef},
      {&kEmpty, "/etc/passwd", kW, kD, kDef},
      {&kEmpty, "/home/u/project/x", kW, kD, kDef},
      // --- allowWrite: the root and below
      // -------------------------------------------------------------
      {&kWritableW, "/w", kW, kA, kAW0},
      {&kWritableW, "/w", kR, kA, kAW0},
      {&kWritableW, "/w/x", kW, kA, kAW0},
      {&kWritableW, "/w/x/y/z", kW, kA, kAW0},
      {&kWritableW, "/w/./a//b/", kW, kA, kAW0},        // normalised
      {&kWritableW, "/w/../etc/passwd", kW, kD, kDef},  // ".." leaves the root
      {&kWritableW, "/", kW, kD, kDef},
      {&kWritableW, "/other", kW, kD, kDef},
      {&kWritableW, "/wx", kW, kD, kDef},
      // --- "/ab" is not under "/a"
      // ------------------------------------------------------------------
      {&kWritableA, "/a", kW, kA, kAW0},
      {&kWritableA, "/a/b", kW, kA, kAW0},
      {&kWritableA, "/ab", kW, kD, kDef},
      {&kWritableA, "/ab/c", kW, kD, kDef},
      {&kWritableA, "/a.b", kW, kD, kDef},
      {&kWritableA, "/ab", kR, kA, kDef},
      // --- allowWrite "/"
      // ---------------------------------------------------------------------------
      {&kWritableRoot, "/tmp/x", kW, kA, kAW0},
      {&kWritableRoot, "/", kW, kA, kAW0},
      {&kWritableRoot, "/etc", kW, kD, kDW0},
      {&kWritableRoot, "/etc/passwd", kW, kD, kDW0},
      {&kWritableRoot, "/etc/passwd", kR, kA, kDW0},
      {&kWritableRoot, "/etcx", kW, kA, kAW0},
      {&kWritableRoot, "/a/b/c", kW, kD, kDW1},
      {&kWritableRoot, "/a/b/d", kW, kA, kDW1},  // inside the pin /a/b (see report: pin origin)
      // --- denyRead of a directory hides its subtree
      // --------------------------------------------------
      {&kHideDir, "/s", kR, kD, kDR0},
      {&kHideDir, "/s/key", kR, kD, kDR0},
      {&kHideDir, "/s/a/b", kR, kD, kDR0},
      {&kHideDir, "/s", kW, kE, kDR0},  // a tmpfs: writes vanish with the sandbox
      {&kHideDir, "/s/new", kW, kE, kDR0},
      {&kHideDir, "/sx", kR, kA, kDef},
      {&kHideDir, "/sx", kW, kD, kDef},
      // --- denyRead of a file: /dev/null, read-only
      // --------------------------------------------------
      {&kHideFile, "/f/secret.txt", kR, kD, kDR0},
      {&kHideFile, "/f/secret.txt", kW, kD, kDR0},
      {&kHideFile, "/f/secret.txt/x", kW, kD, kDR0},  // nothing can be created below a file
      {&kHideFile, "/f/secret.txt2", kR, kA, kDef},
      {&kHideFile, "/f", kR, kA, kDef},
      // --- allowRead re-opens inside denyRead
      // ----------------------------------------------------------
      {&kReopen, "/h/pub", kR, kA, kAR0},
      {&kReopen, "/h/pub/x/y", kR, kA, kAR0},
      {&kReopen, "/h/pub", kW, kD, kAR0},  // re-opened read-only
      {&kReopen, "/h/pub/new", kW, kD, kAR0},
      {&kReopen, "/h/pubx", kR, kD, kDR0},
      {&kReopen, "/h/other", kR, kD, kDR0},
      {&kReopen, "/h/other", kW, kE, kDR0},
      {&kReopen, "/h", kR, kD, kDR0},
      {&kReopen, "/h/pub2/file", kR, kA, kAR1},
      {&kReopen, "/h/pub2/other", kR, kD, kDR0},
      {&kReopenSame, "/h/x", kR, kA, kAR0},
      {&kReopenSame, "/h/x", kW, kD, kAR0},
      // --- allowRead outside any denyRead has no effect
      // ------------------------------------------------
      {&kReopenOutside, "/o", kR, kA, kDef},
      {&kReopenOutside, "/o/x", kW, kD, kDef},
      {&kReopenOutside, "/h/x", kR, kD, kDR0},
      // --- allowRead of a missing path: nothing to bind
      // ----------------------------------------------
      {&kReopenMissing, "/h/missing", kR, kD, kDR0},
      // --- allowWrite under denyRead re-opens read and write
      // -----------------------------------------
      {&kWritableInHidden, "/h/w", kR, kA, kAW0},
      {&kWritableInHidden, "/h/w/x", kR, kA, kAW0},
      {&kWritableInHidden, "/h/w/x", kW, kA, kAW0},
      {&kWritableInHidden, "/h/x", kR, kD, kDR0},
      {&kWritableInHidden, "/h/x", kW, kE, kDR0},
      {&kWritableInHidden, "/h/wx", kR, kD, kDR0},
      // --- denyRead inside a writable root
      // ------------------------------------------------------------
      {&kHiddenInWritable, "/w/secret/x", kR, kD, kDR0},
      {&kHiddenInWritable, "/w/secret/x", kW, kE, kDR0},
      {&kHiddenInWritable, "/w/y", kW, kA, kAW0},
      // --- denyWrite inside allowWrite
      // ---------------------------------------------------------------
      {&kDenyInWritable, "/w/.env", kW, kD, kDW0},
      {&kDenyInWritable, "/w/.env", kR, kA, kDW0},
      {&kDenyInWritable, "/w/.envx", kW, kA, kAW0},
      {&kDenyInWritable, "/w/cfg", kW, kD, kDW1},
      {&kDenyInWritable, "/w/cfg/a/b", kW, kD, kDW1},
      {&kDenyInWritable, "/w/cfg/a/b", kR, kA, kDW1},
      {&kDenyInWritable, "/w/src/main.cc", kW, kA, kAW0},
      // --- allowWrite under denyWrite is dropped: deny wins at any depth
      // -------------------------------
      {&kWritableUnderDeny, "/w/d/sub", kW, kD, kDW0},
      {&kWritableUnderDeny, "/w/d/sub/deep/x", kW, kD, kDW0},
      {&kWritableUnderDeny, "/w/d/sub", kR, kA, kDW0},
      {&kWritableUnderDeny, "/w/e", kW, kA, kAW0},
      // --- denyWrite of a parent of allowWrite (srt: deny wins)
      // ---------------------------------------
      {&kDenyParentOfWritable, "/p/w", kW, kD, kDef},
      {&kDenyParentOfWritable, "/p/w/x", kW, kD, kDef},
      {&kDenyParentOfWritable, "/p/w/x", kR, kA, kDef},
      {&kDenySameAsWritable, "/w/x", kW, kD, kDef},
      // --- denyWrite outside any writable root: already read-only, no op
      // ------------------------------
      {&kDenyOutsideWritable, "/etc/x", kW, kD, kDef},
      {&kDenyOutsideWritable, "/etc/x", kR, kA, kDef},
      // --- mandatory protected paths (existing and placeholders)
      // -------------------------------------
      {&kMandatory, "/w/.git/hooks", kW, kD, "mandatory: .git/hooks"},
      {&kMandatory, "/w/.git/hooks/pre-commit", kW, kD, "mandatory: .git/hooks"},
      {&kMandatory, "/w/.git/hooks/pre-commit", kR, kA, "mandatory: .git/hooks"},
      {&kMandatory, "/w/.git/config", kW, kD, "mandatory: .git/config"},
      {&kMandatory, "/w/.git/HEAD", kW, kA, "mandatory: .git/hooks"},  // inside the pin /w/.git
      {&kMandatory, "/w/.git/configx", kW, kA, "mandatory: .git/hooks"},
      {&kMandatory, "/w/.bashrc", kW, kD, "mandatory: .bashrc"},  // placeholder
      {&kMandatory, "/w/.bashrc", kR, kA, "mandatory: .bashrc"},
      {&kMandatory, "/w/.bashrc.bak", kW, kA, kAW0},
      {&kMandatory, "/w/.vscode/tasks.json", kW, kD, "mandatory: .vscode"},  // placeholder dir
      {&kMandatory, "/w/sub/.claude/commands/x.md", kW, kD, "mandatory: .claude/commands"},
      {&kMandatory, "/w/sub/.claude/settings.json", kW, kA,
       "mandatory: .claude/commands"},                                         // pinned
      {&kMandatory, "/w/sub/main.cc", kW, kA, "mandatory: .claude/commands"},  // pinned
      {&kMandatory, "/w/main.cc", kW, kA, kAW0},
      {&kMandatory, "/elsewhere/.bashrc", kW, kD, kDef},  // outside the writable root: no op needed
      // --- allowGitConfig lifts .git/config, not .git/hooks
      // ------------------------------------------
      {&kGitConfig, "/w/.git/config", kW, kA, "mandatory: .git/hooks"},  // inside the pin /w/.git
      {&kGitConfig, "/w/.git/hooks/post-checkout", kW, kD, "mandatory: .git/hooks"},
      {&kGitConfigOnly, "/w/.git/config", kW, kA, kAW0},
      // --- a deny-write inside a hidden region is dropped: ephemeral
      // ---------------------------------
      {&kDenyInHidden, "/w/priv/.env", kW, kE, kDR0},
      {&kDenyInHidden, "/w/priv/.env", kR, kD, kDR0},
      {&kDenyInHidden, "/w/priv/.git/hooks/x", kW, kE, kDR0},
      {&kDenyInHidden, "/w/other", kW, kA, kAW0},
      // --- missing deny targets: a placeholder on the first missing component
      // -------------------------
      {&kPlaceholder, "/w/a", kW, kD, kDW0},
      {&kPlaceholder, "/w/a/b/c", kW, kD, kDW0},
      {&kPlaceholder, "/w/a/x", kW, kD, kDW0},
      {&kPlaceholder, "/w/.npmrc", kW, kD, kDW1},
      {&kPlaceholder, "/w/b", kW, kA, kAW0},
      // --- rules that are skipped
      // --------------------------------------------------------------------
      {&kSkipped, "/gone", kR, kA, kDef},
      {&kSkipped, "/w/file.txt", kW, kD, kDef},
      {&kSkipped, "/nowhere/x", kW, kD, kDef},
      // --- nested rules
      // -------------------------------------------------------------------------------
      {&kNestedHide, "/h/inner/x", kR, kD, kDR0},
      {&kNestedWritable, "/w/inner/x", kW, kD, kDW0},
      {&kNestedWritable, "/w/inner/y", kW, kA, kAW1},
      {&kNestedWritable, "/w/y", kW, kA, kAW0},
  };
  return table;
}

TEST(ResolverTest, DecisionTable) {
  ASSERT_GE(rows().size(), 60u);
  for (const auto& r : rows()) {
    SCOPED_TRACE(r.setup->name + " | " + r.path + (r.access == kR ? " read" : " write"));
    const Plan plan = r.setup->plan();
    const Decision d = decide(plan, r.path, r.access);
    EXPECT_STREQ(to_string(d.verdict), to_string(r.verdict));
    EXPECT_EQ(d.rule, r.rule);
    EXPECT_FALSE(d.reason.empty());
    EXPECT_EQ(d.reason.find('\n'), std::string::npos);
  }
}

// The reasons the model sees for the common denials.
TEST(ResolverTest, Reasons) {
  struct R {
    const Scenario* setup;
    std::string path;
    Access access;
    std::string reason;
  };
  const std::vector<R> rs = {
      {&kEmpty, "/x", kW, "outside the writable roots; add it to filesystem.allowWrite"},
      {&kEmpty, "/x", kR, "reads are open by default"},
      {&kHideDir, "/s/x", kR, "hidden by denyRead"},
      {&kHideDir, "/s/x", kW, "inside a denyRead directory: writes land on a throwaway tmpfs"},
      {&kReopen, "/h/pub", kW,
       "read-only (re-opened by allowRead only); add it to filesystem.allowWrite"},
      {&kDenyInWritable, "/w/.env", kW, "write-denied by denyWrite"},
      {&kMandatory, "/w/.git/hooks/x", kW,
       "protected path: git executes hooks on commit and checkout"},
      {&kWritableW, "/w/x", kW, "writable root"},
  };
  for (const auto& r : rs) {
    SCOPED_TRACE(r.setup->name + " | " + r.path);
    EXPECT_EQ(decide(r.setup->plan(), r.path, r.access).reason, r.reason);
  }
}

// --- notes: every rule that had no effect says why -----------------------------------------------

TEST(ResolverTest, NotesForRulesWithoutEffect) {
  struct N {
    const Scenario* setup;
    std::vector<std::string> notes;  // exactly, in order
  };
  const std::vector<N> ns = {
      {&kEmpty, {}},
      {&kWritableW, {}},
      {&kReopenOutside, {kAR0 + ": no effect, /o is not inside a denyRead region"}},
      {&kReopenMissing, {kAR0 + ": /h/missing does not exist; nothing to re-open"}},
      {&kWritableUnderDeny, {kAW1 + ": no effect, /w/d/sub lies under " + kDW0 + " (deny wins)"}},
      {&kDenyParentOfWritable, {kAW0 + ": no effect, /p/w lies under " + kDW0 + " (deny wins)"}},
      {&kDenyInHidden,
       {kDW0 + ": /w/priv/.env is inside " + kDR0 + "; writes there are ephemeral",
        "mandatory: .git/hooks: /w/priv/.git/hooks is inside " + kDR0 +
            "; writes there are ephemeral"}},
      {&kSkipped,
       {kDR0 + ": /gone does not exist; nothing to hide",
        kAW0 + ": /w/file.txt is not a directory; skipped",
        kAW1 + ": /nowhere does not exist; skipped"}},
      {&kNestedHide, {kDR1 + ": already hidden by " + kDR0}},
  };
  for (const auto& n : ns) {
    SCOPED_TRACE(n.setup->name);
    EXPECT_EQ(n.setup->plan().notes, n.notes);
  }
}

// --- the plan: ops, pins, order
// -------------------------------------------------------------------

struct OpRow {
  OpKind kind;
  std::string path;
  std::string origin;
  bool exists = true;
  DenyShape shape = DenyShape::kDir;
};

void expect_ops(const Plan& plan, const std::vector<OpRow>& want) {
  ASSERT_EQ(plan.ops.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i) + ": " + to_string(want[i].kind) + " " + want[i].path);
    EXPECT_STREQ(to_string(plan.ops[i].kind), to_string(want[i].kind));
    EXPECT_EQ(plan.ops[i].path, want[i].path);
    EXPECT_EQ(plan.ops[i].origin, want[i].origin);
    EXPECT_EQ(plan.ops[i].exists, want[i].exists);
    EXPECT_EQ(plan.ops[i].shape, want[i].shape);
  }
}

TEST(ResolverTest, PlanOpsForMandatoryDenies) {
  expect_ops(
      kMandatory.plan(),
      {
          {OpKind::kWritable, "/w", kAW0},
          {OpKind::kPin, "/w/.git", "mandatory: .git/hooks"},
          {OpKind::kPin, "/w/sub", "mandatory: .claude/commands"},
          {OpKind::kDenyWrite, "/w/.bashrc", "mandatory: .bashrc", false, DenyShape::kFile},
          {OpKind::kDenyWrite, "/w/.vscode", "mandatory: .vscode", false, DenyShape::kDir},
          {OpKind::kPin, "/w/sub/.claude", "mandatory: .claude/commands"},
          {OpKind::kDenyWrite, "/w/.git/hooks", "mandatory: .git/hooks", true, DenyShape::kDir},
          {OpKind::kDenyWrite, "/w/.git/config", "mandatory: .git/config", true, DenyShape::kFile},
          {OpKind::kDenyWrite, "/w/sub/.claude/commands", "mandatory: .claude/commands", true,
           DenyShape::kDir},
      });
}

TEST(ResolverTest, PlanOpsForPlaceholdersAndHides) {
  expect_ops(
      kPlaceholder.plan(),
      {
          {OpKind::kWritable, "/w", kAW0},
          {OpKind::kDenyWrite, "/w/a", kDW0, false, DenyShape::kDir},  // a missing parent: dir
          {OpKind::kDenyWrite, "/w/.npmrc", kDW1, false, DenyShape::kFile},
      });
  expect_ops(kHideFile.plan(), {{OpKind::kHide, "/f/secret.txt", kDR0, true, DenyShape::kFile}});
  expect_ops(kReopen.plan(),
             {
                 {OpKind::kHide, "/h", kDR0},
                 {OpKind::kReopenRead, "/h/pub", kAR0},
                 {OpKind::kReopenRead, "/h/pub2/file", kAR1, true, DenyShape::kFile},
             });
}

// Every directory strictly between a writable root and a write-denied path is pinned;
// nothing at or above the root is.
TEST(ResolverTest, PinsBetweenRootAndDeny) {
  struct P {
    std::string name;
    std::vector<PathRule> allow_write, deny_write;
    std::vector<std::string> pins;  // in plan order
  };
  const std::vector<P> ps = {
      {"deep deny",
       {rule("/r/w", kAW0)},
       {rule("/r/w/a/b/c/d", kDW0, PathKind::kFile)},
       {"/r/w/a", "/r/w/a/b", "/r/w/a/b/c"}},
      {"direct child: no pin", {rule("/r/w", kAW0)}, {rule("/r/w/d", kDW0)}, {}},
      {"shared ancestors pinned once",
       {rule("/w", kAW0)},
       {rule("/w/a/b/x", kDW0, PathKind::kFile), rule("/w/a/c/y", kDW1, PathKind::kFile)},
       {"/w/a", "/w/a/b", "/w/a/c"}},
      {"root /", {rule("/", kAW0)}, {rule("/a/b/c", kDW0, PathKind::kFile)}, {"/a", "/a/b"}},
      {"nested root: pins start below the deepest root",
       {rule("/w", kAW0), rule("/w/x/y", kAW1)},
       {rule("/w/x/y/z/f", kDW0, PathKind::kFile)},
       {"/w/x/y/z"}},
      {"deny outside any root: no pins",
       {rule("/w", kAW0)},
       {rule("/v/a/b", kDW0, PathKind::kFile)},
       {}},
      {"placeholder: pins up to the placeholder",
       {rule("/w", kAW0)},
       {rule("/w/a/b/c/d", kDW0, PathKind::kMissing, "/w/a/b")},
       {"/w/a"}},
  };
  for (const auto& p : ps) {
    SCOPED_TRACE(p.name);
    Policy pol;
    pol.fs.allow_write = p.allow_write;
    pol.fs.deny_write = p.deny_write;
    const Plan plan = build_plan(pol, {});
    std::vector<std::string> pins;
    for (const auto& op : plan.ops) {
      if (op.kind != OpKind::kPin) continue;
      pins.push_back(op.path);
      EXPECT_EQ(op.shape, DenyShape::kDir);
      EXPECT_TRUE(op.exists);
      // A pin is strictly below a writable root and strictly above a deny.
      bool below_root = false, above_deny = false;
      for (const auto& o : plan.ops) {
        if (o.kind == OpKind::kWritable && o.path != op.path && path_is_under(op.path, o.path))
          below_root = true;
        if (o.kind == OpKind::kDenyWrite && o.path != op.path && path_is_under(o.path, op.path))
          above_deny = true;
      }
      EXPECT_TRUE(below_root) << op.path;
      EXPECT_TRUE(above_deny) << op.path;
    }
    EXPECT_EQ(pins, p.pins);
  }
}

// Parents before children; at equal depth hide < reopen < writable < pin < deny. The rules
// are listed children-first so that the input order cannot pass for the sort.
TEST(ResolverTest, PlanOrder) {
  Policy p;
  p.fs.deny_read = {rule("/w/h", kDR0), rule("/d", kDR1)};
  p.fs.allow_read = {rule("/d", kAR0)};
  p.fs.allow_write = {rule("/w/h/k", kAW0), rule("/v/u", kAW1),
                      rule("/w", "filesystem.allowWrite[2]")};
  p.fs.deny_write = {rule("/w/x/y", kDW0, PathKind::kFile), rule("/w/z", kDW1)};
  const Plan plan = build_plan(p, {});
  expect_ops(plan, {
                       {OpKind::kHide, "/d", kDR1},
                       {OpKind::kReopenRead, "/d", kAR0},
                       {OpKind::kWritable, "/w", "filesystem.allowWrite[2]"},
                       {OpKind::kHide, "/w/h", kDR0},
                       {OpKind::kWritable, "/v/u", kAW1},
                       {OpKind::kPin, "/w/x", kDW0},
                       {OpKind::kDenyWrite, "/w/z", kDW1},
                       {OpKind::kWritable, "/w/h/k", kAW0},
                       {OpKind::kDenyWrite, "/w/x/y", kDW0, true, DenyShape::kFile},
                   });
  EXPECT_TRUE(plan.notes.empty()) << plan.notes.front();
}

int depth(const std::string& p) {
  return p == "/" ? 0 : static_cast<int>(std::count(p.begin(), p.end(), '/'));
}

// The order invariant over every setup of the decision table.
TEST(ResolverTest, PlanOrderInvariantOverAllSetups) {
  std::vector<const Scenario*> scenarios;
  for (const auto& r : rows()) {
    if (std::find(scenarios.begin(), scenarios.end(), r.setup) == scenarios.end())
      scenarios.push_back(r.setup);
  }
  for (const Scenario* s : scenarios) {
    SCOPED_TRACE(s->name);
    const Plan plan = s->plan();
    for (std::size_t i = 0; i + 1 < plan.ops.size(); ++i) {
      const PlanOp& a = plan.ops[i];
      const PlanOp& b = plan.ops[i + 1];
      SCOPED_TRACE(a.path + " then " + b.path);
      EXPECT_LE(depth(a.path), depth(b.path));
      if (depth(a.path) == depth(b.path)) {
        EXPECT_LE(static_cast<int>(a.kind), static_cast<int>(b.kind));
      }
      EXPECT_EQ(a.path, lexically_normal(a.path));
    }
    // A child is never mounted before its parent.
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      for (std::size_t j = i + 1; j < plan.ops.size(); ++j) {
        EXPECT_FALSE(plan.ops[i].path != plan.ops[j].path &&
                     path_is_under(plan.ops[i].path, plan.ops[j].path))
            << plan.ops[i].path << " before its parent " << plan.ops[j].path;
      }
    }
  }
}

TEST(ResolverTest, ToString) {
  EXPECT_STREQ(to_string(Verdict::kAllowed), "allowed");
  EXPECT_STREQ(to_string(Verdict::kDenied), "denied");
  EXPECT_STREQ(to_string(Verdict::kEphemeral), "ephemeral");
  EXPECT_STREQ(to_string(OpKind::kHide), "hide");
  EXPECT_STREQ(to_string(OpKind::kReopenRead), "reopen-read");
  EXPECT_STREQ(to_string(OpKind::kWritable), "writable");
  EXPECT_STREQ(to_string(OpKind::kPin), "pin");
  EXPECT_STREQ(to_string(OpKind::kDenyWrite), "deny-write");
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// A denyWrite target whose path is blocked by an existing FILE (".claude" is a file, the
// rule names ".claude/commands"): the file itself is capped read-only (exists=true), so
// the command cannot replace it with a directory; no placeholder is planned inside it.
TEST(ResolverBlockedByFile, DenyWriteBelowAFileCapsTheFile) {
  Policy p;
  p.fs.allow_write = {rule("/w", "filesystem.allowWrite[0]")};
  PathRule d =
      rule("/w/.claude/commands", "filesystem.denyWrite[0]", PathKind::kMissing, "/w/.claude");
  d.first_missing_exists = true;
  p.fs.deny_write = {d};
  const Plan plan = build_plan(p, {});
  const PlanOp* cap = nullptr;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kDenyWrite) cap = &op;
  }
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->path, "/w/.claude");
  EXPECT_TRUE(cap->exists)
      << "an existing file is bound onto itself, not replaced by a placeholder";
  EXPECT_EQ(decide(plan, "/w/.claude", Access::kWrite).verdict, Verdict::kDenied);
  EXPECT_EQ(decide(plan, "/w/.claude/commands/x", Access::kWrite).verdict, Verdict::kDenied);
  EXPECT_EQ(decide(plan, "/w/other", Access::kWrite).verdict, Verdict::kAllowed);
}

// A missing denyWrite target refused at the call (issue 19, item 6): no op on its missing
// parent and no pins (nothing there to mount), but decide() still denies the name itself
// and allows everything beside it, so explain and the hints say what vigil-init does.
TEST(ResolverAtCall, AMissingDenyWriteRefusedAtTheCallLeavesItsParentWritable) {
  Policy p;
  p.fs.allow_write = {rule("/w", "filesystem.allowWrite[0]")};
  PathRule d = rule("/w/config/production.json", "filesystem.denyWrite[0]", PathKind::kMissing,
                    "/w/config");
  d.refuse_at_call = true;
  p.fs.deny_write = {d};
  const Plan plan = build_plan(p, {});
  std::size_t at_call = 0;
  for (const auto& op : plan.ops) {
    EXPECT_NE(op.path, "/w/config") << "a mount on the missing parent";
    EXPECT_NE(op.kind, OpKind::kPin) << op.path;
    if (op.at_call) {
      ++at_call;
      EXPECT_EQ(op.path, "/w/config/production.json");
      EXPECT_FALSE(op.exists);
    }
  }
  EXPECT_EQ(at_call, 1U);
  EXPECT_EQ(decide(plan, "/w/config/production.json", kW).verdict, kD);
  EXPECT_EQ(decide(plan, "/w/config/production.json", kW).rule, "filesystem.denyWrite[0]");
  EXPECT_EQ(decide(plan, "/w/config", kW).verdict, kA);
  EXPECT_EQ(decide(plan, "/w/config/dev.json", kW).verdict, kA);
  // Without the gatekeeper: the placeholder on the first missing component, as before.
  d.refuse_at_call = false;
  p.fs.deny_write = {d};
  const Plan old = build_plan(p, {});
  EXPECT_EQ(decide(old, "/w/config/dev.json", kW).verdict, kD);
}

}  // namespace
}  // namespace vigil
