#include "sched/plugins/mig_slice.h"

#include <algorithm>
#include <bit>
#include <bitset>

#include "catalog/mig.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int kSlices = kMigMemorySlices;

// The packed lexicographic key of MigSlice's class comment (smaller = better).
int64_t Key(const MigSlice::After& a) {
  int64_t k = a.waste;
  k = k * 16 + a.gpu_free;
  k = k * 16 + (15 - std::min(a.fits, 15));
  k = k * 16 + a.stranded;
  return k * 1024 + std::min(a.node_free, 1023);
}

// Whole GPUs (or CPU, or an offering) for a MIG-capable job: worse than any slice.
constexpr MigSlice::After kWhole{9, 15, 0, 0, 15, 1023};

std::string Slices(MigShape s) {
  return s.span == 1 ? "slice " + std::to_string(s.start)
                     : "slices " + std::to_string(s.start) + "-" +
                           std::to_string(s.start + s.span - 1);
}

}  // namespace

Result<std::unique_ptr<Plugin>> MigSlice::Create(PluginArgs& args) {
  Options o;
  o.max_waste_slices = static_cast<int>(args.Integer("max_waste_slices", o.max_waste_slices, 0, 7));
  o.max_choices_per_node =
      static_cast<int>(args.Integer("max_choices_per_node", o.max_choices_per_node, 0, 64));
  return FinishPlugin<MigSlice>(args, o);
}

Status MigSlice::Prepare(const PrepareContext& ctx) {
  profiles_.clear();
  for (const catalog::GpuModel& gpu : ctx.catalog.gpus()) {
    std::vector<catalog::MigProfile>& out = profiles_.emplace_back();
    for (const catalog::MigProfile& p : gpu.mig_profiles) {
      catalog::MigProfile q = p;
      MigPlacements pl = PlacementsOf(p);
      q.placement_starts.assign(pl.starts.begin(), pl.starts.end());
      q.placement_span = pl.span;
      out.push_back(std::move(q));
    }
  }
  return Status::Ok();
}

bool MigSlice::JobAllowsMig(const QueuedJob& job) const {
  return std::any_of(job.demands.begin(), job.demands.end(),
                     [](const ModelDemand& d) { return d.mig_profile >= 0; });
}

MigSlice::After MigSlice::Evaluate(const CycleContext& ctx, NodeId node, int gpu,
                                   uint8_t used) const {
  const Node& n = ctx.fleet().node(node);
  const Ledger& ledger = ctx.ledger();
  uint8_t covered = 0;
  After a;
  if (ctx.fleet().cluster(n.cluster).repartitionable) {
    for (const catalog::MigProfile& p : profiles_[n.gpu_model.index()]) {
      catalog::MigSliceSet starts = catalog::FreeMigStarts(p, catalog::MigSliceSet::FromBits(used));
      if (starts.empty()) continue;
      ++a.fits;
      a.largest = std::max(a.largest, p.placement_span);
      for (int s = 0; s < kSlices; ++s) {
        if (starts.Contains(s)) covered |= catalog::OccupiedSlices(p, s).bits();
      }
    }
  } else {
    uint64_t profiles = 0;
    for (const MigInstance& inst : n.mig) {
      if ((inst.shape.mask() & used) != 0) continue;
      covered |= inst.shape.mask();
      profiles |= uint64_t{1} << (inst.profile & 63);
      a.largest = std::max<int>(a.largest, inst.shape.span);
    }
    a.fits = std::popcount(profiles);
  }
  const uint8_t free = static_cast<uint8_t>(~used);
  a.gpu_free = std::popcount(free);
  a.stranded = std::popcount(static_cast<uint8_t>(free & ~covered));
  a.node_free = a.gpu_free;
  for (int g = 0; g < n.gpus; ++g) {
    if (g == gpu || ((n.mig_gpus >> g) & 1) == 0) continue;
    a.node_free += kSlices - std::popcount(ledger.mig_used(node, g));
  }
  return a;
}

std::optional<MigSlice::After> MigSlice::AfterPlacing(const CycleContext& ctx,
                                                      const Candidate& c) const {
  if (c.kind != CandidateKind::kMigSlice) return std::nullopt;
  uint8_t used = ctx.ledger().mig_used(c.node, c.mig_gpu) | c.mig_shape.mask();
  After a = Evaluate(ctx, c.node, c.mig_gpu, used);
  a.waste = std::max(0, c.mig_shape.span - int{ctx.demand(c).mig_span});
  return a;
}

