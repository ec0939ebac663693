// mig_slice (Filter + AddCandidates + Score): places a job that allows MIG
// (`resources.mig: true` on one GPU) on the smallest MIG instance that holds
// it (QueuedJob: ModelDemand::mig_profile/mig_span), choosing among the valid
// placements the one that fragments the fleet least.
//
// Filter, MIG candidates only:
//   - the instance is free in ctx.ledger() (a slice is never given twice; the
//     ledger enforces it again at commit)
//   - its span is at least the demand's smallest profile's
//   - it wastes at most `max_waste_slices` memory slices (span - needed)
// AddCandidates: the built-in generator offers, per node and profile, the
// first free instance on the lowest GPU; this adds the other choices on the
// same node (other GPUs, other free starts on a repartitionable node), one
// per distinct (GPU occupancy, start), at most `max_choices_per_node`.
// Score (higher = better), lexicographic, packed in one integer:
//   1. waste: slices held beyond the smallest profile's span (fewer first);
//      a whole GPU for a MIG-capable job counts as more waste than any slice
//   2. best fit: free memory slices left on that GPU (fewer first: a GPU
//      already partly used before an empty one)
//   3. allocatable capacity: how many of the model's MIG profiles still have
//      a free placement on that GPU (catalog::FreeMigStarts over every profile
//      on a repartitionable node; the free instances of the layout otherwise)
//      (more first)
//   4. fragmentation: free slices of that GPU that no placeable instance
//      covers, unallocatable until a neighbour frees (fewer first)
//   5. free MIG slices left on the node (fewer first: pack nodes)
//   raw = -((((waste x 16 + gpu_free) x 16 + (15 - fits)) x 16 + stranded) x 1024 + node_free)
// normalized min-max. Jobs without a MIG profile score 0 everywhere (neutral).
// The explanation names the slice, the waste and the fragmentation figure.
// Geometry only: the compute-slice limit (7) is left to the ledger's layout
// and NVML; the usual layouts never reach it before the memory slices run out.
//
// Arguments:
//   max_waste_slices: 7       largest span - needed accepted, 0..7 (0: exact fit only)
//   max_choices_per_node: 8   extra placements added per node, 0..64 (0: none)
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class MigSlice final : public Plugin,
                       public FilterPlugin,
                       public AddCandidatesPlugin,
                       public ScorePlugin {
 public:
  struct Options {
    int max_waste_slices = 7;
    int max_choices_per_node = 8;
  };
  // What one GPU would look like after a placement.
  struct After {
    int waste = 0;     // slices held beyond the need
    int gpu_free = 0;  // free memory slices left on the GPU
    int fits = 0;      // profiles that still have a free placement on the GPU
    int largest = 0;   // span of the largest instance still placeable
    int stranded = 0;  // free slices no instance can use (fragmentation)
    int node_free = 0; // free MIG slices left on the node
  };
  static constexpr std::string_view kName = "mig_slice";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit MigSlice(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitFreedFit; }
  Status Prepare(const PrepareContext& ctx) override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  void AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                     CandidateSink& sink) const override;
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  // GPU `gpu` of node `node` with `used` memory slices taken (after a placement).
  After Evaluate(const CycleContext& ctx, NodeId node, int gpu, uint8_t used) const;
  // The candidate's state after placement; nullopt for non-MIG candidates.
  std::optional<After> AfterPlacing(const CycleContext& ctx, const Candidate& c) const;

 private:
  std::string_view Reject(const CycleContext& ctx, const Candidate& c) const;
  bool JobAllowsMig(const QueuedJob& job) const;

  Options options_;
  // Per GPU model, its MIG profiles with placement_starts/span filled in
  // (PlacementsOf: the catalog's data, else the aligned rule), so
  // catalog::FreeMigStarts answers for every profile.
  std::vector<std::vector<catalog::MigProfile>> profiles_;
};

}  // namespace meridian::sched
