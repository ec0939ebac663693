// GPU names to catalog models: the family rules of gpu_map.h on the names
// Slurm's NVML autodetection, GPU Feature Discovery and GKE use, and the map
// file with its errors.
#include "sim/readers/gpu_map.h"

#include <gtest/gtest.h>

#include "sim/readers/test_files.h"

namespace meridian::sim {
namespace {

using Models = std::vector<std::string>;

TEST(GpuMap, NamedModels) {
  const struct {
    const char* name;
    Models models;
  } cases[] = {
      {"a100", {"A100-40GB", "A100-80GB"}},             // a family: both sizes
      {"a100-80gb", {"A100-80GB"}},                     // the catalog name
      {"nvidia_a100-sxm4-80gb", {"A100-80GB"}},         // Slurm NVML autodetect
      {"NVIDIA-A100-SXM4-40GB", {"A100-40GB"}},         // GFD product label
      {"Tesla-V100-SXM2-16GB", {"V100-16GB"}},
      {"NVIDIA-H100-80GB-HBM3", {"H100-80GB"}},         // 80gb in H100-80GB; PCIE lacks pcie
      {"h100", {"H100-80GB", "H100-NVL-94GB", "H100-PCIE-80GB"}},
      {"h100-pcie", {"H100-PCIE-80GB"}},                // one token of two matches
      {"nvidia-tesla-a100", {"A100-40GB"}},             // GKE: the 40 GB part
      {"nvidia-tesla-v100", {"V100-16GB"}},
      {"nvidia-h100-80gb", {"H100-80GB"}},
      {"nvidia-l4", {"L4"}},
      {"a10", {"A10"}},                                 // not A10G
      {"a10g", {"A10G"}},
      {"v100", {"V100-16GB", "V100-32GB"}},
      {"rtx_a6000", {}},                                // no such family
      {"", {}},
  };
  for (const auto& c : cases) EXPECT_EQ(NamedModels(c.name, EmbeddedCatalog()), c.models) << c.name;
}

TEST(GpuMap, ChoiceIsInCatalogOrderAndRecordedOnTheFirst) {
  GpuChoice c = ChoiceOf({"A100-80GB", "A100-40GB"}, EmbeddedCatalog());
  EXPECT_EQ(c.models, (Models{"A100-40GB", "A100-80GB"}));
  EXPECT_EQ(c.recorded_on, "A100-40GB");
  EXPECT_EQ(ChoiceOf({}, EmbeddedCatalog()).recorded_on, "");
}

TEST(GpuMap, LoadsTypesPartitionsAndLists) {
  const std::string path = ScratchFile(
      "# GRES types and partitions\n"
      "A100: A100-80GB\n"
      "rtx_a6000: [L40S, A10]\n"
      "partition:inference: L4\n",
      ".yaml");
  Result<GpuMap> m = GpuMap::Load(path, EmbeddedCatalog());
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_NE(m->Find("a100"), nullptr);  // case-insensitive
  EXPECT_EQ(*m->Find("a100"), Models{"A100-80GB"});
  EXPECT_EQ(*m->Find("RTX_A6000"), (Models{"L40S", "A10"}));
  EXPECT_EQ(*m->Find("partition:inference"), Models{"L4"});
  EXPECT_EQ(m->Find("h100"), nullptr);
  EXPECT_TRUE(GpuMap::Load("", EmbeddedCatalog()).ok());  // no map
}

TEST(GpuMap, UnknownModelsAreNamedWithTheirLine) {
  const std::string path = ScratchFile("a100: A100-80GB\nh100: H100\nv100: [V100-16GB, 7]\n", ".yaml");
  Result<GpuMap> m = GpuMap::Load(path, EmbeddedCatalog());
  ASSERT_FALSE(m.ok());
  const std::string& e = m.status().message();
  EXPECT_NE(e.find(path + ":2: h100: \"H100\" is not a GPU model in the catalog; did you mean"),
            std::string::npos) << e;
  EXPECT_NE(e.find(path + ":3: v100: \"7\" is not a GPU model in the catalog"), std::string::npos) << e;
  Result<GpuMap> list = GpuMap::Load(ScratchFile("- a100\n", ".yaml"), EmbeddedCatalog());
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find(":1: is not a map of GPU names"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sim
