// SessionRecord, the session bookkeeping the macOS launcher uses: a real log file in a
// temp dir, a denied write, and what the model, the harness and the log get at the end.
#include "supervisor/orchestrator/session_record.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "supervisor/cli/commands.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

std::string slurp(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  return out;
}

std::string slurp_fd(int fd) {
  ::lseek(fd, 0, SEEK_SET);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/vigil-record-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() {
    ::unlink((path + "/s.jsonl").c_str());
    ::rmdir(path.c_str());
  }
};

// What the CLI's `vigil run` passes.
Result<std::unique_ptr<SessionRecord>> open_for(const RunArgs& args, const std::string& id,
                                                const Policy& policy) {
  return SessionRecord::open({args.log, id, "seatbelt", &policy, args.command, "/", {}, {}});
}

TEST(SessionRecord, LogsStartViolationAnnotationAndEnd) {
  TempDir dir;
  RunArgs args;
  args.command = {"touch", "/etc/x"};
  args.log = dir.path + "/s.jsonl";
  Policy policy;
  const std::string id = new_session_id();
  auto rec = open_for(args, id, policy);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_EQ((*rec)->path(), *args.log);

  events::FsWrite w;
  w.pid = 7;
  w.syscall = "file-write-create";
  w.path = w.resolved = "/etc/x";
  w.verdict = Verdict::kDenied;
  w.reason = "outside the writable roots; add it to filesystem.allowWrite";
  (*rec)->append(events::Source::kObserver, w);
  (*rec)->count("seatbelt.denied_read", 2);

  std::FILE* err = std::tmpfile();
  ASSERT_NE(err, nullptr);
  char vt[] = "/tmp/vigil-violations-XXXXXX";
  UniqueFd vfd(::mkstemp(vt));
  ASSERT_TRUE(vfd.valid());
  ::unlink(vt);
  (*rec)->finish(130, vfd.get(), err);

  const std::string said = slurp(err);
  std::fclose(err);
  EXPECT_EQ(said.rfind("\n<sandbox_violations>\n", 0), 0u) << said;
  EXPECT_NE(said.find("deny create /etc/x (outside the writable roots"),
            std::string::npos)
      << said;
  const std::string json = slurp_fd(vfd.get());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.find('\n'), json.size() - 1) << "one line";
  EXPECT_NE(json.find("\"session\":\"" + id + "\""), std::string::npos) << json;

  auto loaded = load_log(*args.log);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->records.size(), 4u);
  EXPECT_TRUE(loaded->unreadable.empty());
  const auto& start = std::get<events::SessionStart>(loaded->records[0].event.body);
  EXPECT_EQ(start.backend, "seatbelt");
  EXPECT_EQ(start.argv, args.command);
  EXPECT_EQ(loaded->records[1].event.kind(), events::Kind::kFsWrite);
  const auto& note = std::get<events::Annotation>(loaded->records[2].event.body);
  EXPECT_EQ(note.text, said.substr(1));
  const auto& end = std::get<events::SessionEnd>(loaded->records[3].event.body);
  EXPECT_EQ(end.signal, 2);
  EXPECT_FALSE(end.exit_code.has_value());
  EXPECT_EQ(end.counters.at("seatbelt.denied_read"), 2u);
  auto verified = verify_log(*args.log);
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->ok) << verified->why;
  EXPECT_TRUE(verified->complete);
}

TEST(SessionRecord, NothingDeniedMeansNoBlock) {
  TempDir dir;
  RunArgs args;
  args.command = {"true"};
  args.log = dir.path + "/s.jsonl";
  auto rec = open_for(args, new_session_id(), Policy{});
  ASSERT_TRUE(rec.ok());
  std::FILE* err = std::tmpfile();
  (*rec)->finish(0, std::nullopt, err);
  EXPECT_EQ(slurp(err), "");
  std::fclose(err);
  auto loaded = load_log(*args.log);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->records.size(), 2u);
  EXPECT_EQ(std::get<events::SessionEnd>(loaded->records[1].event.body).exit_code, 0);
}

TEST(SessionRecord, AnExistingLogIsNeverAppendedTo) {
  TempDir dir;
  RunArgs args;
  args.command = {"true"};
  args.log = dir.path + "/s.jsonl";
  std::ofstream(*args.log) << "planted\n";
  auto rec = open_for(args, new_session_id(), Policy{});
  EXPECT_FALSE(rec.ok());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// The two-step open `vigil run` uses: the file exists (empty, private, never an existing
// file or a planted symlink) before the sandbox binds it; session.start comes second.
TEST(SessionRecord, ReserveCreatesThePrivateFileThenOpenWritesTheStart) {
  TempDir dir;
  Policy policy;
  const std::string id = new_session_id();
  SessionRecord::Start start{std::string("s.jsonl"), id, "bwrap", &policy, {"true"}, dir.path, {}, {}};
  auto reserved = SessionRecord::reserve(start);
  ASSERT_TRUE(reserved.ok()) << reserved.error().message;
  EXPECT_EQ(reserved->path, dir.path + "/s.jsonl");  // relative: the workspace's
  struct stat st {};
  ASSERT_EQ(::stat(reserved->path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Reserved once: a second reservation of the same path is refused, not shared.
  EXPECT_FALSE(SessionRecord::reserve(start).ok());
  auto rec = SessionRecord::open(std::move(reserved).value(), start);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  ASSERT_TRUE((*rec)->end(0).ok());
  std::ifstream in(dir.path + "/s.jsonl");
  std::string first;
  std::getline(in, first);
  EXPECT_NE(first.find("\"kind\":\"session.start\""), std::string::npos) << first;
  EXPECT_NE(first.find(id), std::string::npos) << first;

  // A symlink planted at the path is never followed.
  ::unlink((dir.path + "/s.jsonl").c_str());
  ASSERT_EQ(::symlink("/tmp/vigil-record-target-never", (dir.path + "/s.jsonl").c_str()), 0);
  EXPECT_FALSE(SessionRecord::reserve(start).ok());
  EXPECT_NE(::access("/tmp/vigil-record-target-never", F_OK), 0);
}

}  // namespace
}  // namespace vigil
