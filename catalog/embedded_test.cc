// Tests on the real catalog embedded in the binary (data/catalog, built by
// tools/build_catalog.py from ../shared/data). Counts are what the build
// script printed; rerunning it on other data changes them on purpose.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/catalog.h"
#include "catalog/embedded.h"

namespace meridian::catalog {
namespace {

const Catalog& Embedded() {
  static std::shared_ptr<const Catalog> cat = [] {
    auto r = Catalog::LoadEmbedded();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }();
  return *cat;
}

const Offering* FindOffering(std::string_view region, std::string_view zone,
                             std::string_view type) {
  for (const auto& o : Embedded().offerings()) {
    if (o.region == region && o.zone == zone && o.instance_type == type) return &o;
  }
  return nullptr;
}

TEST(EmbeddedCatalog, HasTheRequiredGpuModels) {
  for (const char* name : {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200", "L4",
                           "L40S", "A10G", "T4", "V100-16GB", "V100-32GB", "MI300X"}) {
    const GpuModel* g = Embedded().FindGpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_GT(g->vram_gib, 0) << name;
    EXPECT_GT(g->memory_bandwidth_gbps, 0) << name;
    EXPECT_GT(g->power_w, 0) << name;
    EXPECT_TRUE(g->Supports(Precision::kFp64)) << name;
    EXPECT_TRUE(g->Supports(Precision::kFp32)) << name;
    EXPECT_FALSE(g->source.empty()) << name;
  }
  EXPECT_EQ(Embedded().gpus().size(), 15u);
}

TEST(EmbeddedCatalog, GpuFiguresMatchTheirSources) {
  const GpuModel* h100 = Embedded().FindGpu("H100-80GB");
  EXPECT_DOUBLE_EQ(*h100->PeakTflops(Precision::kBf16), 989);  // stas00 dense
  EXPECT_DOUBLE_EQ(*h100->PeakTflops(Precision::kFp8), 1979);
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth_gbps, 3350);
  EXPECT_DOUBLE_EQ(h100->vram_gib, 80);
  EXPECT_DOUBLE_EQ(*h100->matmul_efficiency, 0.803);  // MAMF 794.5 / 989
  EXPECT_DOUBLE_EQ(Embedded().FindGpu("A100-40GB")->memory_bandwidth_gbps, 1555);
  EXPECT_DOUBLE_EQ(Embedded().FindGpu("B200")->vram_gib, 180);
  EXPECT_DOUBLE_EQ(*Embedded().FindGpu("MI300X")->PeakTflops(Precision::kBf16), 1300);
  EXPECT_FALSE(Embedded().FindGpu("L4")->matmul_efficiency.has_value());
}

TEST(EmbeddedCatalog, MatmulHalfWidthFromTheLambdaMeasurement) {
  // h0 = 2560 x (best / measured - 1), Lambda's GPT-3 2.7B on one GPU
  // (tools/catalog_matmul_width.csv; docs/estimator.md section 5a):
  // A100-80GB 2560 x (0.869 / 0.6477 - 1) = 2560 x 0.34167 = 874.7 -> 875;
  // H100-80GB 2560 x (0.803 / 0.43393 - 1) = 2560 x 0.85053 = 2177.4 -> 2177.
  // The A100-40GB and H200-141GB share those GPUs' MAMF rows and so their h0;
  // the rest take the larger, 2177.
  const std::pair<const char*, int> cases[] = {
      {"A100-80GB", 875}, {"A100-40GB", 875}, {"H100-80GB", 2177}, {"H200-141GB", 2177},
      {"B200", 2177},     {"L4", 2177},       {"MI300X", 2177},
  };
  for (const auto& [name, h0] : cases) {
    const GpuModel* g = Embedded().FindGpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(g->matmul_half_width, h0) << name;
  }
}

TEST(EmbeddedCatalog, UnsupportedPrecisionsAreAbsent) {
  for (const char* name : {"V100-16GB", "V100-32GB", "T4"}) {
    const GpuModel* g = Embedded().FindGpu(name);
    EXPECT_FALSE(g->Supports(Precision::kBf16)) << name;
    EXPECT_FALSE(g->Supports(Precision::kTf32)) << name;
    EXPECT_FALSE(g->Supports(Precision::kFp8)) << name;
  }
  EXPECT_FALSE(Embedded().FindGpu("A100-80GB")->Supports(Precision::kFp8));
  EXPECT_TRUE(Embedded().FindGpu("H100-80GB")->Supports(Precision::kFp8));
  EXPECT_TRUE(Embedded().FindGpu("L4")->Supports(Precision::kFp8));
}

TEST(EmbeddedCatalog, MigProfilesOfMigCapableGpus) {
  const GpuModel* h100 = Embedded().FindGpu("H100-80GB");
  ASSERT_EQ(h100->mig_profiles.size(), 7u);
  const MigProfile& small = h100->mig_profiles.front();
  EXPECT_EQ(small.name, "1g.10gb");
  EXPECT_EQ(small.max_instances, 7);
  EXPECT_DOUBLE_EQ(small.memory_gib, 10);
  const MigProfile& full = h100->mig_profiles.back();
  EXPECT_EQ(full.name, "7g.80gb");
  EXPECT_EQ(full.memory_slices, 8);
  for (const char* name : {"A100-40GB", "A100-80GB", "H200-141GB", "B200"}) {
    EXPECT_EQ(Embedded().FindGpu(name)->mig_profiles.size(), 7u) << name;
  }
  EXPECT_TRUE(Embedded().FindGpu("L4")->mig_profiles.empty());
  // mig_placements.csv: 25 starts per GPU (7 + 7 + 4 + 3 + 2 + 1 + 1), 5 GPUs.
  size_t starts = 0;
  for (const auto& g : Embedded().gpus()) {
    for (const auto& p : g.mig_profiles) starts += p.placement_starts.size();
  }
  EXPECT_EQ(starts, 125u);
  EXPECT_EQ(h100->mig_profiles.back().placement_span, 8);  // 7g.80gb: {0}:8
}

TEST(EmbeddedCatalog, OfferingCountsPerProvider) {
  std::map<std::string, int> count;
  for (const auto& o : Embedded().offerings()) ++count[o.provider];
  EXPECT_EQ(count["aws"], 717);
  EXPECT_EQ(count["gcp"], 654);
  EXPECT_EQ(count["azure"], 572);
  EXPECT_EQ(count["lambda"], 306);
  EXPECT_EQ(Embedded().offerings().size(), 2249u);
}

TEST(EmbeddedCatalog, SpotNeverAboveOnDemand) {
  for (const auto& o : Embedded().offerings()) {
    if (o.spot_per_hour) {
      EXPECT_LT(*o.spot_per_hour, o.on_demand_per_hour) << o.region << " " << o.instance_type;
    }
    if (o.flex_start_per_hour) {
      EXPECT_LT(*o.flex_start_per_hour, o.on_demand_per_hour);
    }
  }
}

TEST(EmbeddedCatalog, KnownPrices) {
  // prices/gcp/gcp_gpu_instances_bundled_DERIVED.csv: 0.73948 + 2.93391.
  const Offering* a2 = FindOffering("gcp:us-central1", "us-central1-a", "a2-highgpu-1g");
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(a2->on_demand_per_hour, Money::FromDollars(3.67339));
  EXPECT_EQ(a2->gpu_model, "A100-40GB");
  // Flex-start: on-demand x (1 - 0.5).
  EXPECT_EQ(a2->flex_start_per_hour, Money::FromDollars(1.836695));
  const Offering* nd = FindOffering("azure:eastus", "", "Standard_ND96isr_H100_v5");
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(nd->on_demand_per_hour, Money::FromDollars(98.32));
  EXPECT_EQ(nd->spot_per_hour, Money::FromDollars(18.169536));
  EXPECT_EQ(nd->gpu_count, 8);
  // Post-cut vantage on-demand (2025-11-30) on the skypilot zone row.
  const Offering* p5 = FindOffering("aws:us-east-1", "use1-az1", "p5.48xlarge");
  ASSERT_NE(p5, nullptr);
  EXPECT_EQ(p5->on_demand_per_hour, Money::FromDollars(55.04));
  EXPECT_EQ(p5->price_note, "aws-vantage-on-demand-per-zone");
}

TEST(EmbeddedCatalog, QuirkRulesApplied) {
  for (const auto& o : Embedded().offerings()) {
    if (o.provider == "azure" && o.gpu_model == "H200-141GB") {
      EXPECT_FALSE(o.spot_per_hour.has_value()) << o.region;
    }
    if (o.provider != "gcp") {
      EXPECT_FALSE(o.flex_start_per_hour.has_value());
    }
  }
  // GCP's low-level H100 price in us-central1 (43.07) is replaced by the median
  // of the high level (87.83 ... 111.82).
  const Offering* a3 = FindOffering("gcp:us-central1", "us-central1-a", "a3-highgpu-8g");
  ASSERT_NE(a3, nullptr);
  EXPECT_GT(a3->on_demand_per_hour, Money::FromDollars(80));
  EXPECT_NE(a3->price_note.find("gcp-low-level-on-demand-43.06615"), std::string::npos)
      << a3->price_note;
}

TEST(EmbeddedCatalog, EveryRegionHasACarbonSource) {
  int hourly = 0, yearly = 0;
  for (const auto& r : Embedded().regions()) {
    EXPECT_GT(r.yearly_gco2_per_kwh, 0) << r.id;
    EXPECT_FALSE(r.time_zone.empty()) << r.id;
    EXPECT_TRUE(Embedded().IsGeography(r.geography));
    if (r.grid_zone.empty()) {
      ++yearly;
    } else {
      ++hourly;
      EXPECT_NE(Embedded().FindCarbonSeries(r.grid_zone), nullptr) << r.id;
    }
  }
  EXPECT_EQ(Embedded().regions().size(), 121u);
  EXPECT_EQ(hourly, 57);
  EXPECT_EQ(yearly, 64);
}

TEST(EmbeddedCatalog, CarbonAtAKnownHourEqualsTheSource) {
  // carbon/hourly/US-MIDA-PJM_2024.csv: 2024-07-15T18:00Z,414.2 (rounded to 414).
  auto r = Embedded().CarbonAt("aws:us-east-1", FromCivil({2024, 7, 15, 18, 0, 0}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->source, CarbonSourceKind::kHourly);
  EXPECT_EQ(r->zone, "US-MIDA-PJM");
  EXPECT_DOUBLE_EQ(r->gco2_per_kwh, 414);
  // carbon/hourly/GB_2023.csv: 2023-03-10T05:00Z,76.47.
  auto gb = Embedded().CarbonAt("gcp:europe-west2", FromCivil({2023, 3, 10, 5, 0, 0}));
  EXPECT_DOUBLE_EQ(gb->gco2_per_kwh, 76);
}

TEST(EmbeddedCatalog, YearOutsideTheDataUsesTheLatestYear) {
  const CarbonSeries* pjm = Embedded().FindCarbonSeries("US-MIDA-PJM");
  ASSERT_NE(pjm, nullptr);
  EXPECT_EQ(pjm->first_year(), 2021);
  EXPECT_EQ(pjm->last_year(), 2024);
  EXPECT_DOUBLE_EQ(pjm->At(FromCivil({2026, 7, 15, 18, 0, 0})), 414);
  EXPECT_DOUBLE_EQ(pjm->At(FromCivil({2019, 7, 15, 18, 0, 0})), 414);
}

// SumAt is the loop over At, read straight from the arrays: the same double
// for every start and step, across year ends, Feb 29 in a leap target year
// mapped onto a common data year and back, and years inside the data.
TEST(EmbeddedCatalog, CarbonSumAtEqualsTheLoopOverAt) {
  const CarbonSeries* pjm = Embedded().FindCarbonSeries("US-MIDA-PJM");
  ASSERT_NE(pjm, nullptr);
  const UnixSeconds starts[] = {
      FromCivil({2023, 1, 1, 0, 0, 0}),   FromCivil({2023, 12, 31, 20, 0, 0}),
      FromCivil({2024, 2, 27, 13, 30, 0}), FromCivil({2024, 12, 31, 23, 0, 0}),
      FromCivil({2026, 2, 26, 9, 0, 0}),  FromCivil({2027, 12, 30, 1, 0, 0}),
      FromCivil({2028, 2, 28, 0, 0, 0}),  FromCivil({2028, 2, 29, 23, 59, 59}),
      FromCivil({2031, 6, 1, 12, 0, 0})};
  int checked = 0;
  for (UnixSeconds start : starts) {
    for (int64_t step_h : {1, 2, 5, 24, 25}) {
      for (int count : {0, 1, 3, 48, 200, 1417, 8785, 20000}) {
        double loop = 0;
        for (int i = 0; i < count; ++i) loop += pjm->At(start + i * step_h * 3600);
        EXPECT_EQ(pjm->SumAt(start, step_h * 3600, count), loop)
            << FormatRfc3339(start) << " step " << step_h << " h x " << count;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 9 * 5 * 8);
}

TEST(EmbeddedCatalog, YearlyFallbackForRegionsWithoutAZone) {
  // gcp us-west1 (Oregon): no hourly zone; carbon/gcp-region-carbon-info 2024: 79.23.
  auto r = Embedded().CarbonAt("gcp:us-west1", FromCivil({2024, 1, 1, 0, 0, 0}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->source, CarbonSourceKind::kYearly);
  EXPECT_DOUBLE_EQ(r->gco2_per_kwh, 79.23);
}

TEST(EmbeddedCatalog, EgressPrices) {
  // network/aws_transmission_cost_matrix.csv: us-east-1 -> us-east-2 0.01.
  EXPECT_DOUBLE_EQ(*Embedded().EgressUsdPerGb("aws:us-east-1", "aws:us-east-2"), 0.01);
  EXPECT_DOUBLE_EQ(*Embedded().EgressUsdPerGb("aws:us-east-1", "aws:us-east-1"), 0);
  // Cross-provider: the source provider's internet egress rate.
  EXPECT_DOUBLE_EQ(*Embedded().EgressUsdPerGb("gcp:us-central1", "aws:us-east-1"), 0.12);
  EXPECT_DOUBLE_EQ(*Embedded().EgressUsdPerGb("lambda:us-east-1", "aws:us-east-1"), 0);
}

TEST(EmbeddedCatalog, MarketParameters) {
  const MarketParameters& m = Embedded().market();
  EXPECT_DOUBLE_EQ(m.flex_start_discount, 0.5);
  EXPECT_DOUBLE_EQ(m.flex_start_max_run_hours, 168);
  EXPECT_DOUBLE_EQ(m.flex_start_expected_wait_hours, 1);
  EXPECT_FALSE(m.flex_start_discount_source.empty());
}

TEST(EmbeddedCatalog, EmbeddedCopyEqualsTheDataDirectory) {
  namespace fs = std::filesystem;
  const CatalogFiles& embedded = EmbeddedCatalogFiles();
  size_t on_disk = 0;
  for (const auto& e : fs::recursive_directory_iterator("data/catalog")) {
    if (!e.is_regular_file() || e.path().extension() != ".csv") continue;
    ++on_disk;
    std::string name = fs::relative(e.path(), "data/catalog").generic_string();
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto it = embedded.find(name);
    ASSERT_NE(it, embedded.end()) << name << " is not embedded: rerun cmake";
    EXPECT_TRUE(it->second == ss.str()) << name << " differs from the embedded copy: rebuild";
  }
  EXPECT_EQ(on_disk, embedded.size());

  auto dir = Catalog::LoadFromDirectory("data/catalog");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  ASSERT_EQ((*dir)->offerings().size(), Embedded().offerings().size());
  for (size_t i = 0; i < Embedded().offerings().size(); ++i) {
    const Offering& a = (*dir)->offerings()[i];
    const Offering& b = Embedded().offerings()[i];
    EXPECT_TRUE(a.region == b.region && a.zone == b.zone && a.instance_type == b.instance_type &&
                a.on_demand_per_hour == b.on_demand_per_hour && a.spot_per_hour == b.spot_per_hour)
        << i;
  }
  EXPECT_EQ((*dir)->regions().size(), Embedded().regions().size());
  EXPECT_EQ((*dir)->gpus().size(), Embedded().gpus().size());
}

TEST(LoadFromDirectory, MissingDirectoryIsAnError) {
  auto r = Catalog::LoadFromDirectory("no/such/dir");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "catalog: no/such/dir is not a directory");
}

}  // namespace
}  // namespace meridian::catalog
