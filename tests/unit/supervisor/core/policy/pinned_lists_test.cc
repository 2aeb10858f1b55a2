// Lists users rely on, pinned from outside the code under test. The behaviour tests take
// their names from the tables (mandatory_denies(), ...), so a row dropped from a table
// silently drops out of them; here the table must match a reviewed data file in
// tests/data/, and the data file must match what the README promises.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "filters/filter_specs.h"
#include "filters/notify_filter.h"
#include "supervisor/core/policy/mandatory_denies.h"

namespace vigil {
namespace {

const std::string kData = VIGIL_TEST_DATA_DIR;

// The data file's rows: "NAME [MARK]", '#' comments and blank lines skipped.
std::vector<std::vector<std::string>> data_rows(const std::string& file) {
  std::ifstream in(kData + "/" + file);
  EXPECT_TRUE(in) << "missing " << kData << "/" << file;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    rows.push_back(row);
  }
  return rows;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PinnedLists, MandatoryDeniesAgreeWithTheReadmeAndTheTable) {
  std::set<std::string> pinned, pinned_git_config;
  for (const auto& row : data_rows("mandatory_denies.txt")) {
    ASSERT_FALSE(row.empty());
    pinned.insert(row[0]);
    if (row.size() > 1 && row[1] == "git-config") pinned_git_config.insert(row[0]);
  }
  ASSERT_GE(pinned.size(), 1u);

  // The README: the first `...` after "Mandatory denies:".
  const std::string readme = read_all(kData + "/../../README.md");
  const std::size_t at = readme.find("Mandatory denies:");
  ASSERT_NE(at, std::string::npos) << "the README no longer lists the mandatory denies";
  const std::size_t open = readme.find('`', at);
  const std::size_t close = readme.find('`', open + 1);
  ASSERT_NE(close, std::string::npos);
  std::set<std::string> promised;
  std::istringstream words(readme.substr(open + 1, close - open - 1));
  for (std::string w; words >> w;) promised.insert(w);
  EXPECT_EQ(promised, pinned) << "README and tests/data/mandatory_denies.txt disagree";

  std::set<std::string> table, table_git_config;
  for (const MandatoryDeny& d : mandatory_denies()) {
    const std::string name = std::string(d.relpath) + (d.shape == DenyShape::kDir ? "/" : "");
    table.insert(name);
    if (d.git_config) table_git_config.insert(name);
  }
  EXPECT_EQ(table, pinned) << "supervisor/core/policy/mandatory_denies.cc and the pinned list disagree";
  EXPECT_EQ(table_git_config, pinned_git_config);
}

TEST(PinnedLists, TrappedSyscallsAgreeWithTheObserversTable) {
  std::set<std::string> pinned;
  for (const auto& row : data_rows("trapped_syscalls.txt")) pinned.insert(row.at(0));
  ASSERT_GE(pinned.size(), 1u);
  std::set<std::string> table;
  for (const FilterRule& r : notify_filter().rules) table.insert(std::string(r.syscall));
  EXPECT_EQ(table, pinned) << "filters/notify_filter.cc and tests/data/trapped_syscalls.txt "
                              "disagree: a syscall the observer stopped (or started) trapping";
}

}  // namespace
}  // namespace vigil
