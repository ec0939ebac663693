#include "telemetry/recommend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meridian::telemetry {

namespace {

std::string Fmt(const char* f, double a = 0, double b = 0, double c = 0, double d = 0) {
  char buf[320];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

double GpuHourUsd(const JobContext& job, const catalog::Catalog& cat) {
  return job.gpu_hour_usd > 0 ? job.gpu_hour_usd : CheapestGpuHourUsd(cat, job.gpu_model);
}

// The SM share of the GPU the job would keep busy when fed, 0..1.
double ShareUsed(const WindowFigures& w, const Thresholds& t) {
  return std::clamp(w.gpu_sm_pct / t.target_gpu_sm_pct, 0.0, 1.0);
}

Recommendation MoreVcpus(const Classification& c, const JobContext& job, const Thresholds& t) {
  const WindowFigures& w = c.figures;
  Recommendation r;
  const double now = std::max({1.0, static_cast<double>(job.vcpus), std::ceil(w.cpu_cores)});
  const double sm = std::max(Known(w.gpu_sm_pct) ? w.gpu_sm_pct : 0.0, 5.0);
  const double factor = t.target_gpu_sm_pct / sm;
  int want = static_cast<int>(std::ceil(now * factor));
  if (job.node_vcpus > 0) want = std::min(want, job.node_vcpus);
  if (want <= static_cast<int>(now)) {
    r.action = "more-vcpus";
    r.vcpus = static_cast<int>(now);
    r.text = Fmt("the loader needs about %.0f vCPUs; this node has %.0f: run on a node with more "
                 "vCPUs per GPU",
                 std::ceil(now * factor), job.node_vcpus);
    r.expected_effect = Fmt("GPU busy %.0f%% -> up to %.0f%% on a node that has the vCPUs", sm,
                            t.target_gpu_sm_pct);
    return r;
  }
  r.action = "more-vcpus";
  r.vcpus = want;
  r.speedup = std::min(factor, want / now);
  r.text = Fmt("give the data loader %.0f vCPUs instead of %.0f", want, now);
  r.expected_effect = Fmt("GPU busy %.0f%% -> about %.0f%%: about %.1fx the steps per hour for the "
                          "same GPU-hours",
                          sm, std::min(t.target_gpu_sm_pct, sm * r.speedup), r.speedup);
  if (c.stall == Stall::kCpuCompute) {
    r.expected_effect += " (if the loader runs in parallel: more workers, not one busy thread)";
  }
  return r;
}

// A CPU job saturating its vCPUs whose threads run on more cores than it has,
// or queue for a CPU: the cores it would use if none waited.
Recommendation CpuShort(const Classification& c, const JobContext& job) {
  const WindowFigures& w = c.figures;
  Recommendation r;
  const int now = std::max(1, job.vcpus > 0 ? job.vcpus : static_cast<int>(std::ceil(w.cpu_capacity)));
  // The cores it would use if none waited, less a quarter core of noise.
  int want = static_cast<int>(std::ceil(w.cpu_cores + w.run_delay_frac - 0.25));
  if (job.node_vcpus > 0) want = std::min(want, job.node_vcpus);
  if (want <= now) {
    r.text = "keep as is";
    return r;
  }
  r.action = "more-vcpus";
  r.vcpus = want;
  r.speedup = (w.cpu_cores + w.run_delay_frac) / std::max(0.01, w.cpu_cores);
  r.text = Fmt("give it %.0f vCPUs instead of %.0f", want, now);
  r.expected_effect = Fmt("its threads wait %.2f s per second for a CPU beside %.2f cores running: "
                          "up to %.1fx faster",
                          w.run_delay_frac, w.cpu_cores, r.speedup);
  return r;
}

Recommendation DataCloser(const Classification& c, const JobContext& job, const Thresholds& t,
                          const catalog::Catalog& cat) {
  const WindowFigures& w = c.figures;
  Recommendation r;
  const double gpus = std::max(1, job.gpus);
  const double idle = Known(w.gpu_sm_pct) ? 1.0 - ShareUsed(w, t) : 1.0;
  r.stall_usd_per_hour = idle * gpus * GpuHourUsd(job, cat);
  const double speedup = Known(w.gpu_sm_pct) ? 1.0 / std::max(0.05, ShareUsed(w, t)) : 1.0;
  if (!job.data_region.empty() && job.data_region != job.run_region) {
    auto per_gb = cat.EgressUsdPerGb(job.data_region, job.run_region);
    r.action = "move-data";
    r.egress_usd = per_gb ? *per_gb * job.data_gb : 0;
    r.speedup = speedup;
    r.text = "copy the input data (" + Fmt("%.0f GB", job.data_gb) + ") from " + job.data_region +
             " to " + job.run_region + ", or run where the data is";
    if (per_gb && r.stall_usd_per_hour > 0) {
      r.expected_effect = Fmt("egress $%.2f once (%.4f $/GB) against $%.2f per hour of GPU time "
                              "stalled: pays back after %.1f h of running",
                              r.egress_usd, *per_gb, r.stall_usd_per_hour,
                              r.egress_usd / r.stall_usd_per_hour);
    } else {
      r.expected_effect = "the catalog has no egress price or GPU price for this pair";
    }
    return r;
  }
  r.action = "faster-storage";
  r.speedup = speedup;
  r.text = Fmt("reads wait on block I/O (%.2f s per second at %.1f MB/s): stage the data on local "
               "NVMe or cache it in memory",
               w.iowait_frac, w.read_mb_per_s);
  r.expected_effect = Fmt("$%.2f per hour of GPU time is stalled on I/O", r.stall_usd_per_hour);
  return r;
}

Recommendation MoreBandwidth(const Classification& c, const JobContext& job, const Thresholds& t,
                             const catalog::Catalog& cat) {
  Recommendation r;
  const catalog::GpuModel* now = cat.FindGpu(job.gpu_model);
  if (now == nullptr) {
    r.text = "memory-bound; its GPU model is not in the catalog, so no faster one is named";
    return r;
  }
  const double need_gib = Known(c.figures.gpu_mem_used_mib)
                              ? c.figures.gpu_mem_used_mib / 1024.0 * t.mig_headroom
                              : now->vram_gib;
  const catalog::GpuModel* best = nullptr;
  for (const catalog::GpuModel& g : cat.gpus()) {
    if (g.vram_gib < need_gib || g.memory_bandwidth_gbps <= now->memory_bandwidth_gbps) continue;
    if (CheapestGpuHourUsd(cat, g.name) <= 0) continue;
    if (best == nullptr || g.memory_bandwidth_gbps > best->memory_bandwidth_gbps) best = &g;
  }
  if (best == nullptr) {
    r.text = "memory-bound on " + now->name + "; no catalog GPU with more memory bandwidth holds it";
    return r;
  }
  r.action = "more-bandwidth-gpu";
  r.gpu_model = best->name;
  r.speedup = best->memory_bandwidth_gbps / now->memory_bandwidth_gbps;
  r.usd_per_hour_before = std::max(1, job.gpus) * GpuHourUsd(job, cat);
  r.usd_per_hour_after = std::max(1, job.gpus) * CheapestGpuHourUsd(cat, best->name);
  r.text = "run on " + best->name + Fmt(" (%.0f GB/s memory bandwidth against %.0f)",
                                        best->memory_bandwidth_gbps, now->memory_bandwidth_gbps);
  r.expected_effect = Fmt("up to %.2fx faster (the bandwidth ratio); $%.2f/h -> $%.2f/h", r.speedup,
                          r.usd_per_hour_before, r.usd_per_hour_after);
  return r;
}

Recommendation SmallerGpu(const Classification& c, const JobContext& job, const Thresholds& t,
                          const catalog::Catalog& cat) {
  Recommendation r;
  const WindowFigures& w = c.figures;
  const catalog::GpuModel* now = cat.FindGpu(job.gpu_model);
  if (now == nullptr || !Known(w.gpu_mem_used_mib) || !job.mig_profile.empty()) {
    r.text = "keep as is";
    return r;
  }
  const double need_gib = w.gpu_mem_used_mib / 1024.0 * t.mig_headroom;
  const double share = ShareUsed(w, t);
  int max_slices = 0;
  for (const catalog::MigProfile& p : now->mig_profiles) max_slices = std::max(max_slices, p.compute_slices);
  const catalog::MigProfile* slice = nullptr;
  for (const catalog::MigProfile& p : now->mig_profiles) {
    if (p.compute_slices >= max_slices || p.memory_gib < need_gib) continue;
    if (static_cast<double>(p.compute_slices) / max_slices < share) continue;
    if (slice == nullptr || p.compute_slices < slice->compute_slices) slice = &p;
  }
  const double before = std::max(1, job.gpus) * GpuHourUsd(job, cat);
  r.usd_per_hour_before = before;
  if (slice != nullptr && job.gpus <= 1) {
    r.action = "mig-slice";
    r.mig_profile = slice->name;
    r.usd_per_hour_after = before * slice->compute_slices / max_slices;
    r.text = "run on a MIG " + slice->name + " slice of the " + now->name + " instead of the whole GPU";
    r.expected_effect =
        Fmt("it uses %.0f%% of the SMs and %.1f GiB; the slice has %.0f of %.0f compute slices",
            w.gpu_sm_pct, w.gpu_mem_used_mib / 1024.0, slice->compute_slices, max_slices) +
        Fmt(": about the same speed, $%.2f/h -> $%.2f/h of GPU, the rest free for other work", before,
            r.usd_per_hour_after);
    return r;
  }
  const double need_tflops = now->PeakTflops(Precision::kBf16).value_or(0) * share;
  const catalog::GpuModel* best = nullptr;
  double best_price = 0;
  for (const catalog::GpuModel& g : cat.gpus()) {
    const double price = CheapestGpuHourUsd(cat, g.name);
    if (price <= 0 || g.vram_gib < need_gib) continue;
    if (g.PeakTflops(Precision::kBf16).value_or(0) < need_tflops) continue;
    if (price >= CheapestGpuHourUsd(cat, now->name)) continue;
    if (best == nullptr || price < best_price) {
      best = &g;
      best_price = price;
    }
  }
  if (best == nullptr) {
    r.text = "keep as is (no smaller slice or cheaper GPU holds it)";
    return r;
  }
  r.action = "smaller-gpu";
  r.gpu_model = best->name;
  r.usd_per_hour_after = std::max(1, job.gpus) * best_price;
  r.text = "run on " + best->name + " instead of " + now->name;
  r.expected_effect = Fmt("it uses %.0f%% of the SMs and %.1f GiB: about the same speed, "
                          "$%.2f/h -> $%.2f/h (catalog's cheapest on-demand)",
                          w.gpu_sm_pct, w.gpu_mem_used_mib / 1024.0, before, r.usd_per_hour_after);
  return r;
}

}  // namespace

double CheapestGpuHourUsd(const catalog::Catalog& catalog, const std::string& model) {
  double best = 0;
  for (const catalog::Offering& o : catalog.offerings()) {
    if (o.gpu_model != model || o.gpu_count <= 0) continue;
    const double per_gpu = o.on_demand_per_hour.dollars() / o.gpu_count;
    if (per_gpu > 0 && (best == 0 || per_gpu < best)) best = per_gpu;
  }
  return best;
}

Recommendation Recommend(const Classification& c, const JobContext& job, const Thresholds& t,
                         const catalog::Catalog& catalog) {
  switch (c.job_class) {
    case JobClass::kInputBound:
      if (c.stall == Stall::kIoWait) return DataCloser(c, job, t, catalog);
      return MoreVcpus(c, job, t);
    case JobClass::kMemoryBound: return MoreBandwidth(c, job, t, catalog);
    case JobClass::kHealthy:
      if (c.figures.gpu_samples == 0 && c.figures.cpu_saturation >= t.cpu_saturated_frac) {
        return CpuShort(c, job);
      }
      if (Known(c.figures.gpu_sm_pct) && c.figures.gpu_sm_pct < t.gpu_busy_sm_pct) {
        return SmallerGpu(c, job, t, catalog);
      }
      break;
    case JobClass::kIdle: {
      Recommendation r;
      r.action = "check-job";
      r.usd_per_hour_before = job.gpus > 0 ? job.gpus * GpuHourUsd(job, catalog) : 0;
      r.text = "the job does nothing on its GPU or CPUs: check its logs; cancel it, or checkpoint "
               "and release what it holds";
      r.expected_effect = job.gpus > 0 ? Fmt(job.gpus == 1 ? "frees %.0f GPU costing $%.2f/h"
                                                            : "frees %.0f GPUs costing $%.2f/h",
                                             job.gpus, r.usd_per_hour_before)
                                       : "frees its CPUs";
      return r;
    }
    case JobClass::kUnknown: {
      Recommendation r;
      r.text = "not enough samples yet";
      return r;
    }
  }
  Recommendation r;
  r.text = "keep as is";
  return r;
}

}  // namespace meridian::telemetry
