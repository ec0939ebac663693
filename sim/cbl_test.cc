// The "Can't Be Late" baselines (Wu et al., NSDI'24) beside default, on every
// shipped availability trace: one job per window, windows back to back over
// the trace, in two regimes (48 h of work in 60 h, 24 h in 36 h; restart
// overhead 3 min). Each trace in turn is the spot history of one offering
// (p3.2xlarge in use1-az1, mapped as `simulate --spot-traces` maps it; no
// other offering has spot), so the policies differ only in when they take
// spot, on-demand or nothing. Costs are relative to running the work on
// on-demand. The offline optimum is a second method, written here: the
// Lagrangian bound of a dynamic programme over the trace's runs of equal
// availability (state: not started, idle, on spot, on on-demand), which no
// policy can beat. The figures are printed for docs/simulate.md ("Can't Be
// Late baselines").
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;
using testing::FixedJob;

constexpr int64_t kIntervalS = 15;  // checkpoints this often: a reclaim loses the restart only
constexpr int64_t kRestartS = 180;  // the paper's d = 3 min
constexpr UnixSeconds kT0 = 1704067200;  // 2024-01-01, tick 0 of every trace

struct Regime {
  int64_t work_h, window_h;
};

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

OfferingId Mapped(const catalog::Catalog& cat) {
  const auto& offers = cat.offerings();
  for (size_t i = 0; i < offers.size(); ++i) {
    if (offers[i].zone == "use1-az1" && offers[i].instance_type == "p3.2xlarge") {
      return OfferingId(static_cast<uint32_t>(i));
    }
  }
  return OfferingId();
}

World TraceWorld(const SpotTrace& trace, OfferingId offering) {
  World w;
  w.catalog = Embedded();
  FleetSpec elastic_only;
  elastic_only.elastic = true;
  w.fleet = *sched::Fleet::Build(elastic_only, w.catalog);
  ReplayMarketOptions mo;
  mo.start = kT0;
  mo.other_spot = OtherSpot::kNone;
  mo.mapped.push_back({offering, trace, std::nullopt});
  w.market = std::make_shared<ReplayMarket>(w.catalog, EmbeddedSpotTraces(), mo);
  w.elastic = std::make_shared<sched::ElasticIndex>(*w.catalog);
  return w;
}

// One job per window of the regime, back to back, as many as the trace holds.
Trace Windows(const Regime& r, int64_t period_s) {
  Trace t;
  const int64_t window_s = r.window_h * 3600;
  for (int64_t k = 0; (k + 1) * window_s <= period_s; ++k) {
    JobSpec s = FixedJob(1, "V100-16GB", 12);
    s.model.precision = Precision::kFp16;
    s.preemptible = true;
    s.checkpoint.interval_s = kIntervalS;
    s.checkpoint.restart_overhead_s = kRestartS;
    s.residency = {"aws:us-east-1"};
    AddJob(t, s, "w" + std::to_string(k), k * window_s, r.work_h * 3600, window_s);
  }
  return t;
}

// A run of equal availability inside a window.
struct Piece {
  double len_s;
  bool up;
};

std::vector<Piece> Pieces(const SpotTrace& tr, int64_t from, int64_t to) {
  std::vector<Piece> out;
  for (int64_t s = from; s < to;) {
    const int64_t next = std::min(to, (s / tr.gap_s + 1) * tr.gap_s);
    const bool up = tr.CountAt(s) > 0;
    if (!out.empty() && out.back().up == up) {
      out.back().len_s += static_cast<double>(next - s);
    } else {
      out.push_back({static_cast<double>(next - s), up});
    }
    s = next;
  }
  return out;
}

// min over schedules of (cost - lambda x progress) over the pieces; states:
// 0 not started, 1 idle after a start, 2 on spot, 3 on on-demand. Entering a
// running state after the first start pays the restart (time at its price,
// no progress), as the engine does; a job never started pays none.
double Relaxed(const std::vector<Piece>& pieces, double spot_ps, double od_ps, double lambda) {
  constexpr double kInf = 1e300;
  std::array<double, 4> v = {0, kInf, kInf, kInf};
  for (const Piece& p : pieces) {
    std::array<double, 4> n = {kInf, kInf, kInf, kInf};
    for (int from = 0; from < 4; ++from) {
      if (v[from] >= kInf) continue;
      const int idle = from == 0 ? 0 : 1;
      n[idle] = std::min(n[idle], v[from]);
      for (int to = 2; to <= 3; ++to) {
        if (to == 2 && !p.up) continue;
        const double overhead = from == 0 || from == to ? 0 : static_cast<double>(kRestartS);
        const double progress = std::max(0.0, p.len_s - overhead);
        const double cost = (to == 2 ? spot_ps : od_ps) * p.len_s;
        n[to] = std::min(n[to], v[from] + cost - lambda * progress);
      }
    }
    v = n;
  }
  return *std::min_element(v.begin(), v.end());
}

