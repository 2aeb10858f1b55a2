// srt's credentials block in a real `vigil run`: a masked variable is a sentinel inside
// the sandbox, and the proxy's TLS helper swaps in the real value only in requests to its
// injectHosts; a denied one is gone; request rules refuse with the rule to add; each
// terminated request is a net.request record. Real clients (curl, git over https, python
// urllib, node https) inside the sandbox reach a loopback HTTPS server whose self-signed
// certificate the helper trusts as upstream through --test-upstream-ca (VIGIL_TEST_MODE=1),
// and whose log shows what it received. The real value is looked for everywhere the
// sandbox or a reader of the session could see it: the command's environment, every
// /proc/*/environ inside, its files, the session log and replay's output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

constexpr const char* kSecret = "s3cr3t-real-value-4242-abcdefghijklmnopqrstuvwxyz";
constexpr const char* kDenied = "denied-value-7777";
constexpr const char* kAwsId = "AKIAREALKEYID0000001";
constexpr const char* kAwsSecret = "realAwsSecretKey/0123456789abcdefghijklmnopq";

// HTTPS on 127.0.0.1:0, HTTP/1.1 keep-alive; logs each request's line, Authorization and
// X-Body (the body it received) on stderr; serves files under the root (a dumb git repo).
constexpr const char* kEchoServer = R"PY(
import http.server, os, ssl, sys, hashlib, hmac
os.chdir(sys.argv[1])
REAL_ID, REAL_SECRET = sys.argv[4], sys.argv[5]
def sign(method, path, query, headers, payload, akid, secret, amzdate):
    region, service, day = "us-east-1", "s3", amzdate[:8]
    names = sorted(k.lower() for k in headers)
    low = {k.lower(): v for k, v in headers.items()}
    canon = "".join("%s:%s\n" % (k, " ".join(low[k].split())) for k in names)
    q = "&".join(sorted(query.split("&"))) if query else ""
    creq = "\n".join([method, path, q, canon, ";".join(names),
                      hashlib.sha256(payload).hexdigest()])
    scope = "%s/%s/%s/aws4_request" % (day, region, service)
    sts = "\n".join(["AWS4-HMAC-SHA256", amzdate, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        akid, scope, ";".join(names), sig)
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def note(self, body=b""):
        sys.stderr.write("%s host=%s auth=%s body=%s\n" % (self.requestline,
            self.headers.get("Host"), self.headers.get("Authorization"),
            body.decode("utf-8", "replace")))
        sys.stderr.flush()
    def do_GET(self):
        self.note()
        return super().do_GET()
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        self.note(body)
        out = b"posted\n"
        if self.path.startswith("/aws"):
            # The signature recomputed here with the REAL key: equal only if the proxy
            # signed the request again with it.
            auth = self.headers.get("Authorization", "")
            names = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
            hdrs = {k: self.headers.get(k) for k in names}
            path, _, query = self.path.partition("?")
            want = sign("POST", path, query, hdrs, body, REAL_ID, REAL_SECRET,
                        self.headers.get("x-amz-date"))
            out = b"sig-ok\n" if want == auth else ("sig-bad " + auth + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("port", srv.server_address[1], flush=True)
srv.serve_forever()
)PY";

// A SigV4 client (python, through HTTPS_PROXY): signs a POST with the AWS_* variables it
// sees (the sentinels), as an SDK would.
constexpr const char* kAwsClient = R"PY(
import os, sys, hashlib, hmac, datetime, urllib.request
def sign(method, path, query, headers, payload, akid, secret, amzdate):
    region, service, day = "us-east-1", "s3", amzdate[:8]
    names = sorted(k.lower() for k in headers)
    low = {k.lower(): v for k, v in headers.items()}
    canon = "".join("%s:%s\n" % (k, " ".join(low[k].split())) for k in names)
    q = "&".join(sorted(query.split("&"))) if query else ""
    creq = "\n".join([method, path, q, canon, ";".join(names),
                      hashlib.sha256(payload).hexdigest()])
    scope = "%s/%s/%s/aws4_request" % (day, region, service)
    sts = "\n".join(["AWS4-HMAC-SHA256", amzdate, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        akid, scope, ";".join(names), sig)
url, hostport = sys.argv[1], sys.argv[2]
body = b"Action=ListThings"
amzdate = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
headers = {"Host": hostport, "x-amz-date": amzdate,
           "x-amz-content-sha256": hashlib.sha256(body).hexdigest()}
auth = sign("POST", "/aws", "", headers, body, os.environ["AWS_ACCESS_KEY_ID"],
            os.environ["AWS_SECRET_ACCESS_KEY"], amzdate)
req = urllib.request.Request(url, data=body, headers=dict(headers, Authorization=auth))
print(urllib.request.urlopen(req, timeout=20).read().decode().strip())
)PY";

// node's https through the proxy's CONNECT (node 20's fetch reads no proxy variables):
// NODE_EXTRA_CA_CERTS, set by vigil, makes it trust the session CA.
constexpr const char* kNodeClient = R"JS(
const http = require('http'), https = require('https'), tls = require('tls');
const [host, port, path, token] = process.argv.slice(2);
const proxy = new URL(process.env.HTTPS_PROXY);
const req = http.request({host: proxy.hostname, port: proxy.port, method: 'CONNECT',
                          path: `${host}:${port}`});
req.on('connect', (res, socket) => {
  const r = https.request({host, port, path, headers: {authorization: `Bearer ${token}`},
                           createConnection: () => tls.connect({socket, servername: host})},
                          (resp) => { resp.on('data', (d) => process.stdout.write(d));
                                      resp.on('end', () => process.exit(0)); });
  r.on('error', (e) => { console.error('node:', e.message); process.exit(1); });
  r.end();
});
req.on('error', (e) => { console.error('node:', e.message); process.exit(1); });
req.end();
)JS";

