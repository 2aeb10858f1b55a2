// credentials.files with mode mask in a real `vigil run` (srt's file masking): the
// command reads a copy of the file with sentinels where the secret was, and the proxy's
// TLS helper puts the real value back only into requests to the entry's injectHosts.
// Real clients (curl, python urllib) inside the sandbox reach a loopback HTTPS server
// whose self-signed certificate the helper trusts as upstream (--test-upstream-ca,
// VIGIL_TEST_MODE=1); the server's log shows what it received. The real bytes are looked
// for everywhere the sandbox or a reader of the session could find them: the file under
// each of its names inside (the path, a symlink to it, /proc/self/root, /proc/1/root),
// /proc/*/environ and cmdline of every process inside, the command's output and the
// block, the session log, replay, the state directory (logs and change captures) and
// the workspace.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

constexpr const char* kWhole = "whole-file-secret-31415-abcdefghijklmnopqrstuvwxyz";
constexpr const char* kNetrcPass = "netrc-pass-27182-zyxwvutsrqponmlkjihgfedcba";

// HTTPS on 127.0.0.1:0; logs each request's line, Host and Authorization on stderr.
constexpr const char* kEchoServer = R"PY(
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        sys.stderr.write("%s host=%s auth=%s\n" % (self.requestline,
            self.headers.get("Host"), self.headers.get("Authorization")))
        sys.stderr.flush()
        out = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("port", srv.server_address[1], flush=True)
srv.serve_forever()
)PY";

// python urllib through HTTPS_PROXY: reads the .netrc-style file the way a tool does and
// sends its password as a bearer token.
constexpr const char* kNetrcClient = R"PY(
import re, sys, urllib.request
text = open(sys.argv[1]).read()
password = re.search(r"password\s+(\S+)", text).group(1)
req = urllib.request.Request(sys.argv[2], headers={"Authorization": "Bearer " + password})
print(urllib.request.urlopen(req, timeout=20).read().decode().strip())
)PY";

bool have(const char* tool) {
  const std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

class CredentialFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"curl", "openssl"}) {
      if (!have(tool)) GTEST_SKIP() << tool << " is missing (tools/bootstrap.sh installs it)";
    }
    cert_ = srv_ / "cert.pem";
    key_ = srv_ / "key.pem";
    const Outcome o = run_program(
        {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=inject.test", "-addext",
         "subjectAltName=DNS:inject.test,DNS:other.test", "-keyout", key_, "-out", cert_},
        srv_.path(), 60);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    write_file(srv_ / "echo.py", kEchoServer);
    server_ = std::make_unique<Background>(
        std::vector<std::string>{python3(), srv_ / "echo.py", cert_, key_}, srv_.path(), "echo");
    auto port = server_->wait_for("port (\\d+)", false);
    ASSERT_TRUE(port) << server_->err();
    port_ = *port;
    // A whole-file token outside the workspace, reached through a symlink too; a
    // .netrc-style file inside it whose password alone is masked (and its copy below).
    write_file(sec_ / "token", kWhole);
    write_file(ws_ / ".netrc", std::string("machine inject.test login me password ") +
                                   kNetrcPass + "\n# old: " + kNetrcPass + "\n");
    write_file(ws_ / "client.py", kNetrcClient);
    ASSERT_EQ(run_program({"ln", "-s", sec_ / "token", ws_ / "token-link"}, ws_.path(), 10).exit_code,
              0);
    write_file(cfg_ / "settings.json", R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["inject.test", "other.test"], "tlsTerminate": {}},
  "credentials": {"files": [
    {"path": ")" + sec_.path() + R"J(/token", "mode": "mask", "injectHosts": ["inject.test"]},
    {"path": ".netrc", "mode": "mask", "extract": "password\\s+(\\S+)", "maskDuplicates": true,
     "injectHosts": ["inject.test"]}]}
})J");
  }

  std::string url(const std::string& host) const { return "https://" + host + ":" + port_ + "/r"; }

  Outcome run(const std::string& script) {
    log_ = cfg_ / ("session" + std::to_string(++runs_) + ".jsonl");
    return run_vigil({"run", "--settings", cfg_ / "settings.json", "--log", log_, "--test-resolve",
                      "inject.test=127.0.0.1", "--test-resolve", "other.test=127.0.0.1",
                      "--test-allow-loopback", "--test-upstream-ca", cert_, "--", "sh", "-c",
                      script},
                     ws_.path(), 120, {{"VIGIL_TEST_MODE", "1"}});
  }

  // Neither secret is anywhere a reader of the run, or the sandbox, could see it.
  void expect_secrets_absent(const Outcome& o) {
    for (const char* secret : {kWhole, kNetrcPass}) {
      SCOPED_TRACE(secret);
      EXPECT_EQ(o.out.find(secret), std::string::npos) << "stdout shows the secret";
      EXPECT_EQ(o.err.find(secret), std::string::npos) << "stderr (the block) shows it";
      EXPECT_EQ(read_file(log_).find(secret), std::string::npos) << "the session log holds it";
      for (const char* view : {"--net", "--writes"}) {
        const Outcome r = run_vigil({"replay", log_, view}, ws_.path(), 30);
        EXPECT_EQ(r.out.find(secret), std::string::npos) << "replay " << view;
      }
      const Outcome all = run_vigil({"replay", log_, "--json", "all"}, ws_.path(), 30);
      EXPECT_EQ(all.out.find(secret), std::string::npos) << "replay --json all";
      // Logs, keys and the change captures (pre-images) live in the state directory.
      const Outcome state =
          run_program({"grep", "-rlF", secret, default_state_dir()}, cfg_.path(), 30);
      EXPECT_NE(state.exit_code, 0) << "the state directory holds it: " << state.out;
      // What the command wrote: its dumps of /proc and of every name of the files.
      const Outcome files = run_program(
          {"grep", "-rlF", "--exclude=.netrc", secret, ws_.path()}, cfg_.path(), 30);
      EXPECT_NE(files.exit_code, 0) << "the sandbox saw it: " << files.out;
    }
    // The host's own files are untouched.
    EXPECT_EQ(read_file(sec_ / "token"), kWhole);
    EXPECT_NE(read_file(ws_ / ".netrc").find(kNetrcPass), std::string::npos);
  }

  TempDir ws_, cfg_, srv_, sec_;
  std::string cert_, key_, port_, log_;
  std::unique_ptr<Background> server_;
  int runs_ = 0;
};

