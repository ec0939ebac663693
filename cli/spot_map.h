// SpotMap: the file of `meridian simulate --spot-traces MAP.yaml`, a team's
// own spot history for the replay market (docs/simulate.md, "Your own spot
// history"):
//
//   other_spot: catalog     # or none: offerings without a trace get no spot
//   traces:
//     - offering: {provider: aws, region: aws:us-east-2, zone: use2-az1,
//                  instance_type: p3.2xlarge}
//       file: traces/us-east-2b_v100_1.json  # SkyPilot spot-traces JSON
//       start: 2023-08-27T00:00:00Z          # optional: wall time of tick 0
//
// Each entry names one catalog offering with spot prices, at most once; its
// file (relative paths from the map's folder) holds metadata.gap_seconds and
// data, the instances that could be had per tick (sim::ParseSpotTraceJson).
// Without `start`, tick 0 is the simulation's second 0.
//
// Errors are kInvalidArgument, one line each (all of them, not only the
// first): "<map>:<line>: traces[<i>].<field>: <value> <reason>", with the
// close matches for an offering field that names nothing in the catalog.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/status.h"
#include "sim/market_replay.h"

namespace meridian::cli {

struct SpotMap {
  sim::OtherSpot other_spot = sim::OtherSpot::kCatalog;
  std::vector<sim::MappedSpotTrace> mapped;
};

// Reads the map at `path` and every trace file it names.
Result<SpotMap> LoadSpotMap(const std::string& path, const catalog::Catalog& catalog);

}  // namespace meridian::cli
