#include "sched/plugins/binpack.h"

#include <bit>
#include <cstdio>

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int64_t kBp = 10000;  // basis points in a whole

// Free and total capacity of one resource on one node, before and after.
struct Share {
  int64_t free_after = 0;
  int64_t total = 0;
};

// GPU capacity of node `id` in memory slices, after `c` takes its part.
Share GpuSlices(const CycleContext& ctx, const Candidate& c, NodeId id) {
  const Ledger& l = ctx.ledger();
  const NodeCapacity& cap = l.capacity(id);
  Share s;
  s.total = static_cast<int64_t>(cap.gpus) * kMigMemorySlices;
  int64_t free = static_cast<int64_t>(l.free_gpu_count(id)) * kMigMemorySlices;
  for (uint64_t mig = cap.mig_gpus; mig != 0; mig &= mig - 1) {  // MIG-mode GPUs only
    const int g = std::countr_zero(mig);
    free += kMigMemorySlices - std::popcount(l.mig_used(id, g));
  }
  int64_t take = c.kind == CandidateKind::kMigSlice ? c.mig_shape.span
                 : c.kind == CandidateKind::kCpuNode ? 0
                                                     : int64_t{c.gpus_per_node} * kMigMemorySlices;
  s.free_after = std::max<int64_t>(0, free - take);
  return s;
}

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

int64_t Bp(const Share& s) { return s.total <= 0 ? 0 : s.free_after * kBp / s.total; }

// The weighted free share of one fleet node, in basis points.
int64_t NodeBp(const CycleContext& ctx, const Candidate& c, NodeId id, int64_t members,
               const PackingWeights& w) {
  const Ledger& l = ctx.ledger();
  const QueuedJob& job = ctx.job();
  int64_t sum = 0;
  if (w.gpus) sum += w.gpus * Bp(GpuSlices(ctx, c, id));
  if (w.vcpus) {
    Share s{std::max<int64_t>(0, l.free_vcpus(id) - CeilDiv(job.vcpus, members)),
            l.capacity(id).vcpus};
    sum += w.vcpus * Bp(s);
  }
  if (w.ram) {
    Share s{std::max<int64_t>(0, l.free_ram_mib(id) - CeilDiv(job.ram_mib, members)),
            l.capacity(id).ram_mib};
    sum += w.ram * Bp(s);
  }
  return sum / (w.gpus + w.vcpus + w.ram);
}

int64_t ElasticBp(const CycleContext& ctx, const Candidate& c, const PackingWeights& w) {
  const OfferingFacts facts = ctx.offering(c.offering);
  const QueuedJob& job = ctx.job();
  const int64_t n = std::max<int64_t>(1, c.instances);
  auto bp = [&](int64_t total, int64_t need) {
    return Bp({std::max<int64_t>(0, total - need), total});
  };
  int64_t sum = 0;
  if (w.gpus) sum += w.gpus * bp(n * facts.gpu_count, ctx.demand(c).gpus);
  if (w.vcpus) sum += w.vcpus * bp(n * facts.vcpus, job.vcpus);
  if (w.ram) sum += w.ram * bp(static_cast<int64_t>(n * facts.ram_gib * 1024), job.ram_mib);
  return sum / (w.gpus + w.vcpus + w.ram);
}

std::string Percent(int64_t bp) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", static_cast<double>(bp) / 100.0);
  return buf;
}

}  // namespace

PackingWeights ReadPackingWeights(PluginArgs& args) {
  PackingWeights w;
  w.gpus = static_cast<int>(args.Integer("gpus", 1, 0, 100));
  w.vcpus = static_cast<int>(args.Integer("vcpus", 0, 0, 100));
  w.ram = static_cast<int>(args.Integer("ram", 0, 0, 100));
  if (w.gpus + w.vcpus + w.ram == 0) {
    args.Error("gpus", "gpus, vcpus and ram are all 0; weigh at least one");
    w.gpus = 1;
  }
  return w;
}

int64_t FreeShareAfterBp(const CycleContext& ctx, const Candidate& c, const PackingWeights& w) {
  if (c.kind == CandidateKind::kElastic) return ElasticBp(ctx, c, w);
  std::span<const NodeId> nodes = ctx.members(c);
  if (nodes.empty()) return 0;
  int64_t sum = 0;
  for (NodeId id : nodes) sum += NodeBp(ctx, c, id, static_cast<int64_t>(nodes.size()), w);
  return sum / static_cast<int64_t>(nodes.size());
}

std::string FreeShareArithmetic(const CycleContext& ctx, const Candidate& c,
                                const PackingWeights& w) {
  std::string s = "free after placement";
  if (c.kind == CandidateKind::kElastic) {
    const catalog::Offering& o = ctx.catalog().offerings()[c.offering.index()];
    s += ": " + std::to_string(std::max(1, int{c.instances}) * o.gpu_count - ctx.demand(c).gpus) +
         " of " + std::to_string(std::max(1, int{c.instances}) * o.gpu_count) + " GPUs bought";
  } else {
    std::span<const NodeId> nodes = ctx.members(c);
    const int64_t n = static_cast<int64_t>(nodes.size());
    for (size_t i = 0; i < nodes.size() && i < 3; ++i) {
      NodeId id = nodes[i];
      s += std::string(i ? "; " : ": ") + ctx.fleet().node(id).name;
      if (w.gpus) {
        Share g = GpuSlices(ctx, c, id);
        s += " " + std::to_string(g.free_after) + "/" + std::to_string(g.total) + " GPU slices";
      }
      if (w.vcpus) {
        s += " " + std::to_string(std::max<int64_t>(0, ctx.ledger().free_vcpus(id) -
                                                        CeilDiv(ctx.job().vcpus, n))) +
             "/" + std::to_string(ctx.ledger().capacity(id).vcpus) + " vCPUs";
      }
      if (w.ram) {
        s += " " + std::to_string(std::max<int64_t>(0, ctx.ledger().free_ram_mib(id) -
                                                        CeilDiv(ctx.job().ram_mib, n)) / 1024) +
             "/" + std::to_string(ctx.ledger().capacity(id).ram_mib / 1024) + " GiB";
      }
    }
    if (nodes.size() > 3) s += "; ...";
  }
  return s + " (weighted " + Percent(FreeShareAfterBp(ctx, c, w)) + " free)";
}

Result<std::unique_ptr<Plugin>> Binpack::Create(PluginArgs& args) {
  PackingWeights w = ReadPackingWeights(args);
  return FinishPlugin<Binpack>(args, w);
}

std::string Binpack::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  return FreeShareArithmetic(ctx, c, weights_);
}

}  // namespace meridian::sched
