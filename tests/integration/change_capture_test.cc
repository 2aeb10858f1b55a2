// Pre- and post-images (observer/capture.h, supervisor/backstop/change_capture.h) with the real
// bwrap and real tools: before the command first changes or removes an existing file
// (sed -i's rename over it, `>` truncating it, rm, mv over it, truncate), its bytes are
// in the session's content store under their SHA-256 and an fs.image "pre" record says
// what the file was (type, size, mode, symlink target); after the command an fs.image
// "post" record says what it became. The store is out of the command's reach.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <dirent.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/base/sha256.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

using json = nlohmann::json;

struct Captured {
  Outcome o;
  std::string log;
  std::vector<json> pre, post;  // fs.image records by phase
  std::string store;            // this session's store directory
};

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

Captured run_in(const std::string& ws, const std::string& state, const std::string& script,
           const std::vector<std::string>& extra = {}, const std::string& log = "s.jsonl") {
  Captured r;
  r.log = state + "/" + log;
  std::vector<std::string> args = {"run", "--log", r.log};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  r.o = run_vigil(args, ws, 120, {{"XDG_STATE_HOME", state}});
  std::istringstream in(read_file(r.log));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("kind", "") != "fs.image") continue;
    (j["phase"] == "pre" ? r.pre : r.post).push_back(j);
  }
  const std::string captures = state + "/vigil/captures";
  const auto ids = entries(captures);
  if (ids.size() == 1) r.store = captures + "/" + ids[0];
  return r;
}

const json* image(const std::vector<json>& images, const std::string& path) {
  for (const json& j : images) {
    if (j["path"] == path) return &j;
  }
  return nullptr;
}

std::string hash(const std::string& bytes) { return sha256_hex(bytes); }

// What the store keeps under the hash of `bytes`: a file of its own named by it, or an
// entry of a pack (supervisor/core/events/content_pack.h: the raw hash, the size in 8
// little-endian bytes, the bytes), where a post-image pass keeps small files.
std::string kept_in_store(const std::string& store, const std::string& bytes) {
  if (exists(store + "/" + hash(bytes))) return read_file(store + "/" + hash(bytes));
  std::string entry(reinterpret_cast<const char*>(sha256(bytes).data()), 32);
  for (int i = 0; i < 8; ++i) entry += static_cast<char>((bytes.size() >> (8 * i)) & 0xff);
  entry += bytes;
  for (const std::string& name : entries(store)) {
    if (name.starts_with("pack.") && read_file(store + "/" + name).find(entry) != std::string::npos)
      return bytes;
  }
  return "<not in the store>";
}

// The pre-image of `path` is exactly `content` (kept in the store) with `mode`.
void expect_pre_file(const Captured& r, const std::string& path, const std::string& content,
                     unsigned mode) {
  const json* pre = image(r.pre, path);
  ASSERT_NE(pre, nullptr) << "no pre-image of " << path << "\n" << read_file(r.log);
  EXPECT_EQ((*pre)["type"], "file");
  EXPECT_EQ((*pre)["size"], content.size());
  EXPECT_EQ((*pre)["mode"], mode);
  EXPECT_EQ((*pre)["sha256"], hash(content));
  EXPECT_EQ(pre->value("stored", false), true);
  ASSERT_NE(r.store, "");
  EXPECT_EQ(read_file(r.store + "/" + hash(content)), content);
  EXPECT_EQ(std::count_if(r.pre.begin(), r.pre.end(),
                          [&](const json& j) { return j["path"] == path; }),
            1)
      << "once per path";
}

TEST(ChangeCapture, SedInPlaceKeepsTheOldBytesAndHashesTheNew) {
  TempDir ws, state;
  const std::string before = "a = 1\nb = 2\n";
  write_file(ws / "calc.py", before);
  ::chmod((ws / "calc.py").c_str(), 0640);
  Captured r = run_in(ws.path(), state.path(), "sed -i 's/1/10/' calc.py && sed -i 's/2/20/' calc.py");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  expect_pre_file(r, ws / "calc.py", before, 0640);
  const json* post = image(r.post, ws / "calc.py");
  ASSERT_NE(post, nullptr) << read_file(r.log);
  EXPECT_EQ((*post)["sha256"], hash("a = 10\nb = 20\n"));
  EXPECT_EQ((*post)["type"], "file");
  EXPECT_EQ(kept_in_store(r.store, "a = 10\nb = 20\n"), "a = 10\nb = 20\n");
}

