#include "catalog/catalog.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace meridian::catalog {

std::optional<double> GpuModel::PeakTflops(Precision p) const {
  auto it = dense_tflops.find(p);
  if (it == dense_tflops.end()) return std::nullopt;
  return it->second;
}

std::optional<Money> Offering::PricePerHour(PricingModel m) const {
  switch (m) {
    case PricingModel::kOnDemand: return on_demand_per_hour;
    case PricingModel::kSpot: return spot_per_hour;
    case PricingModel::kFlexStart: return flex_start_per_hour;
    case PricingModel::kReserved: return reserved_1y_per_hour;
  }
  return std::nullopt;
}

namespace {

// The sum of hours[clamp(k, 0, last)] for k in [a, b), 0 <= a <= b: hours
// past the end repeat the last one, as At reads them. run[k] is the sum of
// hours[0, k).
double ClampedRunSum(const std::vector<float>& hours, const std::vector<double>& run, int64_t a,
                     int64_t b) {
  if (a >= b) return 0;
  const int64_t size = static_cast<int64_t>(hours.size());
  const int64_t in_end = std::min(b, size);
  double sum = a < in_end ? run[static_cast<size_t>(in_end)] - run[static_cast<size_t>(a)] : 0;
  const int64_t past_end = b - std::max(a, size);
  if (past_end > 0) sum += static_cast<double>(past_end) * hours.back();
  return sum;
}

}  // namespace

CarbonSeries::CarbonSeries(std::string zone, std::map<int, std::vector<float>> by_year)
    : zone_(std::move(zone)), by_year_(std::move(by_year)) {
  // Every value is a whole multiple of 2^finest (a float has 24 significant
  // bits), so any sum of them below 2^(53 + finest) is exact in a double.
  int finest = 0;
  bool bounded = true;
  for (const auto& [year, hours] : by_year_) {
    std::vector<double>& run = running_[year];
    run.reserve(hours.size() + 1);
    run.push_back(0);
    for (float v : hours) {
      if (!std::isfinite(v) || v < 0) bounded = false;
      if (v > 0) {
        int e = 0;
        std::frexp(v, &e);
        finest = std::min(finest, e - 24);
      }
      run.push_back(run.back() + v);
    }
  }
  const double bound = std::ldexp(1.0, 53 + finest);
  for (const auto& [year, run] : running_) bounded = bounded && run.back() < bound;
  if (bounded) {
    exact_below_ = bound;
  } else {
    running_.clear();
  }
}

int CarbonSeries::first_year() const { return by_year_.empty() ? 0 : by_year_.begin()->first; }
int CarbonSeries::last_year() const { return by_year_.empty() ? 0 : by_year_.rbegin()->first; }

double CarbonSeries::At(UnixSeconds t) const {
  if (by_year_.empty()) return 0;
  CivilTime c = ToCivil(t);
  auto it = by_year_.find(c.year);
  if (it == by_year_.end()) {
    // Same month, day and hour of the latest year the data has.
    it = std::prev(by_year_.end());
    CivilTime m{it->first, c.month, c.day, c.hour, 0, 0};
    if (m.month == 2 && m.day == 29 && !IsLeapYear(m.year)) m.day = 28;
    t = FromCivil(m);
  }
  const std::vector<float>& hours = it->second;
  int h = HourOfYear(t);
  if (hours.empty()) return 0;
  if (h >= static_cast<int>(hours.size())) h = static_cast<int>(hours.size()) - 1;
  return hours[static_cast<size_t>(h)];
}

double CarbonSeries::SumAt(UnixSeconds start, int64_t step_s, int count) const {
  if (step_s == 3600 && exact_below_ > 0) {
    // Below the bound every partial sum is exact in either order, so this is
    // the loop's double; at or above it the loop may round, so run the loop.
    const double sum = SumPointByPoint(start, step_s, count, true);
    if (sum < exact_below_) return sum;
  }
  return SumPointByPoint(start, step_s, count, false);
}

