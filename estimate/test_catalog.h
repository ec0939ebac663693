// A small catalog for the estimator's tests, built with Catalog::FromParts from
// figures copied out of ../shared/data (the file is named beside each value).
#pragma once

#include <memory>

#include "catalog/catalog.h"

namespace meridian::estimate::testing {

inline Money Usd(double d) { return Money::FromDollars(d); }

// GPU models. Dense TFLOPS, memory and power from
// gpus/specs/gpu_specs_joined_DERIVED.csv; matmul efficiency from
// gpus/specs/stas00_mamf_bf16.csv; FP64 from NVIDIA's datasheets (H100 SXM 67,
// A100 SXM 19.5, V100 SXM2 7.8 TFLOPS: FP64 is absent from the data); V100 and
// L4 from gpus/specs/mlco2_impact_gpus.csv and the NVIDIA datasheets it cites.
// Intra-node links from data/catalog/gpu_links.csv.
inline std::vector<catalog::GpuModel> TestGpus() {
  using P = Precision;
  catalog::GpuModel h100{"H100-80GB", "nvidia", "hopper", 80, 3350,
                         {{P::kFp64, 67}, {P::kFp32, 67}, {P::kTf32, 494.5}, {P::kBf16, 989},
                          {P::kFp16, 989}, {P::kFp8, 1979}},
                         0.803, 700, {}, "test", "NVLink 4 (NVSwitch)", 900};
  // gpus/mig/go_nvml_mock_gpu_instance_profiles.csv (H100_SXM5_80GB rows).
  // No placement data: the estimator only sizes slices.
  h100.mig_profiles = {{"1g.10gb", 1, 1, 10, 7, 16, {}, 0}, {"1g.20gb", 1, 2, 20, 4, 16, {}, 0},
                       {"3g.40gb", 3, 4, 40, 2, 48, {}, 0}, {"7g.80gb", 7, 8, 80, 1, 112, {}, 0}};
  catalog::GpuModel a100{"A100-80GB", "nvidia", "ampere", 80, 2000,
                         {{P::kFp64, 19.5}, {P::kFp32, 19.5}, {P::kTf32, 156}, {P::kBf16, 312},
                          {P::kFp16, 312}},
                         0.869, 400, {}, "test", "NVLink 3 (NVSwitch)", 600};
  catalog::GpuModel l40s{"L40S", "nvidia", "ada", 48, 864,
                         {{P::kFp32, 91.6}, {P::kTf32, 183}, {P::kBf16, 362}, {P::kFp16, 362},
                          {P::kFp8, 733}},
                         std::nullopt, 350, {}, "test", "PCIe Gen4 x16", 64};
  catalog::GpuModel v100{"V100-32GB", "nvidia", "volta", 32, 900,
                         {{P::kFp64, 7.8}, {P::kFp32, 15.7}, {P::kFp16, 125}},
                         std::nullopt, 300, {}, "test", "NVLink 2", 300};
  catalog::GpuModel l4{"L4", "nvidia", "ada", 24, 300,
                       {{P::kFp32, 30.3}, {P::kBf16, 121}, {P::kFp16, 121}, {P::kFp8, 242.5}},
                       std::nullopt, 72, {}, "test", "PCIe Gen4 x16", 64};
  // h0 of the width-dependent matmul efficiency, as data/catalog/gpus.csv
  // (matmul_half_width) gives it: measured on the A100-80GB (875) and the
  // H100-80GB (2177); the others take the larger, 2177.
  h100.matmul_half_width = 2177;
  a100.matmul_half_width = 875;
  l40s.matmul_half_width = 2177;
  v100.matmul_half_width = 2177;
  l4.matmul_half_width = 2177;
  return {h100, a100, l40s, v100, l4};
}

inline catalog::Offering Offer(std::string region, std::string zone, std::string type,
                               std::string gpu, int count, double on_demand,
                               std::optional<double> spot) {
  catalog::Offering o;
  o.provider = region.substr(0, region.find(':'));
  o.region = std::move(region);
  o.zone = std::move(zone);
  o.instance_type = std::move(type);
  o.gpu_model = std::move(gpu);
  o.gpu_count = count;
  o.on_demand_per_hour = Usd(on_demand);
  if (spot) o.spot_per_hour = Usd(*spot);
  return o;
}

// Offerings: prices/gcp/gcp_gpu_instances_bundled_DERIVED.csv (TotalOnDemand,
// TotalSpot), prices/aws/vantage_aws_gpu_ondemand_reserved.csv (g6e.xlarge,
// on-demand + 1-year reserved). The V100 row is a placeholder price.
inline std::vector<catalog::Offering> TestOfferings() {
  std::vector<catalog::Offering> v = {
      Offer("gcp:us-central1", "us-central1-a", "a3-highgpu-1g", "H100-80GB", 1, 5.38327, 4.4842),
      Offer("gcp:us-central1", "us-central1-a", "a3-highgpu-2g", "H100-80GB", 2, 10.76654, 8.9684),
      Offer("gcp:us-central1", "us-central1-a", "a3-highgpu-4g", "H100-80GB", 4, 21.53307,
            17.93679),
      Offer("gcp:us-central1", "us-central1-a", "a3-highgpu-8g", "H100-80GB", 8, 43.06615,
            35.87358),
      Offer("gcp:europe-west4", "europe-west4-b", "a3-highgpu-8g", "H100-80GB", 8, 111.81719,
            32.62747),
      Offer("gcp:asia-northeast1", "asia-northeast1-b", "a3-highgpu-1g", "H100-80GB", 1, 5.71934,
            3.8995),
      Offer("gcp:us-central1", "us-central1-a", "a2-ultragpu-1g", "A100-80GB", 1, 2.94582,
            2.51378),
      Offer("gcp:us-central1", "us-central1-a", "a2-ultragpu-2g", "A100-80GB", 2, 5.89164,
            5.02756),
      Offer("gcp:europe-west4", "europe-west4-a", "a2-ultragpu-1g", "A100-80GB", 1, 3.24335,
            2.65951),
      Offer("gcp:us-central1", "us-central1-a", "g2-standard-4", "L4", 1, 0.70683, 0.29598),
      Offer("aws:us-east-1", "", "g6e.xlarge", "L40S", 1, 1.861, std::nullopt),
      Offer("gcp:us-central1", "us-central1-a", "n1-v100-1", "V100-32GB", 1, 2.48, 0.99),
  };
  v[10].reserved_1y_per_hour = Usd(1.17243);
  // Networks from data/catalog/instance_networks.csv: a3-highgpu-8g documents
  // 1,000 Gbit/s GPUDirect-TCPX; the other rows are on the 25 Gbit/s fallback.
  for (catalog::Offering& o : v) {
    o.network_gbit_per_s = 25;
    o.network_fallback = true;
    if (o.instance_type == "a3-highgpu-8g") {
      o.network_kind = catalog::NetworkKind::kGpuDirectTcpx;
      o.network_gbit_per_s = 1000;
      o.network_fallback = false;
    }
  }
  return v;
}

// Regions: coordinates of the data centre towns; yearly grid intensity from
// carbon/gcp-region-carbon-info/data/yearly/2023.csv (us-central1 430,
// europe-west4 236, asia-northeast1 459); us-east-1 carries a synthetic hourly
// series (300 g/kWh for hours 0-11 of each day, 500 for 12-23).
inline std::vector<catalog::Region> TestRegions() {
  return {
      {"gcp:us-central1", "gcp", "us-central1", "Council Bluffs, Iowa, US", 41.26, -95.86,
       "America/Chicago", "us", "", 430, "gcp yearly 2023"},
      {"gcp:europe-west4", "gcp", "europe-west4", "Eemshaven, NL", 53.44, 6.83,
       "Europe/Amsterdam", "eu", "", 236, "gcp yearly 2023"},
      {"gcp:asia-northeast1", "gcp", "asia-northeast1", "Tokyo, JP", 35.68, 139.69, "Asia/Tokyo",
       "asia", "", 459, "gcp yearly 2023"},
      {"aws:us-east-1", "aws", "us-east-1", "Ashburn, Virginia, US", 39.04, -77.49,
       "America/New_York", "us", "TEST-SYNTH", 380, "test"},
  };
}

inline catalog::CarbonSeries TestSeries() {
  std::vector<float> hours(8784);
  for (size_t h = 0; h < hours.size(); ++h) hours[h] = (h % 24) < 12 ? 300.0f : 500.0f;
  return catalog::CarbonSeries("TEST-SYNTH", {{2024, hours}});
}

// Egress: network/gcp_transmission_cost_matrix.csv (us-central1 row).
inline std::shared_ptr<const catalog::Catalog> TestCatalog() {
  catalog::CatalogParts parts;
  parts.gpus = TestGpus();
  parts.offerings = TestOfferings();
  parts.regions = TestRegions();
  parts.carbon = {TestSeries()};
  parts.egress[{"gcp:us-central1", "gcp:europe-west4"}] = 0.05;
  parts.egress[{"gcp:us-central1", "gcp:asia-northeast1"}] = 0.08;
  parts.market.flex_start_discount = 0.53;  // test figure
  parts.market.flex_start_max_run_hours = 168;
  parts.market.flex_start_expected_wait_hours = 2;  // test figure
  auto cat = catalog::Catalog::FromParts(std::move(parts));
  return cat.ok() ? *cat : nullptr;
}

}  // namespace meridian::estimate::testing