// The lines of `text` that contain every one of `parts`.
std::size_t lines_with(const std::string& text, const std::vector<std::string>& parts) {
  std::size_t n = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl == std::string::npos ? nl : nl - pos);
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) ++n;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return n;
}

// Whether `tool` is on PATH.
bool have(const char* tool) {
  const std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

const std::map<std::string, std::string> kVigilEnv = {
    {"VIGIL_TEST_MODE", "1"},         {"VIGIL_TEST_SECRET", kSecret},
    {"VIGIL_TEST_DENIED", kDenied},   {"AWS_ACCESS_KEY_ID", kAwsId},
    {"AWS_SECRET_ACCESS_KEY", kAwsSecret}};

std::string settings() {
  return R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["inject.test", "other.test"], "tlsTerminate": {}},
  "credentials": {"envVars": [
    {"name": "VIGIL_TEST_SECRET", "mode": "mask", "injectHosts": ["inject.test"]},
    {"name": "VIGIL_TEST_DENIED", "mode": "deny"},
    {"name": "AWS_ACCESS_KEY_ID", "mode": "mask", "injectHosts": ["inject.test"]},
    {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask", "injectHosts": ["inject.test"]}]},
  "vigil": {"network": {"requestRules": [
    {"host": "other.test", "methods": ["GET"], "paths": ["/ok/*", "/hello.txt"]}]}}
})";
}

class CredentialsTls : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"curl", "openssl", "git"}) {
      if (!have(tool)) GTEST_SKIP() << tool << " is missing (tools/bootstrap.sh installs it)";
    }
    make_dirs(srv_ / "www/ok");
    write_file(srv_ / "www/hello.txt", "hello over terminated TLS\n");
    write_file(srv_ / "www/ok/x", "ok\n");
    // One certificate for both names, its own CA (self-signed): the upstream anchor.
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
        std::vector<std::string>{python3(), srv_ / "echo.py", srv_ / "www", cert_, key_,
                                 kAwsId, kAwsSecret},
        srv_.path(), "echo");
    auto port = server_->wait_for("port (\\d+)", false);
    ASSERT_TRUE(port) << server_->err();
    port_ = *port;
    write_file(cfg_ / "settings.json", settings());
  }

  std::string url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + port_ + path;
  }

  Outcome run(const std::vector<std::string>& command) {
    log_ = cfg_ / ("session" + std::to_string(++runs_) + ".jsonl");
    std::vector<std::string> args = {"run",
                                     "--settings",
                                     cfg_ / "settings.json",
                                     "--log",
                                     log_,
                                     "--test-resolve",
                                     "inject.test=127.0.0.1",
                                     "--test-resolve",
                                     "other.test=127.0.0.1",
                                     "--test-allow-loopback",
                                     "--test-upstream-ca",
                                     cert_,
                                     "--"};
    args.insert(args.end(), command.begin(), command.end());
    return run_vigil(args, ws_.path(), 120, kVigilEnv);
  }

  // The real value is nowhere a reader of the run can see it.
  void expect_secret_absent(const Outcome& o) {
    EXPECT_EQ(o.out.find(kSecret), std::string::npos) << "stdout shows the secret";
    EXPECT_EQ(o.err.find(kSecret), std::string::npos) << "stderr shows the secret";
    const std::string log = read_file(log_);
    EXPECT_EQ(log.find(kSecret), std::string::npos) << "the session log holds the secret";
    EXPECT_EQ(log.find(kDenied), std::string::npos);
    for (const char* view : {"--net", "--writes"}) {
      const Outcome r = run_vigil({"replay", log_, view}, ws_.path(), 30);
      EXPECT_EQ(r.out.find(kSecret), std::string::npos) << "replay " << view;
    }
    const Outcome all = run_vigil({"replay", log_, "--json", "all"}, ws_.path(), 30);
    EXPECT_EQ(all.out.find(kSecret), std::string::npos);
    const Outcome grep = run_program({"grep", "-rlF", kSecret, ws_.path()}, cfg_.path(), 30);
    EXPECT_NE(grep.exit_code, 0) << "a file in the workspace holds the secret: " << grep.out;
  }

  TempDir ws_, cfg_, srv_;
  std::string cert_, key_, port_, log_;
  std::unique_ptr<Background> server_;
  int runs_ = 0;
};