std::string_view MigSlice::Reject(const CycleContext& ctx, const Candidate& c) const {
  if (c.kind != CandidateKind::kMigSlice) return "";
  const ModelDemand& d = ctx.demand(c);
  if (d.mig_profile < 0) return "job does not allow MIG (resources.mig)";
  if (!ctx.ledger().MigFree(c.node, c.mig_gpu, c.mig_shape)) return "MIG instance already allocated";
  if (c.mig_shape.span < d.mig_span) return "MIG instance smaller than the job's smallest profile";
  if (c.mig_shape.span - d.mig_span > options_.max_waste_slices) {
    return "MIG instance wastes more slices than max_waste_slices";
  }
  return "";
}

size_t MigSlice::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                        Rejections& rejected) const {
  // No MIG profile holds the job: the generator makes no slice candidates for
  // it, and gpu_fit turns away any a plugin adds.
  if (!JobAllowsMig(ctx.job())) return cands.size();
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Reject(ctx, c); });
}

void MigSlice::AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                             CandidateSink& sink) const {
  if (ctx.ever_pass() || options_.max_choices_per_node == 0 || !JobAllowsMig(ctx.job())) return;
  const Ledger& ledger = ctx.ledger();
  for (const Candidate& c : generated) {
    if (c.kind != CandidateKind::kMigSlice || c.source != kFrameworkSource) continue;
    const Node& n = ctx.fleet().node(c.node);
    const bool repart = ctx.fleet().cluster(n.cluster).repartitionable;
    // Equivalent choices (same occupancy of the GPU, same start) are offered once.
    std::bitset<256 * kSlices> seen;
    seen.set(size_t{ledger.mig_used(c.node, c.mig_gpu)} * kSlices + c.mig_shape.start);
    int added = 0;
    auto offer = [&](int g, uint8_t used, MigShape shape) {
      size_t key = size_t{used} * kSlices + shape.start;
      if (seen.test(key)) return true;
      seen.set(key);
      Candidate x = c;
      x.mig_gpu = static_cast<uint8_t>(g);
      x.mig_shape = shape;
      if (!sink.Add(x)) return false;
      return ++added < options_.max_choices_per_node;
    };
    for (int g = 0; g < n.gpus; ++g) {
      if (((n.mig_gpus >> g) & 1) == 0) continue;
      const uint8_t used = ledger.mig_used(c.node, g);
      bool more = true;
      if (repart) {
        const catalog::MigProfile& p = profiles_[n.gpu_model.index()][c.mig_profile];
        catalog::MigSliceSet starts = catalog::FreeMigStarts(p, catalog::MigSliceSet::FromBits(used));
        for (int s = 0; s < kSlices && more; ++s) {
          if (starts.Contains(s)) {
            more = offer(g, used, {static_cast<uint8_t>(s), static_cast<uint8_t>(p.placement_span)});
          }
        }
      } else {
        for (const MigInstance& inst : n.mig) {
          if (!more) break;
          if (inst.profile == c.mig_profile && ledger.MigFree(c.node, g, inst.shape)) {
            more = offer(g, used, inst.shape);
          }
        }
      }
      if (!more) break;
    }
    if (sink.full()) return;
  }
}

int64_t MigSlice::Score(const CycleContext& ctx, const Candidate& c) const {
  if (!JobAllowsMig(ctx.job())) return 0;
  std::optional<After> a = AfterPlacing(ctx, c);
  return -Key(a ? *a : kWhole);
}

void MigSlice::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                          std::span<int64_t> out) const {
  ScoreEachIf(JobAllowsMig(ctx.job()), *this, ctx, cands, out);
}

std::string MigSlice::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  if (!JobAllowsMig(ctx.job())) return "";
  std::optional<After> a = AfterPlacing(ctx, c);
  if (!a) {
    if (!c.on_fleet() || c.kind == CandidateKind::kCpuNode) return "not a MIG slice";
    const ModelDemand& d = ctx.demand(c);
    if (d.mig_profile < 0) return "whole GPUs (no MIG profile of this model holds the job)";
    const auto& gpu = ctx.catalog().gpus()[d.model.index()];
    return "whole GPU for a job that fits MIG " + gpu.mig_profiles[d.mig_profile].name;
  }
  const auto& gpu = ctx.catalog().gpus()[ctx.fleet().node(c.node).gpu_model.index()];
  return gpu.mig_profiles[c.mig_profile].name + " on GPU " + std::to_string(c.mig_gpu) + " " +
         Slices(c.mig_shape) + ": waste " + std::to_string(a->waste) + " slice(s); after: " +
         std::to_string(a->gpu_free) + " slice(s) free on the GPU, " + std::to_string(a->fits) +
         " profile(s) still fit (largest " + std::to_string(a->largest) +
         " slice(s)), fragmentation " + std::to_string(a->stranded) +
         " free slice(s) unallocatable; " + std::to_string(a->node_free) +
         " MIG slice(s) free on the node";
}

}  // namespace meridian::sched
