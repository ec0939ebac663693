// LoadFromFiles on small hand-written catalogs: what it accepts, and that
// every malformed input names the file, the line and the reason.
#include <gtest/gtest.h>

#include "catalog/catalog.h"

namespace meridian::catalog {
namespace {

// A minimal valid catalog; tests replace one file at a time.
std::map<std::string, std::string> MinimalFiles() {
  return {
      {"gpus.csv",
       "# generated\nname,vendor,architecture,vram_gib,memory_bandwidth_gbps,fp64_tflops,"
       "fp32_tflops,tf32_tflops,fp16_tflops,bf16_tflops,fp8_tflops,int8_tflops,"
       "matmul_efficiency,matmul_half_width,power_w,source\n"
       "H100-80GB,nvidia,hopper,80,3350,67,67,494.5,989,989,1979,1979,0.803,2177,700,\"a, b\"\n"},
      {"mig_profiles.csv",
       "gpu,name,compute_slices,memory_slices,memory_gib,max_instances,sm_count\n"
       "H100-80GB,1g.10gb,1,1,10,7,16\n"
       "H100-80GB,3g.40gb,3,4,40,2,48\n"},
      {"mig_placements.csv",
       "# generated\ngpu,profile,start,span\nH100-80GB,3g.40gb,4,4\nH100-80GB,3g.40gb,0,4\n"
       "H100-80GB,1g.10gb,0,1\n"},
      {"regions.csv",
       "id,provider,name,location,lat,lon,time_zone,geography,grid_zone,yearly_gco2_per_kwh,"
       "yearly_source\n"
       "gcp:europe-west2,gcp,europe-west2,London,51.51,-0.13,Europe/London,eu,GB,105.94,gcp\n"
       "aws:us-west-2,aws,us-west-2,Oregon,45.84,-119.7,America/Los_Angeles,us,,297.6,mlco2\n"},
      {"offerings.csv",
       "provider,region,zone,instance_type,gpu_model,gpu_count,vcpus,ram_gib,"
       "on_demand_usd_per_hour,spot_usd_per_hour,reserved_1y_usd_per_hour,"
       "flex_start_usd_per_hour,price_note\n"
       "gcp,gcp:europe-west2,europe-west2-a,a3-highgpu-1g,H100-80GB,1,26,234,10.5,3.1,,5.25,\n"
       "aws,aws:us-west-2,,p5.4xlarge,H100-80GB,1,16,256,6.88,,4.5,,\n"},
      {"egress.csv", "from,to,usd_per_gb\n"},
      {"internet_egress.csv", "provider,usd_per_gb,source\naws,0.09,x\ngcp,0.12,y\n"},
      {"market.csv",
       "parameter,value,source\nflex_start_discount,0.5,s\nflex_start_expected_wait_hours,1,w\n"
       "flex_start_max_run_hours,168,r\n"},
      {"carbon/GB.csv", ""},  // filled by GbCarbon()
  };
}

std::string CarbonLine(const std::string& date) {
  std::string s = date;
  for (int h = 0; h < 24; ++h) s += "," + std::to_string(100 + h);
  return s + "\n";
}

std::string CarbonHeader() {
  std::string s = "date";
  for (int h = 0; h < 24; ++h) s += ",h" + std::string(h < 10 ? "0" : "") + std::to_string(h);
  return s + "\n";
}

// `days` consecutive days of 2023 from Jan 1.
std::string GbCarbon(int days = 365) {
  std::string s = CarbonHeader();
  UnixSeconds t = FromCivil({2023, 1, 1, 0, 0, 0});
  for (int d = 0; d < days; ++d, t += 86400) {
    CivilTime c = ToCivil(t);
    char date[16];
    std::snprintf(date, sizeof date, "%04d-%02d-%02d", c.year, c.month, c.day);
    s += CarbonLine(date);
  }
  return s;
}

Result<std::shared_ptr<const Catalog>> Load(std::map<std::string, std::string> files) {
  if (files["carbon/GB.csv"].empty()) files["carbon/GB.csv"] = GbCarbon();
  CatalogFiles views;
  for (const auto& [k, v] : files) views[k] = v;
  return Catalog::LoadFromFiles(views);
}

TEST(LoadFromFiles, MinimalCatalogLoads) {
  auto cat = Load(MinimalFiles());
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  const GpuModel* h100 = (*cat)->FindGpu("H100-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->source, "a, b");
  ASSERT_EQ(h100->mig_profiles.size(), 2u);
  EXPECT_EQ(h100->mig_profiles[0].max_instances, 7);
  EXPECT_EQ(h100->mig_profiles[0].placement_starts, std::vector<int>{0});
  EXPECT_EQ(h100->mig_profiles[0].placement_span, 1);
  // Rows in any order; starts come out ascending.
  EXPECT_EQ(h100->mig_profiles[1].placement_starts, (std::vector<int>{0, 4}));
  EXPECT_EQ(h100->mig_profiles[1].placement_span, 4);
  ASSERT_EQ((*cat)->offerings().size(), 2u);
  EXPECT_EQ((*cat)->offerings()[0].flex_start_per_hour, Money::FromDollars(5.25));
  EXPECT_FALSE((*cat)->offerings()[1].spot_per_hour.has_value());
  // 2023-01-01 05:00 UTC is hour 5 of the series: 100 + 5.
  auto reading = (*cat)->CarbonAt("gcp:europe-west2", FromCivil({2023, 1, 1, 5, 0, 0}));
  ASSERT_TRUE(reading.ok());
  EXPECT_DOUBLE_EQ(reading->gco2_per_kwh, 105);
  EXPECT_DOUBLE_EQ((*cat)->market().flex_start_discount, 0.5);
}

TEST(LoadFromFiles, EgressFallsBackToTheSourceProvidersInternetRate) {
  auto cat = Load(MinimalFiles());
  ASSERT_TRUE(cat.ok());
  EXPECT_DOUBLE_EQ(*(*cat)->EgressUsdPerGb("aws:us-west-2", "gcp:europe-west2"), 0.09);
  EXPECT_DOUBLE_EQ(*(*cat)->EgressUsdPerGb("gcp:europe-west2", "aws:us-west-2"), 0.12);
  EXPECT_FALSE((*cat)->EgressUsdPerGb("aws:us-west-2", "aws:nowhere").has_value());
}

struct BadCase {
  const char* name;
  const char* file;
  std::string text;
  std::string message;
};

class LoadFromFilesBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoadFromFilesBad, NamesFileLineAndReason) {
  auto files = MinimalFiles();
  files[GetParam().file] = GetParam().text;
  auto cat = Load(files);
  ASSERT_FALSE(cat.ok());
  EXPECT_EQ(cat.status().message(), GetParam().message);
}

const std::string kOfferHeader =
    "provider,region,zone,instance_type,gpu_model,gpu_count,vcpus,ram_gib,on_demand_usd_per_hour,"
    "spot_usd_per_hour,reserved_1y_usd_per_hour,flex_start_usd_per_hour,price_note\n";

const std::string kPlaceHeader = "gpu,profile,start,span\n";

INSTANTIATE_TEST_SUITE_P(
    Table, LoadFromFilesBad,
    ::testing::Values(
        BadCase{"BadNumber", "offerings.csv",
                "# c\n" + kOfferHeader + "aws,aws:us-west-2,,p5,H100-80GB,1,16,256,abc,,,,\n",
                "offerings.csv:3: column on_demand_usd_per_hour: \"abc\" is not a number"},
        BadCase{"WrongColumnCount", "offerings.csv",
                kOfferHeader + "aws,aws:us-west-2,,p5,H100-80GB,1,16,256,6.88,,\n",
                "offerings.csv:2: expected 13 columns, found 11"},
        BadCase{"UnknownGpu", "offerings.csv",
                kOfferHeader + "aws,aws:us-west-2,,p5,H100-80GB,1,16,256,6.88,,,,\n"
                               "aws,aws:us-west-2,,p9,Z100,1,16,256,6.88,,,,\n",
                "offerings.csv:3: column gpu_model: unknown GPU model \"Z100\""},
        BadCase{"UnknownRegion", "offerings.csv",
                kOfferHeader + "aws,aws:mars-1,,p5,H100-80GB,1,16,256,6.88,,,,\n",
                "offerings.csv:2: column region: unknown region \"aws:mars-1\""},
        BadCase{"SpotAboveOnDemand", "offerings.csv",
                kOfferHeader + "aws,aws:us-west-2,,p5,H100-80GB,1,16,256,6.88,7,,,\n",
                "offerings.csv:2: column spot_usd_per_hour: 7 exceeds the on-demand price 6.88"},
        BadCase{"ZeroMatmulHalfWidth", "gpus.csv",
                "name,vendor,architecture,vram_gib,memory_bandwidth_gbps,fp64_tflops,fp32_tflops,"
                "tf32_tflops,fp16_tflops,bf16_tflops,fp8_tflops,int8_tflops,matmul_efficiency,"
                "matmul_half_width,power_w,source\n"
                "H100-80GB,nvidia,hopper,80,3350,67,67,494.5,989,989,1979,1979,0.803,0,700,s\n",
                "gpus.csv:2: column matmul_half_width: must be > 0 (a hidden size), got 0"},
        BadCase{"MissingColumn", "egress.csv", "from,to\n",
                "egress.csv: header lacks column \"usd_per_gb\""},
        BadCase{"EgressUnknownRegion", "egress.csv",
                "from,to,usd_per_gb\naws:us-west-2,aws:us-east-9,0.02\n",
                "egress.csv:2: column to: unknown region \"aws:us-east-9\""},
        BadCase{"MigUnknownGpu", "mig_profiles.csv",
                "gpu,name,compute_slices,memory_slices,memory_gib,max_instances,sm_count\n"
                "A100-80GB,1g.10gb,1,1,10,7,14\n",
                "mig_profiles.csv:2: column gpu: unknown GPU model \"A100-80GB\""},
        BadCase{"PlacementPastTheLastSlice", "mig_placements.csv",
                kPlaceHeader + "H100-80GB,3g.40gb,6,4\n",
                "mig_placements.csv:2: column span: start 6 + span 4 runs past memory slice 7"},
        BadCase{"PlacementStartOutOfRange", "mig_placements.csv",
                kPlaceHeader + "H100-80GB,1g.10gb,0,1\nH100-80GB,1g.10gb,8,1\n",
                "mig_placements.csv:3: column start: 8 is outside 0..7"},
        BadCase{"PlacementSpanNotTheProfiles", "mig_placements.csv",
                kPlaceHeader + "H100-80GB,3g.40gb,0,3\n",
                "mig_placements.csv:2: column span: 3 differs from the 4 memory slices of 3g.40gb in "
                "mig_profiles.csv"},
        BadCase{"PlacementUnknownProfile", "mig_placements.csv",
                kPlaceHeader + "H100-80GB,9g.90gb,0,8\n",
                "mig_placements.csv:2: column profile: H100-80GB has no MIG profile \"9g.90gb\""},
        BadCase{"PlacementUnknownGpu", "mig_placements.csv", kPlaceHeader + "Z100,1g.10gb,0,1\n",
                "mig_placements.csv:2: column gpu: unknown GPU model \"Z100\""},
        BadCase{"PlacementDuplicateStart", "mig_placements.csv",
                kPlaceHeader + "H100-80GB,3g.40gb,4,4\nH100-80GB,3g.40gb,4,4\n",
                "mig_placements.csv:3: column start: duplicate start 4 for 3g.40gb"},
        BadCase{"PlacementNotANumber", "mig_placements.csv", kPlaceHeader + "H100-80GB,1g.10gb,x,1\n",
                "mig_placements.csv:2: column start: \"x\" is not a whole number"},
        BadCase{"RegionBadLat", "regions.csv",
                "id,provider,name,location,lat,lon,time_zone,geography,grid_zone,"
                "yearly_gco2_per_kwh,yearly_source\n"
                "aws:us-west-2,aws,us-west-2,Oregon,95,-119.7,America/Los_Angeles,us,,297.6,m\n",
                "regions.csv:2: column lat: 95 is outside -90..90"},
        BadCase{"MarketUnknownParameter", "market.csv",
                "parameter,value,source\nflex_start_bonus,2,s\n",
                "market.csv:2: column parameter: unknown parameter \"flex_start_bonus\""},
        BadCase{"CarbonGap", "carbon/GB.csv",
                CarbonHeader() + CarbonLine("2023-01-01") + CarbonLine("2023-01-03"),
                "carbon/GB.csv:3: column date: 2023-01-03 does not follow the previous day of its "
                "year"},
        BadCase{"CarbonShortYear", "carbon/GB.csv", GbCarbon(2),
                "carbon/GB.csv: year 2023 has 48 hours, expected 8760"},
        BadCase{"CarbonBadValue", "carbon/GB.csv",
                CarbonHeader() + "2023-01-01,1,2,x" + std::string(21, ',') + "\n",
                "carbon/GB.csv:2: column h02: \"x\" is not a number >= 0"},
        BadCase{"EmptyFile", "market.csv", "# nothing\n", "market.csv: no header line"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(LoadFromFiles, MigPlacementsAreOptional) {
  auto files = MinimalFiles();
  files.erase("mig_placements.csv");
  auto cat = Load(files);
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  const MigProfile& p = (*cat)->FindGpu("H100-80GB")->mig_profiles[0];
  EXPECT_TRUE(p.placement_starts.empty());
  EXPECT_EQ(p.placement_span, 0);
}

TEST(LoadFromFiles, MissingFileIsNamed) {
  auto files = MinimalFiles();
  files.erase("regions.csv");
  auto cat = Load(files);
  ASSERT_FALSE(cat.ok());
  EXPECT_EQ(cat.status().message(), "catalog: missing file regions.csv");
}

}  // namespace
}  // namespace meridian::catalog
