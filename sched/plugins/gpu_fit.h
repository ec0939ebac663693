// gpu_fit (PreFilter + Filter): the job's GPU needs, as the estimator sized
// them at enqueue (QueuedJob::demands).
//
// PreFilter: Unresolvable when the estimator cannot count the job's work, or
// no allowed GPU model fits (each model's reason when explained in full);
// narrows generation to the fitting models.
// Filter, per candidate:
//   model     the node's (offering's) GPU model is allowed and fits the job
//   precision the model has a demand: the estimator found a precision the job
//             may run at there (estimate::RunPrecision) and its memory fits
//   VRAM      the demand's per-GPU memory fits the GPU (a MIG slice: its memory,
//             90% usable for a modelled need, all of it for a stated vram_gib)
//   count     a node holds the job's GPUs: gpus_per_node <= the node's GPUs and
//             nodes x gpus_per_node >= the job's GPUs
//   spot gang spot on n instances, each reclaimed on its own, whose rework
//             would be half the run or more (QueuedJob::SpotRunMultiplier)
//   gangs     a multi-node job's members are distinct nodes of one cluster and
//             one model, at most `max_gang_nodes`; `allow_gangs: false`
//             rejects multi-node placements (and multi-instance offerings)
//
// Arguments:
//   allow_gangs: true        multi-node placements allowed
//   max_gang_nodes: 8        most nodes (or instances) one job may span, 1..64
#pragma once

#include "sched/gang.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class GpuFit final : public Plugin, public PreFilterPlugin, public FilterPlugin {
 public:
  struct Options {
    bool allow_gangs = true;
    int max_gang_nodes = kDefaultMaxGangNodes;
  };
  static constexpr std::string_view kName = "gpu_fit";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit GpuFit(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  // Fits by the free GPUs, vCPUs and RAM of nodes of its models.
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitFreedFit; }
  PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // Why `c` does not fit the job; "" when it does.
  // Verdicts by GPU model within one Filter call (reason text pointers;
  // entries past `known` are never read, so they are left uninitialized).
  struct ModelMemo {
    GpuModelSet known;
    const char* why[kMaxGpuModels];    // the model itself (allowed, precision)
    const char* whole[kMaxGpuModels];  // and the demand's VRAM on a whole GPU
  };
  std::string_view Reject(const CycleContext& ctx, const Candidate& c,
                          ModelMemo* memo = nullptr) const;
  std::string_view ModelReject(const CycleContext& ctx, GpuModelId model) const;

 private:
  Options options_;
};

}  // namespace meridian::sched
