// `vigil logs prune --older-than DURATION` (issue 19, item 5): removes the session logs vigil
// wrote and last wrote more than DURATION ago from the default log directory (or --dir),
// lists them first with --dry-run, and leaves everything else: other names, a symlink (and
// what it points at), a directory, a file with a log's name that vigil did not write.
// A squatted or odd directory is refused with a message naming the cause.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/other_user.h"

namespace vigil::test {
namespace {

// The names in `dir`, sorted (vigil's log names sort by start time).
std::vector<std::string> logs_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Sets the path's times (not a symlink's target) to `days` ago.
void age(const std::string& path, int days) {
  const timespec then{std::time(nullptr) - static_cast<std::time_t>(days) * 86400, 0};
  const timespec times[2] = {then, then};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

TEST(LogsPrune, RemovesOnlyTheOldLogsVigilWrote) {
  TempDir ws, state, outside;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  for (int i = 0; i < 3; ++i) {
    const Outcome o = run_vigil({"run", "--", "true"}, ws.path(), 60, env);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  const std::string dir = state / "vigil/sessions";
  const std::vector<std::string> logs = logs_in(dir);
  ASSERT_EQ(logs.size(), 3U);
  const std::string& fresh = logs[2];
  age(dir + "/" + logs[0], 30);
  age(dir + "/" + logs[1], 8);

  // Old, but not vigil's: another file, a log's name over text vigil did not write, a log
  // without its session.start, a directory, a symlink to a log outside.
  write_file(dir + "/notes.jsonl", "mine\n");
  write_file(dir + "/20200101T000000Z-ab.jsonl", "not a log\n");
  const std::string whole = read_file(dir + "/" + fresh);
  write_file(dir + "/20200101T000000Z-cd.jsonl", whole.substr(whole.find('\n') + 1));
  make_dirs(dir + "/20200101T000000Z-ef.jsonl");
  write_file(outside / "target.jsonl", read_file(dir + "/" + fresh));
  ASSERT_EQ(::symlink((outside / "target.jsonl").c_str(),
                      (dir + "/" + "20200101T000000Z-01.jsonl").c_str()),
            0);
  for (const char* n : {"notes.jsonl", "20200101T000000Z-ab.jsonl", "20200101T000000Z-cd.jsonl",
                        "20200101T000000Z-ef.jsonl", "20200101T000000Z-01.jsonl"}) {
    age(dir + "/" + n, 400);
  }
  age(outside / "target.jsonl", 400);
  std::vector<std::string> before = logs_in(dir);

  // --dry-run names the two and removes nothing.
  const Outcome dry =
      run_vigil({"logs", "prune", "--older-than", "7d", "--dry-run"}, ws.path(), 60, env);
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("would remove " + dir + "/" + logs[0]), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("would remove " + dir + "/" + logs[1]), std::string::npos) << dry.out;
  EXPECT_LT(dry.out.find(logs[0]), dry.out.find(logs[1])) << "oldest first: " << dry.out;
  EXPECT_NE(dry.out.find("would remove 2 session logs last written more than 7d ago from " + dir),
            std::string::npos)
      << dry.out;
  EXPECT_EQ(logs_in(dir), before);
  // What has a log's name but is not vigil's says why it stays.
  EXPECT_NE(dry.err.find("left " + dir + "/20200101T000000Z-ab.jsonl"), std::string::npos)
      << dry.err;
  EXPECT_NE(dry.err.find("left " + dir + "/20200101T000000Z-cd.jsonl"), std::string::npos)
      << dry.err;
  EXPECT_NE(dry.err.find("left " + dir + "/notes.jsonl"), std::string::npos) << dry.err;

  // A shorter age reaches the 8-day log but not the fresh one; 10d only the 30-day one.
  const Outcome ten = run_vigil({"logs", "prune", "--older-than", "10d"}, ws.path(), 60, env);
  ASSERT_EQ(ten.exit_code, 0) << ten.out << ten.err;
  EXPECT_NE(ten.out.find("removed 1 session logs"), std::string::npos) << ten.out;
  EXPECT_FALSE(exists(dir + "/" + logs[0]));
  EXPECT_TRUE(exists(dir + "/" + logs[1]));

  const Outcome o = run_vigil({"logs", "prune", "--older-than", "12h"}, ws.path(), 60, env);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("removed " + dir + "/" + logs[1]), std::string::npos) << o.out;
  std::erase(before, logs[0]);
  std::erase(before, logs[1]);
  EXPECT_EQ(logs_in(dir), before);
  EXPECT_EQ(read_file(dir + "/notes.jsonl"), "mine\n");
  EXPECT_TRUE(exists(outside / "target.jsonl"));
  // The session that kept writing stays, whole.
  const Outcome v = run_vigil({"replay", "--verify", dir + "/" + fresh}, ws.path(), 60, env);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;

  // --dir: the same, where --log files went (named as the user chose).
  TempDir mine;
  const std::string given = mine / "run1.jsonl", newer = mine / "run2.jsonl";
  ASSERT_EQ(run_vigil({"run", "--log", given, "--", "true"}, ws.path(), 60, env).exit_code, 0);
  ASSERT_EQ(run_vigil({"run", "--log", newer, "--", "true"}, ws.path(), 60, env).exit_code, 0);
  age(given, 2);
  write_file(mine / "empty.jsonl", "");  // empty: nothing says it is a log
  age(mine / "empty.jsonl", 2);
  const Outcome d =
      run_vigil({"logs", "prune", "--older-than", "1d", "--dir", mine.path()}, ws.path(), 60, env);
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_FALSE(exists(given)) << d.out;
  EXPECT_TRUE(exists(newer)) << d.out;
  EXPECT_TRUE(exists(mine / "empty.jsonl")) << d.out;
}

// An agent session keeps one change store per command (<id>-<N>): prune removes them all
// with the log and counts all their bytes.
TEST(LogsPrune, EveryStoreOfASessionGoesWithItsLogAndIsCounted) {
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  ASSERT_EQ(run_vigil({"run", "--", "true"}, ws.path(), 60, env).exit_code, 0);
  const std::string dir = state / "vigil/sessions";
  const std::vector<std::string> logs = logs_in(dir);
  ASSERT_EQ(logs.size(), 1U);
  const std::string id = logs[0].substr(0, logs[0].size() - 6);  // less ".jsonl"
  const std::string captures = state / "vigil/captures";
  make_dirs(captures + "/" + id);
  write_file(captures + "/" + id + "/a", std::string(100, 'a'));
  for (const char* n : {"-1", "-2"}) {
    make_dirs(captures + "/" + id + n);
    write_file(captures + "/" + id + n + "/b", std::string(1000, 'b'));
  }
  make_dirs(captures + "/" + id + "-x");  // not one of its stores: stays
  age(dir + "/" + logs[0], 30);
  const std::uint64_t log_bytes = std::filesystem::file_size(dir + "/" + logs[0]);
  const Outcome o = run_vigil({"logs", "prune", "--older-than", "7d"}, ws.path(), 60, env);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("and 1 change capture store(s) (" + std::to_string(log_bytes + 2100) + " bytes)"),
            std::string::npos) << o.out;
  for (const char* n : {"", "-1", "-2"}) EXPECT_FALSE(exists(captures + "/" + id + n)) << n;
  EXPECT_TRUE(exists(captures + "/" + id + "-x"));
}

