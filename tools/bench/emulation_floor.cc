// vigil_emulation_floor: what the gatekeeper's mechanism itself costs per trapped write,
// apart from everything vigil does around it. A forked child opens one file for writing
// N times under a USER_NOTIF filter (SYNC_WAKE_UP, the listener waited on with poll, as
// vigil-init does); the parent answers each open in one of three ways:
//   continue   read the path, answer CONTINUE: the kernel opens (a bare witness loop)
//   addfd      read the path, open it here, install the fd (NOTIF_ADDFD), close ours,
//              answer with the fd number: the emulation #13 asks for, as vigil-init does it
//   addfd-send the same with SECCOMP_ADDFD_FLAG_SEND (the install is the answer)
// nothing else (no judging, no cwd, no record). The filter is vigil's (notify_filter()). Rounds
// interleave the modes; medians of the child's ns per open are printed with each mode's ratio to
// `continue`.
//
// -c says where the two tasks run, to show what the hand-off costs (docs/performance/
// gatekeeper-2.md): the kernel wakes a caller answered with SEND on the listener's CPU when
// SYNC_WAKE_UP is set, but one answered with ADDFD with a plain wake-up, which the scheduler
// sends to an idle CPU when there is one; the listener's own wake-up after the install goes
// the same way. So:
//   idle    nothing pinned, the other CPUs idle: as vigil runs on a quiet machine (default)
//   busy    nothing pinned, a nice-19 busy loop on every CPU but the first (none idle)
//   pinned  child and listener on the first CPU, the listener SCHED_BATCH (the install's
//           wake-up does not preempt the caller): the hand-off with no CPU crossing at all
// Usage: vigil_emulation_floor [-n OPENS] [-r ROUNDS] [-c idle|busy|pinned] [DIR]
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "filters/bpf_compile.h"
#include "filters/notify_filter.h"
#include "filters/seccomp_notify.h"
#include "observer/fd_passing.h"
#include "supervisor/core/base/unique_fd.h"

namespace {

enum class Mode { kContinue, kAddfd, kAddfdSend };
enum class Cpus { kIdle, kBusy, kPinned };

bool pin_to_first_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

// Kills and reaps the busy loops started below.
void stop_busy_loops(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
}

// A nice-19 busy loop on each CPU but the first, so that none is idle: the PIDs, to be
// killed by the caller. Empty when a fork or a pin failed (the loops started are killed).
// Each loop also dies with this process, however it ends (PR_SET_PDEATHSIG).
std::vector<pid_t> start_busy_loops() {
  std::vector<pid_t> pids;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const pid_t parent = ::getpid();
  for (long cpu = 1; cpu < cpus; ++cpu) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) _exit(1);
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<int>(cpu), &set);
      if (::sched_setaffinity(0, sizeof set, &set) != 0 || ::nice(19) == -1) _exit(1);
      volatile unsigned long spins = 0;
      for (;;) spins = spins + 1;
    }
    if (pid < 0) {
      stop_busy_loops(pids);
      return {};
    }
    pids.push_back(pid);
  }
  return pids;
}
const char* name(Mode m) {
  return m == Mode::kContinue ? "continue" : m == Mode::kAddfd ? "addfd" : "addfd-send";
}

double now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// The child: installs vigil's own observer filter (notify_filter(): write-intent opens
// trapped), sends the listener over `sock`, times n opens and writes the ns per open to
// `out`. `program` was compiled before the fork.
[[noreturn]] void child(int sock, int out, const std::string& path, long n,
                        const std::vector<sock_filter>& program, Cpus cpus) {
  if (cpus == Cpus::kPinned && !pin_to_first_cpu()) _exit(3);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(3);
  auto installed = vigil::install_with_listener(program, 0);
  if (!installed) _exit(3);
  const int listener = installed->get();
  if (!vigil::init::send_fd(sock, listener)) _exit(3);
  installed->reset();  // ours: the parent has its copy
  const double a = now_ns();
  for (long i = 0; i < n; ++i) {
    vigil::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (!fd) _exit(4);
  }
  const double per = (now_ns() - a) / static_cast<double>(n);
  (void)!::write(out, &per, sizeof per);
  _exit(0);
}

