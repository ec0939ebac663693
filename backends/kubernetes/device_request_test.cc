#include "backends/kubernetes/device_request.h"

#include <gtest/gtest.h>

namespace meridian::backends::k8s {
namespace {

std::shared_ptr<const catalog::Catalog> Cat() {
  static auto c = catalog::Catalog::LoadEmbedded().value();
  return c;
}

std::string Joined(const DeviceRequest& r) {
  std::string s;
  for (const auto& e : r.selectors) s += e + "\n";
  return s;
}

TEST(DeviceRequest, WholeGpusByFamilyFormAndMemory) {
  auto r = DeviceRequestFor(*Cat(), "H100-80GB", "", 8, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device_class, "gpu.nvidia.com");
  EXPECT_EQ(r->count, 8);
  const std::string productName = "device.attributes[\"gpu.nvidia.com\"].productName";
  EXPECT_EQ(Joined(*r),
            productName + ".matches(\"(?i)(^|[ -])H100([ -]|$)\")\n" +
            // the SXM part is the one without the forms of its catalog siblings
            "!" + productName + ".matches(\"(?i)(^|[ -])NVL([ -]|$)\")\n" +
            "!" + productName + ".matches(\"(?i)(^|[ -])PCIE([ -]|$)\")\n" +
            // 80 GiB = 81920 MiB; +-10%: 73728 .. 90112
            "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"73728Mi\")) >= 0 && "
            "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"90112Mi\")) <= 0\n");
}

TEST(DeviceRequest, FormFactorIsAWordOfTheProductName) {
  auto r = DeviceRequestFor(*Cat(), "H100-PCIE-80GB", "", 1, {});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(Joined(*r).find(".matches(\"(?i)(^|[ -])PCIE([ -]|$)\")"), std::string::npos);
}

TEST(DeviceRequest, MigProfileOnTheMigDeviceClass) {
  auto r = DeviceRequestFor(*Cat(), "A100-80GB", "3g.40gb", 1, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device_class, "mig.nvidia.com");
  EXPECT_EQ(r->selectors.front(), "device.attributes[\"gpu.nvidia.com\"].profile == \"3g.40gb\"");
  // A MIG device's memory is the instance's: no bound on the GPU's.
  EXPECT_EQ(Joined(*r).find("capacity"), std::string::npos);
}

TEST(DeviceRequest, DriverPinAsExactVersions) {
  auto r = DeviceRequestFor(*Cat(), "A100-80GB", "", 1, DriverPin{"550.54.15", "12.4"});
  ASSERT_TRUE(r.ok());
  std::string s = Joined(*r);
  EXPECT_NE(s.find("driverVersion.compareTo(semver(\"550.54.15\")) == 0"), std::string::npos);
  EXPECT_NE(s.find("cudaDriverVersion.compareTo(semver(\"12.4.0\")) == 0"), std::string::npos);
}

TEST(DeviceRequest, Errors) {
  EXPECT_NE(DeviceRequestFor(*Cat(), "MI300X", "", 1, {}).status().message().find("amd GPU"),
            std::string::npos);
  EXPECT_NE(DeviceRequestFor(*Cat(), "H100-80GB", "9g.99gb", 1, {}).status().message().find(
                "not a profile of H100-80GB"),
            std::string::npos);
  EXPECT_FALSE(DeviceRequestFor(*Cat(), "Z9", "", 1, {}).ok());
}

}  // namespace
}  // namespace meridian::backends::k8s
