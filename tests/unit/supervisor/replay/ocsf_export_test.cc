// OCSF records (supervisor/replay/ocsf_export.h): the session's start from its id, and each
// kind's class, activity and verdict.
#include "supervisor/replay/ocsf_export.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace vigil {
namespace {

TEST(OcsfExportTest, SessionStartFromItsId) {
  EXPECT_EQ(session_start_ms("19700101T000001Z-abc"), 1000U);
  EXPECT_EQ(session_start_ms("20261202T004306Z-4a351131bfe9"), 1796172186000U);
  for (const char* bad : {"", "x", "2026120T004306Z-a", "20261202X004306Z-a", "2026120aT004306Z"}) {
    EXPECT_FALSE(session_start_ms(bad)) << bad;
  }
}

TEST(OcsfExportTest, WritesTable) {
  const OcsfContext ctx{1000, "s", "0.1.0"};
  struct Row {
    std::string syscall;
    std::uint64_t flags;
    Verdict verdict;
    int activity, action;
  };
  for (const Row& r : std::vector<Row>{
           {"openat", 0301, Verdict::kAllowed, 1, 1},  // O_CREAT|O_EXCL: create
           {"openat", 01, Verdict::kDenied, 3, 2},
           {"unlinkat", 0, Verdict::kAllowed, 4, 1},
           {"renameat2", 0, Verdict::kAllowed, 5, 1},
           {"fchmodat", 0, Verdict::kDenied, 7, 2},
           {"utimensat", 0, Verdict::kAllowed, 6, 1},
           {"mkdir", 0, Verdict::kEphemeral, 1, 1},
       }) {
    events::Event e;
    e.seq = 7;
    e.t = 5'000'000;
    events::FsWrite w;
    w.pid = 3;
    w.syscall = r.syscall;
    w.flags = r.flags;
    w.path = w.resolved = "/w/f";
    w.verdict = r.verdict;
    w.rule_id = "filesystem.allowWrite[0] \".\"";
    e.body = w;
    const auto line = ocsf_line(e, ctx);
    ASSERT_TRUE(line) << r.syscall;
    const auto j = nlohmann::json::parse(*line);
    EXPECT_EQ(j["class_uid"], 1001) << r.syscall;
    EXPECT_EQ(j["activity_id"], r.activity) << r.syscall;
    EXPECT_EQ(j["type_uid"], 100100 + r.activity) << r.syscall;
    EXPECT_EQ(j["action_id"], r.action) << r.syscall;
    EXPECT_EQ(j["time"], 1005) << r.syscall;
    EXPECT_EQ(j["file"]["path"], "/w/f");
    EXPECT_EQ(j["unmapped"]["rule_id"], "filesystem.allowWrite[0] \".\"");
  }
}

TEST(OcsfExportTest, ConnectionsAndOtherKinds) {
  const OcsfContext ctx{0, "s", "0.1.0"};
  events::Event e;
  events::NetDecision d;
  d.host = "example.org";
  d.port = 443;
  e.body = d;
  auto j = nlohmann::json::parse(*ocsf_line(e, ctx));
  EXPECT_EQ(j["type_uid"], 400105);  // Refuse
  EXPECT_EQ(j["dst_endpoint"]["hostname"], "example.org");
  d.host = "::1";
  d.verdict = events::NetVerdict::kAllowed;
  e.body = d;
  j = nlohmann::json::parse(*ocsf_line(e, ctx));
  EXPECT_EQ(j["type_uid"], 400101);  // Open
  EXPECT_EQ(j["dst_endpoint"]["ip"], "::1");
  e.body = events::IoStdout{"x"};
  EXPECT_FALSE(ocsf_line(e, ctx));
}

// A terminated tunnel's request: HTTP Activity (4002), its method's activity, the URL's
// parts and the status; whether a secret was injected is a flag, never a value.
TEST(OcsfExportTest, ARequestIsHttpActivity) {
  const OcsfContext ctx{0, "s", "0.1.0"};
  events::Event e;
  e.body = events::NetRequest{"POST", "api.example.com", 443, "/v1/x?k=[redacted]", 201, 5, 7,
                              true, events::NetVerdict::kAllowed, "", ""};
  auto j = nlohmann::json::parse(*ocsf_line(e, ctx));
  EXPECT_EQ(j["class_uid"], 4002);
  EXPECT_EQ(j["type_uid"], 400206);  // Post
  EXPECT_EQ(j["http_request"]["http_method"], "POST");
  EXPECT_EQ(j["http_request"]["url"]["hostname"], "api.example.com");
  EXPECT_EQ(j["http_request"]["url"]["path"], "/v1/x?k=[redacted]");
  EXPECT_EQ(j["http_response"]["code"], 201);
  EXPECT_EQ(j["disposition_id"], 1);
  EXPECT_EQ(j["unmapped"]["secret_injected"], true);
  e.body = events::NetRequest{"DELETE", "h", 443, "/", 403, 0, 0, false,
                              events::NetVerdict::kDenied, "vigil.network.requestRules[0]", "no"};
  j = nlohmann::json::parse(*ocsf_line(e, ctx));
  EXPECT_EQ(j["type_uid"], 400202);  // Delete
  EXPECT_EQ(j["disposition_id"], 2);
  EXPECT_EQ(j["message"], "no");
}

// Issue 38.7: actor.process carries the command line, the executable and the parent, as
// OCSF 1.2's Process object defines them, from the session's proc.exec records (by
// command and pid: each command has its own PID namespace).
TEST(OcsfExportTest, ActorProcessCarriesCommandLineExecutableAndParent) {
  OcsfProcesses procs;
  const OcsfContext ctx{0, "s", "0.1.0", &procs};
  auto exec = [](std::int64_t pid, std::int64_t ppid, std::vector<std::string> argv,
                 std::string exe, std::optional<std::uint64_t> cmd) {
    events::Event e;
    events::ProcExec p;
    p.pid = pid;
    p.ppid = ppid;
    p.argv = std::move(argv);
    p.exe = std::move(exe);
    e.body = p;
    e.cmd = cmd;
    return e;
  };
  for (const auto& e : {exec(1, 0, {"/bin/sh", "-c", "npm i"}, "/usr/bin/dash", 1),
                        exec(7, 1, {"npm", "i"}, "/usr/bin/node", 1),
                        exec(7, 1, {"other"}, "/usr/bin/other", 2)}) {
    const auto line = ocsf_line(e, ctx);
    ASSERT_TRUE(line);
    procs.note(e);
  }
  events::Event w;
  events::FsWrite f;
  f.pid = 7;
  f.syscall = "openat";
  f.path = f.resolved = "/w/package-lock.json";
  f.verdict = Verdict::kAllowed;
  w.body = f;
  w.cmd = 1;
  auto j = nlohmann::json::parse(*ocsf_line(w, ctx));
  const auto& actor = j["actor"]["process"];
  EXPECT_EQ(actor["pid"], 7);
  EXPECT_EQ(actor["cmd_line"], "npm i");
  EXPECT_EQ(actor["name"], "npm");
  EXPECT_EQ(actor["file"]["path"], "/usr/bin/node");
  EXPECT_EQ(actor["file"]["name"], "node");
  EXPECT_EQ(actor["parent_process"]["pid"], 1);
  EXPECT_EQ(actor["parent_process"]["cmd_line"], "/bin/sh -c npm i");
  EXPECT_EQ(actor["parent_process"]["file"]["path"], "/usr/bin/dash");
  EXPECT_EQ(actor["parent_process"]["parent_process"], (nlohmann::json{{"pid", 0}}));
  // An exec's actor is its parent, known by then.
  j = nlohmann::json::parse(*ocsf_line(exec(9, 7, {"node", "x.js"}, "/usr/bin/node", 1), ctx));
  EXPECT_EQ(j["actor"]["process"]["cmd_line"], "npm i");
  EXPECT_EQ(j["process"]["parent_process"]["cmd_line"], "npm i");
  // Another command's pid 7 is another process; a pid no exec told of is a pid alone.
  w.cmd = 2;
  j = nlohmann::json::parse(*ocsf_line(w, ctx));
  EXPECT_EQ(j["actor"]["process"]["cmd_line"], "other");
  w.cmd = 3;
  j = nlohmann::json::parse(*ocsf_line(w, ctx));
  EXPECT_EQ(j["actor"]["process"], (nlohmann::json{{"pid", 7}}));
}

}  // namespace
}  // namespace vigil