// One round: the ns per open the child measured, or < 0 on a failure.
double round_of(Mode mode, const std::string& path, long n, const std::vector<sock_filter>& program,
                Cpus cpus) {
  int sv[2], pv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(pv, O_CLOEXEC) != 0)
    return -1;
  vigil::UniqueFd ours(sv[0]), theirs(sv[1]), rd(pv[0]), wr(pv[1]);
  const pid_t pid = ::fork();
  if (pid == 0) child(theirs.get(), wr.get(), path, n, program, cpus);
  theirs.reset();
  wr.reset();
  auto adopted = vigil::NotifyListener::adopt(vigil::init::receive_fd(ours.get()));
  if (!adopted) return -1;
  vigil::NotifyListener& listener = *adopted;
  (void)listener.set_sync_wake_up();
  char buf[PATH_MAX];
  for (;;) {
    pollfd p{listener.fd(), POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) continue;
    if ((p.revents & POLLIN) == 0) break;  // the child is gone
    vigil::Notification req;
    if (!listener.receive(&req)) continue;
    const long got = listener.read(req.pid, req.args[1], buf, 256);
    buf[got > 0 ? std::min<long>(got, 255) : 0] = '\0';
    if (mode == Mode::kContinue) {
      (void)listener.answer_continue(req.id);
      continue;
    }
    vigil::UniqueFd fd(::openat(AT_FDCWD, buf, static_cast<int>(req.args[2]) | O_CLOEXEC,
                                static_cast<mode_t>(req.args[3])));
    if (mode == Mode::kAddfdSend) {
      (void)listener.answer_with_fd(req.id, fd.get(), true);
      continue;
    }
    const long installed = listener.install_fd(req.id, fd.get(), true);
    fd.reset();
    (void)listener.answer(req.id, installed >= 0 ? installed : -1,
                          installed >= 0 ? 0 : static_cast<int>(-installed));
  }
  double per = -1;
  if (::read(rd.get(), &per, sizeof per) != static_cast<ssize_t>(sizeof per)) per = -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? per : -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long n = 20000;
  int rounds = 9;
  int opt;
  Cpus cpus = Cpus::kIdle;
  const char* cpus_name = "idle";
  while ((opt = ::getopt(argc, argv, "n:r:c:")) != -1) {
    if (opt == 'n') {
      n = std::atol(optarg);
    } else if (opt == 'r') {
      rounds = std::atoi(optarg);
    } else if (opt == 'c' && std::string(optarg) == "idle") {
      cpus = Cpus::kIdle;
    } else if (opt == 'c' && std::string(optarg) == "busy") {
      cpus = Cpus::kBusy;
    } else if (opt == 'c' && std::string(optarg) == "pinned") {
      cpus = Cpus::kPinned;
    } else {
      std::fprintf(stderr,
                   "usage: vigil_emulation_floor [-n OPENS] [-r ROUNDS] "
                   "[-c idle|busy|pinned] [DIR]\n");
      return 2;
    }
    if (opt == 'c') cpus_name = optarg;
  }
  // The listener (this process) is pinned and made SCHED_BATCH before any child is forked:
  // each child inherits the pin, and SCHED_RESET_ON_FORK starts it as SCHED_OTHER, as a
  // sandboxed caller runs.
  if (cpus == Cpus::kPinned) {
    sched_param none{};
    if (!pin_to_first_cpu() ||
        ::sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &none) != 0) {
      std::perror("vigil_emulation_floor: pin");
      return 1;
    }
  }
  std::vector<pid_t> busy;
  if (cpus == Cpus::kBusy) {
    busy = start_busy_loops();
    if (busy.empty() && ::sysconf(_SC_NPROCESSORS_ONLN) > 1) {
      std::perror("vigil_emulation_floor: busy loops");
      return 1;
    }
  }
  const std::string dir = optind < argc ? argv[optind] : "/dev/shm";
  const std::string path = dir + "/vigil-emulation-floor";
  auto program = vigil::compile_filter(vigil::notify_filter());
  if (!program) {
    std::fprintf(stderr, "vigil_emulation_floor: %s\n", program.error().message.c_str());
    return 1;
  }
  const Mode modes[] = {Mode::kContinue, Mode::kAddfd, Mode::kAddfdSend};
  std::vector<double> per[3];
  for (int r = 0; r <= rounds; ++r) {  // round 0 warms up
    for (int k = 0; k < 3; ++k) {
      const int m = (k + r) % 3;
      const double ns = round_of(modes[m], path, n, *program, cpus);
      if (ns < 0) {
        std::fprintf(stderr, "vigil_emulation_floor: %s round failed\n", name(modes[m]));
        stop_busy_loops(busy);
        return 1;
      }
      if (r > 0) per[m].push_back(ns);
    }
  }
  stop_busy_loops(busy);
  ::unlink(path.c_str());
  double load[3] = {};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("emulation floor: %d rounds of %ld write-opens in %s, CPUs %s, load %.2f %.2f %.2f\n",
              rounds, n, dir.c_str(), cpus_name, load[0], load[1], load[2]);
  const double base = median(per[0]);
  for (int m = 0; m < 3; ++m)
    std::printf("%-11s %8.0f ns per open (incl. the open)  %.2fx continue\n", name(modes[m]),
                median(per[m]), median(per[m]) / base);
  return 0;
}
