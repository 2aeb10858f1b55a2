// clients/python/README.md and clients/node/README.md (issue 32, "Clients people can
// install"): every fenced example in them is run here, as a user would: the install
// command first (pip into a target directory, npm into the workspace, both offline: the
// clients have no dependencies), then each Python, JavaScript or shell block from an
// empty workspace with the real vigil on PATH. A block exits 0, and holds in its output
// what its `expect:` line says. A README example that stops working fails this test.
// And the clients with no vigil on PATH: one line that says what to do, exit 127, no
// stack trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

std::string source_dir() { return std::string(VIGIL_TEST_DATA_DIR) + "/../.."; }

struct Block {
  std::string lang;  // python, js, sh
  std::string code;
  std::string expect;  // from a line "# expect: X" / "// expect: X"; "" when none
};

std::vector<Block> blocks_of(const std::string& markdown) {
  std::vector<Block> out;
  std::istringstream in(markdown);
  std::string line;
  Block* open = nullptr;
  while (std::getline(in, line)) {
    if (open == nullptr && line.rfind("```", 0) == 0 && line.size() > 3) {
      out.push_back(Block{line.substr(3), "", ""});
      open = &out.back();
    } else if (open != nullptr && line == "```") {
      open = nullptr;
    } else if (open != nullptr) {
      for (const char* mark : {"# expect: ", "// expect: "}) {
        if (line.rfind(mark, 0) == 0) open->expect = line.substr(std::string(mark).size());
      }
      open->code += line + "\n";
    }
  }
  return out;
}

// `argv` run with `cwd` as its working directory (run_program's directory is where its
// output files go: `logs`).
Outcome run_at(const std::string& cwd, const std::string& logs, std::vector<std::string> argv,
               const std::map<std::string, std::string>& env = {}) {
  argv.insert(argv.begin(), {"sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", cwd});
  return run_program(argv, logs, 180, env);
}

bool required() {
  const char* r = std::getenv("VIGIL_REQUIRE_TOOLS");
  return r != nullptr && std::string(r) == "1";
}

bool have(const std::string& tool) {
  return run_program({"sh", "-c", "command -v " + tool}, "/tmp", 10).exit_code == 0;
}

// vigil's directory, then the installed client's bin, then the system's.
std::string path_with(const std::string& client_bin) {
  const std::string v = vigil_bin();
  return v.substr(0, v.rfind('/')) + ":" + client_bin + ":/usr/local/bin:/usr/bin:/bin";
}

void run_readme(const std::string& client, const std::string& runner, const std::string& ext) {
  const std::vector<Block> all = blocks_of(read_file(source_dir() + "/clients/" + client + "/README.md"));
  ASSERT_GE(all.size(), 4u) << "the README lost its examples";
  TempDir ws, home, target, logs;
  std::map<std::string, std::string> env = {{"HOME", home.path()},
                                            {"XDG_STATE_HOME", home / "state"},
                                            {"PYTHONPATH", target.path()},
                                            {"NODE_PATH", ws / "node_modules"},
                                            {"PIP_NO_INDEX", "1"},
                                            {"PIP_TARGET", target.path()},
                                            {"PIP_NO_BUILD_ISOLATION", "false"},
                                            {"npm_config_offline", "true"},
                                            {"npm_config_cache", home / "npm-cache"},
                                            {"npm_config_audit", "false"},
                                            {"npm_config_fund", "false"}};
  env["PATH"] = path_with(target / "bin:" + ws.path() + "/node_modules/.bin");
  // A copy of the clients to install from: pip builds in the directory it is given, and
  // the checkout is not this test's to write (nor, in the unprivileged pass, its user's).
  ASSERT_EQ(run_program({"cp", "-R", source_dir() + "/clients", logs / "clients"}, logs.path()).exit_code, 0);
  int n = 0;
  for (const Block& b : all) {
    SCOPED_TRACE(client + " README block " + std::to_string(++n) + ":\n" + b.code);
    std::string code = b.code;
    // An install names the client by its place in a checkout: here, the copy's.
    for (std::size_t at; (at = code.find(" ./clients/")) != std::string::npos;)
      code.replace(at, 11, " " + logs.path() + "/clients/");
    Outcome o;
    if (b.lang == "sh") {
      o = run_at(ws.path(), logs.path(), {"sh", "-ec", code}, env);
    } else {
      ASSERT_EQ(b.lang, ext) << "an example in a language the test does not run";
      const std::string file = logs / ("example" + std::to_string(n) + "." + ext);
      write_file(file, code);
      o = run_at(ws.path(), logs.path(), {runner, file}, env);
    }
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    if (!b.expect.empty()) {
      EXPECT_NE(o.out.find(b.expect), std::string::npos) << o.out << o.err;
    }
    EXPECT_EQ(o.err.find("Traceback"), std::string::npos) << o.err;
  }
}

TEST(ClientsReadme, EveryPythonExampleRuns) {
  if (!have("pip3") && run_program({"python3", "-m", "pip", "--version"}, "/tmp", 30).exit_code != 0) {
    if (required()) FAIL() << "pip is missing (tools/bootstrap.sh installs python3-pip)";
    GTEST_SKIP() << "pip is missing (tools/bootstrap.sh installs python3-pip)";
  }
  run_readme("python", python3(), "python");
}

TEST(ClientsReadme, EveryNodeExampleRuns) {
  if (!have("npm") || !have("node")) {
    if (required()) FAIL() << "node or npm is missing (tools/bootstrap.sh installs them)";
    GTEST_SKIP() << "node or npm is missing (tools/bootstrap.sh installs them)";
  }
  run_readme("node", "node", "js");
}

TEST(ClientsReadme, WithoutVigilTheClientsSayWhatToDo) {
  TempDir ws, logs;
  const std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}};
  std::vector<std::vector<std::string>> clients = {
      {python3(), source_dir() + "/clients/python/vigil_client.py", "--", "true"}};
  if (have("node")) clients.push_back({"node", source_dir() + "/clients/node/vigil_client.js", "--", "true"});
  for (const auto& argv : clients) {
    SCOPED_TRACE(argv[1]);
    const Outcome o = run_at(ws.path(), logs.path(), argv, env);
    EXPECT_EQ(o.exit_code, 127) << o.err;
    EXPECT_NE(o.err.find("vigil_client: cannot run vigil: not found on PATH"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("--vigil BIN"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("Traceback"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("    at "), std::string::npos) << o.err;  // a Node stack
  }
}

}  // namespace
}  // namespace vigil::test
