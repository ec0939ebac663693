// Options: every way to buy a fitting GPU model for the job. For each GPU
// count tried, each location (region, zone) selling the model and the
// instance size there that wastes the fewest GPUs, and each pricing model
// that fits the job: run time, cost (+ egress), energy, CO2, start/finish.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "catalog/catalog.h"
#include "estimate/defaults.h"
#include "estimate/plan.h"

namespace meridian::estimate {

struct PlanContext {
  UnixSeconds at = 0;
  std::optional<UnixSeconds> deadline;
};

// GPU counts an option may use: the fitted count, and for an "auto" job with
// work to do, doublings of it up to one node (or twice the count past one
// node) within kMaxGpus, so a tight deadline can buy speed.
std::vector<int> OptionCounts(const JobSpec& job, int fitted);

// Instances of `o` needed for `gpus` GPUs: ceil(gpus / o.gpu_count).
int InstancesFor(const catalog::Offering& o, int gpus);

// The offerings of `candidates` (one GPU model, one location) to run `gpus`
// GPUs on: the fewest billed GPUs, then the fewest instances; a job spanning
// several instances uses only the location's largest (full-node) size.
std::vector<const catalog::Offering*> BestFitOfferings(
    const std::vector<const catalog::Offering*>& candidates, int gpus);

// Mean carbon intensity over the hours [start, start + hours), sampled hourly.
catalog::CarbonReading MeanCarbon(const catalog::Catalog& catalog, const std::string& region,
                                  UnixSeconds start, double hours);

struct OptionSet {
  std::vector<Option> options;
  std::string refusal;  // when empty: why no offering could carry the job
  // Offerings left out for a count: an instance type whose network makes a
  // gang across its instances slower than the estimate's interconnect.
  std::vector<std::string> notes;
};

// All options for one fitting GPU model.
OptionSet BuildOptions(const ResolvedJob& job, const GpuEstimate& estimate,
                       const catalog::Catalog& catalog, const PlanContext& ctx);

// Deadline met first, then cheaper, then sooner; ties broken by name so the
// order is deterministic.
void RankOptions(std::vector<Option>* options);

// Merges options of `ranked` that differ only by zone into the first (best
// ranked) of them: the others' zones go to its `other_zones` and a note
// ("also in zones apse3-az3"). Order is otherwise kept.
void CollapseZones(std::vector<Option>* ranked);

}  // namespace meridian::estimate
