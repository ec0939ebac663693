// RenderMetrics: the MIG gauges appear when the fleet has MIG GPUs.
#include "control/metrics.h"

#include <gtest/gtest.h>

namespace meridian::control {
namespace {

TEST(Metrics, MigSlicesGaugeOnlyWithMigGpus) {
  Metrics m;
  EXPECT_EQ(RenderMetrics(m, {}).find("meridian_mig_slices"), std::string::npos);
  m.mig_gpus = 16;
  m.mig_free_slices = 100;
  m.mig_unallocatable_slices = 3;
  m.mig_unallocatable_demand_slices = 40;
  std::string text = RenderMetrics(m, {});
  EXPECT_NE(text.find("# TYPE meridian_mig_slices gauge\n"), std::string::npos);
  EXPECT_NE(text.find("meridian_mig_slices{kind=\"free\"} 100\n"), std::string::npos);
  EXPECT_NE(text.find("meridian_mig_slices{kind=\"unallocatable\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("meridian_mig_slices{kind=\"unallocatable_for_queue\"} 40\n"), std::string::npos);
}

}  // namespace
}  // namespace meridian::control
