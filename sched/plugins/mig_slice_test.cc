#include "sched/plugins/mig_slice.h"

#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Test H100 MIG profiles (no placement data: the aligned rule applies):
//   0 1g.10gb span 1, starts 0..6; 1 1g.20gb span 2, starts 0,2,4,6;
//   2 3g.40gb span 4, starts 0,4;  3 7g.80gb span 8, start 0.
// Test fleet node 2: H100 x2, each GPU laid out (sched/fleet.h, widest
// first) as 3g.40gb at 0-3, 1g.10gb at 4 and at 5, 1g.20gb at 6-7.

// A job that fits the smallest slice: 8 GiB stated, MIG allowed, H100 only.
QueuedJob SmallJob(const testing::World& w, uint32_t id) {
  JobSpec spec = TwoHourJob("small" + std::to_string(id), 1, 8);
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  return Queue(w, spec, id);
}

Candidate Mig(uint32_t node, uint8_t gpu, uint8_t profile, MigShape shape) {
  Candidate c;
  c.kind = CandidateKind::kMigSlice;
  c.node = NodeId(node);
  c.mig_gpu = gpu;
  c.mig_profile = profile;
  c.mig_shape = shape;
  return c;
}

void HoldMig(testing::World& w, uint32_t job, uint32_t node, uint8_t gpu, MigShape shape) {
  Allocation a;
  a.job = JobId(job);
  a.nodes.push_back({NodeId(node), 0, MigShare{gpu, shape}, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

std::unique_ptr<Scheduler> Make(const testing::World& w, const char* yaml) {
  auto profile = ParseProfile(yaml, "t.yaml");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

constexpr const char* kProfile = R"(name: t
plugins:
  - name: gpu_fit
  - name: mig_slice
  - name: cheapest_price
)";

// The filter's reason for one candidate; "" when kept.
std::string Why(const MigSlice& p, const CycleContext& ctx, Candidate c) {
  Rejections r;
  r.Reset("mig_slice", true);
  std::vector<Candidate> one = {c};
  return p.Filter(ctx, one, r) == 1 ? "" : r.examples()[0].second;
}

struct FilterCase {
  const char* name;
  Candidate c;
  std::string_view want;  // "" = kept
};

TEST(MigSliceTest, FiltersTakenSmallAndWastefulSlices) {
  testing::World w = MakeWorld();
  HoldMig(w, 99, 2, 0, {4, 1});
  QueuedJob job = SmallJob(w, 1);
  ASSERT_EQ(job.demands[0].mig_profile, 0);  // 1g.10gb
  JobSpec mid = TwoHourJob("mid", 1, 15);
  mid.resources.mig = true;
  mid.resources.gpu_models = {"H100-80GB"};
  QueuedJob mid_job = Queue(w, mid, 2);  // 1g.20gb (span 2) is its smallest
  testing::Cycle cy(w, job);
  testing::Cycle cy_mid(w, mid_job);
  MigSlice plugin({3, 8});
  const FilterCase cases[] = {
      {"1g.10gb at 5", Mig(2, 0, 0, {5, 1}), ""},
      {"1g.10gb at 4 on GPU 0, held", Mig(2, 0, 0, {4, 1}), "MIG instance already allocated"},
      {"1g.10gb at 4 on GPU 1", Mig(2, 1, 0, {4, 1}), ""},
      {"not an instance of the layout", Mig(2, 1, 0, {2, 1}), "MIG instance already allocated"},
      // 3g.40gb: 4 - 1 = 3 slices wasted <= 3.
      {"3g.40gb", Mig(2, 0, 2, {0, 4}), ""},
  };
  for (const FilterCase& c : cases) EXPECT_EQ(Why(plugin, cy.ctx, c.c), c.want) << c.name;
  Rejections r;
  r.Reset("mig_slice", true);
  std::vector<Candidate> two = {Mig(2, 0, 0, {4, 1}), Mig(2, 0, 1, {6, 2})};
  EXPECT_EQ(plugin.Filter(cy.ctx, two, r), 1u);
  EXPECT_EQ(r.examples()[0].second, "MIG instance already allocated");
  // For the 1g.20gb job a 1g.10gb is too small; with max_waste_slices 1 a
  // 3g.40gb (4 - 2 = 2 wasted) is too large.
  MigSlice tight({1, 8});
  std::vector<Candidate> mids = {Mig(2, 1, 0, {4, 1}), Mig(2, 1, 2, {0, 4}), Mig(2, 1, 1, {6, 2})};
  Rejections rm;
  rm.Reset("mig_slice", true);
  EXPECT_EQ(tight.Filter(cy_mid.ctx, mids, rm), 1u);
  ASSERT_EQ(rm.examples().size(), 2u);
  EXPECT_EQ(rm.examples()[0].second, "MIG instance smaller than the job's smallest profile");
  EXPECT_EQ(rm.examples()[1].second, "MIG instance wastes more slices than max_waste_slices");
  EXPECT_EQ(mids[0].mig_profile, 1);
}

TEST(MigSliceTest, ScoresBestFitOnALayout) {
  testing::World w = MakeWorld();
  QueuedJob job = SmallJob(w, 1);
  testing::Cycle cy(w, job);
  MigSlice plugin({});
  ASSERT_TRUE(plugin.Prepare({*w.fleet, *w.catalog}).ok());
  // Empty node: 1g.10gb at 4 on GPU 0 leaves 7 free slices; the 3g.40gb, the
  // other 1g.10gb and the 1g.20gb still fit (3 profiles); nothing stranded;
  // 7 + 8 free on the node.
  //   key = ((((0 x 16 + 7) x 16 + (15 - 3)) x 16 + 0) x 1024 + 15 = 2031631
  EXPECT_EQ(plugin.Score(cy.ctx, Mig(2, 0, 0, {4, 1})), -2031631);
  // A 1g.20gb wastes 1 slice: any exact fit beats it.
  EXPECT_LT(plugin.Score(cy.ctx, Mig(2, 0, 1, {6, 2})), plugin.Score(cy.ctx, Mig(2, 1, 0, {5, 1})));
  // A whole GPU for a job that fits a slice is worse than any slice.
  Candidate whole;
  whole.kind = CandidateKind::kNode;
  whole.node = NodeId(0);
  whole.gpus_per_node = 1;
  EXPECT_LT(plugin.Score(cy.ctx, whole), plugin.Score(cy.ctx, Mig(2, 0, 2, {0, 4})));
  EXPECT_EQ(plugin.ExplainScore(cy.ctx, whole, 0), "whole GPU for a job that fits MIG 1g.10gb");

  // With GPU 0's 1g.10gb at 4 held, GPU 0 at 5 (6 left free, 2 profiles fit:
  // key ((6 x 16 + 13) x 16 + 0) x 1024 + 14 = 1785870) beats the empty GPU
  // 1 at 4 (7 free, 3 fit: 1984 x 1024 + 14 = 2031630): best fit.
  HoldMig(w, 99, 2, 0, {4, 1});
  testing::Cycle cy2(w, job);
  EXPECT_EQ(plugin.Score(cy2.ctx, Mig(2, 0, 0, {5, 1})), -1785870);
  EXPECT_EQ(plugin.Score(cy2.ctx, Mig(2, 1, 0, {4, 1})), -2031630);
  EXPECT_EQ(plugin.ExplainScore(cy2.ctx, Mig(2, 0, 0, {5, 1}), 0),
            "1g.10gb on GPU 0 slice 5: waste 0 slice(s); after: 6 slice(s) free on the GPU, 2 "
            "profile(s) still fit (largest 4 slice(s)), fragmentation 0 free slice(s) "
            "unallocatable; 14 MIG slice(s) free on the node");

  // A job that does not allow MIG: every candidate scores 0 (neutral).
  QueuedJob plain = Queue(w, TwoHourJob("plain", 1, 40), 3);
  testing::Cycle cy3(w, plain);
  EXPECT_EQ(plugin.Score(cy3.ctx, whole), 0);
  EXPECT_EQ(plugin.ExplainScore(cy3.ctx, whole, 0), "");
}

// The generator offers the first free 1g.10gb instance on the lowest GPU
// with one (GPU 1 at 4, as GPU 0's is held); AddCandidates adds GPU 0 at 5,
// and best fit picks it.
TEST(MigSliceTest, DecisionPrefersThePartlyUsedGpu) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  HoldMig(w, 99, 2, 0, {4, 1});
  auto s = Make(w, kProfile);
  QueuedJob job = SmallJob(w, 1);
  Decision d = s->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  ASSERT_TRUE(d.allocation->nodes[0].mig.has_value());
  EXPECT_EQ(d.allocation->nodes[0].mig->gpu, 0);
  EXPECT_EQ(d.allocation->nodes[0].mig->shape, (MigShape{5, 1}));
}

// A repartitionable H100 with a 1g.20gb held at 4-5. For a 1g.10gb:
//   at 0: free 1,2,3,6,7; 1g.10gb and 1g.20gb fit (2 profiles), 0 stranded
//   at 6: free 0-3 and 7; 1g.10gb, 1g.20gb and 3g.40gb at 0-3 fit (3), but
//         slice 7 is stranded (no 1g.10gb starts at 7, 6-7 is taken)
// More profiles still fitting wins: slice 6, with fragmentation 1 reported.
TEST(MigSliceTest, RepartitionableKeepsTheLargestShapeFree) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "flex";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.10);
  c.repartitionable = true;
  c.nodes.push_back({1, "H100-80GB", 1, 16, 128, {"7g.80gb"}, "mig-", {}, {}});
  f.clusters = {c};
  testing::World w = MakeWorld(f, /*elastic=*/false);
  HoldMig(w, 99, 0, 0, {4, 2});
  auto s = Make(w, kProfile);
  QueuedJob job = SmallJob(w, 1);
  Decision d = s->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.allocation->nodes[0].mig->shape, (MigShape{6, 1}));
  ASSERT_TRUE(d.chosen.has_value());
  std::string note;
  for (const ScoreLine& l : d.chosen->scores) {
    if (l.plugin == "mig_slice") note = l.note;
  }
  EXPECT_NE(note.find("fragmentation 1 free slice(s) unallocatable"), std::string::npos) << note;
  //   key at 6 = ((((0 x 16 + 5) x 16 + 12) x 16 + 1) x 1024 + 5 = 1508357
  //   key at 0 = ((((0 x 16 + 5) x 16 + 13) x 16 + 0) x 1024 + 5 = 1523717
  testing::Cycle cy(w, job);
  MigSlice plugin({});
  ASSERT_TRUE(plugin.Prepare({*w.fleet, *w.catalog}).ok());
  EXPECT_EQ(plugin.Score(cy.ctx, Mig(0, 0, 0, {6, 1})), -1508357);
  EXPECT_EQ(plugin.Score(cy.ctx, Mig(0, 0, 0, {0, 1})), -1523717);
}

