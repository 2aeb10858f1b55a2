// vigil_launch_bench: an interleaved whole-process wall-clock timer.
//
//   vigil_launch_bench [-n ROUNDS] [-w WARMUPS] [--show] [--markdown] [--no-rotate]
//                      @label [NAME=VALUE...] CMD ARGS... :: @label2 CMD2 ARGS... :: ...
//
// Each round runs every command once, one after the other, so that machine noise
// (another build, a page-cache flush, CPU frequency) lands on all of them alike.
// The first command of a round moves by one each round (unless --no-rotate), so no
// command always runs right after the same neighbour. A command is started with
// posix_spawnp() (stdin from /dev/null; stdout/stderr to /dev/null unless --show),
// and its time is CLOCK_MONOTONIC from just before the spawn to the return of
// waitpid(); glibc's posix_spawn uses clone(CLONE_VM|CLONE_VFORK), so the timer's own
// share is below a fork()+exec pair's. The first WARMUPS rounds are discarded. A
// command that exits non-zero or is killed by a signal stops the run with an error
// naming it.
//
// Output: one line per command, in the order given:
//   label  median_ms  p10_ms  p90_ms  min_ms  ratio   (ratio = median / first median)
// preceded by a '#' header line; --markdown prints a markdown table instead.
// Percentiles interpolate linearly between the sorted samples.
//
// The tool opens no file descriptor itself: /dev/null is opened in the child by the
// spawn file actions, so there is nothing to close in the parent.

#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

constexpr const char* kProg = "vigil_launch_bench";

struct Command {
  std::string label;
  std::vector<std::string> env;  // leading NAME=VALUE words: added to this command's environment
  std::vector<std::string> args;
  std::vector<double> samples_ms;
};

struct Options {
  int rounds = 40;
  int warmups = 3;
  bool show = false;
  bool markdown = false;
  bool rotate = true;
  std::vector<Command> commands;
};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: %s [-n ROUNDS] [-w WARMUPS] [--show] [--markdown] [--no-rotate]\n"
               "          @label CMD ARGS... [:: @label2 CMD2 ARGS... ...]\n"
               "\n"
               "Runs every command once per round, interleaved, for WARMUPS discarded rounds\n"
               "(default 3) and then ROUNDS timed rounds (default 40), and prints per command:\n"
               "label, median, p10, p90, min (ms) and the ratio of its median to the first\n"
               "command's median.\n"
               "  -n N          timed rounds (>= 1)\n"
               "  -w N          warm-up rounds, discarded (>= 0)\n"
               "  --show        keep the commands' stdout/stderr (default: /dev/null;\n"
               "                stdin is always /dev/null)\n"
               "  --markdown    print a markdown table instead of plain lines\n"
               "  --no-rotate   always start a round with the first command\n"
               "A command that exits non-zero stops the run with an error.\n",
               kProg);
}

[[noreturn]] void die_usage(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "%s: %s%.*s\n\n", kProg, what, static_cast<int>(detail.size()),
               detail.data());
  usage(stderr);
  std::exit(2);
}

int parse_count(std::string_view text, int minimum, const char* flag) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < minimum) {
    die_usage("bad count for ", std::string(flag) + ": '" + std::string(text) + "'");
  }
  return value;
}

