#include "sched/plugins/cpu_fallback.h"

#include <algorithm>
#include <bit>

#include "sched/cost.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> CpuFallback::Create(PluginArgs& args) {
  Options o;
  // The CPU's price is a fact of the fleet, billed by `simulate` and `serve`
  // alike; a profile that still prices it is told where it went.
  for (const std::string moved : {"vcpu_hour_usd", "ram_gib_hour_usd"}) {
    if (!args.Has(moved)) continue;
    args.Error(moved, "is priced by the fleet now: set " + moved +
                          " on the fleet file's clusters (or in serve.yaml), the rate that "
                          "simulate and serve bill");
    args.Number(moved, 0, 0, 1e9);  // read, so it is not also reported as unknown
  }
  o.max_nodes = static_cast<int>(args.Integer("max_nodes", o.max_nodes, 1, 64));
  o.scan_ends = static_cast<int>(args.Integer("scan_ends", o.scan_ends, 1, 4096));
  o.jobs = args.Choice("jobs", "fallback", {"fallback", "cpu-only"}) == "cpu-only"
               ? Options::Jobs::kCpuOnly
               : Options::Jobs::kFallback;
  return FinishPlugin<CpuFallback>(args, o);
}

namespace {

Candidate CpuCandidate(const CycleContext& ctx) {
  Candidate c;
  c.kind = CandidateKind::kCpuNode;
  c.start = ctx.now();
  return c;
}

}  // namespace


std::optional<Money> CpuFallback::CpuCost(const CycleContext& ctx) const {
  std::optional<Money> cheapest;
  const PoolId pool = ctx.fleet().CpuPool();
  if (!pool.valid()) return cheapest;
  ForEachCpuNode(ctx, pool, options_.max_nodes, [&](const Candidate& c) {
    const Money m = ComputeRunCost(ctx, c);
    if (!cheapest || m < *cheapest) cheapest = m;
    return true;
  });
  return cheapest;
}

std::optional<UnixSeconds> CpuFallback::EarliestGpu(const CycleContext& ctx) const {
  const Ledger& l = ctx.ledger();
  const QueuedJob& job = ctx.job();
  for (const auto& [end, id] : l.EarliestEnds(static_cast<size_t>(options_.scan_ends))) {
    const Allocation* a = l.Find(id);
    if (!a) continue;
    for (const NodeShare& s : a->nodes) {
      const Node& n = ctx.fleet().node(s.node);
      if (!n.gpu_model.valid() || !job.allowed_regions.test(n.region.index())) continue;
      const ModelDemand* d = job.DemandFor(n.gpu_model);
      if (!d || n.mig_gpus != 0) continue;
      if (l.free_gpu_count(s.node) + std::popcount(s.gpus) >= std::min<int>(d->gpus, n.gpus)) {
        return std::max(end, ctx.now());
      }
    }
  }
  return std::nullopt;
}

const char* CpuFallback::Reason(const CycleContext& ctx, std::span<const Candidate> generated) const {
  const QueuedJob& job = ctx.job();
  if (job.demands.empty()) return "no GPU model fits";
  std::optional<Money> cheapest_gpu;
  for (const Candidate& c : generated) {
    if (c.kind == CandidateKind::kCpuNode) continue;
    Money m = RunCost(ctx, c);
    if (!cheapest_gpu || m < *cheapest_gpu) cheapest_gpu = m;
  }
  if (cheapest_gpu) {
    const std::optional<Money> cpu = CpuCost(ctx);
    return cpu && *cpu < *cheapest_gpu ? "cheaper" : nullptr;
  }
  if (!job.deadline) return nullptr;  // unbounded slack: wait for a GPU
  double gpu_hours = job.demands.front().run_hours;
  for (const ModelDemand& d : job.demands) gpu_hours = std::min<double>(gpu_hours, d.run_hours);
  const UnixSeconds latest = *job.deadline - static_cast<UnixSeconds>(gpu_hours * 3600.0);
  std::optional<UnixSeconds> gpu = EarliestGpu(ctx);
  return !gpu || *gpu > latest ? "scarce" : nullptr;
}

void CpuFallback::AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                                CandidateSink& sink) const {
  const QueuedJob& job = ctx.job();
  const Fleet& fleet = ctx.fleet();
  if (job.cpu_only) {
    // No GPU wanted: CPU nodes first, then the spare vCPUs of GPU nodes.
    int added = 0;
    if (fleet.CpuPool().valid()) {
      AddFromPool(ctx, fleet.CpuPool(), sink, &added);
      if (options_.jobs == Options::Jobs::kCpuOnly) return;
    }
    for (const Pool& p : fleet.pools()) {
      if (added >= options_.max_nodes) break;
      if (p.gpu_model.valid() && !p.cluster.valid()) AddFromPool(ctx, p.id, sink, &added);
    }
    return;
  }
  if (options_.jobs == Options::Jobs::kCpuOnly || job.cpu_fallback_slowdown <= 0) return;
  const PoolId pool = fleet.CpuPool();
  if (!pool.valid()) return;
  if (!ctx.ever_pass() && !Reason(ctx, generated)) return;
  int added = 0;
  AddFromPool(ctx, pool, sink, &added);
}

void CpuFallback::AddFromPool(const CycleContext& ctx, PoolId pool, CandidateSink& sink,
                              int* added) const {
  ForEachCpuNode(ctx, pool, options_.max_nodes - *added, [&](const Candidate& c) {
    if (!sink.Add(c)) return false;
    ++*added;
    return true;
  });
}

void CpuFallback::ForEachCpuNode(const CycleContext& ctx, PoolId pool, int limit,
                                 const std::function<bool(const Candidate&)>& fn) {
  const QueuedJob& job = ctx.job();
  const Ledger& l = ctx.ledger();
  const int vcpus = std::max(job.vcpus, 1);
  const std::vector<NodeId>& members = l.pool_members(pool);
  int seen = 0;
  for (int64_t pos = l.NextWithFreeVcpus(pool, 0, vcpus); pos >= 0 && seen < limit;
       pos = l.NextWithFreeVcpus(pool, static_cast<size_t>(pos) + 1, vcpus)) {
    NodeId n = members[static_cast<size_t>(pos)];
    const Node& node = ctx.fleet().node(n);
    if (l.free_ram_mib(n) < job.ram_mib || !job.allowed_regions.test(node.region.index())) continue;
    Candidate c = CpuCandidate(ctx);
    c.node = n;
    c.region = node.region;
    if (!fn(c)) return;
    ++seen;
  }
}

}  // namespace meridian::sched
