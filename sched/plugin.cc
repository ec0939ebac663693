#include "sched/plugin.h"

#include <algorithm>
#include <cstdint>

namespace meridian::sched {

std::string_view ToString(DecisionKind k) {
  switch (k) {
    case DecisionKind::kPlace: return "place";
    case DecisionKind::kPreempt: return "preempt";
    case DecisionKind::kDefer: return "defer";
    case DecisionKind::kWait: return "wait";
    case DecisionKind::kReject: return "reject";
    case DecisionKind::kError: return "error";
  }
  return "?";
}

double CycleContext::CpuRunHours() const {
  // A CPU-only job: its stated run time (work.duration), else one hour.
  if (job_->cpu_only) {
    return job_->spec && job_->spec->work.duration_s ? *job_->spec->work.duration_s / 3600.0 : 1.0;
  }
  // cpu_fallback.slowdown is against one GPU: the run's GPU-hours, times it.
  double h = job_->demands.empty() ? 1.0
                                   : job_->demands.front().run_hours * job_->demands.front().gpus;
  return h * std::max(1.0, job_->cpu_fallback_slowdown);
}

OfferingFacts CycleContext::CatalogFacts(OfferingId o) const {
  const catalog::Offering& r = catalog().offerings()[o.index()];
  return {FindGpuModelId(catalog(), r.gpu_model), r.gpu_count, r.vcpus, r.ram_gib};
}

void NormalizeMinMax(std::span<int64_t> scores) {
  if (scores.empty()) return;
  int64_t min = scores[0], max = scores[0];
  for (int64_t s : scores) {
    min = s < min ? s : min;
    max = s > max ? s : max;
  }
  if (max == min) {
    std::fill(scores.begin(), scores.end(), 100);
    return;
  }
  // floor(off x 100 / span) without a division per score (a 64-bit divide
  // costs tens of cycles): the quotient through the reciprocal, off by at
  // most one, then corrected exactly in integers. Spans up to INT64_MAX / 100
  // (all of int64's range beyond that: the general form below).
  const uint64_t span = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
  if (span <= static_cast<uint64_t>(INT64_MAX / 100)) {
    const int64_t sp = static_cast<int64_t>(span);
    const double inv = 100.0 / static_cast<double>(sp);
    for (int64_t& s : scores) {
      const int64_t off = s - min;  // 0..span
      const int64_t num = off * 100;
      int64_t q = std::min<int64_t>(100, static_cast<int64_t>(static_cast<double>(off) * inv));
      const int64_t at = q * sp;
      if (at > num) {
        --q;
      } else if (num - at >= sp) {
        ++q;
      }
      s = q;
    }
    return;
  }
  for (int64_t& s : scores) {
    const uint64_t off = static_cast<uint64_t>(s) - static_cast<uint64_t>(min);
    s = off <= static_cast<uint64_t>(INT64_MAX / 100)
            ? static_cast<int64_t>(off * 100 / span)
            : static_cast<int64_t>(static_cast<double>(off) / static_cast<double>(span) * 100.0);
  }
}

void ScorePlugin::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                             std::span<int64_t> out) const {
  for (size_t i = 0; i < cands.size(); ++i) out[i] = Score(ctx, cands[i]);
}

void ScorePlugin::NormalizeScore(const CycleContext&, std::span<int64_t> scores) const {
  NormalizeMinMax(scores);
}

std::string ScorePlugin::ExplainScore(const CycleContext&, const Candidate&, int64_t) const {
  return "";
}

}  // namespace meridian::sched
