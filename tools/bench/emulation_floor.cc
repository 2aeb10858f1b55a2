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
// `continue`. Usage: vigil_emulation_floor [-n OPENS] [-r ROUNDS] [DIR]
#include <fcntl.h>
#include <poll.h>
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
                        const std::vector<sock_filter>& program) {
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
double round_of(Mode mode, const std::string& path, long n,
                const std::vector<sock_filter>& program) {
  int sv[2], pv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(pv, O_CLOEXEC) != 0)
    return -1;
  vigil::UniqueFd ours(sv[0]), theirs(sv[1]), rd(pv[0]), wr(pv[1]);
  const pid_t pid = ::fork();
  if (pid == 0) child(theirs.get(), wr.get(), path, n, program);
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
  while ((opt = ::getopt(argc, argv, "n:r:")) != -1) {
    if (opt == 'n')
      n = std::atol(optarg);
    else if (opt == 'r')
      rounds = std::atoi(optarg);
    else
      return 2;
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
      const double ns = round_of(modes[m], path, n, *program);
      if (ns < 0) {
        std::fprintf(stderr, "vigil_emulation_floor: %s round failed\n", name(modes[m]));
        return 1;
      }
      if (r > 0) per[m].push_back(ns);
    }
  }
  ::unlink(path.c_str());
  double load[3] = {};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("emulation floor: %d rounds of %ld write-opens in %s, load %.2f %.2f %.2f\n", rounds,
              n, dir.c_str(), load[0], load[1], load[2]);
  const double base = median(per[0]);
  for (int m = 0; m < 3; ++m)
    std::printf("%-11s %8.0f ns per open (incl. the open)  %.2fx continue\n", name(modes[m]),
                median(per[m]), median(per[m]) / base);
  return 0;
}
