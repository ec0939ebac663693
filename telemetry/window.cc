#include "telemetry/window.h"

#include <algorithm>

namespace meridian::telemetry {

namespace {

// The job's SM figure of one reading: the device's, else its processes' share.
double SmOf(const GpuReading& g) { return Known(g.sm_util_pct) ? g.sm_util_pct : g.job_sm_util_pct; }

bool CountersWentBack(const JobSample& a, const JobSample& b) {
  return b.cpu_user_s < a.cpu_user_s || b.cpu_system_s < a.cpu_system_s ||
         b.read_bytes < a.read_bytes || b.write_bytes < a.write_bytes;
}

struct Mean {
  double sum = 0;
  int n = 0;
  void Add(double v) {
    if (Known(v)) {
      sum += v;
      ++n;
    }
  }
  double Get() const { return n > 0 ? sum / n : kUnknown; }
};

void GpuFigures(const std::vector<const JobSample*>& in, const Thresholds& t, WindowFigures* w) {
  Mean sm, bw, power;
  int busy = 0;
  for (const JobSample* s : in) {
    Mean dev_sm, dev_bw, dev_power;
    for (const GpuReading& g : s->gpus) {
      dev_sm.Add(SmOf(g));
      dev_bw.Add(g.mem_bw_util_pct);
      dev_power.Add(g.power_w);
      const double used = Known(g.job_mem_used_mib) ? g.job_mem_used_mib : g.mem_used_mib;
      if (Known(used)) w->gpu_mem_used_mib = Known(w->gpu_mem_used_mib) ? std::max(w->gpu_mem_used_mib, used) : used;
      if (Known(g.mem_total_mib)) w->gpu_mem_total_mib = g.mem_total_mib;
      if (g.mig_gi >= 0) w->mig = true;
    }
    if (dev_sm.n > 0) {
      const double v = dev_sm.Get();
      sm.Add(v);
      w->gpu_sm_peak_pct = Known(w->gpu_sm_peak_pct) ? std::max(w->gpu_sm_peak_pct, v) : v;
      if (v >= t.gpu_busy_sm_pct) ++busy;
    }
    bw.Add(dev_bw.Get());
    power.Add(dev_power.Get());
  }
  w->gpu_samples = sm.n;
  w->gpu_sm_pct = sm.Get();
  w->gpu_bw_pct = bw.Get();
  w->gpu_power_w = power.Get();
  w->gpu_busy_share = sm.n > 0 ? static_cast<double>(busy) / sm.n : 0;
}

}  // namespace

WindowFigures ComputeWindow(const std::vector<JobSample>& samples, const Thresholds& t,
                            int node_cpus) {
  WindowFigures w;
  if (samples.empty()) return w;
  const int64_t end = samples.back().t_ms;
  const int64_t start = end - t.window_s * 1000;
  std::vector<const JobSample*> in;
  for (const JobSample& s : samples) {
    if (s.t_ms >= start) in.push_back(&s);
  }
  w.samples = static_cast<int>(in.size());
  double cpu_user = 0, cpu_sys = 0, iowait = 0, delay = 0, vol = 0, invol = 0, rd = 0, wr = 0;
  for (size_t i = 1; i < in.size(); ++i) {
    const JobSample& a = *in[i - 1];
    const JobSample& b = *in[i];
    const double dt = static_cast<double>(b.t_ms - a.t_ms) / 1000.0;
    if (dt <= 0 || dt > static_cast<double>(t.max_gap_s) || CountersWentBack(a, b)) {
      ++w.gaps;
      continue;
    }
    ++w.intervals;
    w.covered_s += dt;
    cpu_user += b.cpu_user_s - a.cpu_user_s;
    cpu_sys += b.cpu_system_s - a.cpu_system_s;
    iowait += std::max(0.0, b.iowait_s - a.iowait_s);
    delay += std::max(0.0, b.run_delay_s - a.run_delay_s);
    vol += static_cast<double>(b.ctx_voluntary >= a.ctx_voluntary ? b.ctx_voluntary - a.ctx_voluntary : 0);
    invol += static_cast<double>(b.ctx_involuntary >= a.ctx_involuntary ? b.ctx_involuntary - a.ctx_involuntary : 0);
    rd += static_cast<double>(b.read_bytes - a.read_bytes);
    wr += static_cast<double>(b.write_bytes - a.write_bytes);
  }
  if (w.covered_s > 0) {
    const double s = w.covered_s;
    w.cpu_user_cores = cpu_user / s;
    w.cpu_system_cores = cpu_sys / s;
    w.cpu_cores = (cpu_user + cpu_sys) / s;
    w.iowait_frac = iowait / s;
    w.run_delay_frac = delay / s;
    w.ctx_voluntary_per_s = vol / s;
    w.ctx_involuntary_per_s = invol / s;
    w.read_mb_per_s = rd / s / 1e6;
    w.write_mb_per_s = wr / s / 1e6;
  }
  const JobSample& last = *in.back();
  w.vcpus = last.vcpus;
  w.threads = last.threads;
  double cap = last.vcpus > 0 ? last.vcpus : std::max(1, last.threads);
  if (last.vcpus <= 0 && node_cpus > 0) cap = std::min(cap, static_cast<double>(node_cpus));
  w.cpu_capacity = std::max(1.0, cap);
  w.cpu_saturation = w.cpu_cores / w.cpu_capacity;
  w.gpu_devices = static_cast<int>(last.gpus.size());
  GpuFigures(in, t, &w);
  return w;
}

}  // namespace meridian::telemetry
