// The command's output through `vigil run`: passed on byte for byte, logged as io.*
// chunks, never parsed; a closed stdout ends the command's writes as it would without
// vigil; the annotation follows stderr on a line of its own.
//
// Log records are read here with nlohmann::json straight from the file (not with vigil's
// reader), so these tests check the documented format (docs/events.md).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "supervisor/core/base/base64.h"
#include "supervisor/core/base/sha256.h"
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
  auto bytes = base64_decode(d.at("b64").get<std::string>());  // strict: canonical only
  EXPECT_TRUE(bytes.has_value()) << "data.b64 is not canonical base64: " << d.dump();
  return bytes.value_or("");
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
      // The block ends stderr, but for the closing line that names the log.
      const std::string text = r.at("text").get<std::string>();
      const auto [before_line, where] = split_log_line(o.err);
      ASSERT_NE(where, "") << o.err;
      ASSERT_GE(before_line.size(), text.size()) << o.err;
      EXPECT_EQ(before_line.substr(before_line.size() - text.size()), text);
    }
    EXPECT_TRUE(found);
    auto a = run_vigil({"replay", "--annotate", log}, ws.path());
    EXPECT_EQ(a.exit_code, 0) << a.err;
    const std::string before_line = split_log_line(o.err).first;
    EXPECT_EQ(before_line.substr(head.size() - std::string("<sandbox_violations>\n").size()), a.out);
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
  // A usage error (exit 2) that says what to do.
  auto o = run_vigil({"run", "--log", logs / "taken.jsonl", "--", "touch", "ran"}, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_EQ(read_file(logs / "taken.jsonl"), "someone else's\n");
}

// ---- Bounds: binary-dense output is logged as base64 (4/3 of its size, not 6x), the log
// keeps at most vigil.log.maxOutputBytes of output (the command's own output is never
// cut; the cut is a log.truncated record), `replay --verify` and `--json` stream a log in
// constant memory, and a file that is not a log is called that.

std::size_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
}

TEST(LogBounds, BinaryDenseOutputIsLoggedAsBase64NotSixBytesPerNul) {
  TempDir ws, logs;
  const std::size_t n = 4'000'000;
  auto o = run_vigil(
      {"run", "--log", logs / "l.jsonl", "--", "head", "-c", std::to_string(n), "/dev/zero"},
      ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, std::string(n, '\0')) << "the command's output passes whole";
  const std::size_t logged = file_size(logs / "l.jsonl");
  EXPECT_LT(logged, n * 3 / 2) << "NUL bytes must not cost 6 bytes each in the log";
  std::size_t chunks = 0;
  for (const auto& r : records(logs / "l.jsonl")) {
    if (r["kind"] != "io.stdout") continue;
    ++chunks;
    EXPECT_TRUE(r["data"].is_object()) << "a NUL-dense chunk is {\"b64\": ...}";
  }
  EXPECT_GT(chunks, 0u);
  auto v = run_vigil({"replay", "--verify", logs / "l.jsonl"}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  // Text stays text, colour escapes and all.
  auto t = run_vigil(
      {"run", "--log", logs / "t.jsonl", "--", "printf", "\\033[1mbold\\033[0m ok\\n"}, ws.path());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const auto& r : records(logs / "t.jsonl"))
    if (r["kind"] == "io.stdout") {
      EXPECT_TRUE(r["data"].is_string()) << r.dump();
    }
}