// The invariant: a cycle of small jobs fills node 2's eight instances
// smallest first, never giving an instance twice, then whole GPUs; a forged
// decision for a taken slice fails at commit.
TEST(MigSliceTest, CycleNeverAllocatesASliceTwice) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto s = Make(w, kProfile);
  std::vector<QueuedJob> jobs;
  for (uint32_t i = 1; i <= 12; ++i) jobs.push_back(SmallJob(w, i));
  std::vector<const QueuedJob*> ptrs;
  for (const QueuedJob& j : jobs) ptrs.push_back(&j);
  std::vector<Decision> ds = s->RunCycle(w.At(), ptrs, &w.ledger);
  ASSERT_EQ(ds.size(), 12u);
  std::vector<int> spans;
  uint8_t used[2] = {0, 0};
  for (const Decision& d : ds) {
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
    const NodeShare& sh = d.allocation->nodes[0];
    if (!sh.mig) {
      spans.push_back(8);
      continue;
    }
    EXPECT_EQ(used[sh.mig->gpu] & sh.mig->shape.mask(), 0) << "slice given twice";
    used[sh.mig->gpu] |= sh.mig->shape.mask();
    spans.push_back(sh.mig->shape.span);
  }
  // 1g.10gb x4 (2 per GPU), 1g.20gb x2, 3g.40gb x2, then whole GPUs.
  EXPECT_EQ(spans, (std::vector<int>{1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8}));
  EXPECT_EQ(used[0], 0xff);
  EXPECT_EQ(used[1], 0xff);

  QueuedJob extra = SmallJob(w, 20);
  Decision forged = ds[0];
  forged.job = extra.id;
  forged.allocation->job = extra.id;
  EXPECT_EQ(s->Commit(forged, w.At(), &w.ledger).code(), StatusCode::kUnschedulable);
  EXPECT_EQ(w.ledger.Find(extra.id), nullptr);
}

TEST(MigSliceTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{max_waste_slices: 8, max_choices_per_node: -1}", "p.yaml",
                                   "plugins[1].args");
  ASSERT_TRUE(args.ok());
  auto made = MigSlice::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[1].args.max_waste_slices: \"8\" must be <= 7"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.max_choices_per_node: \"-1\" must be >= 0"), std::string::npos)
      << m;
}

}  // namespace
}  // namespace meridian::sched
