#include "estimate/pricing.h"

#include <algorithm>
#include <cmath>

namespace meridian::estimate {

namespace {

std::optional<PricingTerms> SpotTerms(const JobSpec& job, const catalog::Offering& o,
                                      const RunWindow& w) {
  if (!job.preemptible || !o.spot_per_hour) return std::nullopt;
  const int instances = std::max(1, w.instances);
  std::optional<double> mult = SpotRunMultiplier(job, instances);
  if (!mult) return std::nullopt;
  PricingTerms t;
  t.model = PricingModel::kSpot;
  t.per_instance_hour = *o.spot_per_hour;
  t.run_multiplier = *mult;
  double loss_min = SpotLossHours(job) * 60;
  std::string rate = Fixed(kSpotReclaimsPerHour, 2) + " reclaims per hour";
  if (instances > 1) rate += " per instance, x " + std::to_string(instances) + " instances";
  t.notes.push_back("spot: may be reclaimed at any time (~" + rate +
                    " in the V100 spot traces); each loses ~" + Fixed(loss_min, 0) +
                    " min (half the checkpoint interval + restart), "
                    "expected rework +" + Fixed((*mult - 1) * 100, 1) + "% run time");
  return t;
}

std::optional<PricingTerms> FlexTerms(const JobSpec& job, const catalog::Offering& o,
                                      const catalog::MarketParameters& market,
                                      const RunWindow& w) {
  if (!FlexStartRefusal(job, market, w).empty()) return std::nullopt;
  std::optional<Money> price = FlexStartPrice(o, market);
  if (!price) return std::nullopt;
  PricingTerms t;
  t.model = PricingModel::kFlexStart;
  t.per_instance_hour = *price;
  t.wait_hours = market.flex_start_expected_wait_hours;
  t.notes.push_back("flex-start: queued for capacity, expected wait " + Fixed(t.wait_hours, 1) +
                    " h, runs at most " + Fixed(market.flex_start_max_run_hours, 0) + " h" +
                    (o.flex_start_per_hour ? "" : "; price = on-demand x (1 - " +
                                                      Fixed(market.flex_start_discount, 2) + ")"));
  return t;
}

}  // namespace

CheckpointTerms CheckpointOf(const Checkpoint& stated) {
  CheckpointTerms t;
  if (stated.interval_s) t.interval_s = *stated.interval_s;
  if (stated.restart_overhead_s) t.restart_overhead_s = *stated.restart_overhead_s;
  return t;
}

double CheckpointGb(const JobSpec& job) {
  if (job.checkpoint.size_gb) return *job.checkpoint.size_gb;
  return job.model.params_b.value_or(0) * kTrainingBytesPerParam;
}

double SpotLossHours(const JobSpec& job) {
  const CheckpointTerms c = CheckpointOf(job.checkpoint);
  return (static_cast<double>(c.interval_s) / 2 + static_cast<double>(c.restart_overhead_s)) /
         3600.0;
}

std::optional<double> SpotRunMultiplier(double loss_h, int instances) {
  const double lost_per_hour = kSpotReclaimsPerHour * std::max(1, instances) * loss_h;
  if (lost_per_hour >= 0.5) return std::nullopt;
  return 1.0 / (1.0 - lost_per_hour);
}

std::optional<double> SpotRunMultiplier(const JobSpec& job, int instances) {
  return SpotRunMultiplier(SpotLossHours(job), instances);
}

std::string FlexStartRefusal(const JobSpec& job, const catalog::MarketParameters& market,
                             const RunWindow& w) {
  if (job.kind == WorkloadKind::kRealtimeInference) {
    return "flex-start: never for real-time services";
  }
  if (w.run_hours > market.flex_start_max_run_hours) {
    return "flex-start: run of " + Fixed(w.run_hours, 1) + " h exceeds its " +
           Fixed(market.flex_start_max_run_hours, 0) + " h maximum";
  }
  if (w.deadline) {
    double slack_h = static_cast<double>(*w.deadline - w.at) / 3600.0 - w.run_hours;
    if (slack_h < market.flex_start_expected_wait_hours) {
      return "flex-start: slack of " + Fixed(slack_h, 1) + " h is less than the expected wait of " +
             Fixed(market.flex_start_expected_wait_hours, 1) + " h";
    }
  }
  return "";
}

std::optional<Money> FlexStartPrice(const catalog::Offering& o,
                                    const catalog::MarketParameters& market) {
  if (o.flex_start_per_hour) return *o.flex_start_per_hour;
  // Flex-start is a Compute Engine (Dynamic Workload Scheduler) product.
  if (o.provider != "gcp" || market.flex_start_discount <= 0) return std::nullopt;
  return o.on_demand_per_hour.Times(1.0 - market.flex_start_discount);
}

std::optional<Money> CatalogPrice(const catalog::Offering& o, PricingModel m,
                                  const catalog::MarketParameters& market) {
  return m == PricingModel::kFlexStart ? FlexStartPrice(o, market) : o.PricePerHour(m);
}

std::vector<PricingTerms> PricingFor(const JobSpec& job, const catalog::Offering& o,
                                     const catalog::MarketParameters& market,
                                     const RunWindow& w) {
  std::vector<PricingTerms> out;
  out.push_back({PricingModel::kOnDemand, o.on_demand_per_hour, 0, 1, 0, {}});
  if (auto spot = SpotTerms(job, o, w)) out.push_back(*spot);
  if (auto flex = FlexTerms(job, o, market, w)) out.push_back(*flex);
  if (o.reserved_1y_per_hour) {
    out.push_back(
        {PricingModel::kReserved, *o.reserved_1y_per_hour, 0, 1, kReservedTermHours, {}});
  }
  return out;
}

double BilledHours(const PricingTerms& t, double run_hours) {
  if (t.term_hours <= 0) return run_hours;
  return std::max(1.0, std::ceil(run_hours / t.term_hours)) * t.term_hours;
}

std::string CommitmentNote(const PricingTerms& t, double run_hours) {
  if (t.term_hours <= 0) return "";
  double billed = BilledHours(t, run_hours);
  int terms = static_cast<int>(std::lround(billed / t.term_hours));
  return "reserved: " + std::to_string(terms) + " x 1-year term (" + Fixed(t.term_hours, 0) +
         " h each), paid whether used or not: " + Fixed(billed, 0) + " h paid, " +
         Fixed(run_hours, 1) + " h used";
}

}  // namespace meridian::estimate
