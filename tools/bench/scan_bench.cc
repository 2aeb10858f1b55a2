// vigil_scan_bench: times the mandatory-deny scan (bwrap/mandatory_scan.h).
//
//   vigil_scan_bench [--root DIR] [--runs N] [--depth D]...
//
// Without --root it generates a ~100,000-file tree in a temporary directory (10 top dirs
// x 10 x 10 x 100 files, four .git dirs with objects/, a node_modules fan-out, a few
// rule hits) and removes it at the end, also on SIGINT/SIGTERM. It runs one untimed
// warm-up scan, then N timed scans per depth (default 30; depths 3 and 10), and prints
// median, p10 and p90 wall time in ms. Warm page cache: this measures the walk, not
// the disk.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bwrap/mandatory_scan.h"
#include "supervisor/backstop/backstop.h"
#include "supervisor/core/base/unique_fd.h"

namespace {

using vigil::UniqueFd;

// Set by SIGINT/SIGTERM; the long loops check it so the temp tree is still removed.
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

struct Options {
  std::string root;
  int runs = 30;
  std::vector<int> depths;
};

bool parse_int(const char* text, int min, int max, int& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) return false;
  out = static_cast<int>(v);
  return true;
}

bool parse_args(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--root" && has_value) {
      opt.root = argv[++i];
    } else if (arg == "--runs" && has_value) {
      if (!parse_int(argv[++i], 1, 100000, opt.runs)) return false;
    } else if (arg == "--depth" && has_value) {
      int d = 0;
      if (!parse_int(argv[++i], 0, vigil::kMaxScanDepth, d)) return false;
      opt.depths.push_back(d);
    } else {
      return false;
    }
  }
  if (opt.depths.empty()) opt.depths = {3, 10};
  return true;
}

// Builds the synthetic tree; counts what it made. Stops early (returns false) on error
// or on a signal.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::string root) : root_(std::move(root)) {}

  bool build() { return source_tree() && git_dirs() && node_modules() && rule_hits(); }
  std::size_t files() const { return files_; }

 private:
  // 10 x 10 x 10 directories, 100 files in each leaf: the 100,000 files.
  bool source_tree() {
    for (int a = 0; a < 10; ++a) {
      for (int b = 0; b < 10; ++b) {
        for (int c = 0; c < 10; ++c) {
          const std::string leaf =
              "src" + std::to_string(a) + "/mod" + std::to_string(b) + "/pkg" + std::to_string(c);
          if (!mkdirs(leaf)) return false;
          for (int f = 0; f < 100; ++f) {
            if (!touch(leaf + "/file" + std::to_string(f) + ".c")) return false;
          }
          if (g_stop) return false;
        }
      }
    }
    return true;
  }

  // Real repositories: objects/ is the bulk, and the scan must not pay for it.
  bool git_dirs() {
    for (const char* repo : {"", "src0/", "src1/", "src2/mod2/"}) {
      const std::string git = std::string(repo) + ".git";
      if (!touch(git + "/HEAD") || !touch(git + "/config") || !touch(git + "/refs/heads/main")) {
        return false;
      }
      for (int h = 0; h < 12; ++h) {
        if (!touch(git + "/hooks/sample" + std::to_string(h))) return false;
      }
      for (int o = 0; o < 256; ++o) {
        char dir[3];
        std::snprintf(dir, sizeof dir, "%02x", o);
        for (int f = 0; f < 4; ++f) {
          if (!touch(git + "/objects/" + dir + "/obj" + std::to_string(f))) return false;
        }
      }
      if (g_stop) return false;
    }
    return true;
  }

  // A wide, nested fan-out like a JavaScript project's dependencies.
  bool node_modules() {
    for (int p = 0; p < 200; ++p) {
      const std::string pkg = "node_modules/pkg" + std::to_string(p);
      if (!touch(pkg + "/package.json") || !touch(pkg + "/index.js")) return false;
      for (const char* lib : {"a", "b", "c", "d", "e"}) {
        if (!touch(pkg + "/lib/" + lib + ".js")) return false;
      }
      for (int d = 0; d < 3; ++d) {
        const std::string dep = pkg + "/node_modules/dep" + std::to_string(d);
        if (!touch(dep + "/package.json") || !touch(dep + "/index.js")) return false;
      }
      if (g_stop) return false;
    }
    return true;
  }

  // A few entries the scan must find (some only at depth >= 4).
  bool rule_hits() {
    return mkdirs(".vscode") && mkdirs("src3/.claude/commands") && touch("src4/mod4/.bashrc") &&
           touch("src5/mod5/pkg5/.mcp.json") && mkdirs("src6/mod6/pkg6/.idea") &&
           touch(".gitmodules");
  }

  bool mkdirs(const std::string& rel) {
    std::error_code ec;
    std::filesystem::create_directories(root_ + "/" + rel, ec);
    if (ec) {
      std::fprintf(stderr, "mkdir %s/%s: %s\n", root_.c_str(), rel.c_str(), ec.message().c_str());
      return false;
    }
    return true;
  }

  bool touch(const std::string& rel) {
    const auto slash = rel.rfind('/');
    if (slash != std::string::npos && !mkdirs(rel.substr(0, slash))) return false;
    const std::string path = root_ + "/" + rel;
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (!fd) {
      std::fprintf(stderr, "create %s: %s\n", path.c_str(), std::strerror(errno));
      return false;
    }
    ++files_;
    return true;
  }

  std::string root_;
  std::size_t files_ = 0;
};