double CarbonSeries::SumPointByPoint(UnixSeconds start, int64_t step_s, int count,
                                     bool hourly_runs) const {
  double sum = 0;
  if (by_year_.empty() || count <= 0) return sum;
  if (step_s < 3600 || step_s % 3600 != 0) {
    for (int i = 0; i < count; ++i) sum += At(start + static_cast<UnixSeconds>(i) * step_s);
    return sum;
  }
  constexpr int kMar1 = (31 + 28) * 24;  // hour of year of Mar 1 (Feb 29 in a leap year)
  const int64_t step_h = step_s / 3600;
  int i = 0;
  while (i < count) {
    // One target year at a time: map its hours onto the data year as At does.
    const UnixSeconds t = start + static_cast<UnixSeconds>(i) * step_s;
    const CivilTime c = ToCivil(t);
    const UnixSeconds year_start = FromCivil(CivilTime{c.year, 1, 1, 0, 0, 0});
    const UnixSeconds next_year = FromCivil(CivilTime{c.year + 1, 1, 1, 0, 0, 0});
    auto it = by_year_.find(c.year);
    int shift = 0;  // data hour = target hour + shift, from Mar 1 on
    if (it == by_year_.end()) {
      it = std::prev(by_year_.end());
      const bool target_leap = IsLeapYear(c.year), data_leap = IsLeapYear(it->first);
      if (target_leap && !data_leap) shift = -24;  // Feb 29 -> Feb 28, Mar 1 -> Mar 1
      if (!target_leap && data_leap) shift = 24;
    }
    const std::vector<float>& hours = it->second;
    if (hours.empty()) return sum;
    const int64_t last = static_cast<int64_t>(hours.size()) - 1;
    int64_t h = (t - year_start) / 3600;
    if (hourly_runs) {
      // The hours left in this target year, from the year's running sums.
      const int64_t n = std::min<int64_t>(count - i, (next_year - t + 3599) / 3600);
      const std::vector<double>& run = running_.at(it->first);
      const int64_t before_mar1 = std::clamp<int64_t>(kMar1 - h, 0, n);
      sum += ClampedRunSum(hours, run, h, h + before_mar1) +
             ClampedRunSum(hours, run, h + before_mar1 + shift, h + n + shift);
      i += static_cast<int>(n);
      continue;
    }
    UnixSeconds ti = t;
    for (; i < count && ti < next_year; ++i, h += step_h, ti += step_s) {
      int64_t k = h >= kMar1 ? h + shift : h;
      sum += hours[static_cast<size_t>(std::clamp<int64_t>(k, 0, last))];
    }
  }
  return sum;
}

Result<std::shared_ptr<const Catalog>> Catalog::FromParts(CatalogParts parts) {
  auto cat = std::make_shared<Catalog>();
  std::set<std::string, std::less<>> gpu_names, region_ids;
  for (const auto& g : parts.gpus) {
    if (!gpu_names.insert(g.name).second) {
      return Status::Invalid("gpus: duplicate GPU model \"" + g.name + "\"");
    }
  }
  for (const auto& s : parts.carbon) cat->carbon_.emplace(s.zone(), s);
  for (const auto& r : parts.regions) {
    if (!region_ids.insert(r.id).second) {
      return Status::Invalid("regions: duplicate region \"" + r.id + "\"");
    }
    if (!r.grid_zone.empty() && cat->carbon_.count(r.grid_zone) == 0) {
      return Status::Invalid("regions: region \"" + r.id + "\" names grid zone \"" + r.grid_zone +
                             "\", which has no hourly carbon series");
    }
  }
  for (const auto& o : parts.offerings) {
    if (gpu_names.count(o.gpu_model) == 0) {
      return Status::Invalid("offerings: " + o.instance_type + " in " + o.region +
                             " names unknown GPU model \"" + o.gpu_model + "\"");
    }
    if (region_ids.count(o.region) == 0) {
      return Status::Invalid("offerings: " + o.instance_type + " names unknown region \"" +
                             o.region + "\"");
    }
  }
  cat->gpus_ = std::move(parts.gpus);
  cat->offerings_ = std::move(parts.offerings);
  cat->regions_ = std::move(parts.regions);
  cat->egress_ = std::move(parts.egress);
  cat->internet_egress_.insert(parts.internet_egress.begin(), parts.internet_egress.end());
  cat->market_ = std::move(parts.market);
  return std::shared_ptr<const Catalog>(std::move(cat));
}

const GpuModel* Catalog::FindGpu(std::string_view name) const {
  for (const auto& g : gpus_) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

const Region* Catalog::FindRegion(std::string_view id) const {
  for (const auto& r : regions_) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<const Region*> Catalog::RegionsIn(std::string_view geo) const {
  std::vector<const Region*> out;
  for (const auto& r : regions_) {
    if (r.geography == geo) out.push_back(&r);
  }
  return out;
}

bool Catalog::IsGeography(std::string_view geo) const {
  return std::any_of(regions_.begin(), regions_.end(),
                     [&](const Region& r) { return r.geography == geo; });
}

const CarbonSeries* Catalog::FindCarbonSeries(std::string_view zone) const {
  auto it = carbon_.find(zone);
  return it == carbon_.end() ? nullptr : &it->second;
}

Result<CarbonReading> Catalog::CarbonAt(std::string_view region_id, UnixSeconds t) const {
  const Region* r = FindRegion(region_id);
  if (r == nullptr) return Status::NotFound("region \"" + std::string(region_id) + "\" is unknown");
  if (const CarbonSeries* s = r->grid_zone.empty() ? nullptr : FindCarbonSeries(r->grid_zone)) {
    return CarbonReading{s->At(t), CarbonSourceKind::kHourly, r->grid_zone};
  }
  return CarbonReading{r->yearly_gco2_per_kwh, CarbonSourceKind::kYearly, r->yearly_source};
}

std::optional<double> Catalog::EgressUsdPerGb(std::string_view from, std::string_view to) const {
  if (from == to) return 0.0;
  auto it = egress_.find({std::string(from), std::string(to)});
  if (it != egress_.end()) return it->second;
  const Region* src = FindRegion(from);
  if (src == nullptr || FindRegion(to) == nullptr) return std::nullopt;
  auto rate = internet_egress_.find(src->provider);
  if (rate == internet_egress_.end()) return std::nullopt;
  return rate->second;
}

}  // namespace meridian::catalog
