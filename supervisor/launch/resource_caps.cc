#include "supervisor/launch/resource_caps.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/wire/init_args.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

namespace vigil {
namespace {

constexpr const char* kSupervisorLeaf = "vigil-supervisor";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool writable(const std::string& path) { return ::access(path.c_str(), W_OK) == 0; }

bool is_cgroup2(const std::string& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 &&
         static_cast<unsigned long>(fs.f_type) == CGROUP2_SUPER_MAGIC;
}

bool has_word(const std::string& list, const std::string& word) {
  std::istringstream in(list);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// This thread's cgroup in each hierarchy: "" -> the v2 path; "pids", "memory" -> v1.
std::string own_cgroup(const std::string& controller) {
  // The calling thread's: a launching thread sits in a command's v1 cgroups for the
  // moment of its spawn (CommandCaps::enter), and the others must not take that for home.
  std::istringstream in(read_text("/proc/thread-self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string id = line.substr(0, a);
    const std::string list = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controller.empty()) {
      if (id == "0" && list.empty()) return path;
      continue;
    }
    std::istringstream names(list);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == controller) return path;
    }
  }
  return "";
}

std::string v2_mount() {
  if (is_cgroup2("/sys/fs/cgroup")) return "/sys/fs/cgroup";
  if (is_cgroup2("/sys/fs/cgroup/unified")) return "/sys/fs/cgroup/unified";
  return "";
}

std::string join(const std::string& mount, const std::string& path) {
  return path == "/" ? mount : mount + path;
}

// The v2 directory children can be made under, or "". In the root cgroup, vigil may stay
// where it is; anywhere else cgroup v2 lets a cgroup with processes hand no controller
// down, so vigil needs the whole cgroup (a scope of its own): it moves into a leaf,
// kSupervisorLeaf, and the cgroup above it becomes the parent (take_over_v2()).
struct V2Candidate {
  std::string dir;
  bool memory = false;
  bool take_over = false;
};
V2Candidate find_v2() {
  const std::string mount = v2_mount();
  if (mount.empty()) return {};
  std::string path = own_cgroup("");
  if (path.empty() || path[0] != '/') return {};
  bool in_leaf = false;
  const auto slash = path.rfind('/');
  if (path.substr(slash + 1) == kSupervisorLeaf) {
    path = slash == 0 ? "/" : path.substr(0, slash);
    in_leaf = true;
  }
  const std::string dir = join(mount, path);
  const std::string controllers = read_text(dir + "/cgroup.controllers");
  if (!has_word(controllers, "pids")) return {};
  if (!writable(dir) || !writable(dir + "/cgroup.subtree_control") ||
      !writable(dir + "/cgroup.procs")) {
    return {};
  }
  V2Candidate c{dir, has_word(controllers, "memory"), false};
  if (path == "/" || in_leaf) return c;
  // Only a cgroup that holds vigil alone can be taken over.
  std::istringstream procs(read_text(dir + "/cgroup.procs"));
  std::string pid;
  while (procs >> pid) {
    if (pid != std::to_string(::getpid())) return {};
  }
  c.take_over = true;
  return c;
}

Result<void> write_file(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return system_error("cannot open " + path);
  if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
    return system_error("cannot write " + value + " to " + path);
  return {};
}

Result<void> take_over_v2(const std::string& dir, bool memory) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  const std::string leaf = dir + "/" + kSupervisorLeaf;
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return system_error("mkdir " + leaf);
  if (auto r = write_file(leaf + "/cgroup.procs", std::to_string(::getpid())); !r) return r;
  const std::string enable = memory ? "+pids +memory" : "+pids";
  return write_file(dir + "/cgroup.subtree_control", enable);
}

