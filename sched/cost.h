// What running a job on a candidate costs, as the price plugins see it:
//   owned fleet capacity  the cluster's gpu_hour x GPUs x run hours
//                         (a MIG slice: x span / 8 of one GPU, over the slice's run hours)
//   reserved fleet        0: paid whether used or not, so no added cost
//   elastic               ElasticPricePerHour x instances x run hours (spot:
//                         hours include the expected rework)
//   CPU node              CpuHourRate of its cluster x CPU run hours (a
//                         reserved cluster: 0)
// Egress is not included (the locality plugin prices data movement).
#pragma once

#include <optional>
#include <string>

#include "core/units.h"
#include "sched/plugin.h"

namespace meridian::sched {

// The hourly rates of fleet capacity, the one formula that the price plugins
// weigh (RunCost), `simulate` bills and `serve` bills: `gpu_milli`
// thousandths of GPUs at the cluster's gpu_hour (owned: per GPU-hour used;
// reserved: the committed rate), and a run on CPUs at vCPUs (at least 1) x
// vcpu_hour + RAM GiB x ram_gib_hour (a reserved cluster's are 0).
Money GpuHourRate(const Cluster& cl, int64_t gpu_milli);
Money CpuHourRate(const Cluster& cl, int vcpus, int64_t ram_mib);
// The RAM `spec` states for the whole job, in MiB (resources.ram_gib; 0 when
// it states none): what the scheduler places, the simulator charges and the
// daemon's rates bill, converted in this one place.
int64_t StatedRamMib(const JobSpec& spec);
// A run's rate on `cl`: GpuHourRate when it holds GPUs (gpu_milli > 0), else
// CpuHourRate of the vCPUs and RAM it holds.
Money FleetHourRate(const Cluster& cl, int64_t gpu_milli, int vcpus, int64_t ram_mib);

// The price per instance-hour of an elastic candidate's run: the market's
// over the run's hours from the candidate's start (RunPricePerHour over
// CycleContext::RunHours). Scoring charges it, the lease records it
// (AllocationFor) and the simulator bills that: a run deferred to a cheaper
// hour pays that hour's price. nullopt: not sold so at the start.
std::optional<Money> ElasticPricePerHour(const CycleContext& ctx, const Candidate& c);

// RunCost computed afresh, ignoring the candidate's cached figure.
Money ComputeRunCost(const CycleContext& ctx, const Candidate& c);
// The candidate's cached figure (Candidate::run_cost_micros) where set.
inline Money RunCost(const CycleContext& ctx, const Candidate& c) {
  if (c.run_cost_micros != Candidate::kNoRunCost) return Money::FromMicros(c.run_cost_micros);
  return ComputeRunCost(ctx, c);
}

// The arithmetic of RunCost: "8 GPUs x 1.10 $/GPU-h x 2.50 h = 22.00 $".
std::string RunCostArithmetic(const CycleContext& ctx, const Candidate& c);

}  // namespace meridian::sched
