#include "estimate/parallelism.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "estimate/memory.h"

namespace meridian::estimate {

Interconnect ReferenceInterconnect(const catalog::GpuModel& gpu, const catalog::Catalog& catalog) {
  Interconnect net;
  net.intra_gbyte_per_s =
      gpu.intra_node_gbyte_per_s > 0 ? gpu.intra_node_gbyte_per_s : kUnknownIntraNodeGbytePerS;
  net.intra_name = gpu.intra_node_link.empty() ? "link unknown" : gpu.intra_node_link;
  const catalog::Offering* best = nullptr;
  for (const auto& o : catalog.offerings()) {
    if (o.gpu_model != gpu.name || o.network_gbit_per_s <= 0) continue;
    if (!best || o.network_gbit_per_s > best->network_gbit_per_s) best = &o;
  }
  net.inter_gbit_per_s = best ? best->network_gbit_per_s : kUnknownNetworkGbitPerS;
  net.inter_name = best ? std::string(catalog::ToString(best->network_kind)) + " " +
                              Fixed(best->network_gbit_per_s, 0) + " Gbit/s"
                        : "network unknown, " + Fixed(kUnknownNetworkGbitPerS, 0) + " Gbit/s";
  return net;
}

Interconnect OfferingInterconnect(const Interconnect& base, const catalog::Offering& o) {
  Interconnect net = base;
  net.gpus_per_node = std::max(1, o.gpu_count);
  if (o.intra_node_gbyte_per_s > 0) {
    net.intra_gbyte_per_s = o.intra_node_gbyte_per_s;
    net.intra_name = o.intra_node_link;
  }
  if (o.network_gbit_per_s > 0) {
    net.inter_gbit_per_s = o.network_gbit_per_s;
    net.inter_name = std::string(catalog::ToString(o.network_kind)) + " " +
                     Fixed(o.network_gbit_per_s, 0) + " Gbit/s" +
                     (o.network_fallback ? " (fallback)" : "");
  }
  return net;
}

double IntraNodeBusBytesPerS(const Interconnect& net) {
  return net.intra_gbyte_per_s / 2 * kBytesPerGB * kLinkEfficiency;
}

double InterNodeBusBytesPerS(const Interconnect& net) {
  return net.inter_gbit_per_s / 8 * kBytesPerGB / std::max(1, net.gpus_per_node) *
         kLinkEfficiency;
}

std::string Layout::Describe() const {
  std::string zero_stage = data == 1 ? "" : zero == ZeroStage::kOne ? " (ZeRO-1)" : " (ZeRO-3)";
  std::string interleaved = chunks > 1 ? " (" + std::to_string(chunks) + " chunks each)" : "";
  return "TP " + std::to_string(tensor) + " x PP " + std::to_string(pipeline) + interleaved +
         " x DP " + std::to_string(data) + zero_stage;
}

double StepCost::CommunicationShare() const {
  return total_s > 0 ? (tensor_s + pipeline_s + data_exposed_s) / total_s : 0;
}

int GlobalBatch(const ModelDims& d, int replicas, int micro_batch) {
  const double per_step = static_cast<double>(replicas) * micro_batch;
  const double wanted = d.global_batch_tokens / std::max(1, d.seq_len);
  return static_cast<int>(std::max(1.0, std::ceil(wanted / per_step)) * per_step);
}

namespace {

double Ring(int n) { return n > 1 ? 2.0 * (n - 1) / n : 0; }

// The first stage's activations in flight, in L layers' worth: 1 for the
// 1F1B schedule (p micro-batches of L/p layers), 1 + (p-1)/(p k) interleaved
// (Korthikanti et al. 2022, section 4.2.3).
double InterleavedActivationFactor(const Layout& l) {
  if (l.chunks <= 1) return 1;
  return 1 + (l.pipeline - 1.0) / (static_cast<double>(l.pipeline) * l.chunks);
}

// GPUs of one node the layout's groups occupy before crossing to the next.
bool DataCrossesNodes(const Layout& l, const Interconnect& net) {
  return l.tensor * l.data > net.gpus_per_node;
}

double LayoutMemoryGib(const ModelDims& d, const LayoutQuery& q, const Layout& l) {
  const double n = static_cast<double>(l.tensor) * l.pipeline * l.data;
  const double v = q.bytes_per_value;
  const double state = l.zero == ZeroStage::kThree
                           ? kTrainingBytesPerParam * d.params / n
                           : 2 * v * d.params / (l.tensor * l.pipeline) +
                                 (kTrainingBytesPerParam - 2 * v) * d.params / n;
  ModelDims mb = d;
  mb.micro_batch = q.micro_batch;
  // L layers' worth of stored activations (each layer's input with
  // recomputation, + one layer's working set); more in flight interleaved.
  const double stored = q.recompute ? RecomputedActivationBytes(mb) - ActivationBytes(mb) / d.layers
                                    : ActivationBytes(mb);
  const double working = q.recompute ? ActivationBytes(mb) / d.layers : 0;
  const double act = stored * InterleavedActivationFactor(l) + working;
  return (state + act / l.tensor) / kBytesPerGiB + kCudaOverheadGib;
}

// Compute that data-parallel traffic hides behind: ZeRO-3 moves each
// micro-batch's parameters and gradients while it computes, so the backward of
// every micro-batch; ZeRO-1's gradients are complete, and reduced, only in the
// backward of the step's last micro-batch (gradient accumulation).
double DataOverlapWindow(const Layout& l, double compute_s) {
  const double backward = kDataParallelOverlap * compute_s;
  return l.zero == ZeroStage::kThree ? backward : backward / std::max(1, l.micro_batches);
}

}  // namespace

StepCost CostOf(const ModelDims& d, const LayoutQuery& q, const Interconnect& net,
                const Layout& l) {
  StepCost c;
  const int n = l.tensor * l.pipeline * l.data;
  const double m = l.micro_batches;
  const double flops = TrainingFlopsPerToken(d, q.recompute) * l.global_batch * d.seq_len;
  c.compute_s = flops / (n * q.peak_flops);
  if (q.memory_bytes_per_s > 0) {
    const double bytes =
        ElementwiseBytesPerToken(d, q.recompute, q.bytes_per_value) * l.global_batch * d.seq_len;
    c.compute_s += bytes / (n * q.memory_bytes_per_s);
  }
  const double k = std::max(1, l.chunks);
  c.bubble_s = c.compute_s * (l.pipeline - 1) / (k * m);
  const double intra = IntraNodeBusBytesPerS(net);
  const double inter = InterNodeBusBytesPerS(net);
  const double act_bytes =
      static_cast<double>(d.seq_len) * q.micro_batch * d.hidden * q.bytes_per_value;
  const double all_reduces = q.recompute ? 6 : 4;
  c.tensor_s = m * d.layers / l.pipeline * all_reduces * Ring(l.tensor) * act_bytes / intra;
  if (l.pipeline > 1) {
    c.pipeline_s = 2 * k * m * act_bytes / (n > net.gpus_per_node ? inter : intra);
  }
  const double shard_bytes = d.params * q.bytes_per_value / (l.tensor * l.pipeline);
  const double bw_dp = DataCrossesNodes(l, net) ? inter : intra;
  const double gather = l.data > 1 ? (l.data - 1.0) / l.data : 0;
  c.data_s = l.zero == ZeroStage::kOne ? 2 * gather * shard_bytes / bw_dp
                                       : m * 3 * gather * shard_bytes / bw_dp;
  c.data_exposed_s = std::max(0.0, c.data_s - DataOverlapWindow(l, c.compute_s));
  c.total_s = c.compute_s + c.bubble_s + c.tensor_s + c.pipeline_s + c.data_exposed_s;
  return c;
}

namespace {

// Model chunks per stage worth trying for layout `one` (one chunk, ZeRO-1):
// 1, and where an interleaved schedule applies (m a multiple of p, every chunk
// a layer: p k <= L) the power of two where doubling stops paying. Only the
// bubble (bubble_1 / k) and the sends (k x sends_1) change with k, so the
// step is convex in k and least at the first k where bubble_1 / 2k, what the
// next doubling saves, is no more than k x sends_1, what it adds. A larger k
// holds fewer activations: where that k does not fit, the doublings up to
// the first that does are tried too.
std::vector<int> ChunkCounts(const ModelDims& d, const LayoutQuery& q, const Interconnect& net,
                             Layout one) {
  std::vector<int> out = {1};
  const int p = one.pipeline;
  if (p <= 1 || one.micro_batches % p != 0) return out;
  const StepCost c = CostOf(d, q, net, one);
  int k = 1;
  while (2 * k * p <= d.layers && c.bubble_s / (2 * k) > k * c.pipeline_s) k *= 2;
  for (; k > 1; k *= 2) {
    out.push_back(k);
    one.chunks = k;
    const bool fits = q.usable_gib <= 0 || LayoutMemoryGib(d, q, one) <= q.usable_gib;
    if (fits || 2 * k * p > d.layers) break;
  }
  return out;
}

std::vector<Layout> Candidates(const ModelDims& d, const LayoutQuery& q, const Interconnect& net) {
  std::vector<Layout> out;
  const int n = q.gpus;
  for (int t = 1; t <= std::min(n, net.gpus_per_node); t *= 2) {
    if (net.gpus_per_node % t != 0 || n % t != 0 || (d.heads > 0 && d.heads % t != 0)) continue;
    for (int p = 1; p <= std::min(n / t, d.layers); p *= 2) {
      if (n % (t * p) != 0) continue;
      const int dp = n / (t * p);
      Layout one{t, p, dp, ZeroStage::kOne};
      one.global_batch = GlobalBatch(d, dp, q.micro_batch);
      one.micro_batches = one.global_batch / (dp * q.micro_batch);
      for (int k : ChunkCounts(d, q, net, one)) {
        for (ZeroStage z : {ZeroStage::kOne, ZeroStage::kThree}) {
          if (dp == 1 && z == ZeroStage::kThree) continue;  // nothing to shard: same as ZeRO-1
          Layout l = one;
          l.zero = z;
          l.chunks = k;
          l.memory_gib = LayoutMemoryGib(d, q, l);
          const bool plain = t == 1 && p == 1 && (z == ZeroStage::kThree || dp == 1);
          if (q.usable_gib > 0 && l.memory_gib > q.usable_gib && !plain) continue;
          out.push_back(l);
        }
      }
    }
  }
  return out;
}

std::string StepArithmetic(const ModelDims& d, const LayoutQuery& q, const Layout& l,
                           const StepCost& c) {
  std::string s = l.Describe() + ", " + Fixed(l.memory_gib, 1) + " GiB per GPU; step of " +
                  std::to_string(l.global_batch) + " x " + std::to_string(d.seq_len) +
                  " tokens (" + std::to_string(l.micro_batches) + " micro-batches of " +
                  std::to_string(q.micro_batch) + "): compute " + Fixed(c.compute_s, 3) + " s";
  if (c.bubble_s > 0) {
    s += " + bubble (" + std::to_string(l.pipeline - 1) + " / " +
         std::to_string(l.chunks * l.micro_batches + l.pipeline - 1) + ") " +
         Fixed(c.bubble_s, 3) + " s";
  }
  if (c.tensor_s > 0) s += " + tensor all-reduce " + Fixed(c.tensor_s, 3) + " s";
  if (c.pipeline_s > 0) s += " + pipeline sends " + Fixed(c.pipeline_s, 3) + " s";
  if (c.data_s > 0) {
    const std::string window =
        l.zero == ZeroStage::kThree || l.micro_batches == 1
            ? Fixed(kDataParallelOverlap, 2) + " x compute"
            : Fixed(kDataParallelOverlap, 2) + " x compute / " + std::to_string(l.micro_batches) +
                  " (the last micro-batch's backward)";
    s += " + data " + Fixed(c.data_s, 3) + " s less " + window + " overlapped = " +
         Fixed(c.data_exposed_s, 3) + " s";
  }
  return s + " = " + Fixed(c.total_s, 3) + " s per step, communication " +
         Fixed(100 * c.CommunicationShare(), 1) + "%";
}

bool Keeps(const Layout& l, const LayoutShape& s) {
  return l.tensor == s.tensor && l.pipeline >= s.pipeline && l.data >= s.data &&
         (l.data == 1 || s.data == 1 || l.zero == s.zero);
}

}  // namespace

LayoutChoice ChooseLayout(const ModelDims& d, const LayoutQuery& q, const Interconnect& net) {
  std::vector<Layout> candidates = Candidates(d, q, net);
  if (q.keep) {
    std::vector<Layout> kept;
    for (const Layout& l : candidates) {
      if (Keeps(l, *q.keep)) kept.push_back(l);
    }
    if (!kept.empty()) candidates = std::move(kept);
  }
  LayoutChoice best;
  bool any = false;
  for (const Layout& l : candidates) {
    StepCost c = CostOf(d, q, net, l);
    // Per token: layouts differ in their global batch by the rounding only.
    const double per_token = c.total_s / l.global_batch;
    const double best_per_token = any ? best.step.total_s / best.layout.global_batch : 0;
    if (!any || per_token < best_per_token) {
      best = {l, c, ""};
      any = true;
    }
  }
  best.arithmetic = StepArithmetic(d, q, best.layout, best.step);
  return best;
}

double InferenceAllReduceSeconds(const ModelDims& d, double tokens, int gpus,
                                 double bytes_per_value, const Interconnect& net) {
  if (gpus <= 1) return 0;
  const double bw = gpus > net.gpus_per_node ? InterNodeBusBytesPerS(net)
                                             : IntraNodeBusBytesPerS(net);
  return 2.0 * d.layers * Ring(gpus) * tokens * d.hidden * bytes_per_value / bw;
}

}  // namespace meridian::estimate
