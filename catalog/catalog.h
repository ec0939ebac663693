// The catalog: everything meridian knows about the market before it looks at
// a job. GPU models, cloud offerings with their prices per pricing model,
// regions with location, time zone, geography and grid carbon, and egress
// prices between regions. Built from ../shared/data by tools/build_catalog.py,
// checked in under data/catalog/, and embedded in the binary at build time.
//
// A Catalog is immutable once loaded and safe to read from many threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.h"
#include "core/status.h"
#include "core/time.h"
#include "core/units.h"

namespace meridian::catalog {

// One MIG GPU-instance profile of a GPU model (NVIDIA MIG User Guide,
// "Supported MIG Profiles").
struct MigProfile {
  std::string name;       // "1g.10gb", "3g.40gb", "7g.80gb", "1g.10gb+me"
  int compute_slices = 0; // the "Ng" part
  int memory_slices = 0;  // out of 8 on A100/H100/H200/B200
  double memory_gib = 0;
  int max_instances = 0;  // how many fit on one GPU
  int sm_count = 0;
  // Where an instance may sit on the GPU: each valid start position, in
  // memory slices (0..7), and how many slices an instance spans there
  // (NVIDIA MIG User Guide placement diagrams; `nvidia-smi mig -lgipp`).
  // Empty when the catalog has no placement data for the profile.
  std::vector<int> placement_starts;
  int placement_span = 0;
};

struct GpuModel {
  std::string name;        // catalog id: "H100-80GB", "A100-40GB", "MI300X"
  std::string vendor;      // "nvidia" | "amd"
  std::string architecture;  // "hopper", "ampere", ...
  double vram_gib = 0;
  double memory_bandwidth_gbps = 0;  // GB/s
  // Dense (no sparsity) peak TFLOPS per precision; a precision absent here is
  // not supported natively.
  std::map<Precision, double> dense_tflops;
  // Measured achievable matmul efficiency (MAMF / theory), 0..1, where the data
  // has it; nullopt means the estimator's stated default applies.
  std::optional<double> matmul_efficiency;
  double power_w = 0;
  std::vector<MigProfile> mig_profiles;  // empty: no MIG
  std::string source;  // where the figures come from (file names, datasheets)
  // The GPU-to-GPU link within a node ("NVLink 4 (NVSwitch)", "PCIe Gen4 x16")
  // and its per-GPU bidirectional GB/s as the vendor states it (gpu_links.csv);
  // empty and 0 for a catalog without that file.
  std::string intra_node_link;
  double intra_node_gbyte_per_s = 0;
  // h0 of the matmul efficiency's dependence on a transformer's hidden size h:
  // best x h / (h + h0), half the best-shape figure at h = h0 (gpus.csv
  // matmul_half_width, derived by tools/build_catalog.py from the measurement
  // in tools/catalog_matmul_width.csv). The loader requires it > 0; 0 only in
  // a catalog built by hand (Catalog::FromParts) that gives none, where the
  // estimator keeps the flat best-shape figure.
  int matmul_half_width = 0;

  bool Supports(Precision p) const { return dense_tflops.count(p) > 0; }
  std::optional<double> PeakTflops(Precision p) const;
};

// How instances of one type reach each other (instance_networks.csv).
enum class NetworkKind { kEthernet, kEfa, kInfiniBand, kGpuDirectTcpx, kGpuDirectTcpxo, kRoce };
std::string_view ToString(NetworkKind k);

// One instance type in one region (and zone, where priced per zone).
struct Offering {
  std::string provider;       // "aws" | "gcp" | "azure" | "lambda"
  std::string region;         // "aws:us-east-1"
  std::string zone;           // "us-east-1a" or "" where priced per region
  std::string instance_type;  // "p5.48xlarge"
  std::string gpu_model;      // catalog GpuModel name
  int gpu_count = 0;
  int vcpus = 0;
  double ram_gib = 0;
  Money on_demand_per_hour;
  std::optional<Money> spot_per_hour;
  std::optional<Money> reserved_1y_per_hour;
  std::optional<Money> flex_start_per_hour;
  std::string price_note;  // a documented quirk applied to this row, or ""
  // Inter-node network for GPU traffic, Gbit/s per instance. network_fallback
  // marks the conservative figure used where the provider documents none
  // (docs/catalog.md, "Interconnect"); 0 for a catalog without the file.
  NetworkKind network_kind = NetworkKind::kEthernet;
  double network_gbit_per_s = 0;
  bool network_fallback = false;
  // The GPUs' link within this instance: the GPU model's, unless the
  // instance links them differently (PCIe cards of an NVLink-capable model).
  std::string intra_node_link;
  double intra_node_gbyte_per_s = 0;

