// `vigil export --follow` into a real rsyslog (Debian's rsyslogd, started here on
// 127.0.0.1 with its own config and work directory, killed by PID), over plain TCP and over
// TLS with a CA this test makes with openssl: many concurrent sessions, the collector
// killed and restarted mid-stream, the exporter killed and restarted, logs pruned while
// followed; then `vigil verify --stream` on the file rsyslog wrote finds every record, in
// order per session, chains intact. A log edited after the fact is flagged by the exporter
// and by verify --stream.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <thread>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

constexpr const char* kRsyslogd = "/usr/sbin/rsyslogd";

bool have_rsyslog(std::string* why) {
  if (!exists(kRsyslogd)) {
    *why = "rsyslogd is not installed (Debian package rsyslog)";
  } else if (!exists("/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_ossl.so") &&
             !exists("/usr/lib/aarch64-linux-gnu/rsyslog/lmnsd_ossl.so")) {
    *why = "rsyslog's OpenSSL driver is not installed (Debian package rsyslog-openssl)";
  } else {
    return true;
  }
  if (const char* r = std::getenv("VIGIL_REQUIRE_TOOLS"); r != nullptr && std::string(r) == "1")
    ADD_FAILURE() << *why << " (VIGIL_REQUIRE_TOOLS=1: tools/bootstrap.sh installs it)";
  return false;
}

