// How a training or fine-tuning job is laid out over its GPUs, and what one
// optimizer step costs in compute and communication (Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", sections 2-3; Rajbhandari et al. 2020, "ZeRO", section 7).
//
// A layout splits N GPUs as t x p x d: tensor parallelism t within a node
// (t divides the node's GPUs and the heads), p pipeline stages, d data-parallel
// replicas whose model state is sharded ZeRO-1 (optimizer only) or ZeRO-3
// (everything). Ranks are placed tensor-innermost, then data, then pipeline,
// so a data-parallel group crosses nodes only when t x d exceeds a node.
//
// One step is one global batch of B sequences: m = B / (d x b) micro-batches
// of b sequences per pipeline. Per GPU, with bus bandwidths `bw` (one
// direction of the link, x kLinkEfficiency):
//
//   compute   F x B x s / (N x peak x efficiency)   F = TrainingFlopsPerToken: 6P + 12Lsh, 8P + 16Lsh recomputed
//             + E x B x s / (N x HBM bandwidth x kMemoryBandwidthEfficiency)
//             E = ElementwiseBytesPerToken (split over t by sequence parallelism)
//   bubble    compute x (p - 1) / (k m)              (fraction (p-1)/(km+p-1) of the pipeline)
//   tensor    m x L/p x 4 all-reduces (6 recomputed) x 2(t-1)/t x s b h v / bw_tp
//   pipeline  2 x k x m x s b h v / bw_pp             (point to point, p > 1)
//   data      ZeRO-1: 2(d-1)/d x P v / (t p) / bw_dp once per step (ring all-reduce)
//             ZeRO-3: m x 3 x (d-1)/d x P v / (t p) / bw_dp (two all-gathers and
//                     a reduce-scatter per micro-batch)
//   step      compute + bubble + tensor + pipeline + max(0, data - window)
//   window    ZeRO-3: kDataParallelOverlap x compute (every micro-batch's backward)
//             ZeRO-1: kDataParallelOverlap x compute / m (the last micro-batch's backward)
//
// (v = bytes per value at the job's precision; k = model chunks per stage,
// 1 unless interleaved, below.) Tensor-parallel all-reduces
// and pipeline sends sit on the critical path; data-parallel traffic overlaps
// the backward compute that produces it: ZeRO-3's per micro-batch, ZeRO-1's
// gradients only once accumulation ends, in the step's last micro-batch.
//
// Interleaved schedule (Narayanan et al. 2021, section 2.2.2): each stage holds
// k model chunks of L/(p k) layers, and a micro-batch passes every stage k
// times, so the bubble divides by k and the sends multiply by it. Megatron's
// schedule needs m a multiple of p. The first stage then holds activations of
// 2(p-1) + (k-1)p + 1 chunks in flight, L (1 + (p-1)/(p k)) layers' worth
// (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", section 4.2.3), not L.
//
// Memory per GPU of a layout (sequence parallelism splits activations by t;
// the first pipeline stage holds p micro-batches of L/p layers, L layers'
// worth, x (1 + (p-1)/(p k)) interleaved):
//   ZeRO-1  2 v P / (t p) + (16 - 2v) P / N + activations / t + overhead
//   ZeRO-3  16 P / N + activations / t + overhead
//
// Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "estimate/defaults.h"

