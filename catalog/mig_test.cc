// MIG geometry on the embedded catalog's placement data: the MIG User Guide's
// example layouts, rejected layouts with their reasons, free starts on a
// partly used GPU, and an exhaustive check of PlaceMigLayout against a brute
// force over every multiset of profiles.
#include "catalog/mig.h"

#include <gtest/gtest.h>

#include <functional>

namespace meridian::catalog {
namespace {

const Catalog& Embedded() {
  static std::shared_ptr<const Catalog> cat = [] {
    auto r = Catalog::LoadEmbedded();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }();
  return *cat;
}

const GpuModel& Gpu(std::string_view name) { return *Embedded().FindGpu(name); }

MigSliceSet Slices(std::initializer_list<int> members) {
  MigSliceSet s;
  for (int m : members) s = s | MigSliceSet::Span(m, 1);
  return s;
}

TEST(MigSliceSet, SpansAndMembers) {
  EXPECT_EQ(MigSliceSet::Span(4, 4).bits(), 0xF0);
  EXPECT_EQ(MigSliceSet::Span(0, 8).bits(), 0xFF);
  EXPECT_EQ(MigSliceSet::Span(6, 4).bits(), 0xC0);  // clipped at slice 7
  EXPECT_TRUE(MigSliceSet::Span(8, 1).empty());
  EXPECT_EQ(MigSliceSet::Span(2, 2).ToVector(), (std::vector<int>{2, 3}));
  EXPECT_TRUE(MigSliceSet::Span(0, 4).Overlaps(MigSliceSet::Span(3, 1)));
  EXPECT_FALSE(MigSliceSet::Span(0, 4).Overlaps(MigSliceSet::Span(4, 4)));
  EXPECT_EQ(Slices({1, 3, 5}).size(), 3);
}

// nvidia-smi mig -lgipp on A100 (MIG User Guide, Getting Started) and on H100
// (same lines): {0..6}:1, 1g double-memory {0,2,4,6}:2, 2g {0,2,4}:2,
// 3g {0,4}:4, 4g {0}:4, 7g {0}:8.
TEST(MigPlacementData, MatchesTheGuide) {
  struct Want {
    const char* gpu;
    const char* profile;
    std::vector<int> starts;
    int span;
  };
  for (const Want& w : std::vector<Want>{
           {"A100-40GB", "1g.5gb", {0, 1, 2, 3, 4, 5, 6}, 1},
           {"A100-40GB", "1g.10gb", {0, 2, 4, 6}, 2},
           {"A100-80GB", "2g.20gb", {0, 2, 4}, 2},
           {"A100-80GB", "3g.40gb", {0, 4}, 4},
           {"H100-80GB", "1g.10gb+me", {0, 1, 2, 3, 4, 5, 6}, 1},
           {"H100-80GB", "1g.20gb", {0, 2, 4, 6}, 2},  // mock: {0..6}:1
           {"H100-80GB", "3g.40gb", {0, 4}, 4},        // mock: {0,4}:3
           {"H100-80GB", "4g.40gb", {0}, 4},
           {"H100-80GB", "7g.80gb", {0}, 8},           // mock: {0}:7
           {"H200-141GB", "3g.71gb", {0, 4}, 4},
           {"B200", "1g.45gb", {0, 2, 4, 6}, 2},
           {"B200", "7g.180gb", {0}, 8},
       }) {
    const MigProfile* p = FindMigProfile(Gpu(w.gpu), w.profile);
    ASSERT_NE(p, nullptr) << w.gpu << " " << w.profile;
    EXPECT_EQ(p->placement_starts, w.starts) << w.gpu << " " << w.profile;
    EXPECT_EQ(p->placement_span, w.span) << w.gpu << " " << w.profile;
  }
  for (const auto& g : Embedded().gpus()) {
    for (const auto& p : g.mig_profiles) {
      EXPECT_FALSE(p.placement_starts.empty()) << g.name << " " << p.name;
      EXPECT_EQ(p.placement_span, p.memory_slices) << g.name << " " << p.name;
    }
  }
}

struct LayoutCase {
  const char* name;
  const char* gpu;
  std::vector<std::string> profiles;
  std::vector<int> starts;  // expected, in input order
};

class ValidLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(ValidLayout, IsPlacedAndPassesTheCheck) {
  const LayoutCase& c = GetParam();
  auto placed = PlaceMigLayout(Gpu(c.gpu), c.profiles);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  std::vector<int> starts;
  for (const auto& in : *placed) starts.push_back(in.start);
  EXPECT_EQ(starts, c.starts);
  EXPECT_TRUE(CheckMigInstances(Gpu(c.gpu), *placed).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Guide, ValidLayout,
    ::testing::Values(
        // Getting Started, example 1: two 3g.20gb at 0:4 and 4:4.
        LayoutCase{"TwoHalves", "A100-40GB", {"3g.20gb", "3g.20gb"}, {0, 4}},
        // Example 2, the 3-2-1-1 geometry: the 3g fits only on slices 4-7
        // (the guide's -lgi shows 3g at 4:4, 2g at 2:2, 1g at 0:1 and 1:1).
        LayoutCase{"ThreeTwoOneOne", "A100-40GB", {"3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"},
                   {4, 0, 2, 3}},
        // Example 3, 2-1-1-1-1-1.
        LayoutCase{"TwoAndFiveOnes", "A100-40GB",
                   {"2g.10gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"},
                   {0, 2, 3, 4, 5, 6}},
        LayoutCase{"SevenSmallest", "H100-80GB",
                   {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
                   {0, 1, 2, 3, 4, 5, 6}},
        // Valid, but only with the 3g on the right half: 2g starts are
        // {0,2,4}, so 3g at 0 would leave the second 2g nowhere (6 is no start).
        LayoutCase{"ThreeTwoTwo", "A100-80GB", {"3g.40gb", "2g.20gb", "2g.20gb"}, {4, 0, 2}},
        LayoutCase{"FourAndThree", "H100-80GB", {"4g.40gb", "3g.40gb"}, {0, 4}},
        LayoutCase{"FourDoubleMemoryOnes", "H200-141GB",
                   {"1g.35gb", "1g.35gb", "1g.35gb", "1g.35gb"}, {0, 2, 4, 6}},
        LayoutCase{"MediaAndSix", "B200",
                   {"1g.23gb", "1g.23gb+me", "1g.23gb", "1g.23gb", "1g.23gb", "1g.23gb", "1g.23gb"},
                   {0, 6, 1, 2, 3, 4, 5}},
        LayoutCase{"Whole", "H100-80GB", {"7g.80gb"}, {0}}),
    [](const auto& info) { return std::string(info.param.name); });

struct RejectCase {
  const char* name;
  const char* gpu;
  std::vector<std::string> profiles;
  StatusCode code;
  std::string message;
};

class RejectedLayout : public ::testing::TestWithParam<RejectCase> {};

TEST_P(RejectedLayout, NamesTheProfileAndWhy) {
  const RejectCase& c = GetParam();
  auto placed = PlaceMigLayout(Gpu(c.gpu), c.profiles);
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().code(), c.code);
  EXPECT_EQ(placed.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RejectedLayout,
    ::testing::Values(
        RejectCase{"FourAndFour", "A100-80GB", {"4g.40gb", "4g.40gb"}, StatusCode::kUnresolvable,
                   "A100-80GB: 4g.40gb x2: at most 1 instance fits"},
        RejectCase{"EightSmallest", "H100-80GB",
                   {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb",
                    "1g.10gb"},
                   StatusCode::kUnresolvable, "H100-80GB: 1g.10gb x8: at most 7 instances fit"},
        RejectCase{"TwoMediaEngines", "H100-80GB", {"1g.10gb+me", "1g.10gb+me"},
                   StatusCode::kUnresolvable, "H100-80GB: 1g.10gb+me x2: at most 1 instance fits"},
        // 4 + 3 + 1 = 8 compute slices.
        RejectCase{"TooMuchCompute", "A100-40GB", {"4g.20gb", "3g.20gb", "1g.5gb"},
                   StatusCode::kUnresolvable,
                   "A100-40GB: [4g.20gb, 3g.20gb, 1g.5gb] needs 8 compute slices, the GPU has 7"},
        // 4 + 2 + 2 = 8 memory slices is the most; 3g(4) + 2g(2) + 1g.20gb(2) + 1g(1) = 9.
        RejectCase{"TooMuchMemory", "A100-80GB", {"3g.40gb", "2g.20gb", "1g.20gb", "1g.10gb"},
                   StatusCode::kUnresolvable,
                   "A100-80GB: [3g.40gb, 2g.20gb, 1g.20gb, 1g.10gb] needs 9 memory slices, the GPU "
                   "has 8"},
        RejectCase{"UnknownProfile", "A100-80GB", {"1g.5gb"}, StatusCode::kNotFound,
                   "A100-80GB: unknown MIG profile \"1g.5gb\""},
        RejectCase{"NoMig", "L4", {"1g.6gb"}, StatusCode::kNotFound, "L4 has no MIG profiles"}),
    [](const auto& info) { return std::string(info.param.name); });

struct CheckCase {
  const char* name;
  const char* gpu;
  std::vector<MigInstance> instances;
  std::string message;  // "" = valid
};

class CheckInstances : public ::testing::TestWithParam<CheckCase> {};

TEST_P(CheckInstances, AcceptsOrNamesTheInstance) {
  const CheckCase& c = GetParam();
  auto used = CheckMigInstances(Gpu(c.gpu), c.instances);
  if (c.message.empty()) {
    EXPECT_TRUE(used.ok()) << used.status().ToString();
  } else {
    ASSERT_FALSE(used.ok());
    EXPECT_EQ(used.status().message(), c.message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckInstances,
    ::testing::Values(
        // The guide's -lgi output for example 3: 1g at 0,1,2,3,6 and 2g at 4:2.
        CheckCase{"GuideExample3",
                  "A100-40GB",
                  {{"1g.5gb", 0}, {"1g.5gb", 1}, {"1g.5gb", 2}, {"1g.5gb", 3}, {"1g.5gb", 6},
                   {"2g.10gb", 4}},
                  ""},
        // The greedy reading of [3g, 2g, 2g]: the second 2g lands on 6.
        CheckCase{"ThreeTwoTwoFromTheLeft",
                  "A100-80GB",
                  {{"3g.40gb", 0}, {"2g.20gb", 4}, {"2g.20gb", 6}},
                  "A100-80GB: 2g.20gb at 6: not a valid start (valid: 0, 2, 4)"},
        CheckCase{"Overlap",
                  "A100-80GB",
                  {{"3g.40gb", 0}, {"2g.20gb", 2}},
                  "A100-80GB: 2g.20gb at 2 overlaps 3g.40gb at 0 on memory slices 2-3"},
        CheckCase{"OverlapOneSlice",
                  "H100-80GB",
                  {{"1g.20gb", 2}, {"1g.10gb", 3}},
                  "H100-80GB: 1g.10gb at 3 overlaps 1g.20gb at 2 on memory slice 3"},
        CheckCase{"WholeGpuTwice",
                  "B200",
                  {{"7g.180gb", 0}, {"7g.180gb", 0}},
                  "B200: 7g.180gb at 0 overlaps 7g.180gb at 0 on memory slices 0-7"},
        CheckCase{"TwoMediaEngines",
                  "H200-141GB",
                  {{"1g.18gb+me", 0}, {"1g.18gb+me", 1}},
                  "H200-141GB: 2 instances of 1g.18gb+me, at most 1 fit"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(FreeMigStarts, PartlyUsedGpu) {
  const GpuModel& a100 = Gpu("A100-80GB");
  auto starts = [&](const char* profile, MigSliceSet used) {
    return FreeMigStarts(*FindMigProfile(a100, profile), used).ToVector();
  };
  // 1g at 1, 3 and 5: four slices free (0, 2, 4, 6-7) but no 2g start has
  // both of its slices free, and only 6 for a double-memory 1g.
  MigSliceSet odd = Slices({1, 3, 5});
  EXPECT_EQ(starts("2g.20gb", odd), std::vector<int>{});
  EXPECT_EQ(starts("1g.20gb", odd), std::vector<int>{6});
  EXPECT_EQ(starts("1g.10gb", odd), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(starts("3g.40gb", odd), std::vector<int>{});
  // 3g on the right half.
  MigSliceSet right = MigSliceSet::Span(4, 4);
  EXPECT_EQ(starts("2g.20gb", right), (std::vector<int>{0, 2}));
  EXPECT_EQ(starts("3g.40gb", right), std::vector<int>{0});
  EXPECT_EQ(starts("4g.40gb", right), std::vector<int>{0});
  EXPECT_EQ(starts("7g.80gb", right), std::vector<int>{});
  EXPECT_EQ(starts("1g.10gb", right), (std::vector<int>{0, 1, 2, 3}));
  // Empty and full GPU.
  EXPECT_EQ(starts("2g.20gb", MigSliceSet()), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(starts("1g.10gb", MigSliceSet::Span(0, 8)), std::vector<int>{});
  // Slice 7 alone free: no profile starts there.
  EXPECT_EQ(starts("1g.10gb", MigSliceSet::Span(0, 7)), std::vector<int>{});
}

TEST(NextMigStarts, CountsAndComputeOnTopOfGeometry) {
  const GpuModel& h100 = Gpu("H100-80GB");
  auto next = [&](const std::vector<MigInstance>& placed, const char* profile) {
    auto r = NextMigStarts(h100, placed, profile);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->ToVector() : std::vector<int>{99};
  };
  // One media-extension instance at most; plain 1g still fits beside it.
  EXPECT_EQ(next({{"1g.10gb+me", 0}}, "1g.10gb+me"), std::vector<int>{});
  EXPECT_EQ(next({{"1g.10gb+me", 0}}, "1g.10gb"), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  // 4g + 2g: slices 6-7 free, one compute slice left.
  EXPECT_EQ(next({{"4g.40gb", 0}, {"2g.20gb", 4}}, "1g.20gb"), std::vector<int>{6});
  EXPECT_EQ(next({{"4g.40gb", 0}, {"2g.20gb", 4}}, "1g.10gb"), std::vector<int>{6});
  EXPECT_EQ(next({{"4g.40gb", 0}, {"2g.20gb", 4}}, "2g.20gb"), std::vector<int>{});
  EXPECT_EQ(next({}, "3g.40gb"), (std::vector<int>{0, 4}));

  auto bad = NextMigStarts(h100, {{"3g.40gb", 2}}, "1g.10gb");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "H100-80GB: 3g.40gb at 2: not a valid start (valid: 0, 4)");
  auto unknown = NextMigStarts(h100, {}, "5g.50gb");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

// Independent of mig.cc: is there any assignment of starts with no overlap?
bool BruteForceFits(const GpuModel& gpu, const std::vector<std::string>& names) {
  int compute = 0;
  std::map<std::string, int> count;
  for (const auto& n : names) {
    const MigProfile* p = FindMigProfile(gpu, n);
    compute += p->compute_slices;
    if (++count[n] > p->max_instances) return false;
  }
  if (compute > kMigComputeSlices) return false;
  std::function<bool(size_t, unsigned)> fits = [&](size_t i, unsigned used) {
    if (i == names.size()) return true;
    const MigProfile* p = FindMigProfile(gpu, names[i]);
    for (int s : p->placement_starts) {
      unsigned mask = ((1u << p->placement_span) - 1) << s;
      if (s + p->placement_span <= 8 && (mask & used) == 0 && fits(i + 1, used | mask)) return true;
    }
    return false;
  };
  return fits(0, 0);
}

TEST(PlaceMigLayout, AgreesWithBruteForceOnEveryLayoutOfUpToSevenInstances) {
  int layouts = 0, valid = 0;
  for (const auto& gpu : Embedded().gpus()) {
    if (gpu.mig_profiles.empty()) continue;
    const size_t n = gpu.mig_profiles.size();
    std::vector<std::string> names;
    // Every multiset of profiles, as non-decreasing index sequences.
    std::function<void(size_t)> each = [&](size_t from) {
      if (!names.empty()) {
        ++layouts;
        auto placed = PlaceMigLayout(gpu, names);
        bool want = BruteForceFits(gpu, names);
        ASSERT_EQ(placed.ok(), want) << gpu.name << " " << names.size() << " "
                                     << placed.status().ToString();
        if (placed.ok()) {
          ++valid;
          ASSERT_TRUE(CheckMigInstances(gpu, *placed).ok()) << gpu.name;
        }
      }
      if (names.size() == 7) return;
      for (size_t i = from; i < n; ++i) {
        names.push_back(gpu.mig_profiles[i].name);
        each(i);
        names.pop_back();
      }
    };
    each(0);
  }
  // 5 GPUs x 3431 multisets of 1..7 of 7 profiles (C(13,6) + ... = 3431).
  EXPECT_EQ(layouts, 5 * 3431);
  EXPECT_GT(valid, 0);
}

}  // namespace
}  // namespace meridian::catalog