// The value of "<key> N" in a flat-keyed cgroup file.
std::uint64_t counter(const std::string& file, const std::string& key) {
  std::istringstream in(read_text(file));
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

// The sandbox's processes: its own /proc, seen through its PID 1's root.
std::uint64_t sandbox_processes(pid_t init_pid) {
  const std::string dir = "/proc/" + std::to_string(init_pid) + "/root/proc";
  // Until bwrap has switched the sandbox's root, that is the host's /proc: not counted.
  struct stat ours {}, theirs {};
  if (::stat("/proc", &ours) != 0 || ::stat(dir.c_str(), &theirs) != 0 ||
      ours.st_dev == theirs.st_dev) {
    return 0;
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  std::uint64_t n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9') ++n;
  }
  ::closedir(d);
  return n;
}

std::atomic<unsigned> g_serial{0};

}  // namespace

HostLimits probe_host_limits() {
  HostLimits h;
  h.root = ::geteuid() == 0;
  utsname u{};
  if (::uname(&u) == 0) {
    int major = 0, minor = 0;
    if (std::sscanf(u.release, "%d.%d", &major, &minor) == 2) {
      h.nproc_per_userns = major > 5 || (major == 5 && minor >= 14);
    }
  }
  const V2Candidate v2 = find_v2();
  h.cgroup2_dir = v2.dir;
  h.cgroup2_memory = v2.memory;
  for (const char* c : {"pids", "memory"}) {
    const std::string mount = std::string("/sys/fs/cgroup/") + c;
    if (is_cgroup2(mount)) continue;
    const std::string path = own_cgroup(c);
    if (path.empty() || path[0] != '/') continue;
    const std::string dir = join(mount, path);
    if (::access((dir + "/cgroup.procs").c_str(), F_OK) != 0 || !writable(dir)) continue;
    (std::string(c) == "pids" ? h.cgroup1_pids_dir : h.cgroup1_memory_dir) = dir;
  }
  std::istringstream mem(read_text("/proc/meminfo"));
  std::string k;
  std::uint64_t kb = 0;
  while (mem >> k >> kb) {
    if (k == "MemTotal:") h.mem_total_bytes = kb * 1024;
    std::string unit;
    std::getline(mem, unit);
  }
  return h;
}

Result<std::unique_ptr<CommandCaps>> CommandCaps::create(const CapPlan& plan) {
  std::unique_ptr<CommandCaps> caps(new CommandCaps(plan));
  if (plan.processes_via == CapVia::kCgroup2 || plan.memory_via == CapVia::kCgroup2) {
    const V2Candidate v2 = find_v2();
    if (v2.take_over) {
      VIGIL_TRY_VOID(take_over_v2(v2.dir, v2.memory));
    } else if (!v2.dir.empty()) {
      const std::string want = v2.memory ? "+pids +memory" : "+pids";
      const std::string have = read_text(v2.dir + "/cgroup.subtree_control");
      if (!has_word(have, "pids") || (v2.memory && !has_word(have, "memory"))) {
        VIGIL_TRY_VOID(write_file(v2.dir + "/cgroup.subtree_control", want));
      }
    }
  }
  const std::string name = "vigil-" + std::to_string(::getpid()) + "-" +
                           std::to_string(g_serial.fetch_add(1));
  for (const auto& parent : plan.cgroup_parents) {
    const std::string dir = parent + "/" + name;
    // A vigil that was killed leaves its cgroups behind, and the name comes back with its
    // pid. This process's pid and serial make the name ours now: one left empty is
    // removed (rmdir fails on a cgroup with processes or children) and made anew.
    if (::mkdir(dir.c_str(), 0755) != 0 &&
        (errno != EEXIST || ::rmdir(dir.c_str()) != 0 || ::mkdir(dir.c_str(), 0755) != 0)) {
      return system_error("cannot make the command's cgroup " + dir +
                          " (vigil.limits; set its caps to 0 to run without them)");
    }
    caps->dirs_.push_back(dir);
    caps->v2_.push_back(is_cgroup2(parent));
  }
  auto dir_of = [&](const std::string& parent) {
    for (std::size_t i = 0; i < plan.cgroup_parents.size(); ++i) {
      if (plan.cgroup_parents[i] == parent) return caps->dirs_[i];
    }
    return std::string();
  };
  for (const auto& w : plan.writes) {
    const std::string file = dir_of(w.parent_dir) + "/" + w.file;
    if (w.optional && ::access(file.c_str(), F_OK) != 0) continue;
    if (auto r = write_file(file, w.value); !r && !w.optional) return std::move(r).error();
  }
  for (const auto& w : plan.watches) {
    caps->base_.push_back(counter(dir_of(w.parent_dir) + "/" + w.file, w.key));
  }
  return caps;
}