Options parse_args(int argc, char** argv) {
  Options opt;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.empty() && arg.front() == '@') break;
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--show") {
      opt.show = true;
    } else if (arg == "--markdown") {
      opt.markdown = true;
    } else if (arg == "--no-rotate") {
      opt.rotate = false;
    } else if (arg == "-n" || arg == "-w") {
      if (i + 1 >= argc) die_usage("missing value after ", arg);
      const char* flag = argv[i];
      ++i;
      const int value = parse_count(argv[i], arg == "-n" ? 1 : 0, flag);
      (arg == "-n" ? opt.rounds : opt.warmups) = value;
    } else {
      die_usage("unknown option or command without @label: ", arg);
    }
  }

  // Commands: "@label cmd args..." separated by "::".
  while (i < argc) {
    const std::string_view head = argv[i];
    if (head.size() < 2 || head.front() != '@') {
      die_usage("expected @label to start a command, got: ", head);
    }
    Command cmd;
    cmd.label = std::string(head.substr(1));
    for (++i; i < argc && std::string_view(argv[i]) != "::"; ++i) {
      // As env(1) would, but without its exec in the timed span: NAME=VALUE words before
      // the program set that command's environment alone.
      const std::string_view a(argv[i]);
      const auto eq = a.find('=');
      if (cmd.args.empty() && eq != std::string_view::npos && eq > 0 &&
          a.substr(0, eq).find('/') == std::string_view::npos) {
        cmd.env.emplace_back(a);
      } else {
        cmd.args.emplace_back(a);
      }
    }
    if (cmd.args.empty()) die_usage("no command after @", cmd.label);
    for (const Command& other : opt.commands) {
      if (other.label == cmd.label) die_usage("duplicate label @", cmd.label);
    }
    opt.commands.push_back(std::move(cmd));
    if (i < argc) {
      ++i;  // skip "::"
      if (i == argc) die_usage("trailing '::' without a command");
    }
  }
  if (opt.commands.empty()) die_usage("no commands given");
  return opt;
}