TEST_F(CredentialFiles, TheSandboxReadsSentinelsAndOnlyTheInjectHostGetsTheRealValue) {
  const std::string token = sec_ / "token";
  const Outcome o = run(
      "set -u; echo \"token=$(cat " + token + ")\"; echo \"netrc=$(cat .netrc | tr '\\n' '|')\"; "
      "curl -sS --max-time 20 -H \"Authorization: Bearer $(cat " + token + ")\" " + url("inject.test") +
      " && curl -sS --max-time 20 -H \"Authorization: Bearer $(cat token-link)\" " + url("other.test") +
      " && python3 client.py .netrc " + url("inject.test") +
      " && python3 client.py .netrc " + url("other.test") +
      // Every other name of the files, and every process's environment and command line.
      " && cat /proc/self/root" + token + " /proc/1/root" + token + " token-link > names.dump"
      " && cat /proc/self/root" + ws_.path() + "/.netrc > netrc.dump"
      " && for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; done > proc.dump 2>/dev/null;"
      " echo x > " + token + " 2>/dev/null || echo write-refused");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("token=fake_value_"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("netrc=machine inject.test login me password fake_value_"), std::string::npos)
      << o.out;
  EXPECT_EQ(count(o.out, "fake_value_"), 3u) << "maskDuplicates masks the copy too: " << o.out;
  EXPECT_NE(o.out.find("write-refused"), std::string::npos) << o.out;
  EXPECT_NE(read_file(ws_ / "names.dump").find("fake_value_"), std::string::npos);
  const std::string seen = server_->err();
  EXPECT_EQ(count(seen, std::string("host=inject.test:") + port_ + " auth=Bearer " + kWhole), 1u)
      << seen;
  EXPECT_EQ(count(seen, std::string("host=inject.test:") + port_ + " auth=Bearer " + kNetrcPass),
            1u)
      << seen;
  EXPECT_EQ(count(seen, "host=other.test:" + port_ + " auth=Bearer fake_value_"), 2u) << seen;
  EXPECT_EQ(count(seen, "auth=Bearer "), 4u) << seen;
  expect_secrets_absent(o);
  // The record says a secret was injected, never which bytes.
  EXPECT_NE(read_file(log_).find("\"secret_injected\":true"), std::string::npos);
}

