// The change capture's budget (issue 31, item 8) and its scope (item 4): pure parts.
#include "supervisor/backstop/change_capture.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ChangeCaptureTest, BudgetIsTheNearerCap) {
  CaptureCaps caps;
  caps.max_session_bytes = 1000;
  caps.max_total_bytes = 5000;
  auto b = capture_budget_of(200, 1000, caps);
  EXPECT_EQ(b.left, 800U);
  EXPECT_FALSE(b.by_total);
  b = capture_budget_of(200, 4700, caps);
  EXPECT_EQ(b.left, 300U);
  EXPECT_TRUE(b.by_total);
  b = capture_budget_of(200, 9000, caps);
  EXPECT_EQ(b.left, 0U);
  EXPECT_TRUE(b.by_total);
  const auto rec = capture_cap_record(b, caps, 3);
  EXPECT_EQ(rec.limit, "capture");
  EXPECT_NE(rec.detail.find("vigil.capture.maxTotalBytes"), std::string::npos) << rec.detail;
  EXPECT_NE(rec.detail.find("3 changed file(s)"), std::string::npos) << rec.detail;
  EXPECT_NE(capture_cap_record(capture_budget_of(2000, 2000, caps), caps, 1)
                .detail.find("vigil.capture.maxSessionBytes"),
            std::string::npos);
}

TEST(ChangeCaptureTest, OnlyHostNamesAreImaged) {
  ChangedPaths changed;
  HostScope scope;
  scope.writable = {"/w"};
  scope.sandbox_own = {"/dev", "/proc", "/w/hidden"};
  changed.set_scope(scope);
  for (const char* p : {"/w/a", "/dev/shm/x", "/proc/self/comm", "/w/hidden/x", "/etc/passwd", "/w/../etc/x"}) {
    events::FsWrite w;
    w.syscall = "openat";
    w.resolved = p;
    w.verdict = Verdict::kAllowed;
    w.result = "0";
    changed.note(w);
  }
  ContentStore hash_only(-1, CaptureCaps{});
  std::vector<std::string> imaged;
  changed.take_post_images(hash_only, [&](events::FsImage e) { imaged.push_back(e.path); });
  // /w/a does not exist here: it is imaged as absent, the others not at all.
  EXPECT_EQ(imaged, (std::vector<std::string>{"/w/a"}));
  EXPECT_EQ(capture_skip_trees(scope), (std::vector<std::string>{"/dev", "/proc", "/w/hidden"}));
  scope.writable.push_back("/dev/shm/mine");
  EXPECT_EQ(capture_skip_trees(scope), (std::vector<std::string>{"/proc", "/w/hidden"}));
}

}  // namespace
}  // namespace vigil
