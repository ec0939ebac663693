// Parsers from catalog files (CsvTable) to catalog values. Internal to the
// catalog module: Catalog::LoadFromFiles is the public entry point.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/csv.h"

namespace meridian::catalog::internal {

Result<std::vector<GpuModel>> ParseGpus(const CsvTable& gpus, const CsvTable& mig);
// mig_placements.csv: one row per gpu, profile and start. Returns `gpus` with
// placement_starts (ascending) and placement_span filled.
Result<std::vector<GpuModel>> ParseMigPlacements(const CsvTable& t, std::vector<GpuModel> gpus);
// `gpus` and `regions` are the names the offerings may refer to.
Result<std::vector<Offering>> ParseOfferings(const CsvTable& t, const std::vector<GpuModel>& gpus,
                                             const std::vector<Region>& regions);
// gpu_links.csv: one row per GPU model. Returns `gpus` with the intra-node link set.
Result<std::vector<GpuModel>> ParseGpuLinks(const CsvTable& t, std::vector<GpuModel> gpus);
// instance_networks.csv: one row per (provider, instance type); every offering
// must have one. Returns `offerings` with their network and intra-node link set.
Result<std::vector<Offering>> ParseInstanceNetworks(const CsvTable& t,
                                                    std::vector<Offering> offerings);
Result<std::vector<Region>> ParseRegions(const CsvTable& t);
Result<std::map<std::pair<std::string, std::string>, double>> ParseEgress(
    const CsvTable& t, const std::vector<Region>& regions);
Result<std::map<std::string, double>> ParseInternetEgress(const CsvTable& t);
Result<MarketParameters> ParseMarket(const CsvTable& t);
// A carbon/<ZONE>.csv file: one UTC day a line, `date,h00..h23`.
Result<CarbonSeries> ParseCarbon(const std::string& zone, const CsvTable& t);

}  // namespace meridian::catalog::internal
