#include "sched/plugins/carbon.h"

#include "sched/plugins/candidate_region.h"

#include <algorithm>
#include <cmath>

#include "core/round.h"
#include "estimate/defaults.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

// Whole hours the run touches, at least 1: ceil(hours - 1e-9) without the
// library call on the hot path (truncation then a step up).
int SamplesFor(double hours) {
  const double h = hours - 1e-9;
  if (!(h < 1e9)) return static_cast<int>(std::min(std::ceil(h), 2e9));
  int n = static_cast<int>(h);
  if (static_cast<double>(n) < h) ++n;
  return std::max(1, n);
}

}  // namespace

double MeanCarbonGPerKwh(const MarketView& market, RegionId region, UnixSeconds start,
                         double hours, int max_samples) {
  const int n = SamplesFor(hours);
  const int step = (n + max_samples - 1) / std::max(1, max_samples);
  // Hours 0, step, 2 x step, ... below n, at most max_samples of them.
  const int samples = std::min(max_samples, (n + step - 1) / step);
  if (samples <= 0) return 0;
  return market.CarbonSumGPerKwh(region, start, static_cast<int64_t>(step) * 3600, samples) /
         samples;
}

int64_t Carbon::Emission::grams() const { return RoundToInt64(kwh() * gco2_per_kwh); }

Result<std::unique_ptr<Plugin>> Carbon::Create(PluginArgs& args) {
  Options o;
  o.max_samples = static_cast<int>(args.Integer("max_samples", o.max_samples, 1, 720));
  o.cpu_watts_per_vcpu = args.Number("cpu_watts_per_vcpu", o.cpu_watts_per_vcpu, 0, 1000);
  return FinishPlugin<Carbon>(args, o);
}

void Carbon::Refresh(const CycleContext& ctx) const {
  if (cache_.empty()) cache_.resize(kCacheEntries);
  if (generation_ == 0 || cache_now_ != ctx.now() || cache_market_ != &ctx.market()) {
    ++generation_;
    cache_now_ = ctx.now();
    cache_market_ = &ctx.market();
  }
}

double Carbon::CachedMean(const CycleContext& ctx, RegionId r, UnixSeconds start,
                          double hours) const {
  const int32_t samples = SamplesFor(hours);
  const uint64_t key = static_cast<uint64_t>(r.value()) * 0x9e3779b97f4a7c15ull ^
                       static_cast<uint64_t>(start) * 0xc2b2ae3d27d4eb4full ^
                       static_cast<uint64_t>(samples);
  CacheEntry& e = cache_[(key ^ (key >> 29)) % kCacheEntries];
  if (e.generation == generation_ && e.samples == samples && e.region == r && e.start == start) {
    return e.mean;
  }
  e = {generation_, r, start, samples,
       MeanCarbonGPerKwh(ctx.market(), r, start, hours, options_.max_samples)};
  return e.mean;
}

double Carbon::GpuWatts(const CycleContext& ctx, const Candidate& c, double power_w) {
  switch (c.kind) {
    case CandidateKind::kElastic:
      return power_w * ctx.offering(c.offering).gpu_count * c.instances;
    case CandidateKind::kMigSlice:
      return power_w * c.mig_shape.span / static_cast<double>(kMigMemorySlices);
    default: {
      const int members = c.kind == CandidateKind::kGang ? c.gang_size : 1;
      return power_w * c.gpus_per_node * members;
    }
  }
}

Carbon::Emission Carbon::EmissionAt(const CycleContext& ctx, const Candidate& c) const {
  Emission e;
  e.hours = ctx.RunHours(c);
  if (c.kind == CandidateKind::kCpuNode) {
    if (options_.cpu_watts_per_vcpu <= 0 || ctx.job().vcpus <= 0) return e;
    e.watts = options_.cpu_watts_per_vcpu * ctx.job().vcpus;
  } else {
    // An offering's GPUs are the demand's model (gpu_fit); a node's its own.
    const GpuModelId model = c.kind == CandidateKind::kElastic
                                 ? ctx.demand(c).model
                                 : ctx.fleet().node(c.node).gpu_model;
    e.watts = GpuWatts(ctx, c, ctx.catalog().gpus()[model.index()].power_w);
  }
  e.known = true;
  e.gco2_per_kwh = CachedMean(ctx, RegionOf(ctx, c), c.start, e.hours);
  return e;
}

Carbon::Emission Carbon::EmissionOf(const CycleContext& ctx, const Candidate& c) const {
  Refresh(ctx);
  return EmissionAt(ctx, c);
}

int64_t Carbon::Score(const CycleContext& ctx, const Candidate& c) const {
  Emission e = EmissionOf(ctx, c);
  return e.known ? -e.grams() : kUnknown;
}

void Carbon::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                        std::span<int64_t> out) const {
  Refresh(ctx);
  for (size_t i = 0; i < cands.size(); ++i) {
    const Emission e = EmissionAt(ctx, cands[i]);
    out[i] = e.known ? -e.grams() : kUnknown;
  }
}

void Carbon::NormalizeScore(const CycleContext&, std::span<int64_t> scores) const {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t s : scores) {
    if (s == kUnknown) continue;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  for (int64_t& s : scores) {
    if (s == kUnknown) s = 50;
    else if (hi == lo) s = 100;
    else s = static_cast<int64_t>(static_cast<double>(s - lo) * 100.0 / static_cast<double>(hi - lo));
  }
}

std::string Carbon::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  using estimate::Fixed;
  Emission e = EmissionOf(ctx, c);
  if (!e.known) return "no power figure for CPU nodes (cpu_watts_per_vcpu: 0): neutral 50";
  return Fixed(e.watts, 0) + " W x " + Fixed(e.hours, 2) + " h = " + Fixed(e.kwh(), 2) +
         " kWh x " + Fixed(e.gco2_per_kwh, 0) + " g/kWh (mean over the run from " +
         FormatRfc3339(c.start) + ") = " + std::to_string(e.grams()) + " g CO2";
}

}  // namespace meridian::sched
