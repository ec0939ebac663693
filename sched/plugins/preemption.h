// preemption (PostFilter): when nothing fits now, lower tiers give way to
// higher ones. Called only when no candidate is feasible.
//
// Who may be a victim: a fleet allocation that is preemptible and of a tier
// strictly below the preemptor's (critical > high > normal > low). A
// non-preemptible job, or one of the same or a higher tier, never is; elastic
// leases are not preempted (more can be bought).
//
// What it costs: per victim, the work lost since its last checkpoint plus its
// restart, in tier-weighted GPU-hours:
//   cost(v) = w(tier_v) x GPUs_v x (lost_h + restart_h)
//   lost_h  = ((now - start) mod checkpoint interval) / 3600   (its
//             checkpoint.interval; none stated: the estimator's default, 30 min)
//   restart_h = checkpoint.restart_overhead (none stated: 5 min)
// so recently checkpointed victims cost least and are chosen first. A victim
// that has not started yet costs 0.
// What it gains: the preemptor's run, tier-weighted, doubled when its
// deadline is at risk (its latest start is within `urgent_slack`):
//   value = w(tier_p) x GPUs_p x run_h x (deadline at risk ? deadline_factor : 1)
// Rule: preempt only when value > min_gain_ratio x sum of cost(v); never to
// gain less than it costs.
//
// Where: per allowed GPU model that fits (and allowed region), nodes in fleet
// order (at most `max_nodes` examined) without MIG; on each node the
// cheapest set of eligible victims that frees the job's GPUs, vCPUs and RAM
// (exact over subsets up to 8 eligible holders, else greedy by cost). A job
// wider than one node: a gang of ShapeFor(gpus, node GPUs) nodes in one
// cluster, the cheapest nodes' victim sets together. The cheapest option that
// passes the rule is nominated. The framework then checks the nomination as
// it checks a placement: every filter of the profile (on the empty ledger:
// the freed capacity is this plugin's check; quota counts the victims of the
// job's own tenant as released), then, on the ledger as the eviction leaves
// it, Ledger::CanReserve and every Permit plugin (gang_permit, backfill's
// reservations). If one refuses, nobody is evicted for it.
//
// Quotas: evicting another tenant's jobs gives the preemptor's tenant no
// quota back, so a tenant at its quota cannot preempt to exceed it. When a
// nomination with victims of other tenants is refused, the framework asks
// once more for victims of the job's own tenant only
// (CycleContext::own_tenant_victims): a tenant may preempt its own lower-tier
// preemptible jobs to run a more urgent one within its quota. A mix (own
// victims for the quota, others' for the room) is not searched: where only a
// mix would do, the job waits.
//
// Arguments:
//   weight_critical: 8, weight_high: 4, weight_normal: 2, weight_low: 1   tier weights (> 0)
//   min_gain_ratio: 1        value must exceed this x cost (>= 1)
//   deadline_factor: 2       value factor when the deadline is at risk (>= 1)
//   urgent_slack: 1h         latest start within this of now = at risk
//   max_nodes: 64            nodes examined per decision (1..100000)
//   max_gang_nodes: 8        widest gang nominated (as gpu_fit's)
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sched/gang.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Preemption final : public Plugin, public PostFilterPlugin {
 public:
  struct Options {
    std::array<double, 4> tier_weight = {8, 4, 2, 1};  // by Priority
    double min_gain_ratio = 1;
    double deadline_factor = 2;
    int64_t urgent_slack_s = 3600;
    int max_nodes = 64;
    int max_gang_nodes = kDefaultMaxGangNodes;
  };
  static constexpr std::string_view kName = "preemption";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Preemption(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  // Nominates only from preemptible fleet allocations below the job's tier.
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitVictims; }
  std::optional<Nomination> PostFilter(const CycleContext& ctx) const override;

  // cost(v) of the allocation at `now` (see above), tier-weighted GPU-hours.
  double VictimCost(const Allocation& a, UnixSeconds now) const;
  // value of running the job's demand `d` now.
  double Value(const CycleContext& ctx, const ModelDemand& d) const;

  // The best option found, whether or not it passes the rule (tests, explanations).
  struct Plan {
    Candidate candidate;
    std::vector<NodeId> members;
    std::vector<JobId> victims;
    double cost = 0;
    double value = 0;
    bool passes = false;
  };
  std::optional<Plan> Best(const CycleContext& ctx) const;

 private:
  struct NodeChoice {
    double cost = 0;
    uint32_t victims = 0;  // bit i: eligible_[i]
    bool found = false;
  };
  NodeChoice CheapestOn(const CycleContext& ctx, NodeId n, int gpus, int vcpus,
                        int64_t ram) const;
  void Consider(const CycleContext& ctx, const ModelDemand& d, uint8_t demand,
                std::optional<Plan>& best) const;
  void ConsiderGang(const CycleContext& ctx, const ModelDemand& d, uint8_t demand,
                    std::optional<Plan>& best) const;

  Options options_;
  struct Eligible {
    JobId job;
    double cost;
    int gpus;
    int vcpus;
    int64_t ram;
  };
  mutable std::vector<Eligible> eligible_;  // scratch, per node
  struct GangNode {
    double cost;
    NodeId node;
    std::vector<JobId> victims;
  };
  mutable std::vector<GangNode> gang_nodes_;
};

}  // namespace meridian::sched
