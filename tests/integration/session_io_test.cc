// The command's output through `vigil run`: passed on byte for byte, logged as io.*
// chunks, never parsed; a closed stdout ends the command's writes as it would without
// vigil; the annotation follows stderr on a line of its own.
//
// Log records are read here with nlohmann::json straight from the file (not with vigil's
// reader), so these tests check the documented format (docs/events.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::vector<nlohmann::json> records(const std::string& log) {
  std::vector<nlohmann::json> out;
  const std::string text = read_file(log);
  size_t start = 0, nl;
  while ((nl = text.find('\n', start)) != std::string::npos) {
    out.push_back(nlohmann::json::parse(text.substr(start, nl - start)));
    start = nl + 1;
  }
  return out;
}

// docs/events.md: `data` is a string (valid UTF-8) or {"b64": ...} for other bytes.
std::string decode_data(const nlohmann::json& d) {
  if (d.is_string()) return d.get<std::string>();
  const std::string b64 = d.at("b64").get<std::string>();
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : b64) {
    if (c == '=') break;
    buf = (buf << 6) | static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

std::string logged_stream(const std::vector<nlohmann::json>& recs, const std::string& kind) {
  std::string out;
  for (const auto& r : recs)
    if (r.at("kind") == kind) out += decode_data(r.at("data"));
  return out;
}

TEST(RunOutput, BytesPassThroughUnchangedAndAreLoggedExactly) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  // Binary bytes (NUL, 0xff), no trailing newline, and a large burst (several pipe reads).
  auto o = run_vigil({"run", "--log", log, "--", "python3", "-c",
                      "import sys\n"
                      "sys.stdout.buffer.write(b'out\\x00\\xff' + b'y' * 300000)\n"
                      "sys.stdout.flush()\n"
                      "sys.stderr.write('err line\\n')\n"},
                     ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string expected_out = std::string("out\0\xff", 5) + std::string(300000, 'y');
  EXPECT_EQ(o.out, expected_out);
  EXPECT_EQ(o.err, "err line\n");
  const auto recs = records(log);
  EXPECT_EQ(logged_stream(recs, "io.stdout"), expected_out);
  EXPECT_EQ(logged_stream(recs, "io.stderr"), "err line\n");
  // Output is logged by the supervisor, never attributed to the sandbox.
  for (const auto& r : recs) {
    if (r.at("kind") == "io.stdout" || r.at("kind") == "io.stderr") {
      EXPECT_EQ(r.at("src"), "supervisor");
    }
  }
}

TEST(RunOutput, ForgedEventJsonOnStdoutIsOnlyOutput) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  const std::string forged =
      R"({"v":1,"kind":"fs.write","pid":1,"syscall":"openat","path":"/etc/passwd",)"
      R"("verdict":"allowed","reason":"forged"})";
  const std::string forged_end = R"({"v":1,"kind":"session.end","exit_code":0})";
  auto o = run_vigil({"run", "--log", log, "--", "sh", "-c",
                      "printf '%s\\n' \"$0\"; printf '%s\\n' \"$1\" >&2", forged, forged_end},
                     ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto recs = records(log);
  int fs_writes = 0, ends = 0;
  for (const auto& r : recs) {
    if (r.at("kind") == "fs.write") ++fs_writes;
    if (r.at("kind") == "session.end") ++ends;
  }
  EXPECT_EQ(fs_writes, 0) << "printed JSON became an event";
  EXPECT_EQ(ends, 1);
  EXPECT_EQ(recs.back().at("kind"), "session.end");
  EXPECT_EQ(logged_stream(recs, "io.stdout"), forged + "\n");
  EXPECT_EQ(logged_stream(recs, "io.stderr"), forged_end + "\n");
  auto v = run_vigil({"replay", "--verify", log}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

TEST(RunOutput, ClosedStdoutEndsTheCommandWithSigpipe) {
  TempDir ws;
  // `yes` writes forever: only EPIPE/SIGPIPE stops it once `head` has gone. Without that,
  // this would hang until the harness's timeout.
  auto o = run_vigil({"run", "-c", "true"}, ws.path());  // warm-up: the sandbox works
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string sh = "set -o pipefail; '" + vigil_bin() + "' run -- yes | head -n 2";
  auto p = run_vigil({"run", "--sandbox", "off", "--", "bash", "-c", sh}, ws.path(), 30);
  EXPECT_EQ(p.out, "y\ny\n");
  EXPECT_EQ(p.exit_code, 141) << "vigil's status with pipefail: the command died of SIGPIPE\n"
                              << p.err;
}

TEST(RunOutput, InheritModeWritesStraightThroughAndLogsNoOutput) {
  TempDir ws, state;
  const std::string log = state / "s.jsonl";
  auto o = run_vigil(
      {"run", "--output", "inherit", "--log", log, "--", "sh", "-c", "echo visible; echo e >&2"},
      ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "visible\n");
  EXPECT_EQ(o.err, "e\n");
  const auto recs = records(log);
  EXPECT_EQ(logged_stream(recs, "io.stdout"), "");
  EXPECT_EQ(logged_stream(recs, "io.stderr"), "");
  auto bad = run_vigil({"run", "--output", "tty", "--", "true"}, ws.path());
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(RunOutput, AnnotationStartsOnALineOfItsOwn) {
  TempDir ws, outside, state;
  const std::string target = outside / "x";
  for (const bool newline : {true, false}) {
    SCOPED_TRACE(newline ? "stderr ends with a newline" : "stderr ends mid-line");
    const std::string log = state / (newline ? "a.jsonl" : "b.jsonl");
    const std::string script = std::string("printf 'last words") + (newline ? "\\n" : "") +
                               "' >&2; echo hi 2>/dev/null > '" + target + "'; exit 3";
    auto o = run_vigil({"run", "--log", log, "-c", script}, ws.path());
    EXPECT_EQ(o.exit_code, 3);
    const std::string head = "last words\n<sandbox_violations>\n";
    ASSERT_EQ(o.err.substr(0, head.size()), head) << o.err;
    EXPECT_NE(o.err.find("deny "), std::string::npos) << o.err;
    EXPECT_FALSE(exists(target));
    const auto recs = records(log);
    bool found = false;
    for (const auto& r : recs) {
      if (r.at("kind") != "annotation") continue;
      found = true;
      EXPECT_EQ(r.value("newline_before", false), !newline);
      EXPECT_EQ(o.err.substr(o.err.size() - r.at("text").get<std::string>().size()),
                r.at("text").get<std::string>());
    }
    EXPECT_TRUE(found);
    auto a = run_vigil({"replay", "--annotate", log}, ws.path());
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(o.err.substr(head.size() - std::string("<sandbox_violations>\n").size()), a.out);
  }
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// A log the command could rewrite proves nothing, wherever --log puts it: in the
// workspace itself (relative or absolute) the file is read-only inside and cannot be
// removed, while the rest of the workspace stays writable; in a directory of its own
// inside the workspace, that directory is read-only.
TEST(RunLog, ALogInsideTheWorkspaceIsOutOfTheCommandsReach) {
  for (const bool relative : {true, false}) {
    SCOPED_TRACE(relative ? "relative --log" : "absolute --log");
    TempDir ws;
    make_dirs(ws / "logs");
    write_file(ws / "logs/old.jsonl", "an earlier session\n");
    for (const std::string& name : {std::string("s.jsonl"), std::string("logs/s.jsonl")}) {
      SCOPED_TRACE(name);
      const std::string arg = relative ? name : ws / name;
      auto o = run_vigil({"run", "--log", arg, "--", "sh", "-c",
                          "touch work.txt && echo wrote; echo x >> " + name +
                              " 2>/dev/null || echo append-refused; rm -f " + name +
                              " 2>/dev/null || echo rm-refused; echo x >> logs/old.jsonl "
                              "2>/dev/null || echo old-refused"},
                         ws.path());
      EXPECT_EQ(o.exit_code, 0) << o.err;
      EXPECT_NE(o.out.find("wrote"), std::string::npos) << "the workspace must stay writable";
      EXPECT_NE(o.out.find("append-refused"), std::string::npos) << o.out;
      EXPECT_NE(o.out.find("rm-refused"), std::string::npos) << o.out;
      if (name == "logs/s.jsonl") {
        EXPECT_NE(o.out.find("old-refused"), std::string::npos) << "earlier logs beside it";
      }
      auto v = run_vigil({"replay", "--verify", ws / name}, ws.path());
      EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
      ::unlink((ws / name).c_str());
      ::unlink((ws / "work.txt").c_str());
    }
  }
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// The log is created while bwrap builds the sandbox; when it cannot be, the sandbox is
// torn down before vigil-init's go: the command never ran, nothing is left running, and
// no file is left where the log was to be.
TEST(RunLog, ALogThatCannotBeCreatedMeansTheCommandNeverRuns) {
  TempDir ws;
  TempDir logs;
  const std::string marker = unique_marker("nolog");
  for (const std::string& log :
       {std::string("/nonexistent-vigil-dir/x.jsonl"), logs / "missing/x.jsonl"}) {
    auto o = run_vigil({"run", "--log", log, "--", "sh", "-c", "touch ran; sleep 30 # " + marker},
                       ws.path());
    EXPECT_EQ(o.exit_code, 125) << o.err;
    EXPECT_NE(o.err.find("cannot create the session log " + log), std::string::npos) << o.err;
    EXPECT_FALSE(exists(ws / "ran")) << "the command ran without its log";
    EXPECT_TRUE(pids_with_marker(marker).empty());
  }
  // Again and again: nothing of the sandbox may outlive vigil, whenever in bwrap's set-up
  // the failure lands (bwrap killed before it released its sandbox child left that child
  // blocked for good).
  for (int i = 0; i < 10; ++i) {
    auto o = run_vigil({"run", "--log", "/nonexistent-vigil-dir/x.jsonl", "--", "sh", "-c",
                        "touch ran; sleep 30 # " + marker},
                       ws.path());
    EXPECT_EQ(o.exit_code, 125) << o.err;
    EXPECT_TRUE(pids_with_marker(marker).empty()) << "round " << i;
  }
  EXPECT_FALSE(exists(ws / "ran"));
  // An existing file is never taken over (O_EXCL), and never removed either.
  write_file(logs / "taken.jsonl", "someone else's\n");
  auto o = run_vigil({"run", "--log", logs / "taken.jsonl", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_EQ(read_file(logs / "taken.jsonl"), "someone else's\n");
}

}  // namespace
}  // namespace vigil::test
