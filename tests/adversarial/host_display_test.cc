// Hostile names against the people and programs that read vigil's output (issue 21.1,
// 21.3, 21.4): a directory name carrying terminal escapes (OSC 52 writes the auditor's
// clipboard, OSC 0 retitles the window, CSI 2J clears the screen) or invisible text for
// the model must reach no terminal raw, whichever part of vigil prints it; and junk
// denials cannot push a write that was not stopped out of the block.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// ESC ] 52 ; c ; <base64> BEL: sets the clipboard; then a title change and a clear.
const std::string kHostile = "x\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;owned\x07\x1b[2J";

// No byte of a terminal control (C0 but \n and \t, DEL, the C1 CSI/OSC as UTF-8).
void expect_no_controls(const std::string& text, const std::string& what) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool control = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
    const bool c1 = c == 0xc2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    ASSERT_FALSE(control || c1) << what << ": raw control byte 0x" << std::hex << int(c)
                                << " at " << std::dec << i << " in:\n"
                                << text;
  }
}

TEST(HostDisplay, ExplainEscapesPlantedNamesInArgvAndRules) {
  TempDir ws;
  make_dirs(ws / (kHostile + "/.vscode"));
  const Outcome o = run_vigil({"explain"}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  expect_no_controls(o.out, "explain stdout");
  expect_no_controls(o.err, "explain stderr");
  EXPECT_NE(o.out.find("x\\x1b]52;c;cm0gLXJmIH4=\\x07"), std::string::npos) << o.out;
}

TEST(HostDisplay, ExplainPathEscapesThePath) {
  TempDir ws;
  make_dirs(ws / kHostile);
  const Outcome o = run_vigil({"explain", "--path", ws / (kHostile + "/f")}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  expect_no_controls(o.out, "explain --path stdout");
  EXPECT_NE(o.out.find("path:  " + ws.path() + "/x\\x1b]52"), std::string::npos) << o.out;
}

// A settings entry that mounts nothing is a `# note:` line of explain and a warning at
// launch; both name the entry.
TEST(HostDisplay, NotesAndWarningsEscapeSettingsValues) {
  TempDir ws;
  write_file(ws / "s.json",
             "{\"filesystem\":{\"allowWrite\":[\"./missing\\u001b]52;c;aGk=\\u0007\"]}}");
  const Outcome o = run_vigil({"explain", "--settings", ws / "s.json"}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  expect_no_controls(o.out, "explain notes");
  expect_no_controls(o.err, "explain warnings");
  EXPECT_NE(o.out.find("# note: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("missing\\x1b]52"), std::string::npos) << o.out;
  // Issue 19.2: the entry that mounts nothing is said at launch, in one line.
  EXPECT_NE(o.err.find("filesystem.allowWrite entries not writable in this session: "),
            std::string::npos)
      << o.err;
  const Outcome r = run_vigil({"run", "--settings", ws / "s.json", "--", "true"}, ws.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_no_controls(r.err, "run warnings");
}

TEST(HostDisplay, RunErrorsEscapeThePath) {
  TempDir ws;
  const Outcome o =
      run_vigil({"run", "--settings", ws / (kHostile + ".json"), "--", "true"}, ws.path());
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("vigil: "), std::string::npos) << o.err;
  expect_no_controls(o.err, "run error");
}

// The mandatory-deny scan cannot read a directory: the warning names it, escaped.
TEST(HostDisplay, ScanWarningEscapesTheName) {
  TempDir ws;
  const std::string dir = ws / kHostile;
  make_dirs(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0), 0);
  // Root reads a mode-000 directory: as root, vigil runs without the two capabilities
  // that let it (util-linux's setpriv drops them from the bounding set).
  std::vector<std::string> wrapper;
  if (::geteuid() == 0) {
    wrapper = {"/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"};
    ASSERT_EQ(::access(wrapper[0].c_str(), X_OK), 0) << "setpriv (util-linux) is missing";
  }
  const Outcome o = run_vigil({"run", "--", "true"}, ws.path(), 60, {}, "", wrapper);
  ::chmod(dir.c_str(), 0700);
  EXPECT_NE(o.err.find("mandatory-deny scan could not read"), std::string::npos) << o.err;
  expect_no_controls(o.err, "scan warning");
}

// Issue 21.1: 30 junk denials, then a write into a protected name no mount guards. The
// block shows the write that was not stopped, first.
TEST(HostDisplay, JunkDenialsCannotHideAnUnguardedWrite) {
  // A hook planted in a new repository (refused at the call in every repository, issue 39)
  // and a new sub/.vscode (refused at any depth): 60 junk denials first must push neither
  // deny line out of the block.
  TempDir ws;
  make_dirs(ws / "sub");
  const Outcome o = run_vigil(
      {"run", "--", "sh", "-c",
       // A subshell each: a failed redirection of `:` (a special built-in) ends the shell.
       "for i in $(seq 1 30); do (: > /usr/lib/junk$i) 2>/dev/null; done; "
       "for i in $(seq 1 30); do mkdir -p /opt/j$i/k 2>/dev/null; done; "
       "git init -q r && printf '#!/bin/sh\\n' > r/.git/hooks/post-checkout; "
       "mkdir -p sub/.vscode 2>/dev/null; echo done"},
      ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(ws / "r/.git/hooks/post-checkout")) << "refused at the call";
  EXPECT_FALSE(exists(ws / "sub/.vscode")) << "refused at the call";
  const std::size_t block = o.err.find("<sandbox_violations>\n");
  ASSERT_NE(block, std::string::npos) << o.err;
  EXPECT_NE(o.err.find("deny write " + (ws / "r/.git/hooks/post-checkout") + " (", block),
            std::string::npos)
      << o.err;
  // The repository's sample hooks git made are allowed and only worth knowing (issue
  // 38.2): not in the block; the planted hook is, as refused, above.
  EXPECT_EQ(o.err.find(" " + (ws / "r/.git") + " (protected names of a repository"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("deny create " + (ws / "sub/.vscode") + " ("), std::string::npos) << o.err;
  // The junk is grouped by directory and cause, not a line each.
  EXPECT_NE(o.err.find("30 paths in /usr/lib/"), std::string::npos) << o.err;
}

// Issue 21.3: text a transcript does not show (tag characters, zero-width space) reaches
// the model only as visible escapes.
TEST(HostDisplay, InvisibleTextInADeniedPathIsVisibleInTheBlock) {
  TempDir ws;
  // "SYS" in tag characters, then a zero-width space and a soft hyphen.
  const std::string hidden = "\xf3\xa0\x81\x93\xf3\xa0\x81\x99\xf3\xa0\x81\x93\xe2\x80\x8b\xc2\xad";
  const Outcome o =
      run_vigil({"run", "--", "sh", "-c", "echo x > \"/usr/lib/a$1\"; true", "sh", hidden},
                ws.path());
  const std::size_t block = o.err.find("<sandbox_violations>\n");
  ASSERT_NE(block, std::string::npos) << o.err;
  const std::string text = o.err.substr(block);
  EXPECT_EQ(text.find(hidden), std::string::npos) << "raw invisible characters reached the model";
  EXPECT_NE(text.find("/usr/lib/a\\u{e0053}\\u{e0059}\\u{e0053}\\u{200b}\\u{00ad}"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace vigil::test
