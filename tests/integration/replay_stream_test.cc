// Issue 21.5 and 21.7: `vigil replay` reads a log of any size, in every view, in memory
// that does not grow with the log. A log of kLogBytes is written by vigil's own writer
// (SessionLog: a valid chain), holding every kind a view aggregates (denials on tens of
// thousands of targets, writes that were not stopped, a quarantine, network decisions, a
// command, output); each view is run on it and its peak RSS (wait4) must stay under
// kBoundKib, which holding the log whole (the text alone is kLogBytes) cannot.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "supervisor/report/annotation.h"
#include "supervisor/log/session_log.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

constexpr std::size_t kLogBytes = std::size_t{64} << 20;
constexpr long kBoundKib = 48 * 1024;
constexpr std::size_t kDenialsPerChunk = 20;

using namespace vigil::events;

// Written in a child process, so that nothing the writing holds (the collector, the
// allocator's arenas) is in this process's RSS when the views' children are forked (a
// child's peak RSS counts what it shared before its exec).
bool write_big_log(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto log = SessionLog::create(path, "big-0123456789ab");
    if (!log) ::_exit(1);
    ViolationCollector seen;
    log->set_listener([&](const Event& e, const std::string&) { seen.add(e); });
    bool ok = true;
    auto add = [&](Source src, Body b, std::optional<std::uint64_t> cmd = std::nullopt) {
      ok = ok && log->append(src, std::move(b), cmd).ok();
    };
    add(Source::kSupervisor,
        SessionStart{
            {"sh", "-c", "big"}, "/w", "bwrap", std::string(64, 'a'), {"0.1.0", "", ""}, path});
    add(Source::kSupervisor, CommandStart{{"sh", "-c", "big"}, "/w"}, 1);
    add(Source::kObserver, ProcExec{2, 1, {"sh", "-c", "big"}, "/w", false}, 1);
    std::size_t written = 0;
    for (std::size_t i = 0; ok && written < kLogBytes; ++i) {
      std::string chunk(60000, static_cast<char>('a' + i % 26));
      written += chunk.size();
      add(Source::kSupervisor, IoStdout{std::move(chunk)}, 1);
      for (std::size_t k = 0; k < kDenialsPerChunk; ++k) {
        const std::string p = "/usr/lib/d" + std::to_string(i % 50) + "/junk" + std::to_string(i) +
                              "_" + std::to_string(k);
        add(Source::kObserver,
            FsWrite{2, "openat", p, p, 0101, Verdict::kDenied,
                    "outside the writable roots; add it to filesystem.allowWrite", "", "", ""},
            1);
      }
      if (i % 100 == 0) {
        add(Source::kProxy,
            NetDecision{NetProto::kConnect, "h" + std::to_string(i) + ".example", 443,
                        NetVerdict::kDenied, "", "host is not on the allow list", "not-allowed", "",
                        "", ""},
            1);
        const std::string p = "/w/sub" + std::to_string(i) + "/.vscode/tasks.json";
        add(Source::kObserver,
            FsWrite{2, "openat", p, p, 0101, Verdict::kAllowed, "writable root", "", "", ".vscode"},
            1);
      }
    }
    add(Source::kSupervisor,
        FsQuarantine{"/w/.git/hooks/pre-commit", "git-hook", "git runs it", "/q/pre-commit"}, 1);
    add(Source::kSupervisor, CommandEnd{0, std::nullopt, 1000, {}}, 1);
    add(Source::kSupervisor,
        Annotation{render_annotation(seen, AnnotationOptions{kAnnotationMaxLines, path}), false});
    add(Source::kSupervisor, SessionEnd{0, std::nullopt, 1000, {}});
    ::_exit(ok && log->close().ok() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::size_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
}

TEST(ReplayStream, EveryViewReadsAHugeLogInBoundedMemory) {
  TempDir d;
  const std::string log = d / "big.jsonl";
  ASSERT_TRUE(write_big_log(log));
  ASSERT_GT(size_of(log), kLogBytes);
  const std::string html = d / "report.html";
  const std::vector<std::vector<std::string>> views = {
      {"replay", log},
      {"replay", "--writes", log},
      {"replay", "--net", log},
      {"replay", "--annotate", log},
      {"replay", "--command", "1", log},
      {"replay", "--command", "1", "--writes", log},
      {"replay", "--html", html, log},
      {"replay", "--verify", log},
      {"replay", "--json", "fs.quarantine", log},
  };
  for (const auto& args : views) {
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    const long kib = peak_rss_kib(args);
    std::printf("peak RSS %6ld KiB: vigil%s\n", kib, shown.c_str());
    EXPECT_LT(kib, kBoundKib) << "vigil" << shown << " must stream: peak RSS " << kib
                              << " KiB for a log of " << (size_of(log) >> 20) << " MiB";
  }
  // The report stays a page a browser opens, and says what it does not list one by one.
  const std::size_t report = size_of(html);
  EXPECT_GT(report, 0u);
  EXPECT_LT(report, std::size_t{16} << 20);
  const std::string h = read_file(html);
  EXPECT_NE(h.find("more row(s) past the first 2000 are not listed one by one"), std::string::npos);
  EXPECT_NE(h.find("<details><summary>"), std::string::npos);
  EXPECT_NE(h.find("vigil replay " + log + " --writes"), std::string::npos);
  EXPECT_NE(h.find("1 path(s) QUARANTINED"), std::string::npos);
  EXPECT_NE(h.find("protected name(s) written and NOT stopped"), std::string::npos);
  EXPECT_NE(h.find("hash chain intact"), std::string::npos);
}

}  // namespace
}  // namespace vigil::test