TEST_F(CredentialsTls, CurlSendsTheRealValueOnlyToItsInjectHost) {
  const std::string script =
      "set -e; env > env.txt; cat /proc/[0-9]*/environ > proc_environ.txt 2>/dev/null || true; "
      "curl -sS --max-time 20 -H \"Authorization: Bearer $VIGIL_TEST_SECRET\" " +
      url("inject.test", "/hello.txt") +
      "; curl -sS --max-time 20 -H \"Authorization: Bearer $VIGIL_TEST_SECRET\" " +
      url("other.test", "/hello.txt") + "; echo \"seen=$VIGIL_TEST_SECRET\"; "
      "echo \"denied=${VIGIL_TEST_DENIED-unset}\"";
  const Outcome o = run({"sh", "-c", script});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count_lines_containing(o.out, "hello over terminated TLS"), 2u) << o.out;
  // Inside: the sentinel, srt's form; the denied variable unset.
  EXPECT_NE(o.out.find("seen=fake_value_"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("denied=unset"), std::string::npos) << o.out;
  const std::string env = read_file(ws_ / "env.txt");
  EXPECT_NE(env.find("SSL_CERT_FILE="), std::string::npos);
  EXPECT_NE(env.find("VIGIL_TEST_SECRET=fake_value_"), std::string::npos);
  EXPECT_EQ(env.find("VIGIL_TEST_DENIED"), std::string::npos);
  EXPECT_EQ(read_file(ws_ / "proc_environ.txt").find(kSecret), std::string::npos);
  // The server: the real value from inject.test's request, the sentinel from other.test's.
  const std::string seen = server_->err();
  EXPECT_NE(seen.find("host=inject.test:" + port_ + " auth=Bearer " + kSecret),
            std::string::npos)
      << seen;
  EXPECT_NE(seen.find("host=other.test:" + port_ + " auth=Bearer fake_value_"), std::string::npos)
      << seen;
  EXPECT_EQ(count_lines_containing(seen, kSecret), 1u) << seen;
  expect_secret_absent(o);
  // The record of what was sent where, and replay's view of it.
  const std::string log = read_file(log_);
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", R"("host":"inject.test")",
                             R"("secret_injected":true)", R"("status":200)"}),
            1u)
      << log;
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", R"("host":"other.test")",
                             R"("secret_injected":false)"}),
            1u)
      << log;
  const Outcome net = run_vigil({"replay", log_, "--net"}, ws_.path(), 30);
  EXPECT_NE(net.out.find("GET inject.test:" + port_ + "/hello.txt -> 200"), std::string::npos)
      << net.out;
  EXPECT_NE(net.out.find("secret injected"), std::string::npos) << net.out;
}

