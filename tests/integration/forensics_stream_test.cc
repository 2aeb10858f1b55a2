// `vigil replay --policy`, `vigil learn` and `vigil export --format ocsf` read a log of any
// size in memory that does not grow with it: a log of kLogBytes (vigil's own writer, a
// valid chain) with denials on tens of thousands of distinct paths and hosts is read by
// each, and its peak RSS (wait4) must stay under kBoundKib, which holding the log whole
// (its text alone is kLogBytes) cannot.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "supervisor/log/session_log.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

constexpr std::size_t kLogBytes = std::size_t{32} << 20;
constexpr long kBoundKib = 24 * 1024;

using namespace vigil::events;

// Written in a child, so nothing the writing holds is in the views' RSS (a forked
// child's peak counts what it shared before its exec).
bool write_big_log(const std::string& path, const std::string& cwd) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto log = SessionLog::create(path, "20261202T000000Z-0123456789ab");
    if (!log) ::_exit(1);
    bool ok = true;
    auto add = [&](Source src, Body b) { ok = ok && log->append(src, std::move(b)).ok(); };
    add(Source::kSupervisor,
        SessionStart{{"sh", "-c", "big"}, cwd, "bwrap", std::string(64, 'a'), {"0.1.0", "", ""}, path});
    add(Source::kObserver, ProcExec{2, 1, {"sh", "-c", "big"}, cwd, false});
    std::size_t written = 0;
    for (std::size_t i = 0; ok && written < kLogBytes; ++i) {
      std::string chunk(30000, static_cast<char>('a' + i % 26));
      written += chunk.size();
      add(Source::kSupervisor, IoStdout{std::move(chunk)});
      for (std::size_t k = 0; k < 20; ++k) {
        // A distinct directory per write: past the learner's cap, counted.
        const std::string p = "/opt/t" + std::to_string(i * 20 + k) + "/f";
        add(Source::kObserver, FsWrite{2, "openat", p, p, 0101, Verdict::kDenied, "outside", "",
                                       "", ""});
        written += 200;
      }
      add(Source::kProxy, NetDecision{NetProto::kConnect, "h" + std::to_string(i) + ".example.org", 443,
                                      NetVerdict::kDenied, "", "host is not on the allow list",
                                      "not-allowed", "", "", ""});
    }
    add(Source::kSupervisor, SessionEnd{0, std::nullopt, 1000, {}});
    ::_exit(ok && log->close().ok() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(ForensicsStream, PolicyLearnAndExportReadAHugeLogInBoundedMemory) {
  TempDir d, ws;
  const std::string log = d / "big.jsonl";
  ASSERT_TRUE(write_big_log(log, ws.path()));
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  ASSERT_GT(static_cast<std::size_t>(st.st_size), kLogBytes);
  write_file(d / "wide.json", R"({"filesystem": {"allowWrite": [".", "/opt"]},
    "network": {"allowedDomains": ["*.example.org"]}})");
  const std::vector<std::vector<std::string>> commands = {
      {"replay", "--policy", d / "wide.json", log},
      {"learn", log},
      {"export", "--format", "ocsf", log},
  };
  for (const auto& args : commands) {
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    const long kib = peak_rss_kib(args, ws.path());
    std::printf("peak RSS %6ld KiB: vigil%s\n", kib, shown.c_str());
    EXPECT_LT(kib, kBoundKib) << "vigil" << shown << " must stream: peak RSS " << kib << " KiB";
  }
}

}  // namespace
}  // namespace vigil::test
