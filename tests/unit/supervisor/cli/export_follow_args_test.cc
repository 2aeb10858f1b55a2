#include "supervisor/cli/export_follow_args.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

namespace vigil {
namespace {

// What vigil-export parses back from the argv vigil gives it.
FollowArgs parsed_back(const std::vector<std::string>& argv) {
  CLI::App app;
  FollowArgs back;
  add_follow_options(&app, &back);
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  std::reverse(rest.begin(), rest.end());  // CLI11's parse(vector) takes them last first
  app.parse(rest);
  return back;
}

bool same(const FollowArgs& a, const FollowArgs& b) {
  return a.format == b.format && a.to == b.to && a.ca == b.ca && a.settings == b.settings &&
         a.dir == b.dir && a.state == b.state && a.spool_max == b.spool_max &&
         a.until_idle == b.until_idle && a.settle_ms == b.settle_ms;
}

TEST(ExportFollowArgsTest, VigilExportParsesBackExactlyWhatVigilParsed) {
  FollowArgs all;
  all.format = "vigil";
  all.to = "syslog+tls://127.0.0.1:6514";
  all.ca = "/etc/ca.pem";
  all.settings = "s.json";
  all.dir = "/var/log/vigil";
  all.state = "st";
  all.spool_max = 65536;
  all.until_idle = true;
  all.settle_ms = 0;
  FollowArgs hostile;
  hostile.to = "--until-idle";  // a value that looks like an option stays a value
  hostile.dir = "-x y\nz";
  hostile.state = "=a=b";
  for (const FollowArgs& a : {FollowArgs{}, all, hostile}) {
    const auto argv = follow_argv("/usr/libexec/vigil/vigil-export", a);
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv[0], "/usr/libexec/vigil/vigil-export");
    EXPECT_TRUE(same(parsed_back(argv), a)) << a.to;
  }
  // Only what was given: the defaults are vigil-export's own.
  EXPECT_EQ(follow_argv("x", FollowArgs{}), (std::vector<std::string>{"x", "--format=ocsf"}));
}

}  // namespace
}  // namespace vigil