// Owns the generated tree: removes it whatever way main() leaves.
class TempTree {
 public:
  TempTree() {
    std::string tmpl = "/tmp/vigil-scan-bench.XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempTree() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (ec)
      std::fprintf(stderr, "warning: could not remove %s: %s\n", path_.c_str(),
                   ec.message().c_str());
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Nearest-rank percentile of sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  const auto idx = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

bool bench_depth(const std::string& root, int depth, int runs) {
  const vigil::ScanLimits limits{.max_depth = depth};
  auto warm = vigil::scan_mandatory_denies(root, limits);  // fills caches; untimed
  if (!warm) {
    std::fprintf(stderr, "scan failed: %s\n", warm.error().message.c_str());
    return false;
  }
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs && !g_stop; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = vigil::scan_mandatory_denies(root, limits);
    const auto end = std::chrono::steady_clock::now();
    if (!r) {
      std::fprintf(stderr, "scan failed: %s\n", r.error().message.c_str());
      return false;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  if (ms.empty()) return false;
  std::sort(ms.begin(), ms.end());
  std::printf("%5d  %4zu  %9.3f  %8.3f  %8.3f  %9zu  %4zu  %8zu  %10zu\n", depth, ms.size(),
              percentile(ms, 0.5), percentile(ms, 0.1), percentile(ms, 0.9), warm->entries_visited,
              warm->hits.size(), warm->git_files.size(), warm->unreadable_dirs.size());
  return true;
}

// The post-run backstop's pass (supervisor/backstop/backstop.h: any depth, bounded by a count
// and a time) beside the launch scan at its default depth, interleaved round by round: what
// a session's end costs next to what its start already pays. Nothing in the tree is newer
// than the snapshot, so it finds nothing.
bool bench_backstop(const std::string& root, int runs) {
  const auto snap = vigil::take_backstop_snapshot({});
  vigil::BackstopInputs in;
  in.roots = {root};
  const vigil::BackstopLimits limits;
  const vigil::ScanLimits scan_limits{};
  std::vector<double> walk_ms, scan_ms;
  std::size_t entries = 0;
  for (int i = 0; i < runs && !g_stop; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const auto found = vigil::find_offenders(in, snap, limits);
    auto t1 = std::chrono::steady_clock::now();
    auto scan = vigil::scan_mandatory_denies(root, scan_limits);
    auto t2 = std::chrono::steady_clock::now();
    if (!scan || !found.incomplete.empty()) {
      std::fprintf(stderr, "backstop or scan incomplete\n");
      return false;
    }
    entries = found.entries;
    walk_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    scan_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  if (walk_ms.empty()) return false;
  std::sort(walk_ms.begin(), walk_ms.end());
  std::sort(scan_ms.begin(), scan_ms.end());
  const double w = percentile(walk_ms, 0.5), r = percentile(scan_ms, 0.5);
  std::printf("backstop pass: median %.3f ms (p10 %.3f, p90 %.3f), %zu entries; launch scan at "
              "depth %d: median %.3f ms; ratio %.2f\n",
              w, percentile(walk_ms, 0.1), percentile(walk_ms, 0.9), entries, scan_limits.max_depth, r,
              w / r);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_args(argc, argv, opt)) {
    std::fprintf(stderr, "usage: %s [--root DIR] [--runs N] [--depth D]...\n", argv[0]);
    return 2;
  }
  install_signal_handlers();

  TempTree temp;  // empty unless we generate
  std::string root = opt.root;
  if (root.empty()) {
    if (temp.path().empty()) {
      std::fprintf(stderr, "mkdtemp: %s\n", std::strerror(errno));
      return 1;
    }
    TreeBuilder builder(temp.path());
    const auto start = std::chrono::steady_clock::now();
    if (!builder.build()) return g_stop ? 130 : 1;
    const auto secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("generated %s: %zu files in %.1f s\n", temp.path().c_str(), builder.files(), secs);
    root = temp.path();
  }

  std::printf("root %s, %d timed runs per depth (after one warm-up)\n", root.c_str(), opt.runs);
  std::printf(
      "depth  runs  median_ms    p10_ms    p90_ms    entries  hits  git_files  unreadable\n");
  for (int depth : opt.depths) {
    if (!bench_depth(root, depth, opt.runs)) return g_stop ? 130 : 1;
  }
  if (!bench_backstop(root, opt.runs)) return g_stop ? 130 : 1;
  return 0;
}