namespace meridian::estimate {

// How the GPUs of a run reach each other.
struct Interconnect {
  int gpus_per_node = kGpusPerNode;  // GPUs that share the intra-node link and a node's network
  double intra_gbyte_per_s = kUnknownIntraNodeGbytePerS;  // per GPU, bidirectional, as stated
  double inter_gbit_per_s = kUnknownNetworkGbitPerS;      // per node
  std::string intra_name;            // "NVLink 4 (NVSwitch)"
  std::string inter_name;            // "EFA 3200 Gbit/s"
};

// The interconnect `gpu` is estimated on before an offering is chosen: nodes of
// kGpusPerNode GPUs over the model's own link, linked by the fastest network the
// catalog documents for an instance type of the model (the instance built for
// gangs); an instance type with a slower one is judged on its own in `plan`.
// A catalog without interconnect data gets kUnknown* figures.
Interconnect ReferenceInterconnect(const catalog::GpuModel& gpu, const catalog::Catalog& catalog);

// `base` with the node size, intra-node link and network of instance type `o`.
Interconnect OfferingInterconnect(const Interconnect& base, const catalog::Offering& o);

// Bus bandwidth per GPU in bytes/s: one direction of the intra-node link, or
// the node's network shared by its GPUs; x kLinkEfficiency.
double IntraNodeBusBytesPerS(const Interconnect& net);
double InterNodeBusBytesPerS(const Interconnect& net);

struct Layout {
  LayoutShape Shape() const { return {tensor, pipeline, data, zero}; }
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  ZeroStage zero = ZeroStage::kThree;
  int micro_batches = 1;      // m per step
  int global_batch = 1;       // B sequences per step
  double memory_gib = 0;      // per GPU
  int chunks = 1;             // k: model chunks per pipeline stage (interleaved when > 1)
  // "TP 8 x PP 1 x DP 4 (ZeRO-1)"; "TP 8 x PP 16 (4 chunks each) x DP 64 (ZeRO-1)"
  std::string Describe() const;
};

// Seconds of one step, per GPU; see the header comment.
struct StepCost {
  double compute_s = 0;
  double bubble_s = 0;
  double tensor_s = 0;
  double pipeline_s = 0;
  double data_s = 0;          // all of it
  double data_exposed_s = 0;  // what the overlap leaves
  double total_s = 0;
  double CommunicationShare() const;  // (tensor + pipeline + exposed data) / total
};

struct LayoutQuery {
  int gpus = 1;
  int micro_batch = 1;
  bool recompute = false;
  double usable_gib = 0;  // per GPU; 0: memory not checked (a stated need)
  double peak_flops = 0;  // per GPU, dense peak x efficiency, FLOP/s
  // per GPU, HBM bandwidth x kMemoryBandwidthEfficiency, B/s, for the
  // element-wise kernels; 0: not charged (work stated as FLOPs or GPU-hours)
  double memory_bytes_per_s = 0;
  double bytes_per_value = 2;
  // A count above the fitted one: keep this shape's t and ZeRO stage, with at
  // least its p and d; a free choice where no such layout exists.
  std::optional<LayoutShape> keep;
};

struct LayoutChoice {
  Layout layout;
  StepCost step;
  double Slowdown() const { return step.total_s / step.compute_s; }  // >= 1
  std::string arithmetic;
};

// The fastest layout of `d` on `q.gpus` GPUs over `net` that fits q.usable_gib;
// ties keep the smaller t, then the smaller p, then fewer chunks, then ZeRO-1. ZeRO-3 data
// parallelism (t = p = 1) is always a candidate, so memory.h's fit implies one.
// With q.keep, only layouts that keep its t and ZeRO stage with p' >= p and
// d' >= d: more GPUs then add pipeline stages or replicas, and neither lowers
// GPU-hours (a longer pipeline has a larger bubble and more sends; a larger
// data ring moves more and has less compute per GPU to hide behind, over a
// link never faster than before).
LayoutChoice ChooseLayout(const ModelDims& d, const LayoutQuery& q, const Interconnect& net);

// The step cost of one given layout (tests; the arithmetic shows it).
StepCost CostOf(const ModelDims& d, const LayoutQuery& q, const Interconnect& net,
                const Layout& layout);

// Global batch of a step: d.global_batch_tokens (work.global_batch_tokens, or
// kGlobalBatchTokens) / seq_len sequences, rounded up to a whole number of
// micro-batches on each of `replicas` replicas.
int GlobalBatch(const ModelDims& d, int replicas, int micro_batch);

// Seconds of the tensor-parallel all-reduces of inference on `gpus` GPUs for
// `tokens` tokens: 2 per layer of hidden values per token (Megatron's
// attention and MLP outputs), ring 2(t-1)/t over the intra-node link within a
// node, the network across nodes. Latency per collective is not counted.
double InferenceAllReduceSeconds(const ModelDims& d, double tokens, int gpus,
                                 double bytes_per_value, const Interconnect& net);

}  // namespace meridian::estimate
