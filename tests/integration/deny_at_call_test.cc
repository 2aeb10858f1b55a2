// Denials told and refused at the call, through the real CLI and a real bwrap:
//  * a deny glob ("**/.env") hides what exists at launch, and a name it matches created
//    later is refused at the call (the gatekeeper): nothing on the host, a line in the
//    block;
//  * vigil.observer.reads: a read of a denyRead path, by any spelling (absolute, relative,
//    through a symlink), gets a "deny read" line; none with the setting off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>

#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool has(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::string block_of(const Outcome& o) {
  const std::string before = split_log_line(o.err).first;
  const std::size_t at = before.find("<sandbox_violations>\n");
  return at == std::string::npos ? std::string() : before.substr(at);
}

TEST(DenyAtCall, ADenyGlobHidesWhatExistsAndRefusesNamesCreatedLater) {
  if (!kernel_has_gatekeeper()) GTEST_SKIP() << "needs Linux 5.14+ (vigil-init performs the calls)";
  TempDir ws, cfg;
  write_file(ws / ".env", "TOP_SECRET=1\n");
  make_dirs(ws / "sub/dir");
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."], "denyRead": ["**/.env"],
                                                "denyWrite": ["*.pem"]}})");
  const std::string cmd =
      "cat .env; echo x > sub/dir/.env && echo env-written || echo env-refused; "
      "echo y > sub/f && (mv sub/f sub/.env && echo mv-worked || echo mv-refused); "
      "(mkdir sub/dir/.env && echo mkdir-worked || echo mkdir-refused); "
      "echo k > new.pem && echo pem-written || echo pem-refused; "
      "echo fine > sub/dir/.envrc && echo envrc-ok; true";
  const Outcome o =
      run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c", cmd}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(has(o.out, "TOP_SECRET")) << o.out;  // hidden at launch
  EXPECT_TRUE(has(o.out, "env-refused")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "mv-refused")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "mkdir-refused")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "pem-refused")) << o.out << o.err;
  EXPECT_TRUE(has(o.out, "envrc-ok")) << o.out << o.err;  // a name the glob does not match
  // Nothing on the host.
  EXPECT_FALSE(exists(ws / "sub/dir/.env"));
  EXPECT_FALSE(exists(ws / "sub/.env"));
  EXPECT_FALSE(exists(ws / "new.pem"));
  EXPECT_TRUE(exists(ws / "sub/f"));
  EXPECT_EQ(read_file(ws / "sub/dir/.envrc"), "fine\n");
  const std::string block = block_of(o);
  // The refused names (the open, the mkdir, the rename onto sub/.env), one cause in one
  // tree: one line, grouped under sub/.
  EXPECT_TRUE(has(block, ws.path() + "/sub/")) << o.err;
  EXPECT_TRUE(has(block, "dir/.env")) << o.err;
  EXPECT_TRUE(has(block, "filesystem.denyRead[0] \"**/.env\"")) << block;
  EXPECT_TRUE(has(block, "filesystem.denyWrite[0] \"*.pem\"")) << block;
  EXPECT_TRUE(has(block, "cannot be created after launch")) << block;

  const Outcome e = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(has(e.out,
                  "1 existing match hidden at launch by the mounts below (expanded at "
                  "launch); a name it matches created later is refused by vigil-init at "
                  "the call"))
      << e.out;
}

// A temp HOME with ~/.ssh/id_x hidden by denyRead; `reads` sets vigil.observer.reads.
struct ReadRun {
  TempDir home, ws, cfg;
  Outcome run(bool reads) {
    make_dirs(home / ".ssh");
    write_file(home / ".ssh/id_x", "PRIVATE KEY\n");
    write_file(home / ".ssh/known_hosts", "host key\n");
    if (::symlink((home / ".ssh/id_x").c_str(), (ws / "key-link").c_str()) != 0 && errno != EEXIST)
      ADD_FAILURE() << "symlink";
    write_file(ws / "plain.txt", "plain\n");
    write_file(cfg / "s.json", std::string(R"({"filesystem": {"denyRead": ["~/.ssh"],
                                          "allowRead": ["~/.ssh/known_hosts"]},
                           "vigil": {"observer": {"reads": )") +
                                   (reads ? "true" : "false") + "}}}");
    const std::string cmd =
        "cat ~/.ssh/id_x; cat key-link; (cd ~/.ssh && cat id_x); cat plain.txt; "
        "cat ~/.ssh/known_hosts; "
        // A process vigil-init cannot read (non-dumpable) still reads as before.
        "python3 -c 'import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "
        "print(open(\"plain.txt\").read(), end=\"\")'; true";
    return run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c", cmd}, ws.path(), 60,
                     {{"HOME", home.path()}});
  }
};

TEST(DenyAtCall, AReadOfADenyReadPathIsToldWithTheSettingOn) {
  ReadRun r;
  const Outcome o = r.run(true);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(has(o.out, "PRIVATE KEY")) << o.out;
  // Reads go on as before, a non-dumpable process's too.
  EXPECT_TRUE(has(o.out, "plain\nhost key\nplain\n")) << o.out << o.err;
  const std::string block = block_of(o);
  // Three spellings (absolute, through a symlink, relative to a cwd inside): one target.
  EXPECT_TRUE(has(block, "deny read " + r.home.path() +
                             "/.ssh/id_x (hidden by denyRead, filesystem.denyRead[0]) (x3)"))
      << o.err;
  EXPECT_FALSE(has(block, "known_hosts")) << block;  // bound back in by allowRead
  EXPECT_FALSE(has(block, "plain.txt")) << block;
  const Outcome e = run_vigil({"explain", "--settings", r.cfg / "s.json"}, r.ws.path(), 60,
                              {{"HOME", r.home.path()}});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(has(e.out, "# reads (vigil.observer.reads): every open goes to vigil-init")) << e.out;
}

TEST(DenyAtCall, NoReadIsToldWithTheSettingOff) {
  ReadRun r;
  const Outcome o = r.run(false);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(has(o.out, "PRIVATE KEY")) << o.out;
  EXPECT_TRUE(has(o.out, "plain\nhost key\nplain\n")) << o.out << o.err;
  EXPECT_FALSE(has(o.err, "deny read")) << o.err;
}

}  // namespace
}  // namespace vigil::test