CommandCaps::~CommandCaps() {
  // (No leave() here: only the thread that entered may leave, and launch_bwrap always
  // does, right after the spawn.)
  if (mover_.joinable()) mover_.join();
  // The sandbox's PID 1 took its PID namespace with it; what is left is on its way out.
  // Anything still there is killed, and each cgroup removed once empty (bounded wait).
  for (const auto& dir : dirs_) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::rmdir(dir.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < deadline) {
      if (::access((dir + "/cgroup.kill").c_str(), F_OK) == 0) {
        (void)write_file(dir + "/cgroup.kill", "1");
      } else {
        std::istringstream procs(read_text(dir + "/cgroup.procs"));
        pid_t pid = 0;
        // Never ourselves: on cgroup v1 a thread of this supervisor enters a command's
        // cgroups to spawn its bwrap (enter()), and cgroup.procs lists a process when any
        // of its threads is inside. In an agent session, one command's teardown while
        // another thread was in that cgroup killed the whole session's supervisor.
        while (procs >> pid) {
          if (pid != ::getpid()) ::kill(pid, SIGKILL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

Result<void> CommandCaps::enter() {
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    if (v2_[i]) continue;
    entered_ = true;
    if (auto r = write_file(dirs_[i] + "/tasks", "0"); !r) {
      leave();
      return r;
    }
  }
  return {};
}

void CommandCaps::leave() {
  if (!entered_) return;
  // In v1 the parent is this process's own cgroup (cap_plan.h): back where it was.
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    if (!v2_[i]) (void)write_file(plan_.cgroup_parents[i] + "/tasks", "0");
  }
  entered_ = false;
}

void CommandCaps::begin_adopt(pid_t sandbox) {
  if (mover_.joinable()) return;
  bool any = false;
  for (const bool v2 : v2_) any = any || v2;
  if (!any) return;
  moved_.reset();
  mover_ = std::thread([this, sandbox] {
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
      if (!v2_[i]) continue;
      if (auto r = write_file(dirs_[i] + "/cgroup.procs", std::to_string(sandbox)); !r) {
        moved_ = std::move(r);
        return;
      }
    }
    moved_ = Result<void>{};
  });
}

Result<void> CommandCaps::end_adopt() {
  bool any = false;
  for (const bool v2 : v2_) any = any || v2;
  if (!any) return {};
  if (!mover_.joinable()) {
    return make_error(Errc::kInternal, "the sandbox was never put into the command's cgroups");
  }
  mover_.join();
  return std::move(*moved_);
}

std::vector<std::string> CommandCaps::init_args() const {
  wire::InitArgs init;
  for (const auto& r : plan_.rlimits) init.rlimits.push_back({r.name, r.value});
  return wire::option_args(init);
}

int CommandCaps::check_every_ms() const {
  return plan_.watches.empty() && !plan_.count_processes ? -1 : 100;
}

std::string CommandCaps::check(pid_t init_pid) {
  for (std::size_t i = 0; i < plan_.watches.size(); ++i) {
    const auto& w = plan_.watches[i];
    for (std::size_t d = 0; d < plan_.cgroup_parents.size(); ++d) {
      if (plan_.cgroup_parents[d] != w.parent_dir) continue;
      if (counter(dirs_[d] + "/" + w.file, w.key) > base_[i]) return w.limit;
    }
  }
  // RLIMIT_NPROC: forks past the cap fail, and a fork bomb spins there; the sandbox's
  // process count (vigil-init's own tasks aside) reaching the cap ends it.
  if (plan_.count_processes && init_pid > 0 &&
      sandbox_processes(init_pid) >= plan_.processes + 1) {
    return "pids";
  }
  return "";
}

}  // namespace vigil