TEST_F(CredentialsTls, ABodySentinelIsSwappedForTheInjectHostOnly) {
  const std::string script =
      "curl -sS --max-time 20 --data \"token=$VIGIL_TEST_SECRET&q=1\" " +
      url("inject.test", "/post?key=abc") + " && curl -sS --max-time 20 --data \"token=$VIGIL_TEST_SECRET\" " +
      url("other.test", "/ok/post");
  const Outcome o = run({"sh", "-c", script});
  // other.test allows only GET: the POST is refused with the rule to add.
  EXPECT_NE(o.out.find("posted"), std::string::npos) << o.out << o.err;
  const std::string seen = server_->err();
  EXPECT_NE(seen.find(std::string("body=token=") + kSecret + "&q=1"), std::string::npos) << seen;
  EXPECT_EQ(count_lines_containing(seen, "POST /ok/post"), 0u) << seen;
  EXPECT_NE(o.out.find("POST /ok/post is not allowed for other.test by vigil.network.requestRules"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find(R"(add {"host":"other.test","methods":["POST"],"paths":["/ok/post"]})"),
            std::string::npos)
      << o.out;
  // The block names the rule to add.
  EXPECT_NE(o.err.find("deny network-request POST other.test:" + port_ + "/ok/post (POST /ok/post "
                       "is not allowed for other.test by vigil.network.requestRules; add "),
            std::string::npos)
      << o.err;
  // The query's value is redacted in the record.
  const std::string log = read_file(log_);
  EXPECT_NE(log.find(R"("path":"/post?key=[redacted]")"), std::string::npos) << log;
  // (The command line itself, in proc.exec, is the command's own words.)
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", "key=abc"}), 0u) << log;
  EXPECT_NE(log.find(R"("verdict":"denied")"), std::string::npos);
  expect_secret_absent(o);
}

TEST_F(CredentialsTls, PythonUrllibGitAndNodeTrustTheSessionCaAndGetTheSecretInjected) {
  // A bare repository served as files: git's dumb HTTP protocol over the terminated tunnel.
  const std::map<std::string, std::string> git_env = {
      {"GIT_CONFIG_NOSYSTEM", "1"},       {"GIT_CONFIG_GLOBAL", "/dev/null"},
      {"GIT_AUTHOR_NAME", "t"},           {"GIT_AUTHOR_EMAIL", "t@example.com"},
      {"GIT_COMMITTER_NAME", "t"},        {"GIT_COMMITTER_EMAIL", "t@example.com"}};
  make_dirs(srv_ / "src");
  write_file(srv_ / "src/README", "served over terminated TLS\n");
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"git", "-C", srv_ / "src", "init", "-q"},
           {"git", "-C", srv_ / "src", "add", "README"},
           {"git", "-C", srv_ / "src", "commit", "-qm", "one"},
           {"git", "clone", "-q", "--bare", srv_ / "src", srv_ / "www/repo.git"}}) {
    ASSERT_EQ(run_program(argv, srv_.path(), 30, git_env).exit_code, 0) << argv[3];
  }
  ASSERT_EQ(run_program({"git", "-C", srv_ / "www/repo.git", "update-server-info"}, srv_.path(),
                        30, git_env)
                .exit_code,
            0);
  write_file(ws_ / "client.js", kNodeClient);
  std::string script =
      python3() +
      " -c 'import os,urllib.request as u; r=u.Request(\"" + url("inject.test", "/hello.txt") +
      "\", headers={\"Authorization\": \"Bearer \" + os.environ[\"VIGIL_TEST_SECRET\"]}); "
      "print(\"py:\", u.urlopen(r, timeout=20).read().decode().strip())' && "
      "git -c http.extraHeader=\"Authorization: Bearer $VIGIL_TEST_SECRET\" clone -q " +
      url("inject.test", "/repo.git") + " cloned && cat cloned/README && echo git-ok";
  if (have("node")) {
    script += " && node client.js inject.test " + port_ + " /ok/x \"$VIGIL_TEST_SECRET\"";
  }
  const Outcome o = run({"sh", "-c", script});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("py: hello over terminated TLS"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("served over terminated TLS\ngit-ok"), std::string::npos) << o.out;
  const std::string seen = server_->err();
  EXPECT_NE(seen.find(std::string("GET /hello.txt HTTP/1.1 host=inject.test:") + port_ +
                      " auth=Bearer " + kSecret),
            std::string::npos)
      << seen;
  EXPECT_NE(seen.find(std::string("/repo.git/info/refs?service=git-upload-pack HTTP/1.1 host=inject.test:") +
                      port_ + " auth=Bearer " + kSecret),
            std::string::npos)
      << seen;
  if (have("node")) {
    EXPECT_NE(o.out.find("ok\n"), std::string::npos) << o.out;
    EXPECT_NE(seen.find(std::string("GET /ok/x HTTP/1.1 host=inject.test:") + port_ +
                        " auth=Bearer " + kSecret),
              std::string::npos)
        << seen;
  }
  expect_secret_absent(o);
}