std::uint16_t free_port() {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 0;
  socklen_t len = sizeof a;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// rsyslogd on 127.0.0.1:port writing every message's %rawmsg% to out.log (docs/fleet.md's
// configuration, with this test's paths).
class Collector {
 public:
  explicit Collector(bool tls) : tls_(tls), port_(free_port()) {
    std::string global = "global(workDirectory=\"" + dir_.path() + "\" maxMessageSize=\"128k\"";
    std::string module = "module(load=\"imtcp\")";
    if (tls) {
      make_ca();
      global += " DefaultNetstreamDriverCAFile=\"" + (dir_ / "ca.pem") +
                "\" DefaultNetstreamDriverCertFile=\"" + (dir_ / "server.pem") +
                "\" DefaultNetstreamDriverKeyFile=\"" + (dir_ / "server.key") + "\"";
      module = "module(load=\"imtcp\" StreamDriver.Name=\"ossl\" StreamDriver.Mode=\"1\" "
               "StreamDriver.AuthMode=\"anon\")";
    }
    write_file(dir_ / "rsyslog.conf",
               global + ")\n" + module +
                   "\ntemplate(name=\"vigilraw\" type=\"string\" string=\"%rawmsg%\\n\")\n"
                   "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"" +
                   std::to_string(port_) + "\")\naction(type=\"omfile\" file=\"" +
                   (dir_ / "out.log") + "\" template=\"vigilraw\")\n");
  }
  bool start() {
    ++starts_;
    proc_ = std::make_unique<Background>(
        std::vector<std::string>{kRsyslogd, "-n", "-f", dir_ / "rsyslog.conf", "-i",
                                 dir_ / "rsyslogd.pid"},
        dir_.path(), "rsyslogd" + std::to_string(starts_));
    for (int i = 0; i < 500; ++i) {
      if (tcp_connect_loopback(port_)) return true;
      if (proc_->exited()) break;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "rsyslogd did not listen on 127.0.0.1:" << port_ << ": " << proc_->err();
    return false;
  }
  void kill(int sig) { proc_->signal_and_wait(sig); }
  std::string url() const {
    return std::string(tls_ ? "syslog+tls://" : "syslog://") + "127.0.0.1:" + std::to_string(port_);
  }
  std::string out() const { return dir_ / "out.log"; }
  std::string ca() const { return dir_ / "ca.pem"; }
  const TempDir& dir() const { return dir_; }

 private:
  // A test CA and a server certificate for 127.0.0.1 it signs, made with openssl.
  void make_ca() {
    const std::string d = dir_.path();
    const Outcome o = run_program(
        {"sh", "-c",
         "set -e; cd '" + d + "'; "
         "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
         "-keyout ca.key -out ca.pem -days 2 -subj '/CN=vigil fleet test CA' 2>/dev/null; "
         "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key "
         "-out server.csr -subj '/CN=127.0.0.1' 2>/dev/null; "
         "printf 'subjectAltName=IP:127.0.0.1\\n' > ext.cnf; "
         "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
         "-out server.pem -days 2 -extfile ext.cnf 2>/dev/null"},
        d, 60);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  TempDir dir_;
  bool tls_;
  std::uint16_t port_;
  int starts_ = 0;
  std::unique_ptr<Background> proc_;
};

struct Fleet {
  TempDir state, ws, logs;
  std::map<std::string, std::string> env() const { return {{"XDG_STATE_HOME", state.path()}}; }
  std::string sessions() const { return state / "vigil/sessions"; }
  std::unique_ptr<Background> exporter(const Collector& c, int n) {
    std::vector<std::string> argv = {vigil_bin(), "export", "--follow", "--format", "vigil",
                                     "--to", c.url(), "--settle-ms", "300"};
    if (c.url().starts_with("syslog+tls")) argv.insert(argv.end(), {"--ca", c.ca()});
    return std::make_unique<Background>(argv, logs.path(), "exporter" + std::to_string(n), env());
  }
  // `count` sessions at once, each writing `files` files.
  void sessions_at_once(int count, int files) {
    std::vector<std::thread> ts;
    std::atomic<int> failed{0};
    for (int i = 0; i < count; ++i) {
      ts.emplace_back([&, i] {
        const Outcome o = run_vigil(
            {"run", "--", "sh", "-c",
             "i=0; while [ $i -lt " + std::to_string(files) + " ]; do echo $i > s" +
                 std::to_string(i) + "_$i; i=$((i+1)); done"},
            ws.path(), 120, env());
        if (o.exit_code != 0) ++failed;
      });
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(failed.load(), 0);
  }
  // Every line of every log now in sessions/.
  std::size_t records() const {
    const Outcome o = run_program({"sh", "-c", "cat '" + sessions() + "'/*.jsonl | wc -l"}, logs.path());
    return static_cast<std::size_t>(std::stoul(o.out));
  }
};

// verify --stream until it says `needle` (the exporter drains), at most 90 s.
Outcome verify_until(const Fleet& f, const Collector& c, const std::string& needle,
                     bool exactly_once) {
  Outcome v;
  for (int i = 0; i < 180; ++i) {
    std::vector<std::string> args = {"verify", "--stream", c.out()};
    if (exactly_once) args.push_back("--exactly-once");
    v = run_vigil(args, f.logs.path());
    if (v.out.find(needle) != std::string::npos) return v;
    std::this_thread::sleep_for(500ms);
  }
  return v;
}

void whole_fleet(bool tls) {
  std::string why;
  if (!have_rsyslog(&why)) GTEST_SKIP() << why;
  Collector c(tls);
  Fleet f;
  ASSERT_TRUE(c.start());
  auto exporter = f.exporter(c, 1);

  // Phase 1: sessions while everything runs; then the collector is killed mid-stream.
  std::thread first([&] { f.sessions_at_once(6, 30); });
  for (int i = 0; i < 1000 && read_file(c.out()).size() < 2000; ++i) std::this_thread::sleep_for(10ms);
  c.kill(SIGKILL);
  first.join();
  // Phase 2: more sessions while the collector is down; the exporter spools, then is killed.
  f.sessions_at_once(4, 20);
  exporter->signal_and_wait(SIGKILL);
  ASSERT_TRUE(c.start());
  exporter = f.exporter(c, 2);
  // Phase 3: sessions again, and logs pruned while followed.
  f.sessions_at_once(4, 20);
  const std::size_t want = f.records();
  Outcome v = verify_until(f, c, ": intact: " + std::to_string(want) + " record(s)", false);
  EXPECT_EQ(v.exit_code, 0) << v.out << "\nexporter: " << exporter->err();
  EXPECT_NE(v.out.find(": intact: " + std::to_string(want) + " record(s) of 14 session(s) from 1 host(s) (14 ended)"),
            std::string::npos)
      << v.out;
  // Pruned while followed: logs older than an hour (by their mtime) go; the exporter,
  // which holds them, loses nothing, and a session after it still arrives.
  const Outcome aged = run_program({"sh", "-c", "touch -d '2 hours ago' '" + f.sessions() + "'/*.jsonl"}, f.logs.path());
  ASSERT_EQ(aged.exit_code, 0) << aged.err;
  const Outcome pruned = run_vigil({"logs", "prune", "--older-than", "1h"}, f.logs.path(), 60, f.env());
  EXPECT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_EQ(f.records(), 0u) << "the prune removed every log";
  f.sessions_at_once(2, 10);
  const std::size_t after = want + f.records();
  v = verify_until(f, c, ": intact: " + std::to_string(after) + " record(s)", false);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find(" of 16 session(s)"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("gap:"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("reordered:"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("chain:"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("lost:"), std::string::npos) << v.out;
  exporter->signal_and_wait(SIGTERM);
  c.kill(SIGTERM);
}

TEST(FleetExportTest, PlainTcpManySessionsRestartsAndPruningEveryRecordArrives) { whole_fleet(false); }

TEST(FleetExportTest, TlsManySessionsRestartsAndPruningEveryRecordArrives) { whole_fleet(true); }

TEST(FleetExportTest, ASpoolAtItsCapSaysSoLoudlyAndDrainsInOrderWhenTheCollectorIsBack) {
  std::string why;
  if (!have_rsyslog(&why)) GTEST_SKIP() << why;
  Collector c(false);  // not started yet: the collector is unreachable
  Fleet f;
  std::vector<std::string> argv = {vigil_bin(), "export", "--follow", "--format", "vigil", "--to",
                                   c.url(), "--settle-ms", "200", "--spool-max-bytes", "65536"};
  Background exporter(argv, f.logs.path(), "capped", f.env());
  f.sessions_at_once(3, 300);  // well over 64 KiB of records
  ASSERT_TRUE(exporter.wait_for("the spool is FULL", true, 60s).has_value()) << exporter.err();
  const Outcome doctor = run_vigil({"doctor"}, f.logs.path(), 60, f.env());
  EXPECT_NE(doctor.out.find("export spool is FULL"), std::string::npos) << doctor.out;
  ASSERT_TRUE(c.start());
  const std::size_t want = f.records();
  const Outcome v = verify_until(f, c, ": intact: " + std::to_string(want) + " record(s)", false);
  EXPECT_EQ(v.exit_code, 0) << v.out << exporter.err();
  EXPECT_EQ(exporter.signal_and_wait(SIGTERM), 0) << exporter.err();
  c.kill(SIGTERM);
}

TEST(FleetExportTest, ALogEditedAfterTheFactIsFlaggedByTheExporterAndByVerify) {
  std::string why;
  if (!have_rsyslog(&why)) GTEST_SKIP() << why;
  Collector c(false);
  Fleet f;
  ASSERT_TRUE(c.start());
  f.sessions_at_once(2, 5);
  // One log is edited after the fact: a file name in a record changes.
  const Outcome edit = run_program(
      {"sh", "-c", "f=$(grep -l s0_3 '" + f.sessions() + "'/*.jsonl | head -1); sed -i '0,/s0_3/s//s0_X/' \"$f\"; grep -c s0_X \"$f\""},
      f.logs.path());
  ASSERT_EQ(edit.exit_code, 0) << edit.out << edit.err;
  const std::size_t want = f.records();
  const Outcome ex = run_vigil({"export", "--follow", "--format", "vigil", "--to", c.url(),
                                "--settle-ms", "200", "--until-idle"},
                               f.logs.path(), 120, f.env());
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_NE(ex.err.find("broken at seq"), std::string::npos) << ex.err;
  const Outcome v = verify_until(f, c, "NOT intact: " + std::to_string(want) + " record(s)", true);
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_NE(v.out.find(" broken: "), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(" chain: "), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("NOT intact: " + std::to_string(want) + " record(s)"), std::string::npos) << v.out;

  // The same to a file (stdout's format): the mark is a line of its own.
  const Outcome file = run_vigil({"export", "--follow", "--format", "vigil", "--state", f.logs / "st",
                                  "--to", f.logs / "out.jsonl", "--until-idle"},
                                 f.logs.path(), 120, f.env());
  EXPECT_EQ(file.exit_code, 0) << file.err;
  const std::string out = read_file(f.logs / "out.jsonl");
  EXPECT_EQ(count_lines_containing(out, "\"vigil_export\":\"broken\""), 1u) << out;
  EXPECT_EQ(count_lines_containing(out, "\"seq\":"), want + 1) << out;
}

}  // namespace
}  // namespace vigil::test
