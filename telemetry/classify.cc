#include "telemetry/classify.h"

#include <cstdio>

namespace meridian::telemetry {

namespace {

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

class Decision {
 public:
  explicit Decision(const WindowFigures& w) { c_.figures = w; }
  // Records the comparison and returns whether it holds.
  bool AtLeast(const char* figure, double v, const char* threshold, double limit) {
    return Record(figure, v, v >= limit, ">=", "<", threshold, limit);
  }
  bool Below(const char* figure, double v, const char* threshold, double limit) {
    return Record(figure, v, v < limit, "<", ">=", threshold, limit);
  }
  Classification Done(JobClass k, std::string summary, Stall s = Stall::kNone) {
    c_.job_class = k;
    c_.stall = s;
    c_.summary = std::move(summary);
    return std::move(c_);
  }
  // Keeps only the last `n` comparisons (a rule that failed is not evidence).
  void Forget(size_t keep) { c_.evidence.resize(std::min(keep, c_.evidence.size())); }
  size_t mark() const { return c_.evidence.size(); }

 private:
  bool Record(const char* figure, double v, bool holds, const char* op, const char* not_op,
              const char* threshold, double limit) {
    c_.evidence.push_back({figure, v, holds ? op : not_op, threshold, limit});
    return holds;
  }
  Classification c_;
};

Classification ClassifyCpuJob(const WindowFigures& w, const Thresholds& t, Decision d) {
  if (d.AtLeast("iowait_frac", w.iowait_frac, "iowait_dominant_frac", t.iowait_dominant_frac)) {
    return d.Done(JobClass::kInputBound,
                  Fmt("no GPU figures; its processes wait on block I/O %.2f s per second", w.iowait_frac),
                  Stall::kIoWait);
  }
  if (d.Below("cpu_cores", w.cpu_cores, "cpu_idle_cores", t.cpu_idle_cores)) {
    return d.Done(JobClass::kIdle,
                  Fmt("no GPU figures; CPU %.2f cores, no I/O wait: stuck or sleeping", w.cpu_cores));
  }
  return d.Done(JobClass::kHealthy,
                Fmt("no GPU figures; CPU %.2f cores of %.0f", w.cpu_cores, w.cpu_capacity));
}

}  // namespace

std::string_view ToString(JobClass c) {
  switch (c) {
    case JobClass::kHealthy: return "healthy";
    case JobClass::kInputBound: return "input-bound";
    case JobClass::kMemoryBound: return "memory-bound";
    case JobClass::kIdle: return "idle";
    case JobClass::kUnknown: break;
  }
  return "unknown";
}

std::string_view ToString(Stall s) {
  switch (s) {
    case Stall::kCpuSaturated: return "cpu-saturated";
    case Stall::kIoWait: return "io-wait";
    case Stall::kCpuShort: return "cpu-short";
    case Stall::kCpuCompute: return "cpu-compute";
    case Stall::kNone: break;
  }
  return "none";
}

Classification Classify(const WindowFigures& w, const Thresholds& t) {
  Decision d(w);
  if (w.samples < t.min_samples || w.intervals == 0) {
    d.Below("samples", w.samples, "min_samples", t.min_samples);
    return d.Done(JobClass::kUnknown,
                  Fmt("%.0f samples, %.0f usable intervals in the window: too few to classify",
                      w.samples, w.intervals));
  }
  if (w.gpu_samples == 0) return ClassifyCpuJob(w, t, std::move(d));

  const double sm = w.gpu_sm_pct;
  if (Known(w.gpu_bw_pct)) {
    const size_t m = d.mark();
    if (d.AtLeast("gpu_mem_bw_pct", w.gpu_bw_pct, "mem_bound_bw_pct", t.mem_bound_bw_pct) &&
        d.Below("gpu_sm_pct", sm, "mem_bound_sm_below_pct", t.mem_bound_sm_below_pct)) {
      return d.Done(JobClass::kMemoryBound,
                    Fmt("memory bandwidth %.0f%% busy while SMs are %.0f%%", w.gpu_bw_pct, sm));
    }
    d.Forget(m);
  }
  if (d.AtLeast("gpu_sm_pct", sm, "gpu_busy_sm_pct", t.gpu_busy_sm_pct)) {
    return d.Done(JobClass::kHealthy, Fmt("GPU %.0f%% busy (%.0f%% of samples busy)", sm,
                                          100 * w.gpu_busy_share));
  }
  size_t m = d.mark();
  if (d.AtLeast("cpu_saturation", w.cpu_saturation, "cpu_saturated_frac", t.cpu_saturated_frac)) {
    return d.Done(JobClass::kInputBound,
                  Fmt("GPU %.0f%% busy while its CPUs are saturated: %.2f cores of %.0f", sm,
                      w.cpu_cores, w.cpu_capacity),
                  Stall::kCpuSaturated);
  }
  d.Forget(m);
  m = d.mark();
  if (d.AtLeast("iowait_frac", w.iowait_frac, "iowait_dominant_frac", t.iowait_dominant_frac)) {
    return d.Done(JobClass::kInputBound,
                  Fmt("GPU %.0f%% busy while its processes wait on block I/O %.2f s per second "
                      "(reading %.1f MB/s)",
                      sm, w.iowait_frac, w.read_mb_per_s),
                  Stall::kIoWait);
  }
  d.Forget(m);
  m = d.mark();
  if (d.AtLeast("run_delay_frac", w.run_delay_frac, "run_delay_frac", t.run_delay_frac)) {
    return d.Done(JobClass::kInputBound,
                  Fmt("GPU %.0f%% busy while its threads wait %.2f s per second for a CPU", sm,
                      w.run_delay_frac),
                  Stall::kCpuShort);
  }
  d.Forget(m);
  m = d.mark();
  if (d.Below("gpu_sm_pct", sm, "gpu_idle_sm_pct", t.gpu_idle_sm_pct)) {
    if (d.AtLeast("cpu_cores", w.cpu_cores, "cpu_active_cores", t.cpu_active_cores)) {
      return d.Done(JobClass::kInputBound,
                    Fmt("GPU %.0f%% busy while the job computes on %.2f CPU cores", sm, w.cpu_cores),
                    Stall::kCpuCompute);
    }
    return d.Done(JobClass::kIdle,
                  Fmt("GPU %.0f%% busy, CPU %.2f cores, no I/O wait: stuck or sleeping", sm,
                      w.cpu_cores));
  }
  d.Forget(m);
  return d.Done(JobClass::kHealthy,
                Fmt("GPU %.0f%% busy and not starved (CPU %.2f cores of %.0f, no I/O wait): "
                    "more GPU than the job uses",
                    sm, w.cpu_cores, w.cpu_capacity));
}

}  // namespace meridian::telemetry