TEST(ChangeCapture, TruncateRemoveRenameOverAndSymlinks) {
  TempDir ws, state;
  write_file(ws / "out.txt", "old output\n");
  write_file(ws / "gone.txt", "to be removed\n");
  write_file(ws / "target.txt", "replaced by mv\n");
  write_file(ws / "new.txt", "moved over\n");
  write_file(ws / "cut.bin", std::string(5000, 'x'));
  ASSERT_EQ(::symlink("calc.py", (ws / "link").c_str()), 0);
  Captured r = run_in(ws.path(), state.path(),
                 "echo new > out.txt && rm gone.txt link && mv new.txt target.txt && "
                 "truncate -s 10 cut.bin && echo more >> out.txt");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  expect_pre_file(r, ws / "out.txt", "old output\n", 0644);
  expect_pre_file(r, ws / "gone.txt", "to be removed\n", 0644);
  expect_pre_file(r, ws / "target.txt", "replaced by mv\n", 0644);
  expect_pre_file(r, ws / "cut.bin", std::string(5000, 'x'), 0644);
  const json* link = image(r.pre, ws / "link");
  ASSERT_NE(link, nullptr) << read_file(r.log);
  EXPECT_EQ((*link)["type"], "symlink");
  EXPECT_EQ((*link)["target"], "calc.py");
  // New files have no pre-image; after the command each changed path has a post-image.
  EXPECT_EQ(image(r.pre, ws / "new.txt"), nullptr);
  for (const char* gone : {"gone.txt", "link", "new.txt"}) {
    const json* post = image(r.post, ws / gone);
    ASSERT_NE(post, nullptr) << gone;
    EXPECT_EQ((*post)["type"], "absent") << gone;
  }
  const json* out = image(r.post, ws / "out.txt");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ((*out)["sha256"], hash("new\nmore\n"));
  EXPECT_EQ((*image(r.post, ws / "cut.bin"))["sha256"], hash(std::string(10, 'x')));
  // A file that was only created gets a post-image but no pre-image.
  EXPECT_EQ((*image(r.post, ws / "target.txt"))["sha256"], hash("moved over\n"));
}

// An open for writing that changes nothing by itself (an append, a write in place) keeps
// the bytes from before the command's first write through it: the pre-image is taken
// from the very fd the caller is given, before it is given. A name such an open creates
// has none.
TEST(ChangeCapture, AnAppendOrAWriteInPlaceKeepsTheBytesFromBeforeIt) {
  TempDir ws, state;
  write_file(ws / "app.txt", "first\n");
  write_file(ws / "inplace.bin", "abcdef");
  ::chmod((ws / "inplace.bin").c_str(), 0600);
  Captured r = run_in(ws.path(), state.path(),
                      "echo second >> app.txt && printf XY | dd of=inplace.bin conv=notrunc "
                      "2>/dev/null && echo made >> fresh.txt && echo third >> app.txt");
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  expect_pre_file(r, ws / "app.txt", "first\n", 0644);
  expect_pre_file(r, ws / "inplace.bin", "abcdef", 0600);
  EXPECT_EQ(image(r.pre, ws / "fresh.txt"), nullptr) << read_file(r.log);
  EXPECT_EQ((*image(r.post, ws / "app.txt"))["sha256"], hash("first\nsecond\nthird\n"));
  EXPECT_EQ((*image(r.post, ws / "inplace.bin"))["sha256"], hash("XYcdef"));
  EXPECT_EQ((*image(r.post, ws / "fresh.txt"))["sha256"], hash("made\n"));
}

