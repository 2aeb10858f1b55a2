// vigil's stderr lines: the levels VIGIL_LOG takes, the bytes of each line, and that the
// spdlog logger writes exactly those bytes (a harness parsing stderr sees no change).
#include "supervisor/core/base/diagnostics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

TEST(LogLevel, ParsesEveryNameAndRefusesTheRest) {
  struct Case {
    const char* text;
    std::optional<LogLevel> want;
  };
  const Case cases[] = {
      {"trace", LogLevel::kTrace},
      {"debug", LogLevel::kDebug},
      {"info", LogLevel::kInfo},
      {"warning", LogLevel::kWarning},
      {"warn", LogLevel::kWarning},
      {"error", LogLevel::kError},
      {"off", LogLevel::kOff},
      {"DEBUG", LogLevel::kDebug},
      {"Warning", LogLevel::kWarning},
      {"", std::nullopt},
      {"verbose", std::nullopt},
      {"debug ", std::nullopt},
      {"1", std::nullopt},
      {"err", std::nullopt},
      {"de", std::nullopt},
      {"debugx", std::nullopt},
  };
  for (const auto& c : cases) {
    auto got = parse_log_level(c.text);
    if (c.want) {
      ASSERT_TRUE(got) << c.text;
      EXPECT_EQ(*got, *c.want) << c.text;
    } else {
      ASSERT_FALSE(got) << c.text;
      // The error names the value and every valid one.
      EXPECT_NE(got.error().message.find(std::string("VIGIL_LOG=") + c.text), std::string::npos);
      EXPECT_NE(got.error().message.find("trace, debug, info, warning, error, off"),
                std::string::npos)
          << got.error().message;
    }
  }
}

TEST(DiagnosticLine, PrefixPerLevelAndEscapedMessage) {
  EXPECT_EQ(diagnostic_line(LogLevel::kError, "no command"), "vigil: no command\n");
  EXPECT_EQ(diagnostic_line(LogLevel::kInfo, "session log: /x"), "vigil: session log: /x\n");
  EXPECT_EQ(diagnostic_line(LogLevel::kWarning, "w"), "vigil: warning: w\n");
  EXPECT_EQ(diagnostic_line(LogLevel::kDebug, "d"), "vigil: debug: d\n");
  EXPECT_EQ(diagnostic_line(LogLevel::kTrace, "t"), "vigil: trace: t\n");
  // A planted newline or escape cannot forge a second line or reach the terminal.
  const std::string line = diagnostic_line(LogLevel::kWarning, "a\nvigil: forged\x1b]52;c;x\a");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
}

// What `print` wrote on fd 2, with fd 2 pointed at a file meanwhile.
std::string stderr_of(const std::function<void()>& print) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  std::fflush(stderr);
  UniqueFd saved(::dup(STDERR_FILENO));
  ::dup2(::fileno(file), STDERR_FILENO);
  print();
  std::fflush(stderr);
  ::dup2(saved.get(), STDERR_FILENO);
  std::string out;
  std::rewind(file);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) out.append(buf, n);
  std::fclose(file);
  return out;
}

class Diagnostics : public ::testing::Test {
 protected:
  void TearDown() override { set_log_level(LogLevel::kInfo); }
};

TEST_F(Diagnostics, TheLoggerWritesExactlyTheLinesBytes) {
  set_log_level(LogLevel::kInfo);
  const std::string message = "cannot open /tmp/a b\n\x1b[31mred";
  EXPECT_EQ(stderr_of([&] { print_error(message); }), diagnostic_line(LogLevel::kError, message));
  EXPECT_EQ(stderr_of([&] { print_warning(message); }),
            diagnostic_line(LogLevel::kWarning, message));
  EXPECT_EQ(stderr_of([&] { print_notice("session log: /x"); }), "vigil: session log: /x\n");
  EXPECT_EQ(stderr_of([&] { print_warning("w"); }), "vigil: warning: w\n");
  // And what vigil-init writes without the logger is the same.
  EXPECT_EQ(stderr_of([&] { write_diagnostic_line(LogLevel::kError, message); }),
            diagnostic_line(LogLevel::kError, message));
}

TEST_F(Diagnostics, TheDefaultLevelShowsWhatVigilAlwaysPrintedAndNoDebug) {
  configure_logging(nullptr, false);
  EXPECT_EQ(log_level(), LogLevel::kInfo);
  EXPECT_FALSE(debug_enabled());
  EXPECT_EQ(stderr_of([] {
              print_debug("hidden");
              DebugPhase phase("hidden");
            }),
            "");
  EXPECT_EQ(stderr_of([] { print_notice("n"); }), "vigil: n\n");
}

TEST_F(Diagnostics, LevelsFilter) {
  configure_logging("error", false);
  EXPECT_EQ(stderr_of([] {
              print_warning("w");
              print_notice("n");
              print_error("e");
            }),
            "vigil: e\n");
  configure_logging("off", false);
  EXPECT_EQ(stderr_of([] { print_error("e"); }), "");
  configure_logging("debug", false);
  const std::string out = stderr_of([] {
    print_debug("d");
    DebugPhase phase("scan");
  });
  EXPECT_EQ(out.rfind("vigil: debug: d\nvigil: debug: time scan: ", 0), 0u) << out;
  EXPECT_EQ(out.substr(out.size() - 4), " ms\n") << out;
}

TEST_F(Diagnostics, VerboseMeansAtLeastDebug) {
  configure_logging(nullptr, true);
  EXPECT_EQ(log_level(), LogLevel::kDebug);
  configure_logging("trace", true);
  EXPECT_EQ(log_level(), LogLevel::kTrace);
  configure_logging("error", true);
  EXPECT_EQ(log_level(), LogLevel::kDebug);
  configure_logging("", false);
  EXPECT_EQ(log_level(), LogLevel::kInfo);
}

TEST_F(Diagnostics, ABadValueWarnsNamingTheValidOnesAndKeepsTheDefault) {
  set_log_level(LogLevel::kError);
  const std::string out = stderr_of([] { configure_logging("loud\x1b", false); });
  EXPECT_EQ(log_level(), LogLevel::kInfo);
  EXPECT_EQ(out.rfind("vigil: warning: VIGIL_LOG=loud", 0), 0u) << out;
  EXPECT_NE(out.find("use one of trace, debug, info, warning, error, off"), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace vigil
