// The memory model: how many bytes a job needs on each GPU, and the smallest
// GPU count (as clouds sell them) at which it fits a GPU model.
//
// Training (mixed-precision Adam): 16 B/param of state (bf16 weights 2 + bf16
// grads 2 + fp32 master 4 + fp32 Adam moments 8), sharded ZeRO-3 style over
// the GPUs, plus per-GPU activations of 34 x seq x micro_batch x hidden bytes
// per layer (Korthikanti et al. 2022, eq. 1 without its 5as/h attention-score
// term, which FlashAttention / selective recomputation never store). With full
// recomputation (Chen et al. 2016; Korthikanti et al. 2022 section 4) a GPU
// keeps only each layer's input, 2 x seq x micro_batch x hidden bytes per
// layer, plus one layer's 34 x seq x micro_batch x hidden working set while
// that layer is recomputed; the run then costs 4 forward passes, not 3.
// Inference: weights (params x bytes at precision) + KV cache
// (2 x layers x kv_heads x head_dim x context x batch x bytes), tensor-sharded.
// Every GPU adds kCudaOverheadGib; a modelled need may use kVramHeadroom of the
// VRAM, a stated `resources.vram_gib` all of it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "estimate/defaults.h"
#include "estimate/plan.h"

namespace meridian::estimate {

// Activation bytes one GPU holds for one micro-batch: 34 x s x b x h x L.
double ActivationBytes(const ModelDims& d);
// The same with full recomputation: 2 x s x b x h x L + 34 x s x b x h.
double RecomputedActivationBytes(const ModelDims& d);
// KV cache bytes for the whole batch at full context.
double KvCacheBytes(const ModelDims& d, Precision p);

// Memory of a training job over `gpus` GPUs at the shape's micro_batch.
MemoryEstimate TrainingMemory(const ModelDims& d, Precision p, int gpus,
                              Recompute r = Recompute::kNone);
// Memory of an inference job with weights and KV cache split over `gpus`.
MemoryEstimate InferenceMemory(const ModelDims& d, Precision p, int gpus);
// The need of `job` at `gpus` GPUs and `micro_batch` and `r` (training only).
MemoryEstimate MemoryAt(const ResolvedJob& job, int gpus, int micro_batch,
                        Recompute r = Recompute::kNone);

// GPU counts tried, smallest first: the stated count alone, or 1, 2, 4, 8 on
// one node and then whole nodes of 8 up to kMaxGpus.
std::vector<int> CandidateCounts(std::optional<int> stated);
// GiB of `gpu` a need may use: all of it for a stated need, else kVramHeadroom.
double UsableGib(const catalog::GpuModel& gpu, bool stated_need);

struct MemoryFit {
  std::optional<MemoryEstimate> memory;    // nullopt: does not fit
  std::optional<VramShortfall> shortfall;  // fits only with a smaller micro-batch
  std::optional<std::string> mig_profile;  // smallest MIG slice holding the need
  std::string reason;                      // why it does not fit, when it does not
};

// The cheapest way `job` fits `gpu`, by GPU-hours relative to one GPU at the
// job's micro-batch without recomputation:
//   cost = slowdown(micro_batch) x (4/3 if full recomputation),
// at the smallest count where the way fits (communication grows with the count,
// so more GPUs never cost fewer GPU-hours; throughput.h charges it once the
// count is chosen). The job's micro-batch without recomputation is taken
// whenever some count fits it; otherwise the cheapest of full recomputation at
// the job's micro-batch and of halved micro-batches (down to 1, with or
// without recomputation), which is reported as a shortfall. Ties go to fewer
// GPUs, then the larger micro-batch, then no recomputation.
MemoryFit FitMemory(const ResolvedJob& job, const catalog::GpuModel& gpu);

}  // namespace meridian::estimate