  std::optional<Money> PricePerHour(PricingModel m) const;
};

// How a region's carbon intensity is known.
enum class CarbonSourceKind { kHourly, kYearly };

struct Region {
  std::string id;          // "gcp:us-central1"
  std::string provider;
  std::string name;        // "us-central1"
  std::string location;    // "Council Bluffs, Iowa, US"
  double lat = 0, lon = 0;
  std::string time_zone;   // IANA, "America/Chicago"
  std::string geography;   // "us" | "eu" | "asia" | "ca" | "sa" | "oceania" | "me" | "africa"
  std::string grid_zone;   // hourly series zone ("US-MIDA-PJM") or "" when none matches
  double yearly_gco2_per_kwh = 0;  // fallback figure
  std::string yearly_source;       // which file / year the fallback comes from
};

// A zone's hourly grid carbon intensity (gCO2eq/kWh, direct emissions) by
// hour of year, for each year the data has.
class CarbonSeries {
 public:
  CarbonSeries() = default;
  CarbonSeries(std::string zone, std::map<int, std::vector<float>> by_year);
  const std::string& zone() const { return zone_; }
  int first_year() const;
  int last_year() const;
  // Intensity at an instant. A year outside the data uses the same month, day
  // and hour of the latest year (Feb 29 falls back to Feb 28 where needed).
  double At(UnixSeconds t) const;
  // The sum of At(start + i x step_s) for i in [0, count): the same double
  // as that loop. Hourly steps read a running sum per year (O(1) per
  // calendar year the span crosses); other whole-hour steps read the arrays
  // point by point; any other step calls At per point.
  double SumAt(UnixSeconds start, int64_t step_s, int count) const;
  const std::map<int, std::vector<float>>& years() const { return by_year_; }

 private:
  double SumPointByPoint(UnixSeconds start, int64_t step_s, int count, bool hourly_runs) const;

  std::string zone_;
  std::map<int, std::vector<float>> by_year_;
  // year -> running sums: running_[y][k] = hours[0] + ... + hours[k - 1].
  std::map<int, std::vector<double>> running_;
  // Every sum of this series' values below this bound is exact in a double,
  // so a running-sum difference equals the loop's sum; 0 when the values
  // allow no such bound (a negative or non-finite value, or a year's total
  // above it).
  double exact_below_ = 0;
};

// The answer to "how dirty is this region's power at t", with its source.
struct CarbonReading {
  double gco2_per_kwh = 0;
  CarbonSourceKind source = CarbonSourceKind::kYearly;
  std::string zone;  // grid zone, or the yearly file's description
};

// Pricing-model parameters the public price lists lack, each with its source.
struct MarketParameters {
  double flex_start_discount = 0;     // fraction off on-demand, e.g. 0.53
  std::string flex_start_discount_source;
  double flex_start_max_run_hours = 168;  // flex-start runs at most 7 days
  double flex_start_expected_wait_hours = 0;
  std::string flex_start_wait_source;
};

// The files a catalog is read from, by name relative to the catalog folder
// ("gpus.csv", "carbon/GB.csv"). Backed by the embedded copy or a folder.
using CatalogFiles = std::map<std::string, std::string_view>;

// The parts of a catalog as plain values: what the loader produces, and what
// tests build by hand.
struct CatalogParts {
  std::vector<GpuModel> gpus;
  std::vector<Offering> offerings;
  std::vector<Region> regions;
  std::vector<CarbonSeries> carbon;
  // (from region id, to region id) -> $/GB
  std::map<std::pair<std::string, std::string>, double> egress;
  // provider -> $/GB to the internet (internet_egress.csv): what a transfer
  // costs where `egress` has no figure for the pair.
  std::map<std::string, double> internet_egress;
  MarketParameters market;
};

class Catalog {
 public:
  // The copy embedded in the binary at build time.
  static Result<std::shared_ptr<const Catalog>> LoadEmbedded();
  // A catalog folder of the same layout as data/catalog (a user's own).
  static Result<std::shared_ptr<const Catalog>> LoadFromDirectory(const std::string& dir);
  // From in-memory files; errors name the file, the line and the reason.
  static Result<std::shared_ptr<const Catalog>> LoadFromFiles(const CatalogFiles& files);
  // From parts already in memory. Checks cross references (an offering's GPU
  // model and region exist, a region's grid zone has a series).
  static Result<std::shared_ptr<const Catalog>> FromParts(CatalogParts parts);

  const std::vector<GpuModel>& gpus() const { return gpus_; }
  const std::vector<Offering>& offerings() const { return offerings_; }
  const std::vector<Region>& regions() const { return regions_; }
  const MarketParameters& market() const { return market_; }

  const GpuModel* FindGpu(std::string_view name) const;
  const Region* FindRegion(std::string_view id) const;
  // Regions whose geography is `geo` ("eu").
  std::vector<const Region*> RegionsIn(std::string_view geo) const;
  bool IsGeography(std::string_view geo) const;
  const CarbonSeries* FindCarbonSeries(std::string_view zone) const;

  // Carbon intensity for region `region_id` at `t`: the hourly series of its
  // grid zone where one matches, otherwise its yearly figure.
  Result<CarbonReading> CarbonAt(std::string_view region_id, UnixSeconds t) const;
  // $/GB to move data from one region to another (0 within a region): the
  // provider's matrix figure where network/ has one, otherwise the source
  // provider's internet egress rate (other provider, or a region the matrix
  // lacks); nullopt for an unknown region or a provider without a rate.
  std::optional<double> EgressUsdPerGb(std::string_view from_region,
                                       std::string_view to_region) const;

 private:
  std::vector<GpuModel> gpus_;
  std::vector<Offering> offerings_;
  std::vector<Region> regions_;
  std::map<std::string, CarbonSeries, std::less<>> carbon_;
  std::map<std::pair<std::string, std::string>, double> egress_;
  std::map<std::string, double, std::less<>> internet_egress_;
  MarketParameters market_;
};

}  // namespace meridian::catalog