// onExtractNoMatch "deny" (and vigil's "warn" alike): a file nothing was masked in is
// hidden, never shown as it is; "error" refuses to run.
TEST_F(CredentialFiles, AFileWithoutAMatchIsHiddenAndErrorRefusesToRun) {
  write_file(ws_ / "nomatch", std::string("no password here, only ") + kNetrcPass + "\n");
  write_file(cfg_ / "settings.json", R"J({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["inject.test"], "tlsTerminate": {}},
  "credentials": {"files": [{"path": "nomatch", "mode": "mask", "extract": "token=(\\S+)"}]}
})J");
  const Outcome o = run("cat nomatch; echo \"read-done\"");
  EXPECT_EQ(o.out.find(kNetrcPass), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("read-done"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("credentials.files[0]"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(kNetrcPass), std::string::npos) << o.err;
  write_file(cfg_ / "settings.json", R"J({
  "network": {"allowedDomains": ["inject.test"], "tlsTerminate": {}},
  "credentials": {"files": [{"path": "nomatch", "mode": "mask", "extract": "token=(\\S+)",
                             "onExtractNoMatch": "error"}]}
})J");
  const Outcome err = run("echo ran");
  EXPECT_NE(err.exit_code, 0);
  EXPECT_EQ(err.out.find("ran"), std::string::npos);
  EXPECT_NE(err.err.find("onExtractNoMatch"), std::string::npos) << err.err;
}

// A file masked whole whose secret spans lines: swapped into a header it would split the
// request head, so the inject host gets the sentinel there (and the head stays whole).
TEST_F(CredentialFiles, AMultiLineSecretIsNeverSwappedIntoARequestHead) {
  write_file(sec_ / "token", std::string("line-one-") + kWhole + "\nline-two\n");
  const Outcome o = run("curl -sS --max-time 20 -H \"Authorization: Bearer $(cat " +
                        sec_ / "token" + ")\" " + url("inject.test"));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string seen = server_->err();
  EXPECT_EQ(count(seen, "auth=Bearer fake_value_"), 1u) << seen;
  EXPECT_EQ(seen.find("line-two"), std::string::npos) << seen;
  EXPECT_EQ(seen.find(kWhole), std::string::npos) << seen;
}

// srt 0.0.83's README, "Other Configuration", `credentials`, statement by statement (the
// README gives that block no JSON example; its one TLS example is checked by
// CredentialsTls.SrtReadmeTlsTerminateExampleBehavesAsDocumented): "`mode: "deny"`
// withholds the value; `mode: "mask"` puts a sentinel in its place inside the sandbox and
// has the proxy substitute the real value back on egress to the hosts that entry's
// `injectHosts` lists (default: `network.allowedDomains`) ... Files are masked on Linux".
TEST_F(CredentialFiles, SrtReadmeCredentialsParagraphBehavesAsDocumented) {
  write_file(sec_ / "denied", std::string("denied-") + kWhole);
  write_file(cfg_ / "settings.json", R"({
  "network": {"allowedDomains": ["inject.test"], "tlsTerminate": {}},
  "credentials": {
    "envVars": [{"name": "VIGIL_README_ENV", "mode": "mask"},
                {"name": "VIGIL_README_DENIED", "mode": "deny"}],
    "files": [{"path": ")" + sec_.path() + R"(/token", "mode": "mask"},
              {"path": ")" + sec_.path() + R"(/denied", "mode": "deny"}]}
})");
  log_ = cfg_ / "readme.jsonl";
  const std::string token = sec_ / "token";
  const Outcome o = run_vigil(
      {"run", "--settings", cfg_ / "settings.json", "--log", log_, "--test-resolve",
       "inject.test=127.0.0.1", "--test-resolve", "other.test=127.0.0.1", "--test-allow-loopback",
       "--test-upstream-ca", cert_, "--", "sh", "-c",
       "echo \"env=$VIGIL_README_ENV denied=${VIGIL_README_DENIED-withheld}\"; "
       "echo \"file=$(cat " + token + ")\"; echo \"deniedfile=$(cat " + sec_.path() +
           "/denied 2>/dev/null)\"; "
           "curl -sS --max-time 20 -H \"Authorization: Bearer $(cat " + token + ")\" " +
           url("inject.test") + " && curl -sS --max-time 20 -H \"Authorization: Bearer "
           "$VIGIL_README_ENV\" " + url("inject.test") +
           "; curl -sS --max-time 20 " + url("other.test") + "; echo other=$?"},
      ws_.path(), 120,
      {{"VIGIL_TEST_MODE", "1"}, {"VIGIL_README_ENV", kNetrcPass},
       {"VIGIL_README_DENIED", "readme-denied-value"}});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("deny network-outbound other.test:" + port_), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("env=fake_value_"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("denied=withheld"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("file=fake_value_"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("deniedfile=\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("other=56"), std::string::npos) << "not allowed (403): " << o.out;
  // No injectHosts: the allowed domains receive the real values.
  const std::string seen = server_->err();
  EXPECT_EQ(count(seen, std::string("auth=Bearer ") + kWhole), 1u) << seen;
  EXPECT_EQ(count(seen, std::string("auth=Bearer ") + kNetrcPass), 1u) << seen;
  EXPECT_EQ(o.out.find("readme-denied-value"), std::string::npos);
  expect_secrets_absent(o);
}

}  // namespace
}  // namespace vigil::test
