#include "sched/plugins/gang_permit.h"

#include "sched/gang.h"

#include <string>

#include "sched/cycle.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> GangPermit::Create(PluginArgs& args) {
  Options o;
  o.max_gang_size = static_cast<int>(args.Integer("max_gang_size", o.max_gang_size, 1, 64));
  std::string t = args.Choice("topology", "cluster", {"cluster", "group"});
  o.topology = t == "group" ? Topology::kGroup : Topology::kCluster;
  return FinishPlugin<GangPermit>(args, o);
}

Status GangPermit::Permit(const CycleContext& ctx, const Candidate& c) const {
  const std::string max = std::to_string(options_.max_gang_size);
  if (c.kind == CandidateKind::kElastic) {
    if (c.instances > options_.max_gang_size) {
      return Status::Unresolvable(std::to_string(c.instances) + " instances exceed max_gang_size " +
                                  max);
    }
    return Status::Ok();
  }
  if (c.kind != CandidateKind::kGang) return Status::Ok();
  std::span<const NodeId> nodes = ctx.members(c);
  if (nodes.empty()) return Status::Invalid("a gang without members");
  if (static_cast<int>(nodes.size()) > options_.max_gang_size) {
    return Status::Unresolvable("a gang of " + std::to_string(nodes.size()) +
                                " nodes exceeds max_gang_size " + max);
  }
  const Fleet& fleet = ctx.fleet();
  // A real-time service's replica set (every member holds the whole demand,
  // realtime_replicas) spans clusters on purpose: they are its failure domains.
  const bool replica_set = ctx.job().kind == WorkloadKind::kRealtimeInference &&
                           c.gpus_per_node >= ctx.demand(c).gpus;
  const GangRule rule =
      CheckGangMembers(fleet, nodes, replica_set, options_.topology == Topology::kGroup);
  const std::string a = fleet.node(nodes[rule.first]).name, b = fleet.node(nodes[rule.second]).name;
  switch (rule.broken) {
    case GangRule::kClusters:
      return Status::Unresolvable("gang members " + a + " and " + b + " are in different clusters");
    case GangRule::kGroups:
      return Status::Unresolvable("gang members " + a + " and " + b +
                                  " are in different node groups (topology: group)");
    case GangRule::kListedTwice: return Status::Invalid("node " + b + " listed twice in the gang");
    case GangRule::kOk: break;
  }
  // Each member's free GPUs first, for a reason that names the node.
  const Ledger& ledger = ctx.ledger();
  for (NodeId id : nodes) {
    if (ledger.free_gpu_count(id) < c.gpus_per_node) {
      return Status::Unschedulable("the gang cannot be reserved whole: " + fleet.node(id).name +
                                   " has " + std::to_string(ledger.free_gpu_count(id)) +
                                   " GPUs free < " + std::to_string(c.gpus_per_node));
    }
  }
  Status st = ledger.CanReserve(AllocationFor(ctx, c, ledger));
  if (!st.ok()) {
    return Status::Unschedulable("the gang of " + std::to_string(nodes.size()) +
                                 " nodes cannot be reserved whole: " + st.message());
  }
  return Status::Ok();
}

}  // namespace meridian::sched
