// The unified diff of `vigil replay --diff` (supervisor/replay/line_diff.h): exact output for a
// table of small cases (diff(1)'s spelling of ranges, the no-newline marker, merged and
// separate hunks), and, for many random texts, that applying the diff to the old text
// gives the new one, also when the edit bound cuts the search short.
#include "supervisor/replay/line_diff.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace vigil {
namespace {

using Lines = std::vector<std::string>;

TEST(LineDiff, Table) {
  struct Case {
    std::string a, b;
    Lines want;
  };
  const std::vector<Case> cases = {
      {"same\n", "same\n", {}},
      {"a\nb\nc\n", "a\nB\nc\n", {"@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"}},
      {"", "x\n", {"@@ -0,0 +1 @@", "+x"}},
      {"x\n", "", {"@@ -1 +0,0 @@", "-x"}},
      {"a", "b", {"@@ -1 +1 @@", "-a", "\\ No newline at end of file", "+b", "\\ No newline at end of file"}},
      {"a\n", "a", {"@@ -1 +1 @@", "-a", "+a", "\\ No newline at end of file"}},
      {"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
       {"@@ -1,5 +1,5 @@", " 1", "-2", "+X", " 3", " 4", " 5", "@@ -8,5 +8,5 @@", " 8", " 9", " 10",
        "-11", "+Y", " 12"}},
      // Changes up to 2 * context lines apart share one hunk.
      {"1\n2\n3\n4\n5\n6\n7\n8\n", "X\n2\n3\n4\n5\n6\n7\nY\n",
       {"@@ -1,8 +1,8 @@", "-1", "+X", " 2", " 3", " 4", " 5", " 6", " 7", "-8", "+Y"}},
  };
  for (const Case& c : cases) EXPECT_EQ(unified_diff(c.a, c.b).lines, c.want) << c.a << "|" << c.b;
}

// Applies a unified diff made by unified_diff() to `a`.
std::string apply(const std::string& a, const Lines& diff) {
  std::vector<std::string> old;
  for (std::size_t s = 0; s < a.size();) {
    const std::size_t nl = a.find('\n', s);
    const std::size_t e = nl == std::string::npos ? a.size() : nl + 1;
    old.push_back(a.substr(s, e - s));
    s = e;
  }
  std::string out;
  std::size_t at = 0;  // next old line not yet copied
  for (std::size_t i = 0; i < diff.size(); ++i) {
    const std::string& l = diff[i];
    const bool no_nl = i + 1 < diff.size() && diff[i + 1] == "\\ No newline at end of file";
    if (l.starts_with("@@")) {
      std::size_t start = std::stoul(l.substr(4));
      const std::size_t comma = l.find(',');
      const bool empty = comma != std::string::npos && comma < l.find('+') && l[comma + 1] == '0';
      const std::size_t first = empty ? start : start - 1;
      while (at < first) out += old[at++];
    } else if (l[0] == ' ') {
      out += old[at++];
    } else if (l[0] == '-') {
      ++at;
    } else if (l[0] == '+') {
      out += l.substr(1) + (no_nl ? "" : "\n");
    }
  }
  while (at < old.size()) out += old[at++];
  return out;
}

TEST(LineDiff, AppliedItGivesTheNewTextAlsoWhenCutShort) {
  std::mt19937 rng(17);
  auto text = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += std::string(1, static_cast<char>('a' + rng() % 4)) + "\n";
    if (rng() % 3 == 0 && !s.empty()) s.pop_back();
    return s;
  };
  for (int round = 0; round < 400; ++round) {
    const std::string a = text(rng() % 30), b = text(rng() % 30);
    for (std::size_t max : {std::size_t{2000}, std::size_t{3}}) {
      const LineDiff d = unified_diff(a, b, DiffOptions{3, max});
      EXPECT_EQ(apply(a, d.lines), b) << "round " << round << " max_edits " << max;
      if (a == b) {
        EXPECT_TRUE(d.lines.empty());
      }
    }
  }
}

TEST(LineDiff, TextIsBytesWithoutNul) {
  EXPECT_TRUE(looks_like_text("plain\n\xff\xfe"));
  EXPECT_FALSE(looks_like_text(std::string("a\0b", 3)));
  EXPECT_TRUE(looks_like_text(std::string(8000, 'a') + '\0'));  // git's 8000 bytes
}

}  // namespace
}  // namespace vigil