TEST_F(CredentialsTls, AnUpstreamTheHelperCannotVerifyGetsNoRequest) {
  // Without the test anchor the server's self-signed certificate does not verify: the
  // client is answered 502, and the server sees no request at all.
  log_ = cfg_ / "unverified.jsonl";
  const Outcome o = run_vigil(
      {"run", "--settings", cfg_ / "settings.json", "--log", log_, "--test-resolve",
       "inject.test=127.0.0.1", "--test-allow-loopback", "--", "sh", "-c",
       "curl -sS --max-time 20 -o /dev/null -w '%{http_code}' -H \"Authorization: Bearer "
       "$VIGIL_TEST_SECRET\" " +
           url("inject.test", "/hello.txt")},
      ws_.path(), 120, kVigilEnv);
  EXPECT_EQ(o.out, "502") << o.out << o.err;
  EXPECT_EQ(server_->err().find("GET /hello.txt"), std::string::npos) << server_->err();
  expect_secret_absent(o);
}

// SigV4: the client signs with the sentinels; the helper signs again with the real key
// (the AWS_* pair is paired by itself), and the server, recomputing the signature with
// the real key, accepts it. Towards a host the key may not reach, the signature stays
// the client's (and fails there).
TEST_F(CredentialsTls, SigV4IsSignedAgainWithTheRealKeyForTheInjectHostOnly) {
  write_file(ws_ / "aws.py", kAwsClient);
  const Outcome o = run({"sh", "-c",
                         python3() + " aws.py " + url("inject.test", "/aws") + " inject.test:" +
                             port_ + "; " + python3() + " aws.py " + url("inject.test", "/aws") +
                             " inject.test:" + port_ + " | head -c 6; echo; env | grep AWS_"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count_lines_containing(o.out, "sig-ok"), 2u) << o.out << o.err << server_->err();
  EXPECT_EQ(o.out.find(kAwsSecret), std::string::npos);
  EXPECT_EQ(o.out.find(kAwsId), std::string::npos);
  EXPECT_NE(o.out.find("AWS_SECRET_ACCESS_KEY=fake_value_"), std::string::npos) << o.out;
  const std::string log = read_file(log_);
  EXPECT_EQ(log.find(kAwsSecret), std::string::npos);
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", R"("method":"POST")",
                             R"("path":"/aws")", R"("secret_injected":true)", R"("status":200)"}),
            2u)
      << log;
}

