// Packs (supervisor/core/events/content_pack.h): a post-image pass's small files in one file.
// What a pass packs, replay's store reader gives back byte for byte (beside the per-file
// images of stores written before packs); the same bytes are packed once; the caps hold;
// a pack torn by a crash gives back its whole entries and nothing of the torn one.
#include "supervisor/core/events/content_pack.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "supervisor/backstop/change_capture.h"
#include "supervisor/core/events/content_store.h"
#include "supervisor/replay/replay_changes.h"

namespace vigil {
namespace {

class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil-pack-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(::mkdir((root_ + "/store").c_str(), 0700), 0);
    store_fd_ = UniqueFd(::open((root_ + "/store").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(store_fd_);
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void put(const std::string& name, const std::string& bytes) {
    std::ofstream(root_ + "/" + name, std::ios::binary) << bytes;
  }
  std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The store's files: packs, and images of their own.
  std::size_t count(const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& name : list()) n += name.starts_with(prefix) ? 1 : 0;
    return n;
  }
  std::vector<std::string> list() {
    std::vector<std::string> out;
    FILE* p = ::popen(("ls " + root_ + "/store").c_str(), "r");
    char line[256];
    while (p != nullptr && std::fgets(line, sizeof line, p) != nullptr) {
      std::string s = line;
      if (!s.empty() && s.back() == '\n') s.pop_back();
      out.push_back(s);
    }
    if (p != nullptr) ::pclose(p);
    return out;
  }
  events::FsImage image_of(const std::string& name, ContentStore& store) {
    return to_event("post", root_ + "/" + name, store.take_image_at(AT_FDCWD, (root_ + "/" + name).c_str()));
  }
  std::string root_;
  UniqueFd store_fd_;
};

TEST_F(PackTest, WhatAPassPacksReadsBackBesideStoreFilesOfItsOwn) {
  // Before packs: an image in a file of its own (a pre-image, or an older store).
  put("old", "kept the old way\n");
  ContentStore before(store_fd_.get(), CaptureCaps{});
  const events::FsImage old = image_of("old", before);
  ASSERT_TRUE(old.stored);
  EXPECT_EQ(read(root_ + "/store/" + old.sha256), "kept the old way\n");

  ContentStore store(store_fd_.get(), CaptureCaps{});
  store.use_pack();
  std::vector<events::FsImage> images;
  std::string big(ContentStore::kPackedMax + 1, 'B');  // over the pack's limit: a file of its own
  put("big", big);
  images.push_back(image_of("big", store));
  for (int i = 0; i < 300; ++i) {
    // Past the writer's buffer (1 MiB) several times over: entries cross its flushes.
    std::string bytes = "file " + std::to_string(i) + "\n" + std::string(static_cast<std::size_t>(i) * 97, 'x');
    put("f" + std::to_string(i), bytes);
    images.push_back(image_of("f" + std::to_string(i), store));
  }
  put("empty", "");
  images.push_back(image_of("empty", store));
  ASSERT_EQ(store.sync_pack(), 0);
  EXPECT_EQ(count("pack."), 1u);
  EXPECT_EQ(count("tmp."), 0u);
  // One pack and two files of their own (old, big): nothing per small file.
  EXPECT_EQ(list().size(), 3u);

  const replay::ContentFn reader = replay::store_reader(root_ + "/store");
  for (const events::FsImage& img : images) {
    ASSERT_TRUE(img.stored) << img.path << ": " << img.note;
    const replay::Content c = reader(img);
    ASSERT_TRUE(c.ok) << img.path << ": " << c.why;
    EXPECT_EQ(c.bytes, read(img.path)) << img.path;
  }
  EXPECT_EQ(reader(old).bytes, "kept the old way\n");
}

TEST_F(PackTest, TheSameBytesArePackedOnceAndTheCapsHold) {
  ContentStore store(store_fd_.get(), CaptureCaps{150, 200});
  store.use_pack();
  put("a", std::string(80, 'a'));
  put("a2", std::string(80, 'a'));
  put("b", std::string(130, 'b'));  // over the session cap after a
  put("c", std::string(151, 'c'));  // over the file cap
  const events::FsImage a = image_of("a", store);
  const events::FsImage a2 = image_of("a2", store);
  const events::FsImage b = image_of("b", store);
  const events::FsImage c = image_of("c", store);
  ASSERT_EQ(store.sync_pack(), 0);
  EXPECT_TRUE(a.stored);
  EXPECT_TRUE(a2.stored);
  EXPECT_EQ(store.used_bytes(), 80u);
  EXPECT_FALSE(b.stored);
  EXPECT_EQ(b.note, "not captured: over 200 bytes for the session");
  EXPECT_EQ(b.sha256, sha256_hex(std::string(130, 'b')));
  EXPECT_FALSE(c.stored);
  EXPECT_EQ(c.note, "not captured: over 150 bytes");
  const auto index = index_packs(root_ + "/store");
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index.begin()->second.size, 80u);
  // The pack holds the magic and one entry: a2 and the refused ones left nothing.
  const std::string pack = read(root_ + "/store/" + index.begin()->second.pack);
  EXPECT_EQ(pack.size(), kPackMagicSize + kPackEntryHeader + 80);
}

TEST_F(PackTest, ATornPackGivesBackItsWholeEntriesOnly) {
  ContentStore store(store_fd_.get(), CaptureCaps{});
  store.use_pack();
  put("one", "one\n");
  put("two", std::string(5000, '2'));
  const events::FsImage one = image_of("one", store);
  const events::FsImage two = image_of("two", store);
  ASSERT_EQ(store.sync_pack(), 0);
  const auto index = index_packs(root_ + "/store");
  ASSERT_EQ(index.size(), 2u);
  const std::string pack = root_ + "/store/" + index.at(one.sha256).pack;
  // A crash in the middle of the second entry's bytes.
  ASSERT_EQ(::truncate(pack.c_str(), static_cast<off_t>(index.at(two.sha256).offset + 100)), 0);
  const replay::ContentFn reader = replay::store_reader(root_ + "/store");
  EXPECT_EQ(reader(one).bytes, "one\n");
  const replay::Content torn = reader(two);
  EXPECT_FALSE(torn.ok);
  EXPECT_NE(torn.why.find("not in the store"), std::string::npos) << torn.why;
  // An entry whose header was never patched (all-ones size) ends the walk too.
  ASSERT_EQ(::truncate(pack.c_str(), static_cast<off_t>(index.at(two.sha256).offset)), 0);
  const std::string header(32, '\0');
  std::ofstream(pack, std::ios::binary | std::ios::app) << header << std::string(8, '\xff') << "zz";
  EXPECT_EQ(index_packs(root_ + "/store").size(), 1u);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// Every read has a bound: a 1 TiB sparse file is described by its size and never read
// (the old store hashed it to its end), and a procfs file, whose size says nothing of
// what a read returns, is named and not read at all.
TEST_F(PackTest, ATerabyteSparseFileAndAProcfsFileAreNamedNotRead) {
  ContentStore store(store_fd_.get(), CaptureCaps{});
  store.use_pack();
  const std::string big = root_ + "/sparse";
  {
    UniqueFd fd(::open(big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::ftruncate(fd.get(), off_t{1} << 40), 0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Image img = store.take_image_at(AT_FDCWD, big.c_str());
  const std::string pagemap = "/proc/" + std::to_string(::getpid()) + "/pagemap";
  const Image proc = store.take_image_at(AT_FDCWD, pagemap.c_str());
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_EQ(img.type, Image::Type::kFile);
  EXPECT_EQ(img.size, std::uint64_t{1} << 40);
  EXPECT_EQ(img.note, "not captured: over 16 MiB");
  EXPECT_EQ(img.sha256, "");
  EXPECT_FALSE(img.stored);
  EXPECT_EQ(proc.note, "not captured: a file of procfs (its size says nothing of its content)");
  EXPECT_EQ(proc.sha256, "");
  EXPECT_FALSE(proc.stored);
  ASSERT_EQ(store.sync_pack(), 0);
  EXPECT_EQ(store.used_bytes(), 0u);
}

}  // namespace
}  // namespace vigil
