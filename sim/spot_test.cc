// Spot on the real traces ("Can't Be Late", NSDI'24): preemptible 24-hour
// V100 jobs with 36- or 30-hour deadlines in aws:us-east-1 or aws:us-west-2, whose
// p3.2xlarge zones replay the traces measured there. The deadline-aware default never misses
// a deadline that on-demand alone meets, and costs less than always-on-demand.
// For comparison, the paper's greedy policy (spot while it lasts, wait for it
// while the slack allows, then on-demand to the end) on the cheapest zone,
// and skypilot-like (spot with failover, no deadline reasoning). The figures
// are printed for docs/simulate.md ("Spot").
#include <gtest/gtest.h>

#include <iostream>
#include <tuple>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;
using testing::FixedJob;

constexpr int64_t kWorkS = 24 * 3600;
constexpr int64_t kIntervalS = 1800, kRestartS = 300;

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

Trace SpotJobs(int n, const std::string& region, int64_t deadline_s) {
  Trace t;
  for (int i = 0; i < n; ++i) {
    JobSpec s = FixedJob(1, "V100-16GB", 12);
    s.model.precision = Precision::kFp16;  // V100 has no bf16
    s.preemptible = true;
    s.checkpoint.interval_s = kIntervalS;
    s.checkpoint.restart_overhead_s = kRestartS;
    s.residency = {region};
    AddJob(t, s, "spot-" + std::to_string(i), static_cast<int64_t>(i) * 7 * 3600, kWorkS, deadline_s);
  }
  return t;
}

struct Figures {
  double cost = 0;
  int met = 0;
  int64_t preemptions = 0;
};

Figures Of(const Trace& t, const World& w, const PolicyRun& run) {
  Summary s = Summarize(t, w, run);
  return {static_cast<double>(s.cost_micros) / 1e6,
          static_cast<int>(std::llround(s.deadline_met_frac.value_or(0) * static_cast<double>(s.deadline_jobs))),
          s.preemptions};
}

// The greedy policy of "Can't Be Late" on one zone: run on spot whenever it
// is up; after a reclaim wait for spot while the job could still finish on
// on-demand, and switch to on-demand for good once it must.
Figures CantBeLateGreedy(const Trace& t, const ReplayMarket& m, OfferingId o, Money spot, Money od,
                         int64_t deadline_s) {
  Figures f;
  for (const TraceJob& j : t.jobs) {
    const UnixSeconds deadline = m.options().start + j.submit_s + deadline_s;
    UnixSeconds now = m.options().start + j.submit_s;
    int64_t left = kWorkS, overhead = 0;
    double cost = 0;
    while (left > 0) {
      if (deadline - now <= left + overhead + 60) {  // must switch: on-demand to the end
        cost += od.dollars() * static_cast<double>(left + overhead) / 3600;
        now += left + overhead;
        left = 0;
        break;
      }
      if (!m.SpotAvailable(o, now)) {
        now += 60;  // wait for spot (one-minute steps)
        continue;
      }
      const UnixSeconds end = now + overhead + left;
      const UnixSeconds stop = std::min(end, m.NextSpotReclaim(o, now).value_or(end));
      cost += spot.dollars() * static_cast<double>(stop - now) / 3600;
      if (stop == end) {
        now = end;
        left = 0;
        break;
      }
      const int64_t progress = std::max<int64_t>(0, stop - now - overhead);
      left -= progress / kIntervalS * kIntervalS;
      overhead = kRestartS;
      ++f.preemptions;
      now = stop;
    }
    f.cost += cost;
    f.met += now <= deadline ? 1 : 0;
  }
  return f;
}

class Spot : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(Spot, DeadlineAwareDefaultMeetsWhatOnDemandMeetsForLess) {
  const std::string region = std::get<0>(GetParam());
  const int64_t deadline_s = std::get<1>(GetParam()) * int64_t{3600};
  const Trace t = SpotJobs(40, region, deadline_s);
  FleetSpec elastic_only;
  elastic_only.elastic = true;
  World w = testing::MakeWorld(Embedded(), elastic_only, 1, 1704067200);  // 2024-01-01

  auto on_demand = *sched::EmbeddedProfile("default");
  on_demand.options.pricing_models = {PricingModel::kOnDemand};
  JobShapes shapes = JobShapes::Make(t, *w.catalog);
  auto od_run = Simulate(t, shapes, w, on_demand, "on-demand only");
  ASSERT_TRUE(od_run.ok()) << od_run.status().ToString();
  const PolicyRun def = testing::RunPolicy(t, w, "default");
  const PolicyRun sky = testing::RunPolicy(t, w, "skypilot-like");
  const Figures od = Of(t, w, *od_run), dflt = Of(t, w, def), greedy_sky = Of(t, w, sky);

  // The cheapest p3.2xlarge spot zone of us-east-1, for the greedy reference.
  const auto& offers = w.catalog->offerings();
  OfferingId best;
  for (size_t i = 0; i < offers.size(); ++i) {
    const catalog::Offering& o = offers[i];
    if (o.region != region || o.instance_type != "p3.2xlarge" || !o.spot_per_hour) continue;
    if (!best.valid() || *o.spot_per_hour < *offers[best.index()].spot_per_hour) best = OfferingId(static_cast<uint32_t>(i));
  }
  ASSERT_TRUE(best.valid());
  ASSERT_TRUE(w.market->AssignmentOf(best).same_region);
  const Figures cbl = CantBeLateGreedy(t, *w.market, best, *offers[best.index()].spot_per_hour,
                                       offers[best.index()].on_demand_per_hour, deadline_s);

  const int n = static_cast<int>(t.jobs.size());
  EXPECT_EQ(od.met, n);          // on-demand alone meets every deadline ...
  EXPECT_EQ(dflt.met, n);        // ... and so does the deadline-aware default
  EXPECT_LT(dflt.cost, od.cost); // for less
  EXPECT_GT(dflt.preemptions, 0);  // it did meet reclaims
  std::cout << "spot figures (" << n << " jobs of 24 h, deadline " << deadline_s / 3600 << " h, 1 x V100, " << region << ")\n"
            << "  on-demand only   $" << od.cost << "  met " << od.met << "  reclaims " << od.preemptions << "\n"
            << "  default          $" << dflt.cost << "  met " << dflt.met << "  reclaims " << dflt.preemptions << "\n"
            << "  skypilot-like    $" << greedy_sky.cost << "  met " << greedy_sky.met << "  reclaims " << greedy_sky.preemptions << "\n"
            << "  CBL greedy       $" << cbl.cost << "  met " << cbl.met << "  reclaims " << cbl.preemptions
            << "  (" << offers[best.index()].zone << ")\n";
}

// us-east-1: spot up 17-60% of the time per zone; us-west-2: 50-91%.
// Deadlines 36 h (12 h of slack) and 30 h (6 h).
INSTANTIATE_TEST_SUITE_P(MeasuredRegions, Spot,
                         ::testing::Combine(::testing::Values("aws:us-east-1", "aws:us-west-2"),
                                            ::testing::Values(36, 30)));

}  // namespace
}  // namespace meridian::sim
