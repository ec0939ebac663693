#include "telemetry/adjust.h"

#include <gtest/gtest.h>

namespace meridian::telemetry {
namespace {

Classification Input() {
  Classification c;
  c.job_class = JobClass::kInputBound;
  c.summary = "GPU 20% busy while its CPUs are saturated";
  return c;
}

TEST(Adjust, MoreVcpusRaisesTheRequestUpToTheLargestNode) {
  JobSpec s;
  s.resources.vcpus = 4;
  Recommendation r;
  r.action = "more-vcpus";
  r.vcpus = 18;
  Adjustment a = AdjustForProfile(s, Input(), r, {{}, 32}, Thresholds{});
  ASSERT_TRUE(a.changed);
  EXPECT_EQ(a.spec.resources.vcpus, 18);
  EXPECT_NE(a.note.find("vcpus 4 -> 18"), std::string::npos) << a.note;
  a = AdjustForProfile(s, Input(), r, {{}, 8}, Thresholds{});
  EXPECT_EQ(a.spec.resources.vcpus, 8);
  // Already as large as the largest node: nothing changes.
  s.resources.vcpus = 8;
  EXPECT_FALSE(AdjustForProfile(s, Input(), r, {{}, 8}, Thresholds{}).changed);
}

TEST(Adjust, GpuChoiceFollowsTheProfileOnlyWhereTheFleetHasIt) {
  JobSpec s;
  Classification c;
  c.job_class = JobClass::kHealthy;
  c.figures.gpu_mem_used_mib = 6000;
  Recommendation r;
  r.action = "mig-slice";
  r.mig_profile = "2g.20gb";
  Adjustment a = AdjustForProfile(s, c, r, {}, Thresholds{});
  ASSERT_TRUE(a.changed);
  EXPECT_TRUE(a.spec.resources.mig);
  // 6000 MiB x 1.2 = 7.03 GiB -> 8 GiB.
  EXPECT_EQ(a.spec.resources.vram_gib, 8);
  r.action = "smaller-gpu";
  r.gpu_model = "L4";
  EXPECT_FALSE(AdjustForProfile(s, c, r, {{"H100-80GB"}, 0}, Thresholds{}).changed);
  a = AdjustForProfile(s, c, r, {{"H100-80GB", "L4"}, 0}, Thresholds{});
  ASSERT_TRUE(a.changed);
  EXPECT_EQ(a.spec.resources.gpu_models, std::vector<std::string>{"L4"});
}

}  // namespace
}  // namespace meridian::telemetry
