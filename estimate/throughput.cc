#include "estimate/throughput.h"

#include <algorithm>

#include "estimate/memory.h"

namespace meridian::estimate {

double DefaultEfficiency(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kScientific: return 0.70;
    case WorkloadKind::kDataScience:
    case WorkloadKind::kRendering: return 0.50;
    default: return 0.75;
  }
}

Efficiency ComputeEfficiency(const catalog::GpuModel& gpu, Precision p, WorkloadKind kind) {
  bool half = p == Precision::kBf16 || p == Precision::kFp16;
  if (half && gpu.matmul_efficiency) return {*gpu.matmul_efficiency, true};
  return {DefaultEfficiency(kind), false};
}

double EffectiveTflops(const catalog::GpuModel& gpu, Precision p, WorkloadKind kind) {
  std::optional<double> peak = gpu.PeakTflops(p);
  if (!peak) return 0;
  return *peak * ComputeEfficiency(gpu, p, kind).value;
}

bool BandwidthLimited(WorkloadKind kind) {
  return kind == WorkloadKind::kRendering || kind == WorkloadKind::kBatchInference ||
         kind == WorkloadKind::kRealtimeInference;
}

namespace {

// The hidden size the efficiency is scaled by: the model's, where the job
// trains or serves a transformer of known shape; else 0 (the flat figure).
int EfficiencyHidden(const ResolvedJob& job) {
  if (!job.dims) return 0;
  if (!TrainsWeights(job.spec.kind) && !IsInference(job.spec.kind)) return 0;
  return job.dims->hidden;
}

// The share of the best-shape efficiency the job's model reaches on `gpu`:
// h / (h + h0), or 1 without a model width.
// h0 is the catalog's (GpuModel::matmul_half_width, docs/estimator.md
// section 3); a hand-built catalog without one keeps the flat figure.
double WidthShare(const catalog::GpuModel& gpu, const ResolvedJob& job) {
  const int hidden = EfficiencyHidden(job);
  if (hidden <= 0 || gpu.matmul_half_width <= 0) return 1;
  return static_cast<double>(hidden) / (hidden + gpu.matmul_half_width);
}

// ComputeEfficiency at the job's model width: best x h / (h + h0).
double EfficiencyAtWidth(const catalog::GpuModel& gpu, Precision p, const ResolvedJob& job) {
  return ComputeEfficiency(gpu, p, job.spec.kind).value * WidthShare(gpu, job);
}

// "efficiency 0.803 x 4096 / (4096 + 2177) = 0.524; " where the model's width
// scales it, else empty.
std::string EfficiencyArithmetic(const catalog::GpuModel& gpu, const ResolvedJob& job) {
  const int hidden = EfficiencyHidden(job);
  if (hidden <= 0 || gpu.matmul_half_width <= 0) return "";
  const std::string h = std::to_string(hidden);
  return "efficiency " + Fixed(ComputeEfficiency(gpu, job.precision, job.spec.kind).value, 3) +
         " x " + h + " / (" + h + " + " + std::to_string(gpu.matmul_half_width) + ") = " +
         Fixed(EfficiencyAtWidth(gpu, job.precision, job), 3) + "; ";
}

// Effective TFLOPS of one GPU for `job`: peak at `p` x the efficiency at its
// model's width; 0 when `p` is not native.
double EffectiveTflopsAtWidth(const catalog::GpuModel& gpu, Precision p, const ResolvedJob& job) {
  std::optional<double> peak = gpu.PeakTflops(p);
  if (!peak) return 0;
  return *peak * EfficiencyAtWidth(gpu, p, job);
}

Status NotNative(const catalog::GpuModel& gpu, Precision p) {
  return Status::Unresolvable(std::string(ToString(p)) + " is not supported natively on " +
                              gpu.name);
}

struct Timing {
  double seconds = 0;
  std::string bound;
  std::string arithmetic;
  double model_flops = 0;  // 3 or 1 forward passes (ForwardFlopsPerToken) or the stated FLOPs; 0 when not counted
  std::string layout;
  double communication_share = 0;
  std::optional<LayoutShape> shape;
};

// F FLOP over `gpus` GPUs: "4.2e19 FLOP / (1 x 989 TFLOPS x 0.803) = 52886 s".
Timing ComputeTime(double flops, const ThroughputEstimate& t, int gpus) {
  double rate = gpus * t.peak_tflops_per_gpu * 1e12 * t.efficiency;
  Timing out;
  out.seconds = flops / rate;
  out.bound = "compute";
  out.arithmetic = Sci(flops) + " FLOP / (" + std::to_string(gpus) + " x " +
                   Fixed(t.peak_tflops_per_gpu, 1) + " TFLOPS x " + Fixed(t.efficiency, 3) +
                   ") = " + Fixed(out.seconds, 0) + " s";
  return out;
}

// Stated FLOPs: compute-bound, or with work.arithmetic_intensity the roofline:
// the larger of compute and the bytes it moves (FLOPs / intensity) over memory
// bandwidth x kMemoryBandwidthEfficiency (Williams, Waterman and Patterson
// 2009, "Roofline").
Timing FlopsTime(const Work& w, const catalog::GpuModel& gpu, const ThroughputEstimate& t,
                 int gpus) {
  Timing c = ComputeTime(w.flops, t, gpus);
  c.model_flops = w.flops;
  if (!w.arithmetic_intensity) return c;
  const double bytes = w.flops / *w.arithmetic_intensity;
  const double mem_s =
      bytes / (gpus * gpu.memory_bandwidth_gbps * kBytesPerGB * kMemoryBandwidthEfficiency);
  c.arithmetic = "compute " + c.arithmetic + "; memory " + Sci(w.flops) + " FLOP / " +
                 Fixed(*w.arithmetic_intensity, 2) + " FLOP/B = " + Sci(bytes) + " B / (" +
                 std::to_string(gpus) + " x " + Fixed(gpu.memory_bandwidth_gbps, 0) + " GB/s x " +
                 Fixed(kMemoryBandwidthEfficiency, 2) + ") = " + Fixed(mem_s, 0) + " s";
  if (mem_s > c.seconds) {
    c.seconds = mem_s;
    c.bound = "memory-bandwidth";
  }
  return c;
}

// Tensor-parallel all-reduces of inference on top of `timing`.
void AddInferenceAllReduce(const ResolvedJob& job, double tokens, int gpus,
                           const Interconnect& net, const char* phase, Timing* timing,
                           double* comm_s) {
  if (gpus <= 1) return;
  double s = InferenceAllReduceSeconds(*job.dims, tokens, gpus, BytesPerValue(job.precision), net);
  *comm_s += s;
  timing->arithmetic += "; " + std::string(phase) + " tensor all-reduce 2 x " +
                        std::to_string(job.dims->layers) + " layers x 2(" + std::to_string(gpus) +
                        "-1)/" + std::to_string(gpus) + " x " + Sci(tokens) + " tokens x " +
                        std::to_string(job.dims->hidden) + " x " +
                        Fixed(BytesPerValue(job.precision), 0) + " B / " +
                        Fixed((gpus > net.gpus_per_node ? InterNodeBusBytesPerS(net)
                                                        : IntraNodeBusBytesPerS(net)) /
                                  kBytesPerGB,
                              1) +
                        " GB/s = " + Fixed(s, 0) + " s";
}

// Inference: prefill (compute) + decode max(compute, bytes read / bandwidth),
// each + its tensor-parallel all-reduces.
Timing InferenceTime(const ResolvedJob& job, const catalog::GpuModel& gpu,
                     const ThroughputEstimate& t, const ThroughputQuery& q) {
  const ModelDims& d = *job.dims;
  const int gpus = q.gpus;
  double tokens = job.spec.work.tokens;
  Timing out;
  double prefill_s = 0;
  double comm_s = 0;
  out.model_flops = 2 * d.params * tokens;
  if (d.output_tokens > 0 && d.seq_len > d.output_tokens) {
    const int prompt_len = d.seq_len - d.output_tokens;
    double prompt = tokens / d.output_tokens * prompt_len;
    const double prompt_flops = ForwardFlopsPerToken(d, prompt_len) * prompt;
    Timing p = ComputeTime(prompt_flops, t, gpus);
    prefill_s = p.seconds;
    out.model_flops += prompt_flops;
    out.arithmetic = "prefill (2 x " + Sci(d.params) + " + 4 x " + std::to_string(d.layers) +
                     " x " + std::to_string(prompt_len) + " x " + std::to_string(d.hidden) +
                     " attention) x " + Sci(prompt) + " = " + p.arithmetic;
    AddInferenceAllReduce(job, prompt, gpus, q.net, "prefill", &out, &comm_s);
    out.arithmetic += "; ";
  }
  Timing c = ComputeTime(2 * d.params * tokens, t, gpus);
  double bytes_per_step =
      d.params * BytesPerValue(job.precision) + KvCacheBytes(d, job.precision) / 2;
  double steps = tokens / d.batch;
  double bw = gpus * gpu.memory_bandwidth_gbps * kBytesPerGB * kMemoryBandwidthEfficiency;
  double mem_s = steps * bytes_per_step / bw;
  out.arithmetic += "decode compute 2 x " + Sci(d.params) + " x " + Sci(tokens) + " = " +
                    c.arithmetic + "; decode memory " + Sci(steps) + " steps x " +
                    Sci(bytes_per_step) + " B (weights + half the KV cache) / (" +
                    std::to_string(gpus) + " x " + Fixed(gpu.memory_bandwidth_gbps, 0) +
                    " GB/s x " + Fixed(kMemoryBandwidthEfficiency, 2) + ") = " +
                    Fixed(mem_s, 0) + " s";
  AddInferenceAllReduce(job, tokens, gpus, q.net, "decode", &out, &comm_s);
  out.bound = mem_s > c.seconds ? "memory-bandwidth" : "compute";
  out.seconds = prefill_s + std::max(mem_s, c.seconds) + comm_s;
  if (gpus > 1) {
    out.layout = "TP " + std::to_string(gpus);
    out.communication_share = comm_s / out.seconds;
  }
  return out;
}

// One GPU's achievable HBM bandwidth, B/s.
double MemoryBytesPerS(const catalog::GpuModel& gpu) {
  return gpu.memory_bandwidth_gbps * kBytesPerGB * kMemoryBandwidthEfficiency;
}

// The run on q.gpus GPUs in its fastest parallel layout: `timing` (compute on
// q.gpus GPUs) x the layout's step time over its compute time. A kind that
// does not train, or a job without a shape, has no layout: its GPUs share the
// work with no communication counted, and a multi-GPU run says so.
// `elementwise`: the timing charges the element-wise kernels of trained tokens,
// so the layout's compute does too.
Timing WithLayout(const ResolvedJob& job, const catalog::GpuModel& gpu,
                  const ThroughputEstimate& t, const ThroughputQuery& q, Timing timing,
                  bool elementwise = false) {
  if (q.gpus <= 1) return timing;
  if (!job.dims || !TrainsWeights(job.spec.kind)) {
    timing.arithmetic += " (no model shape to lay out: communication not counted)";
    return timing;
  }
  LayoutQuery lq;
  lq.gpus = q.gpus;
  lq.micro_batch = q.micro_batch > 0 ? q.micro_batch : job.dims->micro_batch;
  lq.recompute = q.recompute == Recompute::kFull;
  lq.usable_gib = UsableGib(gpu, false);
  lq.peak_flops = t.peak_tflops_per_gpu * 1e12 * t.efficiency;
  if (elementwise) lq.memory_bytes_per_s = MemoryBytesPerS(gpu);
  lq.bytes_per_value = BytesPerValue(job.precision);
  lq.keep = q.keep;
  LayoutChoice choice = ChooseLayout(*job.dims, lq, q.net);
  timing.seconds *= choice.Slowdown();
  timing.layout = choice.layout.Describe();
  timing.shape = choice.layout.Shape();
  timing.communication_share = choice.step.CommunicationShare();
  timing.arithmetic += " x " + Fixed(choice.Slowdown(), 3) + " (" + choice.arithmetic + "; " +
                       q.net.intra_name + ", " + q.net.inter_name + ")";
  return timing;
}

// The element-wise kernels of trained tokens on top of `c`: bytes over the
// GPUs' HBM bandwidth (ElementwiseBytesPerToken, estimate/defaults.h).
void AddElementwise(const ModelDims& d, double tokens, bool recompute, double bytes_per_value,
                    const catalog::GpuModel& gpu, int gpus, Timing* c) {
  const double per_token = ElementwiseBytesPerToken(d, recompute, bytes_per_value);
  const double s = per_token * tokens / (gpus * MemoryBytesPerS(gpu));
  c->seconds += s;
  c->arithmetic += " + element-wise " + std::string(recompute ? "(2 x 22" : "(22") +
                   " + 88/3) x " + std::to_string(d.layers) + " x " + std::to_string(d.hidden) +
                   " x " + Fixed(bytes_per_value, 0) + " B x " + Sci(tokens) + " / (" +
                   std::to_string(gpus) + " x " + Fixed(gpu.memory_bandwidth_gbps, 0) +
                   " GB/s x " + Fixed(kMemoryBandwidthEfficiency, 2) + ") = " + Fixed(s, 0) +
                   " s";
}

bool Recomputes(const ResolvedJob& job, const ThroughputQuery& q) {
  return q.recompute == Recompute::kFull && TrainsWeights(job.spec.kind);
}

Result<Timing> TokensTime(const ResolvedJob& job, const catalog::GpuModel& gpu,
                          const ThroughputEstimate& t, const ThroughputQuery& q) {
  if (!job.dims) {
    return Status::Invalid("work.tokens: counting FLOPs needs model.params_b");
  }
  if (IsInference(job.spec.kind)) return InferenceTime(job, gpu, t, q);
  const ModelDims& d = *job.dims;
  const bool recompute = Recomputes(job, q);
  const bool trains = TrainsWeights(job.spec.kind);
  // Forward passes per token: forward + backward (2 forwards), + 1 recomputed.
  const int passes = trains ? (recompute ? 4 : 3) : 1;
  const double tokens = job.spec.work.tokens;
  Timing c = ComputeTime(passes * ForwardFlopsPerToken(d, d.seq_len) * tokens, t, q.gpus);
  c.arithmetic = "(" + Fixed(2.0 * passes, 0) + " x " + Sci(d.params) + " + " +
                 Fixed(4.0 * passes, 0) + " x " + std::to_string(d.layers) + " x " +
                 std::to_string(d.seq_len) + " x " + std::to_string(d.hidden) + " attention) x " +
                 Sci(tokens) + (recompute ? " (one more forward with recomputation)" : "") +
                 " = " + c.arithmetic;
  c.model_flops = (trains ? 3 : 1) * ForwardFlopsPerToken(d, d.seq_len) * tokens;
  if (!trains) return WithLayout(job, gpu, t, q, std::move(c));
  AddElementwise(d, tokens, recompute, BytesPerValue(job.precision), gpu, q.gpus, &c);
  return WithLayout(job, gpu, t, q, std::move(c), true);
}

Result<Timing> GpuHoursTime(const ResolvedJob& job, const catalog::GpuModel& gpu,
                            const catalog::Catalog& catalog, const ThroughputEstimate& t,
                            const ThroughputQuery& q) {
  const int gpus = q.gpus;
  const catalog::GpuModel* ref = catalog.FindGpu(job.spec.work.on_gpu);
  if (!ref) {
    return Status::Invalid("work.on_gpu: \"" + job.spec.work.on_gpu +
                           "\" is not a GPU model of the catalog");
  }
  Result<double> h = ConvertGpuHours(job.spec.work.gpu_hours, *ref, gpu, job.precision,
                                     job.spec.kind);
  if (!h.ok()) return h.status();
  // The best-shape ratio, moved to the model's width on both GPUs.
  if (!BandwidthLimited(job.spec.kind)) *h *= WidthShare(*ref, job) / WidthShare(gpu, job);
  Timing out;
  out.seconds = *h * 3600 / gpus;
  out.bound = BandwidthLimited(job.spec.kind) ? "memory-bandwidth" : "compute";
  std::string ratio =
      BandwidthLimited(job.spec.kind)
          ? Fixed(ref->memory_bandwidth_gbps, 0) + " / " + Fixed(gpu.memory_bandwidth_gbps, 0) +
                " GB/s"
          : Fixed(EffectiveTflopsAtWidth(*ref, job.precision, job), 1) + " / " +
                Fixed(EffectiveTflopsAtWidth(gpu, job.precision, job), 1) + " eff. TFLOPS";
  out.arithmetic = Fixed(job.spec.work.gpu_hours, 1) + " GPU-h on " + ref->name + " x " + ratio +
                   " = " + Fixed(*h, 1) + " GPU-h on " + gpu.name + " / " +
                   std::to_string(gpus) + " GPU(s)";
  return WithLayout(job, gpu, t, q, std::move(out));
}

// Stated FLOPs or GPU-hours with full recomputation: x 4/3 for the extra forward.
Result<Timing> WithRecompute(Result<Timing> timing) {
  if (!timing.ok()) return timing;
  timing->seconds *= kRecomputeComputeFactor;
  timing->arithmetic += " x " + Fixed(kRecomputeComputeFactor, 2) +
                        " (full recomputation: one more forward pass, 4 / 3)";
  return timing;
}

Result<Timing> WorkTime(const ResolvedJob& job, const catalog::GpuModel& gpu,
                        const catalog::Catalog& catalog, const ThroughputEstimate& t,
                        const ThroughputQuery& q) {
  const Work& w = job.spec.work;
  switch (w.form) {
    case Work::Form::kTokens: return TokensTime(job, gpu, t, q);
    case Work::Form::kFlops: {
      Timing c = WithLayout(job, gpu, t, q, FlopsTime(w, gpu, t, q.gpus));
      return Recomputes(job, q) ? WithRecompute(c) : c;
    }
    case Work::Form::kGpuHours: {
      Result<Timing> g = GpuHoursTime(job, gpu, catalog, t, q);
      return Recomputes(job, q) ? WithRecompute(std::move(g)) : g;
    }
    case Work::Form::kNone: break;
  }
  Timing out;
  out.seconds = w.duration_s ? static_cast<double>(*w.duration_s) : kDefaultServiceHours * 3600;
  out.bound = "stated";
  out.arithmetic = "no work to count: runs " + Fixed(out.seconds / 3600, 2) + " h" +
                   (w.duration_s ? " (work.duration)" : " (default, priced per hour)");
  return out;
}

}  // namespace

