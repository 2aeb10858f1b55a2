// Reading a session's content stores (supervisor/core/events/stored_content.h, issue 32):
// an agent session has one store per command, and any store's copy that matches the hash
// is the content; a copy that does not match, and a log naming content by anything but a
// SHA-256, are never read as the session's.
#include "supervisor/core/events/stored_content.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "supervisor/core/base/sha256.h"

namespace vigil {
namespace {

class StoredContentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil-stored-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"/s", "/s-1", "/s-2"}) ASSERT_EQ(::mkdir((root_ + d).c_str(), 0700), 0);
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void put(const std::string& rel, const std::string& bytes) {
    std::ofstream(root_ + "/" + rel, std::ios::binary) << bytes;
  }
  events::FsImage image(const std::string& bytes) {
    events::FsImage i;
    i.type = "file";
    i.stored = true;
    i.size = bytes.size();
    i.sha256 = sha256_hex(bytes);
    return i;
  }
  StoredContentFn reader() {
    return stored_content_reader({root_ + "/s", root_ + "/s-1", root_ + "/s-2"}, 1 << 20);
  }
  std::string root_;
};

TEST_F(StoredContentTest, ACopyInAnyOfTheSessionsStoresIsRead) {
  const events::FsImage img = image("second command's pre-image\n");
  put("s-2/" + img.sha256, "second command's pre-image\n");
  const StoredContent c = reader()(img);
  EXPECT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.bytes, "second command's pre-image\n");
}

TEST_F(StoredContentTest, ACopyThatDoesNotMatchItsHashIsNeverTheContent) {
  const events::FsImage img = image("the real bytes\n");
  put("s-1/" + img.sha256, "replaced\n");
  StoredContent c = reader()(img);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.why.find("does not match its hash"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("s-1/" + img.sha256), std::string::npos) << "names the copy: " << c.why;
  // A good copy in another store is the content.
  put("s-2/" + img.sha256, "the real bytes\n");
  c = reader()(img);
  EXPECT_TRUE(c.ok) << c.why;
}

TEST_F(StoredContentTest, ContentNamedByAPathIsNeverOpened) {
  put("outside", "not a store file\n");
  for (const std::string& name : std::vector<std::string>{"../outside", "/etc/passwd", std::string(64, 'A'), std::string(63, 'a')}) {
    SCOPED_TRACE(name);
    events::FsImage img = image("not a store file\n");
    img.sha256 = name;
    const StoredContent c = reader()(img);
    EXPECT_FALSE(c.ok);
    EXPECT_NE(c.why.find("not a SHA-256"), std::string::npos) << c.why;
  }
}

TEST_F(StoredContentTest, MissingEverywhereSaysSo) {
  StoredContent c = reader()(image("nowhere\n"));
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.why.find("not in any of the session's 3 stores"), std::string::npos) << c.why;
  c = stored_content_reader({}, 1 << 20)(image("nowhere\n"));
  EXPECT_NE(c.why.find("not in the store"), std::string::npos) << c.why;
}

}  // namespace
}  // namespace vigil
