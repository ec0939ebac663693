// gang_permit (Permit): a multi-node job is placed whole or not at all.
// Before the chosen gang is committed it checks that
//   size      the gang spans at most `max_gang_size` nodes (an elastic choice:
//             instances)
//   members   distinct nodes of one cluster (with `topology: group`, also of
//             one node group: the same hardware and network block); a
//             real-time service's replica set (every member holds the whole
//             demand, realtime_replicas) may span clusters, its failure domains
//   capacity  every member has the gang's GPUs per node free, and the ledger
//             can reserve every member's share at once (Ledger::CanReserve on
//             the whole allocation): GPUs, vCPUs, RAM
// A rejected gang is not placed in part: the next best candidate is tried.
// Single-node candidates pass (the framework's own CanReserve covers them).
// Elastic choices are one offering in one location, so they are one zone.
//
// Arguments:
//   max_gang_size: 8         most nodes (or instances) of one gang, 1..64 (kDefaultMaxGangNodes, as gpu_fit's max_gang_nodes)
//   topology: cluster        cluster | group
#pragma once

#include "sched/gang.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class GangPermit final : public Plugin, public PermitPlugin {
 public:
  enum class Topology { kCluster, kGroup };
  struct Options {
    int max_gang_size = kDefaultMaxGangNodes;
    Topology topology = Topology::kCluster;
  };
  static constexpr std::string_view kName = "gang_permit";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit GangPermit(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  Status Permit(const CycleContext& ctx, const Candidate& c) const override;

 private:
  Options options_;
};

}  // namespace meridian::sched
