#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace meridian::sim {

std::string_view ToString(PayKind k) {
  switch (k) {
    case PayKind::kOwned: return "owned";
    case PayKind::kReserved: return "reserved";
    case PayKind::kOnDemand: return "on-demand";
    case PayKind::kSpot: return "spot";
    case PayKind::kFlexStart: return "flex-start";
  }
  return "?";
}

std::string PricingOf(const JobOutcome& o) {
  if (o.replica_pays == 0) return std::string(ToString(o.pay));
  std::string out;
  for (int k = 0; k < kPayKinds; ++k) {
    if ((o.replica_pays >> k & 1) == 0) continue;
    if (!out.empty()) out += '+';
    out += ToString(static_cast<PayKind>(k));
  }
  return out;
}

std::string_view ToString(JobState s) {
  switch (s) {
    case JobState::kPending: return "pending";
    case JobState::kWaiting: return "waiting";
    case JobState::kHeld: return "held";
    case JobState::kRunning: return "running";
    case JobState::kDone: return "done";
    case JobState::kRejected: return "rejected";
    case JobState::kUnfinished: return "unfinished";
  }
  return "?";
}

void Timeline::Grow(size_t index) {
  while (index >= kMaxBuckets) {
    for (std::vector<double>& v : sums_) {
      std::vector<double> merged((v.size() + 1) / 2, 0.0);
      for (size_t i = 0; i < v.size(); ++i) merged[i / 2] += v[i];
      v = std::move(merged);
    }
    width_ *= 2;
    index /= 2;
  }
  for (std::vector<double>& v : sums_) {
    if (v.size() <= index) v.resize(index + 1, 0.0);
  }
}

void Timeline::Add(Series s, int64_t a, int64_t b, double per_second) {
  if (b <= a || per_second == 0) return;
  Grow(static_cast<size_t>((b - 1) / width_));
  std::vector<double>& v = sums_[s];
  for (int64_t i = a / width_; i * width_ < b; ++i) {
    const int64_t lo = std::max(a, i * width_), hi = std::min(b, (i + 1) * width_);
    v[static_cast<size_t>(i)] += per_second * static_cast<double>(hi - lo);
  }
}

void Timeline::Level(Series s, int64_t t, double value) {
  if (t < last_t_[s]) t = last_t_[s];
  Add(s, last_t_[s], t, last_v_[s]);
  last_t_[s] = t;
  last_v_[s] = value;
}

void Timeline::Spread(Series s, int64_t a, int64_t b, double amount) {
  if (amount == 0) return;
  if (b <= a) {
    Grow(static_cast<size_t>(std::max<int64_t>(a, 0) / width_));
    sums_[s][static_cast<size_t>(std::max<int64_t>(a, 0) / width_)] += amount;
    return;
  }
  Add(s, a, b, amount / static_cast<double>(b - a));
}

void Timeline::Finish(int64_t t) {
  for (int s = kQueued; s < kSpend; ++s) Level(static_cast<Series>(s), t, 0);
  Grow(static_cast<size_t>(std::max<int64_t>(t - 1, 0) / width_));
}

double Timeline::Value(Series s, size_t i) const {
  if (i >= sums_[s].size()) return 0;
  return s < kSpend ? sums_[s][i] / static_cast<double>(width_) : sums_[s][i];
}

void RegionHours::Add(RegionId r, int64_t a, int64_t b, double gpus) {
  if (!r.valid() || b <= a || gpus <= 0) return;
  if (hours_.size() <= r.index()) hours_.resize(r.index() + 1, std::array<double, 24>{});
  std::array<double, 24>& row = hours_[r.index()];
  const int64_t days = (b - a) / 86400;
  if (days > 0) {
    for (double& h : row) h += gpus * static_cast<double>(days);
    a += days * 86400;
  }
  while (a < b) {
    const int64_t hour_end = (a / 3600 + 1) * 3600;
    const int64_t hi = std::min(b, hour_end);
    row[static_cast<size_t>(((a % 86400) + 86400) % 86400 / 3600)] +=
        gpus * static_cast<double>(hi - a) / 3600.0;
    a = hi;
  }
}

std::vector<CommonFigures> CommonToAll(const std::vector<const std::vector<JobOutcome>*>& runs,
                                       const std::vector<int64_t>& submit_s) {
  std::vector<CommonFigures> out(runs.size());
  const size_t n = submit_s.size();
  std::vector<size_t> common;
  for (size_t i = 0; i < n; ++i) {
    bool all = true;
    for (const std::vector<JobOutcome>* r : runs) all = all && i < r->size() && (*r)[i].state == JobState::kDone;
    if (all && !runs.empty()) common.push_back(i);
  }
  for (size_t p = 0; p < runs.size(); ++p) {
    CommonFigures& f = out[p];
    int64_t jct = 0, wait = 0;
    for (size_t i : common) {
      const JobOutcome& o = (*runs[p])[i];
      jct += o.JctS(submit_s[i]);
      wait += o.start_s - submit_s[i];
      f.cost_micros += o.cost_micros;
      f.co2_g += o.co2_g;
    }
    f.jobs = static_cast<int64_t>(common.size());
    if (f.jobs > 0) {
      f.avg_jct_s = static_cast<double>(jct) / static_cast<double>(f.jobs);
      f.avg_wait_s = static_cast<double>(wait) / static_cast<double>(f.jobs);
    }
  }
  return out;
}

double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size()))) - 1;
  return static_cast<double>(sorted[i]);
}

}  // namespace meridian::sim