// srt's README, network.tlsTerminate: an excluded host is tunnelled opaquely (the client
// completes its own TLS with the real upstream, and no injection happens there), and
// extraCaCertPaths joins the bundle the command trusts, so that host still verifies.
TEST_F(CredentialsTls, SrtReadmeTlsTerminateExampleBehavesAsDocumented) {
  write_file(cfg_ / "settings.json", R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["inject.test", "other.test"],
              "tlsTerminate": {"excludeDomains": ["other.test"],
                               "extraCaCertPaths": [")" + cert_ + R"("]}},
  "credentials": {"envVars": [
    {"name": "VIGIL_TEST_SECRET", "mode": "mask", "injectHosts": ["inject.test"]}]}
})");
  const std::string script =
      "curl -sS --max-time 20 -H \"Authorization: Bearer $VIGIL_TEST_SECRET\" " +
      url("other.test", "/hello.txt") +
      " && curl -sS --max-time 20 -H \"Authorization: Bearer $VIGIL_TEST_SECRET\" " +
      url("inject.test", "/hello.txt");
  const Outcome o = run({"sh", "-c", script});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count_lines_containing(o.out, "hello over terminated TLS"), 2u) << o.out;
  const std::string seen = server_->err();
  EXPECT_NE(seen.find("host=other.test:" + port_ + " auth=Bearer fake_value_"), std::string::npos)
      << seen;
  EXPECT_NE(seen.find("host=inject.test:" + port_ + " auth=Bearer " + kSecret), std::string::npos)
      << seen;
  const std::string log = read_file(log_);
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", R"("host":"other.test")"}), 0u)
      << "an excluded host is not terminated: " << log;
  EXPECT_EQ(lines_with(log, {R"("kind":"net.request")", R"("host":"inject.test")",
                             R"("secret_injected":true)"}),
            1u)
      << log;
  expect_secret_absent(o);
}

// network.refuseOpaqueTunnels: a SOCKS tunnel and a CONNECT that would not be terminated
// are refused and recorded; a terminated one passes. network.requireHostMatch: a request
// whose Host names another host than its tunnel's is answered 421 and never sent.
TEST_F(CredentialsTls, OpaqueTunnelsAreRefusedAndAMismatchedHostIsAnswered421) {
  write_file(cfg_ / "settings.json", R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["inject.test", "other.test"],
              "tlsTerminate": {"excludeDomains": ["other.test"]},
              "refuseOpaqueTunnels": true, "requireHostMatch": true}
})");
  const std::string curl = "curl -sS --max-time 20 -o /dev/null -w '%{http_code}\\n' ";
  const std::string script =
      curl + "--socks5-hostname 127.0.0.1:1080 " + url("inject.test", "/hello.txt") +
      "; " + curl + url("other.test", "/hello.txt") + "; " + curl + url("inject.test", "/hello.txt") +
      "; " + curl + "-H 'Host: other.test:" + port_ + "' " + url("inject.test", "/hello.txt") +
      "; true";
  const Outcome o = run({"sh", "-c", script});
  // SOCKS refused (curl prints 000), the excluded host's CONNECT refused (000 and a 403
  // in curl's error), the terminated one passes, the mismatched Host gets 421.
  EXPECT_EQ(o.out, "000\n000\n200\n421\n") << o.out << o.err;
  const std::string log = read_file(log_);
  EXPECT_EQ(lines_with(log, {R"("kind":"net.decision")", R"("verdict":"denied")",
                             R"("refused_by":"opaque-tunnel")"}),
            2u)
      << log;
  EXPECT_NE(o.err.find("network.refuseOpaqueTunnels"), std::string::npos) << o.err;
  EXPECT_EQ(count_lines_containing(server_->err(), "GET /hello.txt"), 1u) << server_->err();
}

TEST_F(CredentialsTls, TheUpstreamAnchorFlagIsRefusedOutsideTestMode) {
  const Outcome o = run_vigil({"run", "--settings", cfg_ / "settings.json", "--test-upstream-ca",
                               cert_, "--", "true"},
                              ws_.path(), 60, {{"VIGIL_TEST_SECRET", kSecret}});
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("refused unless VIGIL_TEST_MODE=1"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
