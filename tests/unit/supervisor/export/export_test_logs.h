// Session logs for the export tests: real SessionLog files, keyed or not.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/log/log_key.h"
#include "supervisor/log/session_log.h"

namespace vigil::export_test {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vigil-export-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1)
    out.push_back(text.substr(a, b - a));
  return out;
}

inline const std::string& test_key() {
  static const std::string k(kLogKeyBytes, 'k');
  return k;
}

// A keyed log of `writes` fs.write records between session.start and (when `end`)
// session.end, at `path`; the id "20261207T120000Z-<suffix>".
inline void write_log(const std::string& path, const std::string& suffix, int writes, bool end = true) {
  using namespace vigil::events;
  auto n = std::make_shared<std::uint64_t>(0);
  auto log = SessionLog::create(path, "20261207T120000Z-" + suffix, [n] { return *n += 1000; });
  if (!log) std::abort();
  log->set_key(test_key());
  SessionStart start{{"sh"}, "/w", "bwrap", std::string(64, 'e'), {"0.1.0", "0.8.0", "6.1"}, path, {}};
  start.key_id = log_key_id(test_key());
  if (!log->append(Source::kSupervisor, start)) std::abort();
  for (int i = 0; i < writes; ++i) {
    FsWrite w{2, "openat", "f" + std::to_string(i), "/w/f" + std::to_string(i), 0x241,
              Verdict::kAllowed, "writable root", "", "", "", ""};
    if (!log->append(Source::kObserver, w)) std::abort();
  }
  if (end && !log->append(Source::kSupervisor, SessionEnd{0, std::nullopt, 1, {}, {}, {}})) std::abort();
  (void)log->close();
}

}  // namespace vigil::export_test