Result<double> ConvertGpuHours(double gpu_hours, const catalog::GpuModel& reference,
                               const catalog::GpuModel& target, Precision p,
                               WorkloadKind kind) {
  if (BandwidthLimited(kind)) {
    return gpu_hours * reference.memory_bandwidth_gbps / target.memory_bandwidth_gbps;
  }
  double ref = EffectiveTflops(reference, p, kind);
  double tgt = EffectiveTflops(target, p, kind);
  if (ref <= 0) {
    return Status::Invalid("work.on_gpu: reference " + reference.name + " has no native " +
                           std::string(ToString(p)) + " rate to convert gpu_hours from");
  }
  if (tgt <= 0) return NotNative(target, p);
  return gpu_hours * ref / tgt;
}

Result<ThroughputEstimate> EstimateThroughput(const ResolvedJob& job,
                                              const catalog::GpuModel& gpu,
                                              const catalog::Catalog& catalog,
                                              const ThroughputQuery& q) {
  std::optional<double> peak = gpu.PeakTflops(job.precision);
  if (!peak) return NotNative(gpu, job.precision);
  ThroughputEstimate t;
  t.precision = job.precision;
  t.peak_tflops_per_gpu = *peak;
  Efficiency e = ComputeEfficiency(gpu, job.precision, job.spec.kind);
  t.efficiency = EfficiencyAtWidth(gpu, job.precision, job);
  t.efficiency_measured = e.measured;
  Result<Timing> timing = WorkTime(job, gpu, catalog, t, q);
  if (!timing.ok()) return timing.status();
  t.bound = timing->bound;
  double slowdown = job.spec.work.form == Work::Form::kNone ? 1.0 : q.slowdown;
  t.run_hours = timing->seconds / 3600 * slowdown;
  t.arithmetic = EfficiencyArithmetic(gpu, job) + timing->arithmetic;
  t.layout = timing->layout;
  t.shape = timing->shape;
  t.communication_share = timing->communication_share;
  if (timing->model_flops > 0 && t.run_hours > 0) {
    t.mfu = timing->model_flops / (q.gpus * t.peak_tflops_per_gpu * 1e12 * t.run_hours * 3600);
  }
  if (slowdown != 1) t.arithmetic += " x " + Fixed(slowdown, 2) + " (smaller micro-batch)";
  t.arithmetic += " = " + Fixed(t.run_hours, 2) + " h";
  if (t.mfu > 0) t.arithmetic += ", MFU " + Fixed(100 * t.mfu, 1) + "%";
  return t;
}

}  // namespace meridian::estimate
