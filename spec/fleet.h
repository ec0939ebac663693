// Fleet files (docs/fleet.md): YAML text in, a FleetSpec out.
//
// ParseFleet checks everything the file alone can tell: keys, types, ranges,
// required keys, unique cluster names and node prefixes, GPUs per node, and
// which pricing keys go together. ValidateFleetAgainstCatalog adds what needs
// the catalog: regions, GPU models, the reserved instance type and MIG
// layouts (profile names and whether they fit the GPU's slices). Messages
// follow the job-spec format: "<source>:<line>:<col>: <field path>: <value>
// <reason>", one problem per line. All functions are pure apart from
// LoadFleetFile reading its file, and are safe to call from many threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "core/fleet.h"
#include "core/status.h"
#include "core/units.h"

namespace meridian::spec {

// The most GPUs one node may have (the largest machines sold have 8-16).
inline constexpr int kMaxGpusPerNode = 16;

// Parses a fleet file. `source_name` is used in error messages and stored in
// the fleet's origin. Empty `name_prefix`es are filled with their default.
// Errors are kInvalidArgument.
Result<FleetSpec> ParseFleet(std::string_view yaml, std::string_view source_name);

// Reads `path` and parses it as above, with `path` as the source name.
Result<FleetSpec> LoadFleetFile(const std::string& path);

// Checks a parsed fleet against the catalog: each region and GPU model exists
// (with close matches suggested); a reserved cluster's instance_type is sold
// in its region with the nodes' GPU model and count; each MIG layout names
// profiles of its GPU model and fits one GPU (compute and memory slices,
// instances per profile). The exact placement of instances is not checked
// here. Errors are kInvalidArgument, every problem on its own line.
Status ValidateFleetAgainstCatalog(const FleetSpec& fleet, const catalog::Catalog& catalog);

// What a cluster's capacity costs, and where the figure comes from.
struct CapacityPrice {
  CapacityPricing pricing = CapacityPricing::kOwned;
  // Owned: gpu_hour_usd, counted per GPU-hour used. Reserved: the instance
  // price divided by its GPUs, paid for every hour whether used or not.
  Money per_gpu_hour;
  // Reserved: the catalog price of one instance (one node) per hour.
  std::optional<Money> per_node_hour;
  bool paid_when_idle = false;  // true for reserved capacity
  // "gpu_hour_usd in the fleet file", or the catalog rate used: "catalog
  // 1-year reserved rate of p4de.24xlarge in aws:us-east-1 (zone use1-az1)".
  std::string source;
};

// The price of `cluster`'s capacity. Reserved clusters take the catalog's
// 1-year reserved rate for the instance type in the cluster's region (the
// lowest over its zones), or its on-demand rate where the catalog lists no
// reserved rate. Errors (kInvalidArgument) as ValidateFleetAgainstCatalog
// gives for the instance type.
Result<CapacityPrice> PriceCluster(const FleetSpec& fleet, size_t cluster_index,
                                   const catalog::Catalog& catalog);

// "<source>:<line>:<col>: <field>" for a field of `fleet`
// ("clusters[1].nodes[0].gpu"), for messages from later stages.
std::string LocateFleetField(const FleetSpec& fleet, const std::string& field);

}  // namespace meridian::spec
