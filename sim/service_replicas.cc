#include "sim/service_replicas.h"

#include <algorithm>
#include <vector>

#include "sched/plugins/realtime_replicas.h"

namespace meridian::sim {

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

double AtLeastUp(int k, int on_demand, double od_up, int spot, double spot_up) {
  return estimate::AtLeastUp(k, on_demand, od_up, std::vector<double>(static_cast<size_t>(std::max(0, spot)), spot_up));
}

ReplicaMix CheapestMix(int k, double target, double od_up, double spot_up, int64_t od_price,
                       const std::vector<int64_t>& spot_prices, int max_on_demand) {
  std::vector<SpotCandidate> spot;
  for (int64_t price : spot_prices) spot.push_back({price, spot_up});
  return estimate::CheapestMix(k, target, od_up, od_price, spot, max_on_demand);
}

}  // namespace meridian::sim
