#include "estimate/memory.h"

#include <cmath>

#include "estimate/throughput.h"

namespace meridian::estimate {

namespace {

double Gib(double bytes) { return bytes / kBytesPerGiB; }

bool StatedNeed(const ResolvedJob& job) { return job.spec.resources.vram_gib.has_value(); }

MemoryEstimate StatedMemory(double per_gpu_gib, int gpus) {
  MemoryEstimate m;
  m.per_gpu_gib = per_gpu_gib;
  m.total_gib = per_gpu_gib * gpus;
  m.gpus = gpus;
  m.method = "stated vram_gib";
  m.arithmetic = "resources.vram_gib = " + Fixed(per_gpu_gib, 1) + " GiB per GPU";
  return m;
}

MemoryEstimate UnknownMemory(int gpus) {
  MemoryEstimate m;
  m.overhead_gib = kCudaOverheadGib;
  m.per_gpu_gib = kCudaOverheadGib;
  m.total_gib = kCudaOverheadGib * gpus;
  m.gpus = gpus;
  m.method = "unknown: no model.params_b or resources.vram_gib";
  m.arithmetic = "working set unknown; assumed to fit one GPU of any model (" +
                 Fixed(kCudaOverheadGib, 1) + " GiB CUDA overhead counted)";
  return m;
}

// "activations 34 x 2048 x 1 x 4096 x 32 B = 8.5 GiB", or with full
// recomputation the stored layer inputs plus one layer's working set.
std::string ActivationArithmetic(const ModelDims& d, Recompute r) {
  std::string sbh = std::to_string(d.seq_len) + " x " + std::to_string(d.micro_batch) + " x " +
                    std::to_string(d.hidden);
  if (r == Recompute::kNone) {
    return "activations " + Fixed(kActivationBytesPerToken, 0) + " x " + sbh + " x " +
           std::to_string(d.layers) + " B = " + Fixed(Gib(ActivationBytes(d)), 1) + " GiB";
  }
  double inputs = kRecomputedBytesPerToken * d.seq_len * d.micro_batch *
                  static_cast<double>(d.hidden) * d.layers;
  double layer = ActivationBytes(d) / d.layers;
  return "activations with full recomputation: " + Fixed(kRecomputedBytesPerToken, 0) + " x " +
         sbh + " x " + std::to_string(d.layers) + " B = " + Fixed(Gib(inputs), 1) +
         " GiB + one layer's working set " + Fixed(kActivationBytesPerToken, 0) + " x " + sbh +
         " B = " + Fixed(Gib(layer), 1) + " GiB";
}

}  // namespace

double ActivationBytes(const ModelDims& d) {
  return kActivationBytesPerToken * d.seq_len * d.micro_batch * static_cast<double>(d.hidden) *
         d.layers;
}

double RecomputedActivationBytes(const ModelDims& d) {
  double per_layer_token = static_cast<double>(d.seq_len) * d.micro_batch * d.hidden;
  return kRecomputedBytesPerToken * per_layer_token * d.layers +
         kActivationBytesPerToken * per_layer_token;
}

double KvCacheBytes(const ModelDims& d, Precision p) {
  return 2.0 * d.layers * d.kv_heads * d.head_dim() * static_cast<double>(d.seq_len) * d.batch *
         BytesPerValue(p);
}

MemoryEstimate TrainingMemory(const ModelDims& d, Precision p, int gpus, Recompute r) {
  MemoryEstimate m;
  double w = BytesPerValue(p);  // bf16 2; fp32 4 (then no separate master copy)
  m.weights_gib = Gib(d.params * w);
  m.gradients_gib = Gib(d.params * w);
  m.optimizer_gib = Gib(d.params * (kTrainingBytesPerParam - 2 * w));
  double state_gib = m.weights_gib + m.gradients_gib + m.optimizer_gib;
  const bool full = r == Recompute::kFull;
  m.activations_gib = Gib(full ? RecomputedActivationBytes(d) : ActivationBytes(d));
  m.overhead_gib = kCudaOverheadGib;
  m.per_gpu_gib = state_gib / gpus + m.activations_gib + m.overhead_gib;
  m.total_gib = state_gib + gpus * (m.activations_gib + m.overhead_gib);
  m.gpus = gpus;
  m.recompute = r;
  m.method = gpus == 1 ? "mixed-precision Adam on 1 GPU"
                       : "ZeRO-3 over " + std::to_string(gpus) + " GPUs";
  if (full) m.method += ", full activation recomputation";
  m.arithmetic = Sci(d.params) + " x 16 B = " + Fixed(state_gib, 1) + " GiB state / " +
                 std::to_string(gpus) + " GPU(s) = " + Fixed(state_gib / gpus, 1) + " GiB + " +
                 ActivationArithmetic(d, r) + " + " + Fixed(m.overhead_gib, 1) +
                 " GiB overhead = " + Fixed(m.per_gpu_gib, 1) + " GiB per GPU";
  return m;
}

MemoryEstimate InferenceMemory(const ModelDims& d, Precision p, int gpus) {
  MemoryEstimate m;
  m.weights_gib = Gib(d.params * BytesPerValue(p));
  m.kv_cache_gib = Gib(KvCacheBytes(d, p));
  m.overhead_gib = kCudaOverheadGib;
  m.per_gpu_gib = (m.weights_gib + m.kv_cache_gib) / gpus + m.overhead_gib;
  m.total_gib = m.weights_gib + m.kv_cache_gib + gpus * m.overhead_gib;
  m.gpus = gpus;
  m.method = gpus == 1 ? "weights + KV cache"
                       : "weights + KV cache, tensor-sharded over " + std::to_string(gpus) +
                             " GPUs";
  m.arithmetic = "weights " + Sci(d.params) + " x " + Fixed(BytesPerValue(p), 0) + " B = " +
                 Fixed(m.weights_gib, 1) + " GiB + KV 2 x " + std::to_string(d.layers) + " x " +
                 std::to_string(d.kv_heads) + " x " + std::to_string(d.head_dim()) + " x " +
                 std::to_string(d.seq_len) + " x " + std::to_string(d.batch) + " x " +
                 Fixed(BytesPerValue(p), 0) + " B = " + Fixed(m.kv_cache_gib, 1) + " GiB, / " +
                 std::to_string(gpus) + " GPU(s) + " + Fixed(m.overhead_gib, 1) +
                 " GiB overhead = " + Fixed(m.per_gpu_gib, 1) + " GiB per GPU";
  return m;
}

MemoryEstimate MemoryAt(const ResolvedJob& job, int gpus, int micro_batch, Recompute r) {
  if (StatedNeed(job)) return StatedMemory(*job.spec.resources.vram_gib, gpus);
  if (!job.dims) return UnknownMemory(gpus);
  ModelDims d = *job.dims;
  if (TrainsWeights(job.spec.kind)) {
    d.micro_batch = micro_batch;
    return TrainingMemory(d, job.precision, gpus, r);
  }
  return InferenceMemory(d, job.precision, gpus);
}

std::vector<int> CandidateCounts(std::optional<int> stated) {
  if (stated) return {*stated};
  std::vector<int> counts = {1, 2, 4, 8};
  for (int n = 2 * kGpusPerNode; n <= kMaxGpus; n += kGpusPerNode) counts.push_back(n);
  return counts;
}

double UsableGib(const catalog::GpuModel& gpu, bool stated_need) {
  return stated_need ? gpu.vram_gib : gpu.vram_gib * kVramHeadroom;
}

namespace {

std::optional<std::string> SmallestMigSlice(const catalog::GpuModel& gpu, double need_gib,
                                            bool stated) {
  const catalog::MigProfile* best = nullptr;
  for (const auto& p : gpu.mig_profiles) {
    double usable = stated ? p.memory_gib : p.memory_gib * kVramHeadroom;
    if (usable < need_gib) continue;
    if (!best || p.memory_gib < best->memory_gib ||
        (p.memory_gib == best->memory_gib && p.compute_slices < best->compute_slices)) {
      best = &p;
    }
  }
  if (!best) return std::nullopt;
  return best->name;
}

std::string CountPhrase(const ResolvedJob& job, int largest) {
  if (job.spec.resources.gpus) return "at gpus: " + std::to_string(largest);
  return "even at " + std::to_string(largest) + " GPUs (" + std::to_string(largest / kGpusPerNode) +
         " nodes of " + std::to_string(kGpusPerNode) + ")";
}

double MicroBatchSlowdown(int mb0, int mb) {
  return 1.0 + kMicroBatchHalvingSlowdown * std::log2(static_cast<double>(mb0) / mb);
}

VramShortfall Shortfall(const ResolvedJob& job, const catalog::GpuModel& gpu, double needed,
                        double usable, const MemoryEstimate& m, int mb) {
  VramShortfall s;
  s.gpu = gpu.name;
  s.needed_gib = needed;
  s.available_gib = usable;
  s.reduced_micro_batch = mb;
  int mb0 = job.dims->micro_batch;
  s.slowdown = MicroBatchSlowdown(mb0, mb);
  const bool full = m.recompute == Recompute::kFull;
  s.explanation = "needs " + Fixed(needed, 1) + " GiB per GPU at micro_batch " +
                  std::to_string(mb0) + " on " + std::to_string(m.gpus) + " GPU(s), " +
                  Fixed(usable, 1) + " GiB usable; micro_batch " + std::to_string(mb) +
                  " with " + std::to_string(mb0 / mb) + "x gradient accumulation" +
                  (full ? " and full activation recomputation" : "") + " fits, run time x" +
                  Fixed(s.slowdown, 2) + (full ? " x " + Fixed(kRecomputeComputeFactor, 2) : "") +
                  " (longer and dearer)";
  return s;
}

// A way to hold the job: a micro-batch and how activations are kept.
struct Way {
  int micro_batch = 1;
  Recompute recompute = Recompute::kNone;
};

struct Rung {
  MemoryEstimate memory;
  int micro_batch = 1;
  double cost = 0;  // GPU-hours relative to 1 GPU at the job's micro-batch, no recomputation
};

// The cheapest (way, count) that fits; ties keep the earlier way and the fewer GPUs.
std::optional<Rung> CheapestRung(const ResolvedJob& job, const std::vector<int>& counts,
                                 double usable, int mb0, const std::vector<Way>& ways) {
  std::optional<Rung> best;
  for (const Way& w : ways) {
    double compute = w.recompute == Recompute::kFull ? kRecomputeComputeFactor : 1.0;
    for (int n : counts) {
      MemoryEstimate m = MemoryAt(job, n, w.micro_batch, w.recompute);
      if (m.per_gpu_gib > usable) continue;
      double cost = MicroBatchSlowdown(mb0, w.micro_batch) * compute;
      if (!best || cost < best->cost) best = Rung{m, w.micro_batch, cost};
    }
  }
  return best;
}

}  // namespace

MemoryFit FitMemory(const ResolvedJob& job, const catalog::GpuModel& gpu) {
  MemoryFit fit;
  const bool stated = StatedNeed(job);
  const double usable = UsableGib(gpu, stated);
  const std::vector<int> counts = CandidateCounts(job.spec.resources.gpus);
  const bool can_shrink = !stated && job.dims && TrainsWeights(job.spec.kind);
  const int mb0 = can_shrink ? job.dims->micro_batch : 1;
  std::optional<Rung> best = CheapestRung(job, counts, usable, mb0, {{mb0, Recompute::kNone}});
  if (!best && can_shrink) {
    std::vector<Way> ways = {{mb0, Recompute::kFull}};
    for (int mb = mb0 / 2; mb >= 1; mb /= 2) {
      ways.push_back({mb, Recompute::kNone});
      ways.push_back({mb, Recompute::kFull});
    }
    best = CheapestRung(job, counts, usable, mb0, ways);
  }
  if (best) {
    MemoryEstimate& m = best->memory;
    if (best->micro_batch != mb0) {
      double needed = MemoryAt(job, m.gpus, mb0).per_gpu_gib;
      fit.shortfall = Shortfall(job, gpu, needed, usable, m, best->micro_batch);
    }
    m.arithmetic += " <= " + Fixed(usable, 1) + " GiB usable of " + Fixed(gpu.vram_gib, 1);
    if (job.spec.resources.mig && m.gpus == 1) {
      fit.mig_profile = SmallestMigSlice(gpu, m.per_gpu_gib, stated);
    }
    fit.memory = m;
    return fit;
  }
  Recompute least = can_shrink ? Recompute::kFull : Recompute::kNone;
  MemoryEstimate worst = MemoryAt(job, counts.back(), 1, least);
  fit.reason = "not enough VRAM: needs " + Fixed(worst.per_gpu_gib, 1) + " GiB per GPU " +
               CountPhrase(job, counts.back()) +
               (can_shrink ? " with micro_batch 1 and full activation recomputation" : "") +
               "; " + gpu.name + " has " + Fixed(usable, 1) + " GiB usable of " +
               Fixed(gpu.vram_gib, 1) + " GiB";
  return fit;
}

}  // namespace meridian::estimate
