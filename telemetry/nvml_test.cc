#include "telemetry/nvml.h"

#include <gtest/gtest.h>

namespace meridian::telemetry {
namespace {

TEST(Nvml, MissingLibraryIsOneClearLine) {
  auto n = Nvml::Load("libnvidia-ml-not-here.so.1");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  EXPECT_NE(n.status().message().find("cannot load libnvidia-ml-not-here.so.1"), std::string::npos);
  EXPECT_NE(n.status().message().find("GPU figures are not sampled"), std::string::npos);
  EXPECT_EQ(n.status().message().find('\n'), std::string::npos);
}

TEST(Nvml, LibraryWithoutNvmlFunctionsIsRejected) {
  // A real shared library that is not NVML: the first missing function is named.
  auto n = Nvml::Load("libm.so.6");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("lacks nvmlInit_v2"), std::string::npos) << n.status().message();
}

TEST(Nvml, TheDriverHereReadsOrSaysWhyNot) {
  auto n = Nvml::Load();
  if (!n.ok()) {
    EXPECT_NE(n.status().message().find("GPU figures are not sampled"), std::string::npos);
    return;
  }
  // With a driver: one reading per GPU at least, each with its memory.
  std::vector<GpuReading> r = (*n)->Read({});
  EXPECT_GE(static_cast<int>(r.size()), (*n)->device_count());
  for (const GpuReading& g : r) EXPECT_TRUE(Known(g.mem_total_mib)) << g.uuid;
}

}  // namespace
}  // namespace meridian::telemetry