TEST(LogBounds, MaxOutputBytesCutsTheLogNeverTheOutput) {
  TempDir ws, cfg, logs;
  write_file(
      cfg / "s.json",
      R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"log": {"maxOutputBytes": 1000}}})");
  auto o = run_vigil(
      {"run", "--settings", cfg / "s.json", "--log", logs / "l.jsonl", "--", "seq", "1", "20000"},
      ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string expected;
  for (int i = 1; i <= 20000; ++i) expected += std::to_string(i) + "\n";
  EXPECT_EQ(o.out, expected) << "the command's own output is never cut";
  std::size_t truncated = 0;
  std::string head, tail;  // the output logged before and after the log.truncated record
  std::uint64_t unlogged = 0;
  for (const auto& r : records(logs / "l.jsonl")) {
    if (r["kind"] == "io.stdout") (truncated == 0 ? head : tail) += r["data"].get<std::string>();
    if (r["kind"] == "log.truncated") {
      ++truncated;
      EXPECT_EQ(r["max_output_bytes"], 1000) << r.dump();
      // Issue 38.4: what the gap holds, and each stream whole, checkable by its digest.
      EXPECT_EQ(r["omitted_bytes"], expected.size() - 1000) << r.dump();
      EXPECT_EQ(r["stdout_bytes"], expected.size()) << r.dump();
      EXPECT_EQ(r["stderr_bytes"], 0) << r.dump();
      EXPECT_EQ(r["stdout_sha256"], sha256_hex(expected)) << r.dump();
      EXPECT_EQ(r["stderr_sha256"], sha256_hex("")) << r.dump();
    }
    if (r["kind"] == "session.end") unlogged = r["counters"].value("io.unlogged_bytes", 0u);
  }
  // Head and tail: half the cap each, the first and the last bytes.
  EXPECT_EQ(head, expected.substr(0, 500));
  EXPECT_EQ(tail, expected.substr(expected.size() - 500));
  EXPECT_EQ(truncated, 1u);
  EXPECT_EQ(unlogged, expected.size() - 1000);
  // Replay says what was cut.
  auto t = run_vigil({"replay", logs / "l.jsonl"}, ws.path());
  EXPECT_NE(t.out.find(std::to_string(expected.size() - 1000) + " bytes of output cut"),
            std::string::npos)
      << t.out;
  auto v = run_vigil({"replay", "--verify", logs / "l.jsonl"}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  // A bad value is refused like any other setting.
  write_file(cfg / "bad.json", R"({"vigil": {"log": {"maxOutputBytes": -1}}})");
  auto bad = run_vigil({"run", "--settings", cfg / "bad.json", "--", "true"}, ws.path());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("vigil.log.maxOutputBytes"), std::string::npos) << bad.err;
}

