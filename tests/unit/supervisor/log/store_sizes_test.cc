// The capture stores' sizes kept between runs (store_sizes.h): a cache that only ever
// stands for a store whose directory is unchanged, and whose bad lines are ignored.
#include "supervisor/log/store_sizes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/state_size.h"

namespace vigil {
namespace {

TEST(StoreSizes, RoundTripAndBadLinesAreIgnored) {
  StoreSizes s;
  s["20261207T000000Z-aaaaaaaaaaaa"] = {1, 2, 3'000'000'000, 4096};
  s["20261207T000000Z-aaaaaaaaaaaa-12"] = {1, 9, -5, 0};
  EXPECT_EQ(parse_store_sizes(format_store_sizes(s)), s);
  const std::string good = "ok 1 2 3 4\n";
  for (const std::string& text : std::vector<std::string>{"v2\n" + good, good, "v1\nok 1 2 3\n", "v1\nok 1 2 3 4 5\n", "v1\nok 1 2 x 4\n",
        "v1\na/b 1 2 3 4\n", "v1\n.. 1 2 3 4\n", "v1\nok 1 2 3 -4\n", "v1\nok 1 2 3 4",
        "v1\nok  1 2 3 4\n", "v1\nok 1 2 3 99999999999999999999999\n"}) {
    EXPECT_TRUE(parse_store_sizes(text).empty()) << text;
  }
  const StoreSizes one = parse_store_sizes("v1\nbad line\nok 1 2 3 4\n");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one.at("ok").bytes, 4u);
  StoreSizes odd;
  odd["a/b"] = {1, 2, 3, 4};
  odd["a b"] = {1, 2, 3, 4};
  EXPECT_EQ(format_store_sizes(odd), "v1\n") << "names that are no store's are never written";
}

struct Dir {
  std::string path;
  Dir() {
    std::string t = ::testing::TempDir() + "store-sizes-XXXXXX";
    path = ::mkdtemp(t.data()) != nullptr ? t : "";
  }
  ~Dir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
};

void put(const std::string& p, std::size_t n) { std::ofstream(p) << std::string(n, 'x'); }

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A later run (a fresh process: here, the same directory by another spelling) takes a
// settled store's size from the file without walking it, and walks it again once it
// changed.
TEST(StoreSizes, ALaterRunUsesTheFileUntilTheStoreChanges) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  const std::string root = d.path + "/captures";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((root + "/S").c_str(), 0700), 0);
  put(root + "/S/f", 10);
  const timespec old[2] = {{::time(nullptr) - 10, 0}, {::time(nullptr) - 10, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (root + "/S").c_str(), old, 0), 0);
  EXPECT_EQ(capture_store_usage(root, "S").session, 10u);
  const std::string saved = slurp(root + "/.sizes");
  ASSERT_NE(saved.find("\nS "), std::string::npos) << saved;
  // The file says 999: a later run believes it while the store is as it was walked.
  std::string forged = saved;
  forged.replace(forged.rfind(" 10\n"), 4, " 999\n");
  std::ofstream(root + "/.sizes", std::ios::trunc) << forged;
  EXPECT_EQ(capture_store_usage(root + "/.", "S").session, 999u);
  put(root + "/S/g", 5);  // the store changed: walked again, whatever the file said
  EXPECT_EQ(capture_store_usage(root + "/./.", "S").session, 15u);
  EXPECT_EQ(capture_store_usage(root + "/./.", "S").all, 15u) << "the file itself is no store";
}

}  // namespace
}  // namespace vigil
