#include "sim/market_replay.h"

#include <algorithm>
#include <cmath>

#include "sched/rng.h"

namespace meridian::sim {

uint64_t StableHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

bool BigInstance(int gpus) { return gpus >= 8; }

SpotAssignment Assign(const catalog::Offering& o, const std::vector<SpotTrace>& traces,
                      uint64_t seed) {
  SpotAssignment a;
  if (!o.spot_per_hour || traces.empty()) return a;
  const uint64_t key = StableHash(o.region + "/" + o.zone + "/" + o.instance_type);
  std::vector<int> own, size_class;
  for (size_t i = 0; i < traces.size(); ++i) {
    const SpotTrace& t = traces[i];
    if (t.region == o.region && t.instance_type == o.instance_type) own.push_back(static_cast<int>(i));
    if (BigInstance(t.gpus) == BigInstance(o.gpu_count)) size_class.push_back(static_cast<int>(i));
  }
  sched::Rng rng(sched::Rng::Mix(seed, key, 0x5107));
  if (!own.empty()) {
    a.trace = own[rng.Below(own.size())];
    a.same_region = true;
    return a;
  }
  const std::vector<int>& pool = size_class.empty() ? own : size_class;
  if (pool.empty()) return a;
  a.trace = pool[rng.Below(pool.size())];
  const SpotTrace& t = traces[static_cast<size_t>(a.trace)];
  a.offset_s = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(t.ticks))) * t.gap_s;
  return a;
}

}  // namespace

ReplayMarket::ReplayMarket(std::shared_ptr<const catalog::Catalog> catalog,
                           std::vector<SpotTrace> traces, const ReplayMarketOptions& options)
    : catalog_(std::move(catalog)), prices_(catalog_), traces_(std::move(traces)), options_(options) {
  flex_mean_h_ = options_.flex_wait_mean_h >= 0 ? options_.flex_wait_mean_h
                                                 : catalog_->market().flex_start_expected_wait_hours;
  assignment_.reserve(catalog_->offerings().size());
  for (const catalog::Offering& o : catalog_->offerings()) {
    assignment_.push_back(options_.other_spot == OtherSpot::kNone ? SpotAssignment{}
                                                                  : Assign(o, traces_, options_.seed));
  }
  for (const MappedSpotTrace& m : options_.mapped) {
    if (m.offering.index() >= assignment_.size()) continue;
    SpotAssignment& a = assignment_[m.offering.index()];
    a = SpotAssignment{};
    a.trace = static_cast<int>(traces_.size());
    a.mapped = true;
    traces_.push_back(m.trace);
    const int64_t period = m.trace.period_s();
    if (m.tick0 && period > 0) a.offset_s = ((options_.start - *m.tick0) % period + period) % period;
  }
}

std::optional<Money> ReplayMarket::PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const {
  return prices_.PricePerHour(o, m, t);
}

bool ReplayMarket::SpotAvailable(OfferingId o, UnixSeconds t) const { return SpotInstances(o, t) > 0; }

int ReplayMarket::SpotInstances(OfferingId o, UnixSeconds t) const {
  if (o.index() >= assignment_.size()) return 0;
  const SpotAssignment& a = assignment_[o.index()];
  if (a.trace < 0) return 0;
  return traces_[static_cast<size_t>(a.trace)].CountAt(t - options_.start + a.offset_s);
}

double ReplayMarket::SpotReclaimsPerHour(OfferingId o, UnixSeconds t) const {
  if (o.index() >= assignment_.size() || assignment_[o.index()].trace < 0) {
    return MarketView::SpotReclaimsPerHour(o, t);
  }
  const SpotAssignment& a = assignment_[o.index()];
  const double rate = traces_[static_cast<size_t>(a.trace)].ReclaimsPerHourUpBefore(
      std::max<int64_t>(0, t - options_.start) + a.offset_s, kReclaimRateWindowS);
  return rate >= 0 ? rate : MarketView::SpotReclaimsPerHour(o, t);
}

double ReplayMarket::FlexStartWaitHours(OfferingId, UnixSeconds) const { return flex_mean_h_; }

double ReplayMarket::CarbonGPerKwh(RegionId r, UnixSeconds t) const {
  return prices_.CarbonGPerKwh(r, t);
}

double ReplayMarket::CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s, int count) const {
  return prices_.CarbonSumGPerKwh(r, start, step_s, count);
}

std::optional<UnixSeconds> ReplayMarket::NextSpotBelow(OfferingId o, UnixSeconds from,
                                                       int need) const {
  if (o.index() >= assignment_.size()) return from;
  const SpotAssignment& a = assignment_[o.index()];
  if (a.trace < 0) return from;
  const int64_t s = std::max<int64_t>(0, from - options_.start) + a.offset_s;
  std::optional<int64_t> down = traces_[static_cast<size_t>(a.trace)].NextBelow(s, need);
  if (!down) return std::nullopt;
  return from + (*down - s);
}

namespace {

// The first trace second after `s` (>= 0) at which the trace's count differs
// from its count at `s`; nullopt for a trace of one count throughout.
std::optional<int64_t> NextCountChange(const SpotTrace& t, int64_t s) {
  const int64_t period = t.period_s();
  if (period <= 0 || t.count.empty()) return std::nullopt;
  const int64_t cycle = s / period;
  const int64_t tick = (s % period) / t.gap_s;
  const size_t run = static_cast<size_t>(
      std::upper_bound(t.run_end.begin(), t.run_end.end(), tick) - t.run_end.begin());
  const size_t n = t.count.size();
  for (size_t k = 1; k <= n; ++k) {
    const size_t j = (run + k) % n;
    if (t.count[j] == t.count[run]) continue;
    const int64_t start = j == 0 ? 0 : t.run_end[j - 1];
    return (cycle + (run + k >= n ? 1 : 0)) * period + start * t.gap_s;
  }
  return std::nullopt;
}

}  // namespace

std::optional<UnixSeconds> ReplayMarket::NextSpotChange(OfferingId o, UnixSeconds t) const {
  if (o.index() >= assignment_.size()) return std::nullopt;
  const SpotAssignment& a = assignment_[o.index()];
  if (a.trace < 0) return std::nullopt;
  const int64_t s = std::max<int64_t>(0, t - options_.start) + a.offset_s;
  std::optional<int64_t> change = NextCountChange(traces_[static_cast<size_t>(a.trace)], s);
  if (!change) return std::nullopt;
  return t + (*change - s);
}

int64_t ReplayMarket::DrawFlexWait(uint64_t key) const {
  sched::Rng rng(sched::Rng::Mix(options_.seed, key, 0xf1e7));
  const double u = rng.Unit();
  return std::llround(-flex_mean_h_ * 3600.0 * std::log1p(-u));
}

}  // namespace meridian::sim
