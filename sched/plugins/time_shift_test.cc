#include "sched/plugins/time_shift.h"

#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr int64_t kHour = 3600;

// The catalog's market, with prices halved from `cheap_from` on.
class CheapLater final : public MarketView {
 public:
  CheapLater(const MarketView& base, UnixSeconds cheap_from) : base_(base), from_(cheap_from) {}
  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override {
    auto p = base_.PricePerHour(o, m, t);
    return p && t >= from_ ? std::optional<Money>(p->Times(0.5)) : p;
  }
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override { return base_.SpotAvailable(o, t); }
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override {
    return base_.FlexStartWaitHours(o, t);
  }
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override { return base_.CarbonGPerKwh(r, t); }

 private:
  const MarketView& base_;
  UnixSeconds from_;
};

Candidate Elastic(const testing::World& w, const char* region, const char* type, uint8_t demand,
                  UnixSeconds start, PricingModel m = PricingModel::kOnDemand) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.pricing = m;
  c.offering = testing::Offering(w, region, type);
  c.region = FindRegionId(*w.catalog, region);
  c.instances = 1;
  c.demand = demand;
  c.start = start;
  return c;
}

TEST(TimeShiftTest, GreenestShiftOverHourlyCarbon) {
  // 12 h at 500 then 12 h at 300 (the test series from 12:00), then 500 again.
  std::vector<double> day(48);
  for (size_t h = 0; h < day.size(); ++h) day[h] = (h / 12) % 2 == 0 ? 500 : 300;
  struct Case {
    const char* name;
    int run, max_shift;
    double min_gain;
    int want;
  } cases[] = {
      // 2 h at 500 now; from +12 h the mean is 300 (40% lower): shift 12
      {"two hours, a day ahead", 2, 24, 0.05, 12},
      // within 6 h every 2 h window is 500: no gain
      {"two hours, 6 h ahead", 2, 6, 0.05, 0},
      // 4 h run: +10 h covers 500, 500, 300, 300 = 400 (20% lower); +12 h is 300: 12
      {"four hours", 4, 20, 0.05, 12},
      // a 10 h run: +11 h: 500 + 9 x 300 = 3200 vs 5000 now, but +12 h: 3000: 12
      {"ten hours", 10, 12, 0.05, 12},
      // asking for 50% gain: 300 vs 500 is 40%: none
      {"gain not enough", 2, 24, 0.5, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(TimeShift::GreenestShift(std::span<const double>(day).first(
                                           static_cast<size_t>(c.max_shift + c.run)),
                                       c.run, c.max_shift, c.min_gain),
              c.want)
        << c.name;
  }
}

TEST(TimeShiftTest, DefersBatchWorkToGreenerHoursWithinItsSlack) {
  testing::World w = MakeWorld();
  const UnixSeconds noon = kNow + 12 * kHour;  // us-east-1 series: 500 g/kWh until midnight, then 300
  struct Case {
    const char* name;
    std::optional<int64_t> deadline_h;  // after submission (at noon)
    WorkloadKind kind;
    std::vector<UnixSeconds> want;  // starts proposed
  } cases[] = {
      // no deadline, 24 h ahead: midnight (+12 h) is 40% greener at the same price
      {"no deadline", std::nullopt, WorkloadKind::kBatchInference, {noon + 12 * kHour}},
      // 20 h deadline: slack 20 - 2 - 0.08 = 17.9 h -> 17 h window: midnight fits
      {"20 h deadline", 20, WorkloadKind::kBatchInference, {noon + 12 * kHour}},
      // 8 h deadline: slack 5.9 h -> 5 h window, all at 500: nothing
      {"8 h deadline", 8, WorkloadKind::kBatchInference, {}},
      // real-time services are never deferred
      {"real-time", std::nullopt, WorkloadKind::kRealtimeInference, {}},
  };
  TimeShift shift({});
  for (const auto& c : cases) {
    JobSpec spec = TwoHourJob("batch", 1, 40);
    spec.kind = c.kind;
    spec.resources.gpu_models = {"L40S"};
    if (c.deadline_h) spec.deadline.after_submit_s = *c.deadline_h * kHour;
    QueuedJob job = Queue(w, spec, 1, noon);
    testing::Cycle cy(w, job);
    cy.snap.now = noon;
    std::vector<Candidate> generated = {
        Elastic(w, "aws:us-east-1", "g6e.xlarge", 0, noon),
        // a fleet node: not deferred without defer_fleet
        [] {
          Candidate n;
          n.node = NodeId(0);
          n.gpus_per_node = 1;
          return n;
        }(),
    };
    generated[1].start = noon;
    std::vector<Candidate> out;
    std::vector<NodeId> members;
    CandidateSink sink(&out, &members, 64, 3);
    shift.AddCandidates(cy.ctx, generated, sink);
    std::vector<UnixSeconds> got;
    for (const Candidate& o : out) got.push_back(o.start);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(TimeShiftTest, DefersToCheaperHours) {
  testing::World w = MakeWorld();
  CheapLater market(*w.market, kNow + 3 * kHour);
  JobSpec spec = TwoHourJob("batch", 1, 40);
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  cy.snap.market = &market;
  // us-central1 has a flat yearly carbon figure: no greener hour; the price halves from +3 h
  std::vector<Candidate> generated = {
      Elastic(w, "gcp:us-central1", "a3-highgpu-1g", 0, kNow),
      // flex-start already waits: never shifted
      Elastic(w, "gcp:europe-west4", "a2-ultragpu-1g", 0, kNow + 2 * kHour, PricingModel::kFlexStart),
  };
  std::vector<Candidate> out;
  std::vector<NodeId> members;
  CandidateSink sink(&out, &members, 64, 3);
  TimeShift({}).AddCandidates(cy.ctx, generated, sink);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].start, kNow + 3 * kHour);
  EXPECT_EQ(out[0].offering, generated[0].offering);
  EXPECT_EQ(out[0].source, 3);
}

TEST(TimeShiftTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{max_hours: 100}");
  ASSERT_TRUE(args.ok());
  auto made = TimeShift::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("max_hours"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sched

namespace meridian::sched {
namespace {

// Through the scheduler with the default profile: an L40S job (only the
// g6e.xlarge offering in aws:us-east-1 sells it; no spot, no flex-start) at
// noon, when that region's series is at 500 g/kWh until midnight, then 300.
// Starting at midnight costs the same 3.722 $, so carbon breaks the tie: a
// kDefer to 00:00. A job whose deadline leaves no room starts now.
TEST(TimeShiftTest, DefaultProfileDefersToGreenerHours) {
  testing::World w = MakeWorld();
  auto profile = EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const UnixSeconds noon = kNow + 12 * kHour;
  struct Case {
    const char* name;
    std::optional<int64_t> deadline_h;
    DecisionKind kind;
    UnixSeconds start;
  } cases[] = {
      {"no deadline", std::nullopt, DecisionKind::kDefer, noon + 12 * kHour},
      // slack 20 - 2 - 0.08 = 17.9 h: midnight (+12 h) fits
      {"20 h deadline", 20, DecisionKind::kDefer, noon + 12 * kHour},
      // slack 5.9 h: every start within it is at 500 g/kWh: now
      {"8 h deadline", 8, DecisionKind::kPlace, noon},
  };
  for (const auto& c : cases) {
    JobSpec spec = TwoHourJob("render", 1, 40);
    spec.resources.gpu_models = {"L40S"};
    if (c.deadline_h) spec.deadline.after_submit_s = *c.deadline_h * kHour;
    QueuedJob job = Queue(w, spec, 1, noon);
    Decision d = (*s)->Decide(job, w.At(noon));
    EXPECT_EQ(d.kind, c.kind) << c.name << "\n" << FormatDecision(d);
    EXPECT_EQ(d.start, c.start) << c.name;
  }
}

}  // namespace
}  // namespace meridian::sched