// Over the cap by its size a file is named with its size and never read (#39: every read
// has a bound; a 1 TiB sparse file must not be hashed to its end).
TEST(ChangeCapture, OverTheFileCapTheSizeIsRecordedNeverTheBytes) {
  TempDir ws, state, cfg;
  const std::string big(5000, 'b');
  write_file(ws / "big.txt", big);
  write_file(ws / "small.txt", "small\n");
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"capture": {"maxFileBytes": 1000}}})");
  Captured r = run_in(ws.path(), state.path(), "echo > big.txt && echo > small.txt",
                 {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  const json* pre = image(r.pre, ws / "big.txt");
  ASSERT_NE(pre, nullptr) << read_file(r.log);
  EXPECT_FALSE(pre->contains("sha256"));
  EXPECT_EQ((*pre)["size"], 5000);
  EXPECT_EQ(pre->value("stored", false), false);
  EXPECT_EQ((*pre)["note"], "not captured: over 1000 bytes");
  EXPECT_FALSE(exists(r.store + "/" + hash(big)));
  expect_pre_file(r, ws / "small.txt", "small\n", 0644);
}

TEST(ChangeCapture, CaptureOffKeepsNothing) {
  TempDir ws, state, cfg;
  write_file(ws / "f.txt", "x\n");
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"capture": {"enabled": false}}})");
  Captured r = run_in(ws.path(), state.path(), "echo y > f.txt", {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  EXPECT_TRUE(r.pre.empty());
  EXPECT_TRUE(r.post.empty());
  EXPECT_FALSE(exists(state / "vigil/captures"));
}

// The store lies in the workspace itself here (XDG_STATE_HOME below it): still the
// command can neither list, read nor write it, nor reach vigil-init's fd of it.
TEST(ChangeCapture, TheStoreIsOutOfTheCommandsReach) {
  TempDir ws;
  const std::string state = ws / "state";
  make_dirs(state);
  const std::string secret = "pre-image bytes\n";
  write_file(ws / "f.txt", secret);
  // A first session fills the store; the second tries to reach it.
  Captured first = run_in(ws.path(), state, "echo changed > f.txt");
  ASSERT_EQ(first.o.exit_code, 0) << first.o.err;
  ASSERT_NE(first.store, "");
  const std::string kept = first.store + "/" + hash(secret);
  ASSERT_EQ(read_file(kept), secret);
  const std::string probe =
      "ls '" + first.store + "' && echo @LISTED; cat '" + kept + "' && echo @READ; "
      "echo forged > '" + kept + "' && echo @WROTE; rm '" + kept + "' && echo @REMOVED; "
      "mv '" + state + "/vigil/captures' '" + ws / "moved" + "' && echo @MOVED; "
      "ls -l /proc/1/fd/ && echo @FDS; for f in /proc/1/fd/*; do ls \"$f/\" && echo @DIRFD; done; "
      "true";
  Captured second = run_in(ws.path(), state, probe, {}, "second.jsonl");
  EXPECT_NE(second.o.err.find(hash(secret)), std::string::npos) << "the probe ran: " << second.o.err;
  for (const char* bad : {"@LISTED", "@READ", "@WROTE", "@REMOVED", "@MOVED", "@FDS", "@DIRFD"})
    EXPECT_EQ(second.o.out.find(bad), std::string::npos) << bad << "\n" << second.o.out;
  EXPECT_EQ(read_file(kept), secret);
}

// A post-image is taken on the host, after the command, by the names its records carry.
// The command writes d/id, then swaps d for a symlink to a directory it may not read
// (denyRead): following that link would have the supervisor read the hidden file and
// keep it in the store. No symlink is followed on the way; the record says why nothing
// was kept.
TEST(ChangeCapture, APostImageNeverFollowsALinkPlantedOnTheWay) {
  TempDir ws, state, cfg, hidden;
  const std::string secret = "hidden from the sandbox\n";
  write_file(hidden / "id", secret);
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                                 hidden.path() + R"("]}})");
  Captured r = run_in(ws.path(), state.path(),
                      "mkdir d && echo mine > d/id && mv d d.old && ln -s '" + hidden.path() +
                          "' d && cat d/id; true",
                      {"--settings", cfg / "s.json"});
  ASSERT_EQ(r.o.exit_code, 0) << r.o.err;
  EXPECT_EQ(r.o.out.find("hidden from"), std::string::npos) << "denyRead did not hide it";
  const json* post = image(r.post, ws / "d/id");
  ASSERT_NE(post, nullptr) << read_file(r.log);
  EXPECT_NE((*post)["sha256"], hash(secret));
  EXPECT_EQ(post->value("note", ""), "not captured: a symlink on the way to it");
  ASSERT_NE(r.store, "");
  EXPECT_FALSE(exists(r.store + "/" + hash(secret)));
  for (const std::string& name : entries(r.store)) EXPECT_NE(read_file(r.store + "/" + name), secret);
}

}  // namespace
}  // namespace vigil::test
