// Hosts with odd mounts (supervisor/launch/odd_mounts.h): a chroot's binds of /sys and /proc
// under a temp directory, a nested /proc, a tmpfs, an overlay. Each case is set up as
// root in a private mount namespace (`unshare -m --propagation private`: nothing reaches
// the host's table, and the mounts end with the namespace), and inside it `vigil probe`
// and `vigil run` are run as root and as the unprivileged user vigil-ci: probe lists the
// odd mount before the first run, and the run works with the mount read-only inside.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

struct Case {
  const char* name;
  std::string setup;     // sh commands, with R for the temp directory
  std::string listed;    // the mount probe must list ("" for none), relative to R
  std::string write_to;  // a directory inside the case's mount, relative to R
};

std::string replace_r(const std::string& s, const std::string& root) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "R/") == 0) {
      out += root;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The user every unprivileged pass runs as (tools/test.sh makes it).
const passwd* ci_user() { return ::getpwnam("vigil-ci"); }

// Runs `vigil ARGS` inside a private mount namespace set up by `setup`, as root or (with
// `as_ci`) as vigil-ci with a home of its own.
Outcome run_in_namespace(const std::string& setup, bool as_ci, const TempDir& ci_home,
                         const std::vector<std::string>& args, const std::string& cwd) {
  std::string script = "set -e; " + setup + "; ";
  if (as_ci) {
    script += "exec /usr/sbin/runuser -u vigil-ci -- env -i PATH=/usr/bin:/bin HOME=" + ci_home.path() +
              " XDG_STATE_HOME=" + ci_home.path() + "/state \"$@\"";
  } else {
    script += "exec \"$@\"";
  }
  return run_vigil(args, cwd, 60, {}, "",
                   {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script,
                    "sh"});
}

void check_case(const Case& c) {
  SCOPED_TRACE(c.name);
  if (::geteuid() != 0) GTEST_SKIP() << "setting up host mounts needs root (the root pass does)";
  if (::access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "needs unshare (util-linux)";
  TempDir root, ws, ci_home;
  const passwd* ci = ci_user();
  for (const bool as_ci : {false, true}) {
    SCOPED_TRACE(as_ci ? "as vigil-ci" : "as root");
    if (as_ci && ci == nullptr) {
      ADD_FAILURE() << "no user vigil-ci: tools/test.sh creates it (useradd --system vigil-ci)";
      continue;
    }
    if (as_ci) {
      // The unprivileged user reads the case's tree and works in its own workspace.
      ASSERT_EQ(::chmod(root.path().c_str(), 0755), 0);
      ASSERT_EQ(::chown(ws.path().c_str(), ci->pw_uid, ci->pw_gid), 0);
      ASSERT_EQ(::chown(ci_home.path().c_str(), ci->pw_uid, ci->pw_gid), 0);
    }
    const std::string setup = replace_r(c.setup, root.path());
    const auto probe = run_in_namespace(setup, as_ci, ci_home, {"probe"}, ws.path());
    if (!c.listed.empty()) {
      // Listed, and judged by doctor's trial sandbox: read-only there (a run then works,
      // as below), or left writable with the fix.
      const std::string path = root.path() + "/" + c.listed + " ";
      const std::size_t at = probe.out.find(path);
      ASSERT_NE(at, std::string::npos) << "probe does not list it:\n" << probe.out << probe.err;
      const std::string line = probe.out.substr(at, probe.out.find('\n', at) - at);
      EXPECT_TRUE(line.find("read-only in a trial sandbox") != std::string::npos ||
                  probe.out.find("filesystem.denyRead") != std::string::npos)
          << probe.out;
    } else {
      EXPECT_EQ(probe.out.find("note " + root.path()), std::string::npos) << probe.out;
    }
    const std::string target = root.path() + "/" + c.write_to + "/vigil-odd-mount-write";
    const auto run = run_in_namespace(
        setup, as_ci, ci_home,
        {"run", "--", "sh", "-c",
         "if touch '" + target + "' 2>/dev/null; then echo wrote; else echo refused; fi; echo ran"},
        ws.path());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "refused\nran\n") << run.err;
  }
}

// A bind of /sys below a directory only root may enter: as root the trial makes it
// read-only (a note, nothing to do); as vigil-ci bwrap cannot reach it to remount it, so
// doctor says MISS with the exact fix, and `vigil run` is indeed refused until then.
TEST(OddMounts, DoctorTriesWhatBwrapCannotMakeReadOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "setting up host mounts needs root (the root pass does)";
  if (::access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "needs unshare (util-linux)";
  const passwd* ci = ci_user();
  ASSERT_NE(ci, nullptr) << "no user vigil-ci: tools/test.sh creates it (useradd --system vigil-ci)";
  TempDir root, ws, ci_home;
  ASSERT_EQ(::chmod(root.path().c_str(), 0755), 0);
  ASSERT_EQ(::chown(ws.path().c_str(), ci->pw_uid, ci->pw_gid), 0);
  ASSERT_EQ(::chown(ci_home.path().c_str(), ci->pw_uid, ci->pw_gid), 0);
  const std::string sys = root.path() + "/priv/sys";
  // Each run makes its own namespace: the directories stay, the mount is made again.
  const std::string setup = "mkdir -p " + sys + " && chmod 0700 " + root.path() +
                            "/priv && mount --rbind /sys " + sys;
  const auto as_root = run_in_namespace(setup, false, ci_home, {"doctor"}, ws.path());
  EXPECT_NE(as_root.out.find("note " + sys + " "), std::string::npos) << as_root.out;
  EXPECT_NE(as_root.out.find("read-only in a trial sandbox"), std::string::npos) << as_root.out;
  const auto as_ci = run_in_namespace(setup, true, ci_home, {"doctor"}, ws.path());
  EXPECT_NE(as_ci.out.find("MISS " + sys + " "), std::string::npos) << as_ci.out << as_ci.err;
  EXPECT_NE(as_ci.out.find("add \"" + sys + "\" to filesystem.denyRead (a tmpfs hides it), or "
                           "unmount it (sudo umount -R " + sys + ")"),
            std::string::npos)
      << as_ci.out;
  EXPECT_EQ(as_ci.exit_code, 1) << "a MISS: doctor says vigil cannot sandbox here";
  // What doctor predicted: the run is refused, naming the mount.
  const auto run = run_in_namespace(setup, true, ci_home, {"run", "--", "true"}, ws.path());
  EXPECT_EQ(run.exit_code, 125) << run.err;
  EXPECT_NE(run.err.find(sys), std::string::npos) << run.err;
}

TEST(OddMounts, AChrootsRecursiveBindOfSys) {
  check_case({"rbind /sys", "mkdir -p R/sys; mount --rbind /sys R/sys", "sys", "sys"});
}

TEST(OddMounts, AChrootsRecursiveBindOfProc) {
  check_case({"rbind /proc", "mkdir -p R/proc; mount --rbind /proc R/proc", "proc", "proc"});
}

TEST(OddMounts, ANestedProc) {
  check_case({"nested /proc", "mkdir -p R/proc; mount -t proc proc R/proc", "proc", "proc"});
}

TEST(OddMounts, AnOverlayAsDockerMakes) {
  if (::geteuid() == 0 && std::system("grep -qw overlay /proc/filesystems") != 0)
    GTEST_SKIP() << "no overlay filesystem in this kernel";
  check_case({"overlay",
              "mkdir -p R/l R/u R/w R/merged; mount -t overlay overlay "
              "-o lowerdir=R/l,upperdir=R/u,workdir=R/w R/merged",
              "merged", "merged"});
}

// A tmpfs is no odd mount (hosts have many): not listed, read-only inside all the same.
TEST(OddMounts, ATmpfsIsReadOnlyInsideAndNotListed) {
  check_case({"tmpfs", "mount -t tmpfs tmpfs R/", "", "."});
}

TEST(OddMounts, Fuse) {
  if (::access("/usr/bin/bindfs", X_OK) != 0 && ::access("/usr/bin/sshfs", X_OK) != 0)
    GTEST_SKIP() << "no FUSE filesystem to mount here (bindfs or sshfs): not tested";
  check_case({"fuse", "mkdir -p R/src R/fuse; bindfs R/src R/fuse", "fuse", "fuse"});
}

}  // namespace
}  // namespace vigil::test
