#include "supervisor/core/base/diagnostics.h"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"

namespace vigil {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      break;
  }
  return spdlog::level::off;
}

LogLevel from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return LogLevel::kTrace;
    case spdlog::level::debug:
      return LogLevel::kDebug;
    case spdlog::level::info:
      return LogLevel::kInfo;
    case spdlog::level::warn:
      return LogLevel::kWarning;
    default:
      return LogLevel::kError;
  }
}

// %* in the pattern: the level's tag ("warning: ", "debug: ", "" for errors and notices),
// from the same function as vigil-init's lines, so both print the same bytes.
class LevelTag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string_view tag = diagnostic_level_tag(from_spdlog(msg.level));
    dest.append(tag.data(), tag.data() + tag.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelTag>();
  }
};

// Made on first use (a clean run prints nothing and never builds it) and never destroyed:
// a proxy thread still printing while the process exits must not find it gone. The sink
// writes each formatted line with one fwrite to the unbuffered stderr and flushes: lines
// of concurrent sessions sharing a stderr do not interleave.
spdlog::logger& logger() {
  static spdlog::logger* const instance = [] {
    auto* l = new spdlog::logger("vigil", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::local,
                                                                 std::string("\n"));
    formatter->add_flag<LevelTag>('*').set_pattern("vigil: %*%v");
    l->set_formatter(std::move(formatter));
    l->set_level(spdlog::level::trace);  // the filter is log_level(), checked before
    return l;
  }();
  return *instance;
}

void emit(LogLevel level, std::string_view message) {
  if (level < log_level()) return;
  const std::string text = escape_text(message);
  logger().log(to_spdlog(level), spdlog::string_view_t(text.data(), text.size()));
}

}  // namespace

void print_error(std::string_view message) { emit(LogLevel::kError, message); }
void print_warning(std::string_view message) { emit(LogLevel::kWarning, message); }

int report(const Error& e) {
  print_error(e.message);
  return exit_code_for(e);
}
void print_notice(std::string_view message) { emit(LogLevel::kInfo, message); }
void print_debug(std::string_view message) { emit(LogLevel::kDebug, message); }

LogLevel log_level() { return g_level.load(std::memory_order_relaxed); }
void set_log_level(LogLevel level) { g_level.store(level, std::memory_order_relaxed); }

void configure_logging(const char* vigil_log, bool verbose) {
  LogLevel level = LogLevel::kInfo;
  std::optional<Error> bad;
  if (vigil_log != nullptr && *vigil_log != '\0') {
    auto parsed = parse_log_level(vigil_log);
    if (parsed) {
      level = *parsed;
    } else {
      bad = parsed.error();
    }
  }
  // -v asks for the launch trace: it lowers the level to debug, never raises it (a
  // VIGIL_LOG=trace stays trace).
  if (verbose && level > LogLevel::kDebug) level = LogLevel::kDebug;
  set_log_level(level);
  // Said at the level now in force (the default's), whatever was set before.
  if (bad) print_warning(bad->message + "; keeping the default, info");
}

DebugPhase::DebugPhase(std::string_view name) : name_(name), running_(debug_enabled()) {
  if (running_) start_ = std::chrono::steady_clock::now();
}

DebugPhase::~DebugPhase() { end(); }

void DebugPhase::end() {
  if (!running_) return;
  running_ = false;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start_)
                      .count();
  char ms[32];
  std::snprintf(ms, sizeof ms, "%lld.%03lld ms", static_cast<long long>(us / 1000),
                static_cast<long long>(us % 1000));
  print_debug("time " + std::string(name_) + ": " + ms);
}

}  // namespace vigil