// Many small writes on both streams past the cap: the tail keeps exactly the last bytes
// that came, each stream's part a suffix of what it wrote (the ring drops whole and
// partial chunks from its front as new ones come).
TEST(LogBounds, TheTailOfManySmallWritesIsTheLastBytesOfEachStream) {
  TempDir ws, cfg, logs;
  write_file(
      cfg / "s.json",
      R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"log": {"maxOutputBytes": 1000}}})");
  auto o = run_vigil({"run", "--settings", cfg / "s.json", "--log", logs / "l.jsonl", "--", "sh",
                      "-c", "i=0; while [ $i -lt 4000 ]; do i=$((i+1)); echo o$i; echo e$i >&2; done"},
                     ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string out_expected, err_expected;
  for (int i = 1; i <= 4000; ++i) {
    out_expected += "o" + std::to_string(i) + "\n";
    err_expected += "e" + std::to_string(i) + "\n";
  }
  EXPECT_EQ(o.out, out_expected);
  bool after = false;
  std::string out_tail, err_tail;
  for (const auto& r : records(logs / "l.jsonl")) {
    if (r["kind"] == "log.truncated") after = true;
    if (!after) continue;
    if (r["kind"] == "io.stdout") out_tail += r["data"].get<std::string>();
    if (r["kind"] == "io.stderr") err_tail += r["data"].get<std::string>();
  }
  ASSERT_TRUE(after);
  EXPECT_EQ(out_tail.size() + err_tail.size(), 500u);
  EXPECT_EQ(out_expected.substr(out_expected.size() - out_tail.size()), out_tail);
  EXPECT_EQ(err_expected.substr(err_expected.size() - err_tail.size()), err_tail);
  auto v = run_vigil({"replay", "--verify", logs / "l.jsonl"}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

TEST(LogBounds, ReplayVerifyAndJsonStreamInConstantMemory) {
  TempDir ws, cfg, logs;
  write_file(
      cfg / "s.json",
      R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"log": {"maxOutputBytes": 200000000}}})");
  {
    // (Scoped: the output this test holds must be gone before a child inherits its RSS.)
    auto o = run_vigil({"run", "--settings", cfg / "s.json", "--log", logs / "big.jsonl", "--",
                        "head", "-c", "45000000", "/dev/urandom"},
                       ws.path(), 120);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  ASSERT_GT(file_size(logs / "big.jsonl"), 55'000'000u);
  const long verify_kib = peak_rss_kib({"replay", "--verify", logs / "big.jsonl"});
  const long json_kib = peak_rss_kib({"replay", "--json", "session.end", logs / "big.jsonl"});
  // Reading the log whole would take more than its 60 MB.
  EXPECT_LT(verify_kib, 40 * 1024) << "replay --verify must stream";
  EXPECT_LT(json_kib, 40 * 1024) << "replay --json must stream";
}

TEST(LogBounds, WhatIsNotALogIsCalledThatAndBadKindsAreErrors) {
  TempDir ws, logs;
  write_file(logs / "notes.json", "{\"hello\": 1}\n");
  auto r = run_vigil({"replay", logs / "notes.json"}, ws.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not a session log"), std::string::npos) << r.err;
  auto v = run_vigil({"replay", "--verify", logs / "notes.json"}, ws.path());
  EXPECT_NE(v.exit_code, 0);
  EXPECT_NE(v.out.find("not a session log"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("edited"), std::string::npos) << v.out;
  write_file(logs / "empty.jsonl", "");
  auto e = run_vigil({"replay", logs / "empty.jsonl"}, ws.path());
  EXPECT_NE(e.exit_code, 0);
  EXPECT_NE(e.err.find("not a session log"), std::string::npos) << e.err;

  auto ok = run_vigil({"run", "--log", logs / "l.jsonl", "--", "true"}, ws.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto bogus = run_vigil({"replay", "--json", "bogus", logs / "l.jsonl"}, ws.path());
  EXPECT_EQ(bogus.exit_code, 2) << bogus.out << bogus.err;
  EXPECT_NE(bogus.err.find("session.end"), std::string::npos) << "names the kinds: " << bogus.err;
  auto end = run_vigil({"replay", "--json", "session.*", logs / "l.jsonl"}, ws.path());
  EXPECT_EQ(end.exit_code, 0) << end.err;
  EXPECT_NE(end.out.find("\"kind\":\"session.end\""), std::string::npos) << end.out;
}

// 2>&1: when vigil's stdout and stderr are one open file, the command gets one pipe for
// both, so lines a program alternates between them keep its order (two pipes read by
// one loop regroup them).
TEST(SessionIo, StdoutAndStderrIntoOneFileKeepTheProgramsOrder) {
  TempDir ws, out;
  const std::string program =
      "i=0; while [ $i -lt 300 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done";
  const std::string cmd = "cd " + ws.path() + " && " + vigil_bin() + " run -- sh -c '" + program +
                          "' > " + out / "both.txt" + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string expected;
  for (int i = 0; i < 300; ++i)
    expected += "out" + std::to_string(i) + "\nerr" + std::to_string(i) + "\n";
  EXPECT_EQ(read_file(out / "both.txt"), expected);
  // Separate destinations still get separate streams.
  auto o = run_vigil({"run", "--", "sh", "-c", "echo a; echo b >&2; echo c"}, ws.path());
  EXPECT_EQ(o.out, "a\nc\n");
  EXPECT_EQ(o.err, "b\n");
}

// docs/events.md: two runs under the same policy have the same policy_digest (the
// session's fresh temp dir is not part of it).
TEST(SessionIo, TwoRunsOfOnePolicyShareADigest) {
  TempDir ws, logs;
  std::vector<std::string> digests;
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    auto o = run_vigil({"run", "--log", logs / name, "--", "true"}, ws.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const auto recs = records(logs / name);
    ASSERT_FALSE(recs.empty());
    digests.push_back(recs.front().at("policy_digest").get<std::string>());
  }
  EXPECT_EQ(digests[0].size(), 64u);
  EXPECT_EQ(digests[0], digests[1]);
}

}  // namespace
}  // namespace vigil::test
