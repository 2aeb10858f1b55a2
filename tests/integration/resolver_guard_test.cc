// The address guard applied to what the SYSTEM resolver answers (not --test-resolve): an
// allowed name that the host's resolver maps to a cloud metadata address is refused.
//
// `vigil run` runs in namespaces the test makes: a private mount namespace where
// /etc/hosts is a file of the test's (getaddrinfo reads it on the host side, where the
// proxy resolves), and a fresh network namespace with only loopback up, so that nothing
// can leave even if the guard let the connection through (a broken guard fails the test
// with a connect error, never with traffic). As root the namespaces are made directly; as
// an unprivileged user inside a user namespace mapping only the user's own ids, whose
// capabilities vigil loses at exec.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool write_proc(const char* path, const std::string& text) {
  UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// In the forked child, before exec: the namespaces above. Reports on stderr (the run's
// captured stderr) what failed.
bool enter_namespaces(const std::string& hosts) {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  const int flags = CLONE_NEWNS | CLONE_NEWNET | (uid == 0 ? 0 : CLONE_NEWUSER);
  const auto fail = [](const char* what) {
    ::dprintf(2, "test set-up: %s: %s\n", what, std::strerror(errno));
    return false;
  };
  if (::unshare(flags) != 0) return fail("unshare");
  if (uid != 0) {
    if (!write_proc("/proc/self/setgroups", "deny") ||
        !write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
      return fail("id maps");
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("private /");
  if (::mount(hosts.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0)
    return fail("bind /etc/hosts");
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (!s || ::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return fail("lo flags");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) return fail("lo up");
  return true;
}

TEST(ResolverGuard, ANameTheSystemResolverMapsToAMetadataAddressIsRefused) {
  TempDir ws, cfg;
  write_file(cfg / "hosts",
             "127.0.0.1 localhost\n"
             "169.254.169.254 metadata-v4.test\n"
             "fd00:ec2::254 metadata-v6.test\n");
  write_file(cfg / "settings.json", R"({
    "filesystem": {"allowWrite": ["."]},
    "network": {"allowedDomains": ["metadata-v4.test", "metadata-v6.test"]}
  })");
  const std::string hosts = cfg / "hosts";
  const struct {
    const char* host;
    const char* address;
  } cases[] = {{"metadata-v4.test", "169.254.169.254"}, {"metadata-v6.test", "fd00:ec2::254"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.host);
    const std::string log = cfg / (std::string(c.host) + ".jsonl");
    const Outcome o = run_vigil(
        {"run", "--settings", cfg / "settings.json", "--log", log, "--", "curl", "-sS", "-i",
         "--max-time", "20", "http://" + std::string(c.host) + "/latest/meta-data/"},
        ws.path(), 120, {}, "", {}, [&] { return enter_namespaces(hosts); });
    ASSERT_EQ(o.err.find("test set-up:"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("TEST MODE"), std::string::npos) << "no test hook may be in play";
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.rfind("HTTP/1.1 403 address guard: " + std::string(c.host) + " resolves to " +
                              c.address + ", a cloud metadata endpoint\r\n",
                          0),
              0u)
        << o.out << o.err;
    const std::string records = read_file(log);
    EXPECT_NE(records.find(R"("refused_by":"address-guard")"), std::string::npos) << records;
    EXPECT_NE(records.find(R"("guard_check":"metadata")"), std::string::npos) << records;
  }
}

}  // namespace
}  // namespace vigil::test
