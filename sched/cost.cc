#include "sched/cost.h"

#include "estimate/defaults.h"
#include "sched/market.h"

namespace meridian::sched {

namespace {

int FleetGpus(const Candidate& c) { return c.gpus_per_node * (c.kind == CandidateKind::kGang ? c.gang_size : 1); }

}  // namespace

std::optional<Money> ElasticPricePerHour(const CycleContext& ctx, const Candidate& c) {
  return RunPricePerHour(ctx.market(), c.offering, c.pricing, c.start, ctx.RunHours(c));
}

Money ComputeRunCost(const CycleContext& ctx, const Candidate& c) {
  const double hours = ctx.RunHours(c);
  switch (c.kind) {
    case CandidateKind::kElastic: {
      std::optional<Money> p =
          RunPricePerHour(ctx.market(), c.offering, c.pricing, c.start, hours);  // ElasticPricePerHour
      return p ? p->Times(c.instances * hours) : Money::FromMicros(INT64_MAX / 4);
    }
    case CandidateKind::kCpuNode: return Money();
    default: break;
  }
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  if (cl.pricing == CapacityPricing::kReserved) return Money();
  if (c.kind == CandidateKind::kMigSlice) {
    return cl.gpu_hour.Times(hours * c.mig_shape.span / static_cast<double>(kMigMemorySlices));
  }
  return cl.gpu_hour.Times(FleetGpus(c) * hours);
}

std::string RunCostArithmetic(const CycleContext& ctx, const Candidate& c) {
  using estimate::Fixed;
  const double hours = ctx.RunHours(c);
  const std::string h = Fixed(hours, 2) + " h";
  const std::string total = " = " + RunCost(ctx, c).ToString() + " $";
  switch (c.kind) {
    case CandidateKind::kElastic: {
      std::optional<Money> p = ElasticPricePerHour(ctx, c);
      return std::to_string(c.instances) + " x " + (p ? p->ToString() : "?") + " $/h " +
             std::string(ToString(c.pricing)) + " x " + h + total;
    }
    case CandidateKind::kCpuNode: return "CPU capacity is not priced by the fleet file: 0 $";
    default: break;
  }
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  if (cl.pricing == CapacityPricing::kReserved) {
    return "reserved cluster " + cl.name + ": already paid, 0 $ added";
  }
  if (c.kind == CandidateKind::kMigSlice) {
    return cl.gpu_hour.ToString() + " $/GPU-h x " + std::to_string(c.mig_shape.span) + "/8 GPU x " +
           h + total;
  }
  return std::to_string(FleetGpus(c)) + " GPUs x " + cl.gpu_hour.ToString() + " $/GPU-h x " + h +
         total;
}

}  // namespace meridian::sched