TEST(LogsPrune, ABadAgeIsAUsageError) {
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  for (const char* bad : {"7", "0d", "1.5d", "7days", "-1d"}) {
    const Outcome o = run_vigil({"logs", "prune", "--older-than", bad}, ws.path(), 60, env);
    EXPECT_EQ(o.exit_code, 2) << bad << o.err;
    EXPECT_NE(o.err.find("e.g. 7d or 12h"), std::string::npos) << o.err;
  }
  const Outcome none = run_vigil({"logs", "prune"}, ws.path(), 60, env);
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("--older-than"), std::string::npos) << none.err;
  // No log directory yet: nothing to prune, said so.
  const Outcome empty = run_vigil({"logs", "prune", "--older-than", "1d"}, ws.path(), 60, env);
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("no session logs: " + state.path() + "/vigil/sessions does not exist"),
            std::string::npos)
      << empty.out;
  // A --dir that does not exist is a mistake, not an empty directory.
  const Outcome missing = run_vigil(
      {"logs", "prune", "--older-than", "1d", "--dir", state / "nope"}, ws.path(), 60, env);
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}

TEST(LogsPrune, ASymlinkedOrOpenDirectoryIsRefused) {
  TempDir ws, state, real;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  const std::string log = real / "20250101T000000Z-0b.jsonl";
  ASSERT_EQ(run_vigil({"run", "--log", log, "--", "true"}, ws.path(), 60, env).exit_code, 0);
  age(log, 30);
  // The default directory a symlink to a directory of logs: never followed.
  make_dirs(state / "vigil");
  ASSERT_EQ(::symlink(real.path().c_str(), (state / "vigil/sessions").c_str()), 0);
  const Outcome link = run_vigil({"logs", "prune", "--older-than", "1d"}, ws.path(), 60, env);
  EXPECT_EQ(link.exit_code, 2) << link.out << link.err;
  EXPECT_NE(link.err.find(state.path() + "/vigil/sessions is not a directory (a symlink?); "
                                         "refusing to prune it"),
            std::string::npos)
      << link.err;
  EXPECT_TRUE(exists(log));
  // A directory others may write: what is in it may not be ours.
  ASSERT_EQ(::chmod(real.path().c_str(), 0777), 0);
  const Outcome open =
      run_vigil({"logs", "prune", "--older-than", "1d", "--dir", real.path()}, ws.path(), 60, env);
  EXPECT_EQ(open.exit_code, 2) << open.out << open.err;
  EXPECT_NE(open.err.find("is writable by other users (mode 0777); refusing to prune it"),
            std::string::npos)
      << open.err;
  EXPECT_TRUE(exists(log));
}

TEST(LogsPrune, ADirectoryAnotherUserMadeIsRefused) {
  VIGIL_NEED_OTHER_USER(other);
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  // The other user gets to the state directory first and makes vigil/sessions there.
  ASSERT_EQ(::chmod(state.path().c_str(), 0777), 0);
  ASSERT_EQ(act_as(other, OtherOp::kMkdir, {state / "vigil"}).error, 0);
  ASSERT_EQ(act_as(other, OtherOp::kMkdir, {state / "vigil/sessions"}).error, 0);
  const Outcome o = run_vigil({"logs", "prune", "--older-than", "1d"}, ws.path(), 60, env);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find(state.path() + "/vigil/sessions is owned by uid " +
                       std::to_string(other.uid) + ", not by us"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("refusing to prune it"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
