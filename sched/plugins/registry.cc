// Every plugin meridian knows, by name: add a plugin by adding its file pair
// under sched/plugins/, one line here, and its sources to sched/CMakeLists.txt.
#include "sched/registry.h"

#include "sched/plugins/binpack.h"
#include "sched/plugins/carbon.h"
#include "sched/plugins/cbl_policy.h"
#include "sched/plugins/cheapest_price.h"
#include "sched/plugins/cpu_ram.h"
#include "sched/plugins/driver_pin.h"
#include "sched/plugins/gang_permit.h"
#include "sched/plugins/mig_slice.h"
#include "sched/plugins/residency.h"
#include "sched/plugins/spread.h"
#include "sched/plugins/egress_locality.h"
#include "sched/plugins/first_fit.h"
#include "sched/plugins/flavor_order.h"
#include "sched/plugins/home_region.h"
#include "sched/plugins/list_price.h"
#include "sched/plugins/shortest_run.h"
#include "sched/plugins/quota.h"
#include "sched/plugins/single_node.h"
#include "sched/plugins/gpu_fit.h"
#include "sched/plugins/latency.h"
#include "sched/plugins/pricing_model.h"
#include "sched/plugins/realtime_replicas.h"
#include "sched/plugins/tier_sort.h"
#include "sched/plugins/drf_fair_share.h"
#include "sched/plugins/follow_the_sun.h"
#include "sched/plugins/deadline_urgency.h"
#include "sched/plugins/preemption.h"
#include "sched/plugins/backfill.h"
#include "sched/plugins/cpu_fallback.h"
#include "sched/plugins/time_shift.h"
#include "sched/plugins/migrate.h"

namespace meridian::sched {

namespace {

constexpr PluginEntry kPlugins[] = {
    {TierSort::kName, &TierSort::Create, "QueueSort: critical > high > normal > low"},
    {DrfFairShare::kName, &DrfFairShare::Create, "QueueSort: lower weighted dominant share (DRF) first"},
    {FollowTheSun::kName, &FollowTheSun::Create, "QueueSort: DRF, weights rise in tenants' working hours"},
    {DeadlineUrgency::kName, &DeadlineUrgency::Create, "QueueSort: earlier latest start first"},
    {Preemption::kName, &Preemption::Create, "PostFilter: lower tiers give way when it gains more than it costs"},
    {Backfill::kName, &Backfill::Create, "Permit: EASY backfill around the queue head's reservation"},
    {CpuFallback::kName, &CpuFallback::Create, "AddCandidates: CPU nodes when cheaper or no GPU frees in time"},
    {GpuFit::kName, &GpuFit::Create,
     "PreFilter+Filter: allowed model, precision, VRAM, GPUs per node, gangs"},
    {CheapestPrice::kName, &CheapestPrice::Create, "Score: lower $ for the run scores higher"},
    {FirstFit::kName, &FirstFit::Create, "Score: fleet-file order (fifo profiles)"},
    {HomeRegionPlugin::kName, &HomeRegionPlugin::Create, "PreFilter+Filter: only the job's home region (data, or a service's users)"},
    {SingleNode::kName, &SingleNode::Create, "Filter: a job that fits one node runs on one node"},
    {FlavorOrder::kName, &FlavorOrder::Create, "Filter+Score: Kueue-style ordered flavors (reserved, owned, on-demand, spot)"},
    {Quota::kName, &Quota::Create, "Filter+Reserve: GPU quota per tenant"},
    {ListPrice::kName, &ListPrice::Create, "Score: run cost at list price, spot without rework (SkyPilot)"},
    {ShortestRun::kName, &ShortestRun::Create, "Score: the placement the job runs shortest on"},
    {MigSlice::kName, &MigSlice::Create,
     "Filter+AddCandidates+Score: smallest free MIG slice, least fragmentation"},
    {Residency::kName, &Residency::Create, "PreFilter+Filter: data residency (allowed regions)"},
    {CpuRam::kName, &CpuRam::Create, "Filter: free vCPUs and RAM on every node, per instance"},
    {GangPermit::kName, &GangPermit::Create, "Permit: a gang is placed whole or not at all"},
    {Binpack::kName, &Binpack::Create, "Score: least free capacity left on the nodes used"},
    {Spread::kName, &Spread::Create, "Score: most free capacity left on the nodes used"},
    {DriverStack::kName, &DriverStack::Create,
     "Filter+Score: pinned driver/CUDA on declared nodes, custom image on offerings"},
    {Carbon::kName, &Carbon::Create, "Score: grams of CO2 at the hours the run would take"},
    {EgressLocality::kName, &EgressLocality::Create,
     "Score (+Filter with max_usd): run cost plus egress of the job's data"},
    {Latency::kName, &Latency::Create,
     "PreFilter+Filter+Score: real-time services within their latency SLO"},
    {PricingModelChoice::kName, &PricingModelChoice::Create,
     "Filter+Score: spot/flex only while on-demand can still meet the deadline"},
    {CantBeLate::kName, &CantBeLate::Create,
     "Filter: the \"Can't Be Late\" baselines (greedy, uniform progress) with their safety net"},
    {TimeShift::kName, &TimeShift::Create,
     "AddCandidates: batch work with slack starts later in cheaper or greener hours"},
    {RealtimeReplicas::kName, &RealtimeReplicas::Create,
     "AddCandidates+Filter: real-time services now, replicas across zones for availability"},
    {Migrate::kName, &Migrate::Create,
     "Move: a running preemptible job moves at a checkpoint when the saving beats the move's cost"},
};

}  // namespace

std::span<const PluginEntry> PluginRegistry() { return kPlugins; }

const PluginEntry* FindPlugin(std::string_view name) {
  for (const PluginEntry& e : kPlugins) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

Result<std::unique_ptr<Plugin>> MakePlugin(std::string_view name, PluginArgs& args) {
  const PluginEntry* e = FindPlugin(name);
  if (!e) return Status::NotFound("plugin \"" + std::string(name) + "\" is not registered");
  return e->factory(args);
}

}  // namespace meridian::sched
