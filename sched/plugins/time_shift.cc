#include "sched/plugins/time_shift.h"

#include "sched/plugins/candidate_region.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/market.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int64_t kHour = 3600;


}  // namespace

Result<std::unique_ptr<Plugin>> TimeShift::Create(PluginArgs& args) {
  Options o;
  o.max_hours = static_cast<int>(args.Integer("max_hours", o.max_hours, 1, 48));
  o.max_regions = static_cast<int>(args.Integer("max_regions", o.max_regions, 1, 8));
  o.max_run_samples = static_cast<int>(args.Integer("max_run_samples", o.max_run_samples, 1, 48));
  o.min_gain = args.Number("min_gain", o.min_gain, 0, 0.9);
  o.defer_fleet = args.Bool("defer_fleet", o.defer_fleet);
  return FinishPlugin<TimeShift>(args, o);
}

TimeShift::TimeShift(Options o) : options_(o) {}

std::span<const double> TimeShift::Hourly(const CycleContext& ctx, RegionId r, int hours) const {
  const MarketView& market = ctx.market();
  const UnixSeconds now = ctx.now();
  // The memo (96 KiB) is allocated on first use, not with the plugin: a
  // profile check builds every plugin and asks for no candidates.
  if (slot_of_.empty()) {
    slot_of_.assign(kMaxRegions, -1);
    cached_.assign(kCachedRegions * kMaxSamples, 0);
    hourly_.reserve(kMaxSamples);
  }
  if (cached_now_ != now || cached_market_ != &market) {
    for (size_t k = 0; k < cached_count_; ++k) slot_of_[cached_region_[k].index()] = -1;
    cached_count_ = 0;
    cached_now_ = now;
    cached_market_ = &market;
  }
  const size_t n = static_cast<size_t>(hours);
  const bool indexed = r.index() < slot_of_.size();
  size_t slot = indexed && slot_of_[r.index()] >= 0 ? static_cast<size_t>(slot_of_[r.index()])
                                                    : kCachedRegions;
  double* out = nullptr;
  if (slot < kCachedRegions) {
    if (cached_hours_[slot] >= hours) return {cached_.data() + slot * kMaxSamples, n};
    out = cached_.data() + slot * kMaxSamples;
  } else if (indexed && cached_count_ < kCachedRegions) {
    slot = cached_count_++;
    cached_region_[slot] = r;
    slot_of_[r.index()] = static_cast<int16_t>(slot);
    out = cached_.data() + slot * kMaxSamples;
  } else {
    hourly_.resize(n);
    out = hourly_.data();
  }
  for (size_t h = 0; h < n; ++h) {
    out[h] = market.CarbonGPerKwh(r, now + static_cast<UnixSeconds>(h) * kHour);
  }
  if (out != hourly_.data()) cached_hours_[slot] = hours;
  return {out, n};
}

int TimeShift::GreenestShift(std::span<const double> hourly, int run, int max_shift,
                             double min_gain) {
  if (run <= 0 || max_shift <= 0 || hourly.size() < static_cast<size_t>(max_shift + run)) return 0;
  double window = 0;
  for (int h = 0; h < run; ++h) window += hourly[static_cast<size_t>(h)];
  const double now = window;
  double best = now * (1.0 - min_gain);
  int best_k = 0;
  for (int k = 1; k <= max_shift; ++k) {
    window += hourly[static_cast<size_t>(k + run - 1)] - hourly[static_cast<size_t>(k - 1)];
    if (window < best - 1e-9) {
      best = window;
      best_k = k;
    }
  }
  return best_k;
}

int TimeShift::Window(const CycleContext& ctx, const Candidate& c) const {
  const QueuedJob& job = ctx.job();
  if (!job.deadline) return options_.max_hours;
  const double restart_h =
      static_cast<double>(
          estimate::CheckpointOf(job.spec ? job.spec->checkpoint : Checkpoint{}).restart_overhead_s) /
      3600.0;
  Candidate od = c;
  od.pricing = PricingModel::kOnDemand;
  const double slack =
      static_cast<double>(*job.deadline - ctx.now()) / 3600.0 - ctx.RunHours(od) - restart_h;
  if (slack < 1) return 0;
  return std::min(options_.max_hours, static_cast<int>(std::floor(slack)));
}

void TimeShift::ShiftOne(const CycleContext& ctx, const Candidate& c, RegionId r,
                         CandidateSink& sink) const {
  const int window = Window(ctx, c);
  if (window < 1) return;
  const MarketView& market = ctx.market();
  const UnixSeconds now = ctx.now();
  const double run_hours = ctx.RunHours(c);
  const int run = std::clamp(static_cast<int>(std::ceil(run_hours - 1e-9)), 1,
                             options_.max_run_samples);
  std::span<const double> hourly = Hourly(ctx, r, window + run);
  const bool elastic = c.kind == CandidateKind::kElastic;
  auto price_at = [&](int k) -> std::optional<Money> {
    if (!elastic) return Money();
    const UnixSeconds t = now + k * kHour;
    if (c.pricing == PricingModel::kSpot && market.SpotInstances(c.offering, t) < c.instances) {
      return std::nullopt;
    }
    // The run's mean price over its first `run` hours: the score plugins
    // then charge the later start its whole run's price (what the lease bills).
    return RunPricePerHour(market, c.offering, c.pricing, t, std::min<double>(run_hours, run));
  };
  const std::optional<Money> price_now = price_at(0);
  if (!price_now) return;
  const int green = GreenestShift(hourly, run, window, options_.min_gain);
  if (green > 0) {
    std::optional<Money> p = price_at(green);
    if (p && *p <= *price_now) {
      Candidate later = c;
      later.start = now + green * kHour;
      if (!sink.Add(later)) return;
    }
  }
  if (!elastic || !market.PriceMayChange()) return;  // no later hour can be cheaper
  int cheap = 0;
  Money best = price_now->Times(1.0 - options_.min_gain);
  for (int k = 1; k <= window; ++k) {
    std::optional<Money> p = price_at(k);
    if (p && *p < best) {
      best = *p;
      cheap = k;
    }
  }
  if (cheap > 0 && cheap != green) {
    Candidate later = c;
    later.start = now + cheap * kHour;
    sink.Add(later);
  }
}

void TimeShift::AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                              CandidateSink& sink) const {
  const QueuedJob& job = ctx.job();
  if (ctx.ever_pass() || job.kind == WorkloadKind::kRealtimeInference) return;
  std::array<RegionId, 8> seen{};
  int regions = 0;
  for (const Candidate& c : generated) {
    if (regions >= options_.max_regions || sink.full()) break;
    if (c.start != ctx.now()) continue;  // flex-start waits, or already deferred
    if (c.kind == CandidateKind::kElastic ? c.pricing == PricingModel::kFlexStart
                                          : !options_.defer_fleet || c.kind == CandidateKind::kCpuNode) {
      continue;
    }
    const RegionId r = RegionOf(ctx, c);
    if (!r.valid() || std::find(seen.begin(), seen.begin() + regions, r) != seen.begin() + regions) {
      continue;
    }
    seen[static_cast<size_t>(regions++)] = r;
    ShiftOne(ctx, c, r, sink);
  }
}

}  // namespace meridian::sched
