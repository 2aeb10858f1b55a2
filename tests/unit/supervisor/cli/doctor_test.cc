// `vigil doctor`'s findings, golden: for each table of host facts, the exact text it
// prints (every fix spelled out) and whether vigil says it can sandbox.
#include "supervisor/cli/doctor.h"

#include <gtest/gtest.h>

#if !defined(__APPLE__)  // probe_command.cc is Linux's
namespace vigil {
namespace {

HostFacts good() {
  HostFacts f;
  f.bwrap = "/usr/bin/bwrap";
  f.bwrap_version = "bubblewrap 0.8.0";
  f.userns_works = true;
  f.bwrap_userns_error = "";
  f.max_user_namespaces = 15000;
  f.seccomp_user_notif = true;
  f.seccomp_notif_recv = true;
  f.seccomp_sync_wake_up = true;
  f.seccomp_wait_killable_recv = true;
  f.seccomp_addfd_send = true;
  f.caps.enforced = true;
  f.caps.processes = f.caps.memory = f.caps.file_size = "rlimit";
  f.caps.detail = "rlimits";
  return f;
}

// Lines most tables share.
const std::string kBwrapOk =
    "ok   bubblewrap                                     /usr/bin/bwrap (bubblewrap 0.8.0)\n";
const std::string kNotifOk =
    "ok   seccomp USER_NOTIF (observer)                  filters install and notifications "
    "round-trip\n";
const std::string kGateOk =
    "ok   NOTIF_ADDFD + ADDFD_FLAG_SEND (gatekeeper)     vigil-init performs write-intent calls "
    "itself\n"
    "ok   network capture (vigil.network.capture)        programs that ignore the proxy "
    "settings are carried through the proxy\n";
const std::string kKillableOk =
    "ok   FILTER_FLAG_WAIT_KILLABLE_RECV                 available\n";
// The optional seccomp features, all present (every row but the one about them).
// The resource caps of vigil.limits, enforceable (the last finding before odd mounts).
const std::string kCapsOk = "ok   resource caps (vigil.limits defaults)          rlimits\n";
const std::string kSyncOk = kGateOk + kKillableOk +
                            "ok   USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)  available\n" +
                            kCapsOk;

constexpr const char* kCannot =
    "vigil CANNOT sandbox commands here: fix the MISS lines above (vigil never runs a command "
    "unconfined on its own).\n";

struct Row {
  const char* name;
  HostFacts facts;
  std::string want;
};

std::vector<Row> rows() {
  std::vector<Row> out;
  out.push_back({"all good", good(),
                 kBwrapOk +
                     "ok   user namespaces                                bwrap can make a user "
                     "namespace\n" +
                     kNotifOk + kSyncOk + "vigil can sandbox commands here.\n"});
  {
    HostFacts f = good();
    f.userns_works = false;
    f.bwrap_userns_error = "bwrap: setting up uid map: Permission denied";
    f.apparmor_restrict_userns = 1;
    out.push_back(
        {"ubuntu 24.04 apparmor", f,
         kBwrapOk +
             "MISS user namespaces                                AppArmor restricts "
             "unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and "
             "no AppArmor profile lets bwrap make them\n"
             "     fix: sudo cp /usr/share/apparmor/extra-profiles/bwrap-userns-restrict "
             "/etc/apparmor.d/ && sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict "
             "(Ubuntu 24.04+); or, for every program on the machine, sudo sysctl -w "
             "kernel.apparmor_restrict_unprivileged_userns=0\n" +
             kNotifOk + kSyncOk + kCannot});
  }
  {
    HostFacts f = good();
    f.userns_works = false;
    f.bwrap_userns_error = "bwrap: No permissions to create new namespace";
    f.max_user_namespaces = 0;
    out.push_back({"max_user_namespaces 0", f,
                   kBwrapOk +
                       "MISS user namespaces                                "
                       "user.max_user_namespaces is 0\n"
                       "     fix: sudo sysctl -w user.max_user_namespaces=15000 (and the same "
                       "line in /etc/sysctl.d/99-userns.conf to keep it)\n" +
                       kNotifOk + kSyncOk + kCannot});
  }
  {
    HostFacts f = good();
    f.userns_works = false;
    f.bwrap_userns_error = "bwrap: Creating new namespace failed: Operation not permitted";
    f.container = "docker";
    f.root = true;
    f.cap_sys_admin_bounding = false;
    f.seccomp_sync_wake_up = false;
    out.push_back({"docker default profile", f,
                   kBwrapOk +
                       "info container                                      running inside a "
                       "docker container\n"
                       "MISS user namespaces                                refused inside a "
                       "docker container (Docker's default seccomp profile refuses unshare and "
                       "clone(CLONE_NEWUSER))\n"
                       "     fix: start the container with --security-opt seccomp=unconfined "
                       "--security-opt apparmor=unconfined, or run vigil on the host; as root, "
                       "keeping CAP_SYS_ADMIN also works (docker run --cap-add SYS_ADMIN)\n"
                       "info CAP_SYS_ADMIN                                  dropped from the "
                       "bounding set: bwrap must use a user namespace\n" +
                       kNotifOk + kGateOk + kKillableOk +
                       "info USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)  optional: a kernel "
                       ">= 6.6 has it\n" +
                       kCapsOk + kCannot});
  }
  {
    HostFacts f = good();
    f.bwrap.clear();
    f.bwrap_userns_error = "not tried";
    f.wsl = "wsl1";
    f.seccomp_user_notif = false;
    f.seccomp_error = "seccomp(SECCOMP_SET_MODE_FILTER): Invalid argument";
    out.push_back({"wsl1 without bwrap", f,
                   "MISS bubblewrap                                     bwrap not found on "
                   "PATH\n"
                   "     fix: sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf "
                   "install bubblewrap (Fedora)\n"
                   "MISS WSL                                            WSL1 has neither "
                   "namespaces nor seccomp\n"
                   "     fix: convert the distribution to WSL2: wsl --set-version <distro> 2\n"
                   "ok   user namespaces                                unprivileged user "
                   "namespaces work\n"
                   "MISS seccomp USER_NOTIF (observer)                  "
                   "seccomp(SECCOMP_SET_MODE_FILTER): Invalid argument\n"
                   "     fix: a kernel >= 5.5 with CONFIG_SECCOMP_FILTER=y\n" +
                       kSyncOk + kCannot});
  }
  {
    HostFacts f = good();
    f.seccomp_notif_recv = false;
    f.wsl = "wsl2";
    out.push_back({"notif recv refused", f,
                   kBwrapOk +
                       "info WSL                                            WSL2: a real Linux "
                       "kernel; the checks below apply\n"
                       "ok   user namespaces                                bwrap can make a "
                       "user namespace\n"
                       "MISS SECCOMP_IOCTL_NOTIF_RECV                       a notification could "
                       "not be received and answered (a kernel < 5.5, or an LSM refusing the "
                       "ioctl)\n"
                       "     fix: a kernel >= 5.5; where SELinux or AppArmor denies the ioctl, "
                       "allow ioctl on the seccomp listener for vigil-init\n" +
                       kSyncOk + kCannot});
  }
  {
    // A kernel before 5.14: vigil runs, and says its writes are witnessed, not performed.
    HostFacts f = good();
    f.seccomp_addfd_send = false;
    f.seccomp_wait_killable_recv = false;
    f.seccomp_sync_wake_up = false;
    out.push_back(
        {"no gatekeeper", f,
         kBwrapOk +
             "ok   user namespaces                                bwrap can make a user "
             "namespace\n" +
             kNotifOk +
             "warn NOTIF_ADDFD + ADDFD_FLAG_SEND (gatekeeper)     witness: best-effort (writes "
             "are observed, not performed, so a racing thread can write under a name the log "
             "does not show)\n"
             "     fix: a kernel >= 5.14\n"
             "warn network capture (vigil.network.capture)        off on this kernel: programs "
             "that ignore the proxy settings find no network, as before\n"
             "     fix: a kernel >= 5.14 (ADDFD_FLAG_SETFD is 5.9, the gatekeeper's connect() "
             "trap 5.14)\n"
             "info FILTER_FLAG_WAIT_KILLABLE_RECV                 optional: a kernel >= 5.19 has "
             "it\n"
             "info USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)  optional: a kernel >= 6.6 has "
             "it\n" +
             kCapsOk + "vigil can sandbox commands here.\n"});
  }
  {
    // Root without a cgroup vigil may manage: RLIMIT_NPROC does not bind root, so the
    // default process cap cannot be enforced and vigil run refuses (with this fix).
    HostFacts f = good();
    f.caps.enforced = false;
    f.caps.detail = "no cgroup to manage";
    out.push_back({"no caps", f,
                   kBwrapOk +
                       "ok   user namespaces                                bwrap can make a user "
                       "namespace\n" +
                       kNotifOk + kGateOk + kKillableOk +
                       "ok   USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)  available\n"
                       "MISS resource caps (vigil.limits defaults)          no cgroup to manage\n"
                       "     fix: see the message: a cgroup vigil may manage, or "
                       "vigil.limits.processes set to 0\n" +
                       kCannot});
  }
  {
    // Another root's /sys below /tmp (a chroot): listed before the first run, with the fix.
    HostFacts f = good();
    f.odd_mounts.push_back({"/tmp/chroot/sys", "sysfs", "another root's /sys"});
    out.push_back({"odd mount", f,
                   kBwrapOk +
                       "ok   user namespaces                                bwrap can make a user "
                       "namespace\n" +
                       kNotifOk + kSyncOk +
                       "note /tmp/chroot/sys                                sysfs: another root's "
                       "/sys\n"
                       "     fix: read-only in every sandbox; if `vigil run` refuses one, add it to "
                       "filesystem.denyRead (a tmpfs hides it) or unmount it\n"
                       "vigil can sandbox commands here.\n"});
  }
  {
    // The trial sandbox judged them: one read-only (nothing to do), one left writable
    // (every run is refused until it is hidden or unmounted).
    HostFacts f = good();
    f.odd_mounts.push_back({"/tmp/a/sys", "sysfs", "another root's /sys",
                            OddMount::Trial::kReadOnly});
    f.odd_mounts.push_back({"/tmp/b/sys", "sysfs", "another root's /sys",
                            OddMount::Trial::kWritable});
    out.push_back({"odd mounts tried", f,
                   kBwrapOk +
                       "ok   user namespaces                                bwrap can make a user "
                       "namespace\n" +
                       kNotifOk + kSyncOk +
                       "note /tmp/a/sys                                     sysfs: another root's "
                       "/sys; read-only in a trial sandbox\n"
                       "MISS /tmp/b/sys                                     sysfs: another root's "
                       "/sys\n"
                       "     fix: bwrap left it writable in a trial sandbox, so `vigil run` refuses "
                       "to start while it is mounted: add \"/tmp/b/sys\" to filesystem.denyRead "
                       "(a tmpfs hides it), or unmount it (sudo umount -R /tmp/b/sys)\n" +
                       kCannot});
  }
  {
    // In a container whose /proc has masked entries: the trial names the key that runs.
    HostFacts f = good();
    f.trial_error = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted";
    out.push_back(
        {"trial refused a new /proc", f,
         kBwrapOk +
             "ok   user namespaces                                bwrap can make a user "
             "namespace\n" +
             kNotifOk + kSyncOk +
             "MISS a trial sandbox (bwrap as vigil run makes one) bwrap: Can't mount proc on "
             "/newroot/proc: Operation not permitted\n"
             "     fix: this /proc has masked entries (a container), so a new /proc is refused to a "
             "user namespace: set \"enableWeakerNestedSandbox\": true in the settings (weaker: "
             "the command then sees the container's processes), or give the container an "
             "unmasked /proc (docker run --security-opt systempaths=unconfined)\n" +
             kCannot});
  }
  return out;
}

TEST(DoctorTest, GoldenFindings) {
  for (const auto& r : rows()) {
    SCOPED_TRACE(r.name);
    const auto findings = diagnose(r.facts);
    EXPECT_EQ(render_doctor(findings), r.want);
    const bool ok = r.want.find("vigil can sandbox") != std::string::npos;
    EXPECT_EQ(can_sandbox(findings), ok);
    for (const auto& x : findings) {
      if (x.level == Finding::Level::kMiss) {
        EXPECT_FALSE(x.fix.empty()) << x.id;
      }
    }
  }
}

TEST(DoctorTest, RootWithCapSysAdminNeedsNoUserNamespace) {
  HostFacts f = good();
  f.userns_works = false;
  f.bwrap_userns_error = "x";
  f.root = true;
  EXPECT_TRUE(can_sandbox(diagnose(f)));
}

TEST(DoctorTest, Json) {
  HostFacts f = good();
  f.max_user_namespaces = 0;
  f.userns_works = false;
  f.bwrap_userns_error = "denied";
  const std::string j = render_doctor_json(diagnose(f));
  EXPECT_EQ(j.rfind("{\"sandbox_available\":false,\"findings\":[", 0), 0u) << j;
  EXPECT_NE(
      j.find(
          R"({"id":"userns","level":"MISS","what":"user namespaces","detail":"user.max_user_namespaces is 0","fix":"sudo sysctl -w user.max_user_namespaces=15000)"),
      std::string::npos)
      << j;
  EXPECT_EQ(j.back(), '\n');
}

}  // namespace
}  // namespace vigil
#endif
