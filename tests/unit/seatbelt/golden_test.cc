// Golden profiles for ten policies (tests/data/seatbelt/<name>.sb, and <name>.params for
// the -D values and warnings), so that any change to a generated profile is reviewed as
// a diff. Regenerate with VIGIL_UPDATE_GOLDEN=1 and read the diff before committing.
//
// Each golden is also checked structurally: well-formed SBPL in the shape the builder
// promises, and rule order as the semantics need -- for two rules on overlapping
// operations whose paths nest, the broader one comes first, and on the same path the
// allow comes before the deny (Seatbelt: the last matching rule wins).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "seatbelt/profile_builder.h"
#include "tests/unit/seatbelt/fixtures.h"
#include "tests/unit/seatbelt/sbpl_eval.h"

namespace vigil {
namespace {

const std::string kDir = std::string(VIGIL_TEST_DATA_DIR) + "/seatbelt/";

// Values may hold newlines and quotes: shown C-escaped, one parameter per line.
std::string display(std::string_view v) {
  std::string out;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_params(const SeatbeltProfile& p) {
  std::string out;
  for (const auto& x : p.params) out += x.name + "=" + display(x.value) + "\t# " + x.origin + "\n";
  for (const auto& w : p.warnings) out += "# warning: " + w + "\n";
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void compare_or_update(const std::string& path, const std::string& actual) {
  if (const char* u = std::getenv("VIGIL_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " missing (VIGIL_UPDATE_GOLDEN=1 writes it)";
  if (actual == expected) return;
  // The first line that differs, rather than two whole profiles.
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 0;
  while (true) {
    ++line;
    const bool ga = static_cast<bool>(std::getline(a, la)),
               ge = static_cast<bool>(std::getline(e, le));
    if (!ga && !ge) break;
    if (la != le || ga != ge) break;
  }
  ADD_FAILURE() << path << " differs at line " << line << "\n  golden:    " << le
                << "\n  generated: " << la
                << "\n(VIGIL_UPDATE_GOLDEN=1 rewrites it; review the diff with git diff)";
}

// The path a filter names, with parameters substituted; empty for other filters.
struct PathFilter {
  bool subpath = false;
  std::string path;
};
std::optional<PathFilter> path_filter(const sbpl::Node& f, const sbpl::Evaluator& ev) {
  if (!f.is_list() || f.children.size() != 2) return std::nullopt;
  const bool sub = f.children[0].is_symbol("subpath");
  if (!sub && !f.children[0].is_symbol("literal")) return std::nullopt;
  auto v = ev.value(f.children[1]);
  if (!v) return std::nullopt;
  return PathFilter{sub, *v};
}

bool ops_overlap(const sbpl::Rule& a, const sbpl::Rule& b) {
  for (const auto& x : a.ops) {
    for (const auto& y : b.ops) {
      if (sbpl::Evaluator::covers(x, y) || sbpl::Evaluator::covers(y, x)) return true;
    }
  }
  return false;
}

TEST(SeatbeltGolden, TenPolicies) {
  const auto cases = sbfix::golden_cases();
  ASSERT_EQ(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Plan plan = c.plan();
    auto p = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
    ASSERT_TRUE(p.ok()) << p.error().message;
    compare_or_update(kDir + c.name + ".sb", p->text);
    compare_or_update(kDir + c.name + ".params", render_params(*p));
  }
}

TEST(SeatbeltGolden, RulesAreWellFormedAndOrderedAsTheSemanticsNeed) {
  for (const auto& c : sbfix::golden_cases()) {
    SCOPED_TRACE(c.name);
    const Plan plan = c.plan();
    auto p = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
    ASSERT_TRUE(p.ok());
    auto prof = sbpl::load(p->text);
    ASSERT_EQ(prof->error, "");
    sbpl::Evaluator ev{prof.get(), sbfix::param_map(*p), {}};
    // The file section opens by allowing every read, before any file-read rule.
    std::size_t read_all = SIZE_MAX;
    for (const auto& r : prof->rules) {
      if (r.allow && r.filters.empty() && r.ops == std::vector<std::string>{"file-read*"}) {
        read_all = r.index;
        break;
      }
    }
    ASSERT_NE(read_all, SIZE_MAX);
    int pairs = 0;
    for (const auto& a : prof->rules) {
      if (a.ops.size() == 1 && a.ops[0].starts_with("file-read") && !a.filters.empty()) {
        EXPECT_GT(a.index, read_all);
      }
      for (const auto& b : prof->rules) {
        if (a.index >= b.index || a.allow == b.allow || !ops_overlap(a, b)) continue;
        for (const auto* fa : a.filters) {
          for (const auto* fb : b.filters) {
            const auto pa = path_filter(*fa, ev), pb = path_filter(*fb, ev);
            if (!pa || !pb) continue;
            ++pairs;
            // b comes after a: b must not be broader than a, and on the same path the
            // later one must be the deny.
            if (pa->path == pb->path) {
              EXPECT_FALSE(b.allow && pa->subpath == pb->subpath)
                  << "allow after deny on " << pa->path << " (rules " << a.index << ", " << b.index
                  << ")";
            } else if (pb->subpath) {
              EXPECT_FALSE(path_is_under(pa->path, pb->path))
                  << pb->path << " (rule " << b.index << ") is broader than " << pa->path
                  << " (rule " << a.index << ") but comes after it";
            }
          }
        }
      }
    }
    EXPECT_GT(pairs, 0);
    EXPECT_EQ(ev.error, "");
  }
}

}  // namespace
}  // namespace vigil
