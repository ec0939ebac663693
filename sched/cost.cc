#include "sched/cost.h"

#include <algorithm>

#include "estimate/defaults.h"
#include "sched/market.h"

namespace meridian::sched {

namespace {

int FleetGpus(const Candidate& c) { return c.gpus_per_node * (c.kind == CandidateKind::kGang ? c.gang_size : 1); }

double RamGib(int64_t ram_mib) { return static_cast<double>(ram_mib) / 1024.0; }

}  // namespace

Money GpuHourRate(const Cluster& cl, int64_t gpu_milli) {
  return cl.gpu_hour.Times(static_cast<double>(gpu_milli) / 1000.0);
}

Money CpuHourRate(const Cluster& cl, int vcpus, int64_t ram_mib) {
  return cl.vcpu_hour.Times(std::max(vcpus, 1)) + cl.ram_gib_hour.Times(RamGib(ram_mib));
}

int64_t StatedRamMib(const JobSpec& spec) {
  return static_cast<int64_t>(spec.resources.ram_gib.value_or(0) * 1024.0);
}

Money FleetHourRate(const Cluster& cl, int64_t gpu_milli, int vcpus, int64_t ram_mib) {
  return gpu_milli > 0 ? GpuHourRate(cl, gpu_milli) : CpuHourRate(cl, vcpus, ram_mib);
}

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
    default: break;
  }
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  if (cl.pricing == CapacityPricing::kReserved) return Money();
  if (c.kind == CandidateKind::kCpuNode) {
    return CpuHourRate(cl, ctx.job().vcpus, ctx.job().ram_mib).Times(hours);
  }
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
    default: break;
  }
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  if (cl.pricing == CapacityPricing::kReserved) {
    return "reserved cluster " + cl.name + ": already paid, 0 $ added";
  }
  if (c.kind == CandidateKind::kCpuNode) {
    const QueuedJob& job = ctx.job();
    return "(" + std::to_string(std::max(job.vcpus, 1)) + " vCPUs x " +
           Fixed(cl.vcpu_hour.dollars(), 6) + " $/vCPU-h + " + Fixed(RamGib(job.ram_mib), 1) +
           " GiB x " + Fixed(cl.ram_gib_hour.dollars(), 6) + " $/GiB-h) x " + h + total;
  }
  if (c.kind == CandidateKind::kMigSlice) {
    return cl.gpu_hour.ToString() + " $/GPU-h x " + std::to_string(c.mig_shape.span) + "/8 GPU x " +
           h + total;
  }
  return std::to_string(FleetGpus(c)) + " GPUs x " + cl.gpu_hour.ToString() + " $/GPU-h x " + h +
         total;
}

}  // namespace meridian::sched