// The offline optimum's lower bound for `work_s` of work in the window:
// max over lambda >= 0 of Relaxed(lambda) + lambda x work_s (concave in
// lambda; golden-section search). Any schedule that finishes the work pays
// cost >= cost - lambda x (progress - work) >= that bound.
double OptimumBound(const std::vector<Piece>& pieces, double spot_ps, double od_ps, double work_s) {
  auto f = [&](double l) { return Relaxed(pieces, spot_ps, od_ps, l) + l * work_s; };
  double a = 0, b = 20 * od_ps;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 80; ++i) {
    if (fc < fd) {
      a = c, c = d, fc = fd, d = a + g * (b - a), fd = f(d);
    } else {
      b = d, d = c, fd = fc, c = b - g * (b - a), fc = f(c);
    }
  }
  return std::max({f(a), f(b), fc, fd});
}

struct Tally {
  double cost = 0, on_demand = 0;
  int jobs = 0, missed = 0;
  double Relative() const { return on_demand > 0 ? cost / on_demand : 0; }
};

constexpr std::array<const char*, 3> kPolicies = {"default", "cbl-greedy", "cbl-up"};

// Per regime: the policies' tallies and the optimum's, over every trace.
struct Table {
  std::array<Tally, kPolicies.size()> policy;
  Tally optimum;
};

Table Measure(const Regime& r) {
  Table out;
  const OfferingId o = Mapped(*Embedded());
  EXPECT_TRUE(o.valid());
  const catalog::Offering& off = Embedded()->offerings()[o.index()];
  const double od_ps = off.on_demand_per_hour.dollars() / 3600.0;
  const double spot_ps = off.spot_per_hour->dollars() / 3600.0;
  for (const SpotTrace& tr : EmbeddedSpotTraces()) {
    if (tr.kind != "availability") continue;
    SCOPED_TRACE(tr.name);
    const World w = TraceWorld(tr, o);
    const Trace t = Windows(r, tr.period_s());
    std::vector<double> bound(t.jobs.size());
    for (size_t j = 0; j < t.jobs.size(); ++j) {
      const int64_t from = t.jobs[j].submit_s, to = from + t.jobs[j].deadline_s;
      bound[j] = OptimumBound(Pieces(tr, from, to), spot_ps, od_ps, static_cast<double>(r.work_h * 3600));
      out.optimum.cost += bound[j];
      out.optimum.on_demand += od_ps * static_cast<double>(r.work_h * 3600);
      ++out.optimum.jobs;
    }
    for (size_t p = 0; p < kPolicies.size(); ++p) {
      // The spot/on-demand decision alone: moves at checkpoints (sim/migrate_test.cc,
      // docs/simulate.md) ask the core at every checkpoint of every spot
      // job and would make this comparison of one decision ~20x slower.
      EngineOptions decision_only;
      decision_only.migrations = false;
      const PolicyRun run = testing::RunPolicy(t, w, kPolicies[p], decision_only);
      for (size_t j = 0; j < t.jobs.size(); ++j) {
        const JobOutcome& jo = run.jobs[j];
        const double cost = static_cast<double>(jo.cost_micros) / 1e6;
        Tally& tally = out.policy[p];
        tally.cost += cost;
        tally.on_demand += od_ps * static_cast<double>(r.work_h * 3600);
        ++tally.jobs;
        const bool met = jo.state == JobState::kDone &&
                         jo.end_s <= t.jobs[j].submit_s + t.jobs[j].deadline_s;
        tally.missed += met ? 0 : 1;
        // No schedule is cheaper than the offline optimum (a cent of rounding).
        EXPECT_GE(cost + 0.01, bound[j]) << kPolicies[p] << " window " << j;
      }
    }
  }
  return out;
}

std::string Pct(double x) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << 100.0 * x << "%";
  return s.str();
}

TEST(CantBeLate, DefaultCostsNoMoreThanTheBaselinesAndMissesNoDeadline) {
  const std::array<Regime, 2> regimes = {Regime{48, 60}, Regime{24, 36}};
  std::cout << "| job | windows | default | cbl-greedy | cbl-up | offline optimum (bound) |\n"
            << "|---|---:|---:|---:|---:|---:|\n";
  for (const Regime& r : regimes) {
    const Table tb = Measure(r);
    const Tally &def = tb.policy[0], &greedy = tb.policy[1], &up = tb.policy[2];
    EXPECT_GT(def.jobs, 0);
    for (const Tally& t : tb.policy) EXPECT_EQ(t.missed, 0);
    EXPECT_LE(def.cost, std::min(greedy.cost, up.cost) + 1e-6);
    EXPECT_LE(tb.optimum.cost, def.cost);
    std::cout << "| " << r.work_h << " h in " << r.window_h << " h | " << def.jobs << " | "
              << Pct(def.Relative()) << " | " << Pct(greedy.Relative()) << " | "
              << Pct(up.Relative()) << " | " << Pct(tb.optimum.Relative()) << " |\n";
    std::cout << std::fixed << std::setprecision(2) << "  $ default " << def.cost << ", cbl-greedy "
              << greedy.cost << " (default " << Pct(1 - def.cost / greedy.cost) << " cheaper), cbl-up " << up.cost
              << " (default " << Pct(1 - def.cost / up.cost) << " cheaper), optimum " << tb.optimum.cost
              << "; on-demand " << def.on_demand << "; missed: default " << def.missed << ", greedy "
              << greedy.missed << ", up " << up.missed << "\n";
  }
}

}  // namespace
}  // namespace meridian::sim
