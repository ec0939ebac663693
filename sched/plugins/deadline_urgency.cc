#include "sched/plugins/deadline_urgency.h"

#include <limits>

#include <algorithm>
#include <cmath>

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> DeadlineUrgency::Create(PluginArgs& args) {
  int64_t step = args.Duration("step", 0);
  return FinishPlugin<DeadlineUrgency>(args, step);
}

std::optional<UnixSeconds> DeadlineUrgency::LatestStart(const QueuedJob& job) {
  if (!job.deadline) return std::nullopt;
  double hours = 0;  // no fitting model: the deadline itself
  for (size_t i = 0; i < job.demands.size(); ++i) {
    double h = job.demands[i].run_hours;
    hours = i == 0 ? h : std::min(hours, h);
  }
  return *job.deadline - static_cast<UnixSeconds>(std::llround(hours * 3600.0));
}

double DeadlineUrgency::SortKey(const Snapshot&, const QueuedJob& job) const {
  std::optional<UnixSeconds> l = LatestStart(job);
  if (!l) return std::numeric_limits<double>::infinity();
  UnixSeconds k = *l;
  if (step_s_ > 0) k = k >= 0 ? k / step_s_ : (k - step_s_ + 1) / step_s_;
  return static_cast<double>(k);  // exact: |k| < 2^53
}

std::weak_ordering DeadlineUrgency::Compare(const Snapshot&, const QueuedJob& a,
                                            const QueuedJob& b) const {
  std::optional<UnixSeconds> la = LatestStart(a), lb = LatestStart(b);
  if (!la || !lb) {  // a deadline before none; two without tie
    if (la) return std::weak_ordering::less;
    if (lb) return std::weak_ordering::greater;
    return std::weak_ordering::equivalent;
  }
  UnixSeconds ka = *la, kb = *lb;
  if (step_s_ > 0) {
    auto floor_div = [&](UnixSeconds v) { return v >= 0 ? v / step_s_ : (v - step_s_ + 1) / step_s_; };
    ka = floor_div(ka);
    kb = floor_div(kb);
  }
  return ka <=> kb == 0 ? std::weak_ordering::equivalent
                        : (ka < kb ? std::weak_ordering::less : std::weak_ordering::greater);
}

}  // namespace meridian::sched
