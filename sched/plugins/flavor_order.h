// flavor_order (Filter + Score): Kueue's ordered resource flavors. Each
// candidate is of one flavor:
//   reserved      a fleet node of a reserved cluster (committed capacity)
//   owned         a fleet node of an owned cluster
//   on-demand     a catalog offering bought on demand
//   spot          a catalog offering bought as spot (preemptible jobs only:
//                 the framework offers spot only to them)
//   flex-start    a catalog offering bought as flex-start
//   new-reservation  a catalog offering bought as a 1-year reservation
// The profile lists the flavors a job may use, in order; like a ClusterQueue's
// flavor list, the first flavor with room is used, the next only when it has
// none.
//
// Filter: rejects candidates of flavors not in `order`.
// Score: raw = -(position in `order`); NormalizeScore maps position i of n
//   flavors to a fixed 100 - i x 100 / (n - 1) (independent of the other
//   candidates: the first flavor 100, the last 0; one flavor: 100). With the
//   weight set above every other score plugin's combined weight, the flavor
//   order dominates and other plugins break ties within a flavor:
//   [reserved, owned, on-demand, spot]: 100, 67, 34, 0.
//
// Arguments:
//   order: [reserved, owned, on-demand, spot]   flavors in preference order,
//                                               each at most once, at least one
#pragma once

#include <array>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

enum class Flavor : uint8_t { kReserved, kOwned, kOnDemand, kSpot, kFlexStart, kNewReservation };
inline constexpr size_t kFlavorCount = 6;
std::string_view ToString(Flavor f);
Flavor FlavorOf(const CycleContext& ctx, const Candidate& c);

class FlavorOrder final : public Plugin, public FilterPlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "flavor_order";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit FlavorOrder(std::vector<Flavor> order);

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitStatic; }
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void NormalizeScore(const CycleContext& ctx, std::span<int64_t> scores) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  // Position of `f` in the order, or -1 when not listed.
  int Position(Flavor f) const { return position_[static_cast<size_t>(f)]; }

 private:
  std::vector<Flavor> order_;
  std::array<int, kFlavorCount> position_{};
};

}  // namespace meridian::sched
