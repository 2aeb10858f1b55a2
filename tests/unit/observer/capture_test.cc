// The pre-image records and the store (observer/capture.h, supervisor/core/events/content_store.h):
// a line vigil-init writes is one the supervisor accepts as exactly that image, a
// post-image from the sandbox is forged, bad fields are refused; the store keeps a file
// once under its hash and only within the caps; vigil.capture is read and checked.
#include "observer/capture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <variant>

#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil::init {
namespace {

std::string one_line(const Image& img, const std::string& phase = "pre", bool best_effort = false) {
  std::string out;
  append_image_line(&out, phase, "/w/a b\n.txt", img, best_effort);
  EXPECT_EQ(out.back(), '\n');
  out.pop_back();
  return out;
}

TEST(CaptureLine, RoundTripsThroughTheSupervisorsParser) {
  Image file;
  file.type = Image::Type::kFile;
  file.size = 12;
  file.mode = 0640;
  file.uid = 1000;
  file.gid = 100;
  file.sha256 = sha256_hex("hello world\n");
  file.stored = true;
  Image link;
  link.type = Image::Type::kSymlink;
  link.target = "../t\xff";
  Image over = file;
  over.stored = false;
  over.note = "not captured: over 16 MiB";
  for (const auto& [img, best_effort] : {std::pair{file, false}, {link, true}, {over, false}}) {
    auto body = events::parse_untrusted_event_line(one_line(img, "pre", best_effort));
    ASSERT_TRUE(body.ok()) << body.error().message;
    const auto& got = std::get<events::FsImage>(*body);
    EXPECT_EQ(got.phase, "pre");
    EXPECT_EQ(got.path, "/w/a b\n.txt");
    EXPECT_EQ(got.type, to_string(img.type));
    EXPECT_EQ(got.size, img.size);
    EXPECT_EQ(got.mode, img.mode);
    EXPECT_EQ(got.uid, img.uid);
    EXPECT_EQ(got.sha256, img.sha256);
    EXPECT_EQ(got.target, img.target);
    EXPECT_EQ(got.stored, img.stored);
    EXPECT_EQ(got.note, img.note);
    EXPECT_EQ(got.best_effort, best_effort);
  }
}

TEST(CaptureLine, ThePostImageIsTheSupervisorsAndBadFieldsAreRefused) {
  Image file;
  file.type = Image::Type::kFile;
  file.sha256 = sha256_hex("x");
  auto post = events::parse_untrusted_event_line(one_line(file, "post"));
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(events::fault_of(post.error()), events::LineFault::kForged);
  const char* bad[] = {
      R"({"kind":"fs.image","phase":"pre","path":"rel","type":"file"})",
      R"({"kind":"fs.image","phase":"pre","path":"/a","type":"fifo"})",
      R"({"kind":"fs.image","phase":"pre","path":"/a","type":"file","sha256":"ABC"})",
      R"({"kind":"fs.image","phase":"pre","path":"/a","type":"file","stored":true})",
      R"({"kind":"fs.image","phase":"pre","path":"/a","type":"file","mode":4096})",
  };
  // A directory's pre image (an rmdir): its mode and owner, so that undo can make it again.
  EXPECT_TRUE(events::parse_untrusted_event_line(
                  R"({"kind":"fs.image","phase":"pre","path":"/a","type":"dir","size":0,"mode":488,"uid":0,"gid":0})")
                  .ok());
  for (const char* line : bad) {
    auto got = events::parse_untrusted_event_line(line);
    EXPECT_FALSE(got.ok()) << line;
    if (!got.ok()) {
      EXPECT_EQ(events::fault_of(got.error()), events::LineFault::kMalformed) << line;
    }
  }
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil-store-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::mkdir((root_ + "/store").c_str(), 0700), 0);
    store_fd_ = UniqueFd(::open((root_ + "/store").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void put(const std::string& name, const std::string& bytes) {
    std::ofstream(root_ + "/" + name, std::ios::binary) << bytes;
  }
  std::string kept(const std::string& hash) {
    std::ifstream in(root_ + "/store/" + hash, std::ios::binary);
    return in ? std::string(std::istreambuf_iterator<char>(in), {}) : "<none>";
  }
  std::string root_;
  UniqueFd store_fd_;
};

TEST_F(StoreTest, KeepsOnceByHashWithinTheCaps) {
  ContentStore store(store_fd_.get(), CaptureCaps{150, 200});
  put("a", std::string(80, 'a'));
  put("a2", std::string(80, 'a'));  // the same bytes: kept once, counted once
  put("b", std::string(130, 'b'));   // over the session cap after a
  put("c", std::string(151, 'c'));  // over the file cap
  const Image a = store.take_image_at(AT_FDCWD, (root_ + "/a").c_str());
  EXPECT_TRUE(a.stored);
  EXPECT_EQ(a.sha256, sha256_hex(std::string(80, 'a')));
  EXPECT_EQ(kept(a.sha256), std::string(80, 'a'));
  EXPECT_TRUE(store.take_image_at(AT_FDCWD, (root_ + "/a2").c_str()).stored);
  EXPECT_EQ(store.used_bytes(), 80u);
  const Image b = store.take_image_at(AT_FDCWD, (root_ + "/b").c_str());
  EXPECT_FALSE(b.stored);
  EXPECT_EQ(b.note, "not captured: over 200 bytes for the session");
  EXPECT_EQ(b.sha256, sha256_hex(std::string(130, 'b')));
  EXPECT_EQ(kept(b.sha256), "<none>");
  const Image c = store.take_image_at(AT_FDCWD, (root_ + "/c").c_str());
  EXPECT_EQ(c.note, "not captured: over 150 bytes");
  EXPECT_EQ(c.size, 151u);
  EXPECT_EQ(store.take_image_at(AT_FDCWD, (root_ + "/missing").c_str()).type, Image::Type::kAbsent);
  // No temporary file is left behind.
  EXPECT_EQ(std::system(("test -z \"$(ls '" + root_ + "/store' | grep tmp)\"").c_str()), 0);
}

// Every read has a bound (#39): a file over the cap by its size is named with its size
// and never read (a 1 TiB sparse file costs an fstat, not 1 TiB of zeros hashed), and a
// procfs file, whose size says nothing (/proc/self/pagemap reads as 256 GiB with
// st_size 0), is named and never read, with a store or without (the supervisor's undo
// hashes without one).
TEST_F(StoreTest, SparseAndPseudoSourcesAreNamedNeverRead) {
  const std::string sparse = root_ + "/sparse";
  {
    UniqueFd f(::open(sparse.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    ASSERT_TRUE(f);
    ASSERT_EQ(::ftruncate(f.get(), off_t{1} << 40), 0);
  }
  for (int dir : {store_fd_.get(), -1}) {
    ContentStore store(dir, CaptureCaps{1 << 20, 1 << 30});
    const auto start = std::chrono::steady_clock::now();
    const Image big = store.take_image_at(AT_FDCWD, sparse.c_str());
    EXPECT_EQ(big.type, Image::Type::kFile);
    EXPECT_EQ(big.size, std::uint64_t{1} << 40);
    EXPECT_EQ(big.note, "not captured: over 1 MiB");
    EXPECT_TRUE(big.sha256.empty());
    EXPECT_FALSE(big.stored);
    // Without a symlink on the way (take_image_at refuses those): /proc/PID, not /proc/self.
    const std::string own = "/proc/" + std::to_string(::getpid()) + "/pagemap";
    const Image pagemap = store.take_image_at(AT_FDCWD, own.c_str());
    EXPECT_EQ(pagemap.type, Image::Type::kFile);
    EXPECT_EQ(pagemap.note, "not captured: a file of procfs (its size says nothing of its content)");
    EXPECT_TRUE(pagemap.sha256.empty());
    EXPECT_FALSE(pagemap.stored);
    EXPECT_EQ(store.used_bytes(), 0u);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
}

// The store is charged what it kept, packed or not, and a file never costs more than
// the room left: one that fits the file cap but not the session's room is hashed, not kept.
TEST_F(StoreTest, TheSessionIsChargedWhatWasKept) {
  ContentStore store(store_fd_.get(), CaptureCaps{1000, 1500});
  store.use_pack();
  put("p", std::string(700, 'p'));
  put("q", std::string(900, 'q'));
  const Image p = store.take_image_at(AT_FDCWD, (root_ + "/p").c_str());
  EXPECT_TRUE(p.stored);
  EXPECT_EQ(store.used_bytes(), 700u);
  const Image q = store.take_image_at(AT_FDCWD, (root_ + "/q").c_str());
  EXPECT_FALSE(q.stored);
  EXPECT_EQ(q.note, "not captured: over 1500 bytes for the session");
  EXPECT_EQ(q.sha256, sha256_hex(std::string(900, 'q')));
  EXPECT_EQ(store.used_bytes(), 700u);
  EXPECT_EQ(store.sync_pack(), 0);
}

TEST(CapText, NamesCapsAsPeopleWriteThem) {
  EXPECT_EQ(cap_text(std::uint64_t{16} << 20), "16 MiB");
  EXPECT_EQ(cap_text(std::uint64_t{1} << 30), "1 GiB");
  EXPECT_EQ(cap_text(2048), "2 KiB");
  EXPECT_EQ(cap_text(1000), "1000 bytes");
  EXPECT_EQ(cap_text(0), "0 bytes");
}

TEST(CaptureSettings, ReadAndChecked) {
  const LoadContext ctx{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};
  auto d = parse_policy("{}", "s.json", ctx);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->vigil.capture_enabled);
  EXPECT_EQ(d->vigil.capture_caps.max_file_bytes, std::uint64_t{16} << 20);
  EXPECT_EQ(d->vigil.capture_caps.max_session_bytes, std::uint64_t{1} << 30);
  auto p = parse_policy(
      R"({"vigil": {"capture": {"enabled": false, "maxFileBytes": 5, "maxSessionBytes": 7}}})",
      "s.json", ctx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->vigil.capture_enabled);
  EXPECT_EQ(p->vigil.capture_caps.max_file_bytes, 5u);
  EXPECT_EQ(p->vigil.capture_caps.max_session_bytes, 7u);
  for (const char* bad : {R"({"vigil": {"capture": {"maxFileBytes": -1}}})",
                          R"({"vigil": {"capture": {"maxFilesBytes": 1}}})",
                          R"({"vigil": {"capture": {"enabled": "yes"}}})",
                          R"({"vigil": {"capture": 1}})"}) {
    auto got = parse_policy(bad, "s.json", ctx);
    EXPECT_FALSE(got.ok()) << bad;
    if (!got.ok()) {
      EXPECT_NE(got.error().message.find("vigil.capture"), std::string::npos)
          << got.error().message;
    }
  }
}

}  // namespace
}  // namespace vigil::init
