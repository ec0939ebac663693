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

std::span<const NodeId> CycleContext::members(const Candidate& c) const {
  if (c.kind == CandidateKind::kGang) {
    return std::span<const NodeId>(members_->data() + c.gang_offset, c.gang_size);
  }
  return std::span<const NodeId>(&c.node, 1);
}

double CycleContext::RunHours(const Candidate& c) const {
  if (c.kind == CandidateKind::kCpuNode) {
    // A CPU-only job: its stated run time (work.duration), else one hour.
    if (job_->cpu_only) {
      return job_->spec && job_->spec->work.duration_s ? *job_->spec->work.duration_s / 3600.0
                                                       : 1.0;
    }
    // cpu_fallback.slowdown is against one GPU: the run's GPU-hours, times it.
    double h = job_->demands.empty()
                   ? 1.0
                   : job_->demands.front().run_hours * job_->demands.front().gpus;
    return h * std::max(1.0, job_->cpu_fallback_slowdown);
  }
  const ModelDemand& d = job_->demands[c.demand];
  double h = c.kind == CandidateKind::kMigSlice ? d.mig_run_hours : d.run_hours;
  if (c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kSpot &&
      job_->spot_run_multiplier) {
    h *= *job_->spot_run_multiplier;
  }
  return h;
}

void NormalizeMinMax(std::span<int64_t> scores) {
  if (scores.empty()) return;
  auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  int64_t min = *lo, max = *hi;
  for (int64_t& s : scores) {
    if (max == min) {
      s = 100;
    } else {
      int64_t span = max - min, off = s - min;
      s = off <= INT64_MAX / 100
              ? off * 100 / span
              : static_cast<int64_t>(static_cast<double>(off) / static_cast<double>(span) * 100.0);
    }
  }
}

void ScorePlugin::NormalizeScore(const CycleContext&, std::span<int64_t> scores) const {
  NormalizeMinMax(scores);
}

std::string ScorePlugin::ExplainScore(const CycleContext&, const Candidate&, int64_t) const {
  return "";
}

}  // namespace meridian::sched
