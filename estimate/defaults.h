// The estimator's stated defaults, and the job as the estimator reads it: every
// field the spec left out filled in, with an Assumption saying which value was
// used and why. docs/estimator.md gives the source of every figure here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "estimate/plan.h"

namespace meridian::estimate {

// Memory.
inline constexpr double kVramHeadroom = 0.90;      // use at most 90% of a GPU's VRAM
inline constexpr double kCudaOverheadGib = 1.0;    // CUDA context + allocator slack per GPU
inline constexpr double kTrainingBytesPerParam = 16;  // mixed-precision Adam
inline constexpr double kActivationBytesPerToken = 34;  // x hidden, per layer (see memory.h)
// Full activation recomputation keeps only each layer's 16-bit input: 2 B x
// hidden per token per layer, and costs one more forward pass: 4 a token, not 3.
inline constexpr double kRecomputedBytesPerToken = 2;
inline constexpr double kRecomputeComputeFactor = 8.0 / 6.0;
inline constexpr int kMaxGpus = 64;                 // 8 nodes of 8 GPUs
inline constexpr int kGpusPerNode = 8;

// Throughput.
inline constexpr double kMemoryBandwidthEfficiency = 0.80;  // achievable / peak HBM

inline constexpr double kMicroBatchHalvingSlowdown = 0.10;  // +10% run time per halving

// Communication (parallelism.h). Formulas: Narayanan et al. 2021, "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
// (tensor-parallel all-reduces per layer, the pipeline bubble (p-1)/(m+p-1));
// ring all-reduce 2(N-1)/N x bytes / bus bandwidth (Patarasuk and Yuan 2009;
// NCCL's "bus bandwidth", nccl-tests doc/PERFORMANCE.md).
// Achievable fraction of a link's one-direction bandwidth for collectives,
// stated like kMemoryBandwidthEfficiency (nccl-tests report bus bandwidths
// below the link's figure; no single measured value covers every link).
inline constexpr double kLinkEfficiency = 0.80;
// Share of a micro-batch's compute that data-parallel traffic hides behind:
// the backward pass, 4 of the 6 x P x T FLOPs. Gradient buckets are
// all-reduced while backward runs (Li et al. 2020, "PyTorch Distributed:
// Experiences on Accelerating Data Parallel Training", VLDB, section 3.2.3);
// ZeRO-3 prefetches the next layer's parameters the same way (Rajbhandari et
// al. 2020, section 7). With gradient accumulation over m micro-batches the
// gradients are reduced only in the last one's backward (section 3.2.4;
// PyTorch's DistributedDataParallel.no_sync, pytorch/pytorch pull 21736), so
// a once-per-step reduction hides behind 1/m of the step's backward
// (parallelism.h). Tensor-parallel
// all-reduces are on the critical path (Narayanan et al. 2021, section 2.3)
// and are not overlapped.
inline constexpr double kDataParallelOverlap = 4.0 / 6.0;
// Tokens per optimizer step when the spec states no work.global_batch_tokens:
// Llama 2's 4M-token batch (Touvron et al. 2023, "Llama 2", section 2.2);
// GPT-3 175B used 3.2M.
inline constexpr double kGlobalBatchTokens = 4.0 * 1024 * 1024;
// A catalog without interconnect data: the catalog's own conservative
// fallback network (docs/catalog.md, "Interconnect": Ethernet at 25 Gbit/s)
// and the slowest documented intra-node link (PCIe Gen3 x16, 32 GB/s).
inline constexpr double kUnknownNetworkGbitPerS = 25;
inline constexpr double kUnknownIntraNodeGbytePerS = 32;

// Runs without stated work.
inline constexpr double kDefaultServiceHours = 1.0;

// Reserved: the term a reserved price commits to, paid whether used or not.
// The catalog's reserved price is AWS's 1-year term (the vantage file's
// ReservedUSDPerHour): 365 x 24 = 8760 h.
inline constexpr double kReservedTermHours = 8760;

// Spot: reclaims per hour alive, from the preemption traces (see docs).
inline constexpr double kSpotReclaimsPerHour = 0.47;
inline constexpr int64_t kDefaultCheckpointIntervalS = 1800;
inline constexpr int64_t kDefaultRestartOverheadS = 300;

// Latency: RTT ~ 2 x distance / (200 km/ms) + fixed.
inline constexpr double kFiberKmPerMs = 200;
inline constexpr double kFixedRttMs = 5;
inline constexpr double kDefaultLatencySloMs = 100;

// Egress where the catalog has no figure for a pair (cross-provider): internet
// egress, AWS's first-10-TB rate.
inline constexpr double kDefaultInternetEgressUsdPerGb = 0.09;

// A transformer's shape with every field filled.
struct ModelDims {
  double params = 0;  // parameters (not billions)
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int seq_len = 0;       // training sequence length or inference context
  int micro_batch = 1;   // training: sequences per GPU per step
  int batch = 1;         // inference: concurrent sequences
  int output_tokens = 0; // inference: generated tokens per request; 0 = unknown
  // training: tokens per optimizer step (work.global_batch_tokens)
  double global_batch_tokens = kGlobalBatchTokens;
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

// FLOPs of one forward pass per token. The weights' matmuls are 2 x params
// (Kaplan et al. 2020); attention's own matmuls, the scores Q K^T and their
// weighted sum of V, are 2 x 2 x context x hidden per layer: a token's query
// against the whole context, counted without halving for a causal mask, as
// Megatron's formula (Narayanan et al. 2021, section 5.1: the s / 6h term) and
// PaLM's model FLOPs (Chowdhery et al. 2022, appendix B: 12 x L x H x Q x T
// trained) count them.
double ForwardFlopsPerToken(const ModelDims& d, double context);
// Trained FLOPs per token at the training context: forward + backward (twice
// the forward) = 3 forward passes, 4 with full recomputation (one more
// forward): 6 x P + 12 x L x s x h, or 8 x P + 16 x L x s x h.
double TrainingFlopsPerToken(const ModelDims& d, bool recompute);

// Memory-bound element-wise kernels (Ivanov et al. 2021, "Data Movement Is All
// You Need", MLSys: normalizations and element-wise operators, outside the
// matmuls) read and write HBM: per token and layer of a pre-norm LLaMA layer,
// in hidden-sized values, with fused kernels (a norm, a rotary, a SwiGLU, a
// residual add each one pass), FFN width f = 8h/3:
//   forward   2 norms 2 x (h in + h out) + rotary of q, k (2h in + 2h out) +
//             SwiGLU (2f in + f out = 8h) + 2 residual adds 2 x (2h in + h out)
//             = 4 + 4 + 8 + 6 = 22 h
//   backward  2 norms 2 x (dy, x in + dx out = 3h) + rotary 4h + SwiGLU (dy,
//             gate, up in + dgate, dup out = 5f = 40h/3) + 2 gradient adds 2 x 3h
//             = 6 + 4 + 40/3 + 6 = 88/3 h
// Full recomputation runs the forward kernels once more.
inline constexpr double kElementwiseValuesForward = 22;
inline constexpr double kElementwiseValuesBackward = 88.0 / 3;
// Element-wise bytes moved per trained token over all layers: L x h x v x
// (22 + 88/3), or (2 x 22 + 88/3) with full recomputation; v = bytes per value.
double ElementwiseBytesPerToken(const ModelDims& d, bool recompute, double bytes_per_value);

// The job with the estimator's defaults applied.
struct ResolvedJob {
  JobSpec spec;
  Precision precision = Precision::kBf16;
  std::optional<ModelDims> dims;  // set when model.params_b is known
  std::vector<Assumption> assumptions;
};

// The default compute precision of a workload kind.
Precision DefaultPrecision(WorkloadKind kind);

// A plausible shape for `params` parameters where layers/hidden are missing:
// params ~ 12 x layers x hidden^2 with hidden = 128 x layers (Llama-2 7B/13B
// proportions), so layers = cbrt(params / 196608), hidden = 128 x layers.
ModelDims ShapeFromParams(double params);

// Fills the defaults and lists them as assumptions.
ResolvedJob Resolve(const JobSpec& job);

// Whether the kind trains (training memory model, three forward passes a token).
bool TrainsWeights(WorkloadKind kind);
bool IsInference(WorkloadKind kind);

// "1.04e+11", "7e9": compact numbers for the arithmetic strings.
std::string Sci(double v);
// Fixed with `digits` decimals: "104.3".
std::string Fixed(double v, int digits);

}  // namespace meridian::estimate