double now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::string describe_argv(const Command& cmd) {
  std::string out;
  for (const std::string& a : cmd.args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// Spawn attributes and file actions shared by every run.
class Spawner {
 public:
  explicit Spawner(bool show) : show_(show) {
    check(posix_spawn_file_actions_init(&actions_), "posix_spawn_file_actions_init");
    check(posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0),
          "posix_spawn_file_actions_addopen(stdin)");
    if (!show) {
      check(posix_spawn_file_actions_addopen(&actions_, 1, "/dev/null", O_WRONLY, 0),
            "posix_spawn_file_actions_addopen(stdout)");
      check(posix_spawn_file_actions_adddup2(&actions_, 1, 2),
            "posix_spawn_file_actions_adddup2(stderr)");
    }
    check(posix_spawnattr_init(&attr_), "posix_spawnattr_init");
  }
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;
  ~Spawner() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }

  // Runs the command to completion; returns its wall time in ms. Exits on failure.
  // `round_no` counts from 1 within the warm-up or the timed rounds.
  double run(const Command& cmd, int round_no, bool warmup) {
    std::vector<char*> cargv;
    cargv.reserve(cmd.args.size() + 1);
    for (const std::string& a : cmd.args) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    // The environment: ours, less what the command's NAME=VALUE words replace, plus those.
    std::vector<char*> cenv;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view have(*e);
      bool replaced = false;
      for (const std::string& mine : cmd.env)
        replaced = replaced || have.substr(0, have.find('=') + 1) == mine.substr(0, mine.find('=') + 1);
      if (!replaced) cenv.push_back(*e);
    }
    for (const std::string& mine : cmd.env) cenv.push_back(const_cast<char*>(mine.c_str()));
    cenv.push_back(nullptr);

    const double start = now_ms();
    pid_t pid = -1;
    const int err = posix_spawnp(&pid, cargv[0], &actions_, &attr_, cargv.data(), cenv.data());
    if (err != 0) {
      std::fprintf(stderr, "%s: @%s: cannot start '%s': %s\n", kProg, cmd.label.c_str(),
                   describe_argv(cmd).c_str(), std::strerror(err));
      std::exit(1);
    }
    int status = 0;
    pid_t got = -1;
    do {
      got = waitpid(pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    const double elapsed = now_ms() - start;
    if (got < 0) {
      std::fprintf(stderr, "%s: @%s: waitpid: %s\n", kProg, cmd.label.c_str(),
                   std::strerror(errno));
      std::exit(1);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::string how;
      if (WIFEXITED(status)) {
        how = "exited with status " + std::to_string(WEXITSTATUS(status));
      } else if (WIFSIGNALED(status)) {
        how = "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
              strsignal(WTERMSIG(status)) + ")";
      } else {
        how = "ended with wait status " + std::to_string(status);
      }
      std::fprintf(stderr, "%s: FAILED: @%s %s in %s round %d\n  command: %s\n%s", kProg,
                   cmd.label.c_str(), how.c_str(), warmup ? "warm-up" : "timed", round_no,
                   describe_argv(cmd).c_str(),
                   show_ ? "" : "  (rerun with --show to see its output)\n");
      std::exit(1);
    }
    return elapsed;
  }

 private:
  static void check(int err, const char* what) {
    if (err != 0) {
      std::fprintf(stderr, "%s: %s: %s\n", kProg, what, std::strerror(err));
      std::exit(1);
    }
  }

  posix_spawn_file_actions_t actions_{};
  posix_spawnattr_t attr_{};
  bool show_;
};

// Linear interpolation between closest ranks; `sorted` is non-empty.
double percentile(const std::vector<double>& sorted, double p) {
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

struct Stats {
  double median = 0, p10 = 0, p90 = 0, min = 0;
};

Stats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return Stats{percentile(samples, 0.5), percentile(samples, 0.1), percentile(samples, 0.9),
               samples.front()};
}

void print_results(const Options& opt) {
  std::vector<Stats> stats;
  stats.reserve(opt.commands.size());
  std::size_t width = 5;
  for (const Command& c : opt.commands) {
    stats.push_back(stats_of(c.samples_ms));
    width = std::max(width, c.label.size() + 1);
  }
  const double base = stats.front().median;
  const auto ratio = [base](double m) { return base > 0 ? m / base : 0.0; };
  const int w = static_cast<int>(width);

  if (opt.markdown) {
    std::printf("| command | median ms | p10 ms | p90 ms | min ms | ratio to @%s |\n",
                opt.commands.front().label.c_str());
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    for (std::size_t k = 0; k < stats.size(); ++k) {
      const Stats& s = stats[k];
      std::printf("| @%s | %.3f | %.3f | %.3f | %.3f | %.2f |\n", opt.commands[k].label.c_str(),
                  s.median, s.p10, s.p90, s.min, ratio(s.median));
    }
  } else {
    std::printf("# %d rounds (+%d warm-up), ratio = median / median of @%s\n", opt.rounds,
                opt.warmups, opt.commands.front().label.c_str());
    std::printf("# %-*s %10s %10s %10s %10s %8s\n", w - 2, "label", "median_ms", "p10_ms", "p90_ms",
                "min_ms", "ratio");
    for (std::size_t k = 0; k < stats.size(); ++k) {
      const Stats& s = stats[k];
      const std::string label = "@" + opt.commands[k].label;
      std::printf("%-*s %10.3f %10.3f %10.3f %10.3f %8.2f\n", w, label.c_str(), s.median, s.p10,
                  s.p90, s.min, ratio(s.median));
    }
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse_args(argc, argv);
  Spawner spawner(opt.show);

  const std::size_t ncmd = opt.commands.size();
  for (Command& c : opt.commands) c.samples_ms.reserve(static_cast<std::size_t>(opt.rounds));

  const int total = opt.warmups + opt.rounds;
  for (int round_no = 0; round_no < total; ++round_no) {
    const bool warmup = round_no < opt.warmups;
    const std::size_t first = opt.rotate ? static_cast<std::size_t>(round_no) % ncmd : 0;
    for (std::size_t k = 0; k < ncmd; ++k) {
      Command& cmd = opt.commands[(first + k) % ncmd];
      const int shown_round = warmup ? round_no + 1 : round_no - opt.warmups + 1;
      const double ms = spawner.run(cmd, shown_round, warmup);
      if (!warmup) cmd.samples_ms.push_back(ms);
    }
  }
  print_results(opt);
  return 0;
}
