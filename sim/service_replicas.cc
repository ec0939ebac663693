#include "sim/service_replicas.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sched/plugins/realtime_replicas.h"

namespace meridian::sim {

namespace {

// P(exactly i of n up), i = 0..n, each up with `up`.
std::vector<double> Binomial(int n, double up) {
  std::vector<double> p(static_cast<size_t>(n) + 1);
  double choose = 1;  // C(n, i), built from C(n, 0)
  for (int i = 0; i <= n; ++i) {
    if (i > 0) choose = choose * (n - i + 1) / i;
    p[static_cast<size_t>(i)] = choose * std::pow(up, i) * std::pow(1.0 - up, n - i);
  }
  return p;
}

}  // namespace

ReplicaTerms ReplicaTermsOf(const sched::Profile& profile) {
  ReplicaTerms t;
  const auto& models = profile.options.pricing_models;
  const bool spot = std::find(models.begin(), models.end(), PricingModel::kSpot) != models.end();
  for (const sched::PluginConfig& p : profile.plugins) {
    if (p.name != sched::RealtimeReplicas::kName) continue;
    sched::PluginArgs args = p.args;  // reading marks keys; the profile's copy stays as it is
    t.sized = true;
    t.spot = spot;
    t.options = sched::RealtimeReplicas::OptionsOf(args);
  }
  return t;
}

double SpotReplicaUp(double zone, double reclaims_per_hour, int64_t replace_s) {
  return std::max(0.0, zone * (1.0 - reclaims_per_hour * static_cast<double>(replace_s) / 3600.0));
}

double AtLeastUp(int k, int on_demand, double od_up, int spot, double spot_up) {
  const std::vector<double> od = Binomial(on_demand, od_up);
  const std::vector<double> sp = Binomial(spot, spot_up);
  double p = 0;
  for (int i = 0; i <= on_demand; ++i) {
    for (int s = std::max(0, k - i); s <= spot; ++s) p += od[static_cast<size_t>(i)] * sp[static_cast<size_t>(s)];
  }
  return p;
}

ReplicaMix CheapestMix(int k, double target, double od_up, double spot_up, int64_t od_price,
                       const std::vector<int64_t>& spot_prices, int max_on_demand) {
  ReplicaMix best{max_on_demand, 0};
  int64_t best_price = od_price * max_on_demand;
  std::vector<int64_t> spot_cost(spot_prices.size() + 1, 0);  // of the first s
  for (size_t s = 0; s < spot_prices.size(); ++s) spot_cost[s + 1] = spot_cost[s] + spot_prices[s];
  const int max_spot = static_cast<int>(spot_prices.size());
  for (int d = 0; d <= max_on_demand; ++d) {
    for (int s = std::max(0, k - d); s <= max_spot; ++s) {
      const int64_t price = od_price * d + spot_cost[static_cast<size_t>(s)];
      if (price > best_price || (price == best_price && d + s >= best.on_demand + best.spot)) continue;
      if (AtLeastUp(k, d, od_up, s, spot_up) < target - 1e-12) continue;
      best = {d, s};
      best_price = price;
    }
  }
  return best;
}

}  // namespace meridian::sim
