#include "sched/plugins/flavor_order.h"

#include <algorithm>

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr std::array<std::string_view, kFlavorCount> kFlavorNames = {
    "reserved", "owned", "on-demand", "spot", "flex-start", "new-reservation"};

}  // namespace

std::string_view ToString(Flavor f) { return kFlavorNames[static_cast<size_t>(f)]; }

Flavor FlavorOf(const CycleContext& ctx, const Candidate& c) {
  if (c.on_fleet()) {
    const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
    return cl.pricing == CapacityPricing::kReserved ? Flavor::kReserved : Flavor::kOwned;
  }
  switch (c.pricing) {
    case PricingModel::kOnDemand: return Flavor::kOnDemand;
    case PricingModel::kSpot: return Flavor::kSpot;
    case PricingModel::kFlexStart: return Flavor::kFlexStart;
    case PricingModel::kReserved: return Flavor::kNewReservation;
  }
  return Flavor::kOnDemand;
}

Result<std::unique_ptr<Plugin>> FlavorOrder::Create(PluginArgs& args) {
  std::vector<Flavor> order;
  if (!args.Has("order")) {
    order = {Flavor::kReserved, Flavor::kOwned, Flavor::kOnDemand, Flavor::kSpot};
  } else {
    std::vector<std::string> names = args.Strings("order");
    if (names.empty()) args.Error("order", "must list at least one flavor");
    for (const std::string& n : names) {
      size_t i = 0;
      while (i < kFlavorCount && kFlavorNames[i] != n) ++i;
      if (i == kFlavorCount) {
        args.Error("order", "\"" + n + "\" is not a flavor (reserved, owned, on-demand, spot, "
                            "flex-start, new-reservation)");
        continue;
      }
      Flavor f = static_cast<Flavor>(i);
      if (std::find(order.begin(), order.end(), f) != order.end()) {
        args.Error("order", "\"" + n + "\" is listed twice");
        continue;
      }
      order.push_back(f);
    }
  }
  return FinishPlugin<FlavorOrder>(args, std::move(order));
}

FlavorOrder::FlavorOrder(std::vector<Flavor> order) : order_(std::move(order)) {
  position_.fill(-1);
  for (size_t i = 0; i < order_.size(); ++i) position_[static_cast<size_t>(order_[i])] = static_cast<int>(i);
}

size_t FlavorOrder::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                           Rejections& rejected) const {
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    return Position(FlavorOf(ctx, c)) < 0 ? "flavor not in the profile's flavor order" : "";
  });
}

int64_t FlavorOrder::Score(const CycleContext& ctx, const Candidate& c) const {
  int p = Position(FlavorOf(ctx, c));
  return p < 0 ? -static_cast<int64_t>(kFlavorCount) : -static_cast<int64_t>(p);
}

void FlavorOrder::NormalizeScore(const CycleContext&, std::span<int64_t> scores) const {
  const int64_t last = static_cast<int64_t>(order_.size()) - 1;
  for (int64_t& s : scores) {
    const int64_t pos = -s;
    s = last <= 0 ? 100 : pos > last ? 0 : 100 - pos * 100 / last;
  }
}

std::string FlavorOrder::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const {
  const int64_t last = static_cast<int64_t>(order_.size()) - 1;
  std::string s = "flavor " + std::string(ToString(FlavorOf(ctx, c))) + ", " +
                  std::to_string(-raw + 1) + " of " + std::to_string(order_.size());
  if (last > 0) s += ": 100 - " + std::to_string(-raw) + " x 100 / " + std::to_string(last);
  return s;
}

}  // namespace meridian::sched
