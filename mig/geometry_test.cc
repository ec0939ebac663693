// EnumerateLayouts against counts derived by hand from the guide's geometry,
// CheckLayout's errors, SmallestProfile and NeedForShare.
//
// Expected counts (docs/mig.md, "How many layouts"): on the 8-slice geometry
// of A100/H100/H200/B200, a 7g fills the GPU; otherwise the halves 0-3 and
// 4-7 are independent. Left half: a 3g or a 4g at 0 (2 ways), or two pairs
// 0-1 and 2-3, each empty-or-1g per slice (4), a 2g or a double-memory 1g
// (6 per pair): 2 + 6 x 6 = 38. Right half: a 3g at 4 (1), or pair 4-5 (6)
// times pair 6-7, where only a 1g at 6 or a double-memory 1g at 6 may sit
// (no 2g starts at 6): 3 ways: 1 + 6 x 3 = 19. Without "+me": 38 x 19 + 1 =
// 723 layouts (the empty one included). With "+me" (one instance at most, on
// any place a 1g may take): add the number of (layout, 1g instance) pairs,
// the derivative at x = 1 of the same count with x marking a 1g: pair
// 3 + 2x + x^2 (6, d = 4), left 2 + P^2 (38, d = 48), pair 6-7 2 + x (3, d =
// 1), right 1 + P x Q (19, d = 4 x 3 + 6 x 1 = 18), whole L x R + 1 (d = 48
// x 19 + 38 x 18 = 1,596): 723 + 1,596 = 2,319. Maximal (nothing can be
// added): slices 0-6 all taken; pairs 2 + x^2 (3, d = 2), left 2 + 9 = 11
// (d = 12), pair 6-7 x + 1 (2, d = 1), right 1 + 3 x 2 = 7 (d = 7), whole
// 11 x 7 + 1 = 78 without "+me", 78 + 12 x 7 + 11 x 7 = 239 with it.
// The compute limit never binds on this geometry (slice 7 is only ever
// covered by an instance with fewer compute than memory slices).
#include "mig/geometry.h"

#include <gtest/gtest.h>

#include <set>

#include "mig/test_catalog.h"

namespace meridian::mig {
namespace {

struct CountCase {
  const char* gpu;
  EnumerateOptions options;
  size_t expected;
};

TEST(EnumerateLayouts, CountsMatchTheGuidesGeometry) {
  const EnumerateOptions all{};
  const EnumerateOptions maximal{.maximal_only = true};
  const EnumerateOptions plain{.media_profiles = false};
  const EnumerateOptions plain_maximal{.maximal_only = true, .media_profiles = false};
  const EnumerateOptions non_empty{.include_empty = false};
  std::vector<CountCase> cases;
  for (const char* gpu : {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200"}) {
    cases.push_back({gpu, all, 2319});
    cases.push_back({gpu, maximal, 239});
    cases.push_back({gpu, plain, 723});
    cases.push_back({gpu, plain_maximal, 78});
    cases.push_back({gpu, non_empty, 2318});
  }
  for (const CountCase& c : cases) {
    std::vector<Layout> layouts = EnumerateLayouts(Gpu(c.gpu), c.options);
    EXPECT_EQ(layouts.size(), c.expected)
        << c.gpu << " maximal=" << c.options.maximal_only << " me=" << c.options.media_profiles;
  }
}

TEST(EnumerateLayouts, EveryLayoutIsValidAndDistinct) {
  const catalog::GpuModel& gpu = Gpu("H100-80GB");
  std::vector<Layout> layouts = EnumerateLayouts(gpu);
  std::set<Layout> seen;
  for (const Layout& l : layouts) {
    EXPECT_TRUE(seen.insert(l).second) << Describe(gpu, l);
    Result<Layout> checked = CheckLayout(gpu, Named(gpu, l));
    ASSERT_TRUE(checked.ok()) << Describe(gpu, l) << ": " << checked.status().message();
    EXPECT_EQ(*checked, l);
    EXPECT_LE(ComputeSlices(gpu, l), 7);
  }
}

TEST(EnumerateLayouts, TheGuidesExamplesAreAmongThem) {
  // getting-started-with-mig.html, A100-40GB: example 2 (-lgi: 1g.5gb 0:1,
  // 1g.5gb 1:1, 2g.10gb 2:2, 3g.20gb 4:4) and example 3 (1g.5gb at 0,1,2,3,6
  // and 2g.10gb at 4).
  const catalog::GpuModel& gpu = Gpu("A100-40GB");
  std::set<Layout> all;
  for (Layout& l : EnumerateLayouts(gpu)) all.insert(std::move(l));
  for (const std::vector<catalog::MigInstance>& named :
       std::vector<std::vector<catalog::MigInstance>>{
           {{"1g.5gb", 0}, {"1g.5gb", 1}, {"2g.10gb", 2}, {"3g.20gb", 4}},
           {{"1g.5gb", 0}, {"1g.5gb", 1}, {"1g.5gb", 2}, {"1g.5gb", 3}, {"1g.5gb", 6},
            {"2g.10gb", 4}},
           {{"3g.20gb", 0}, {"3g.20gb", 4}}}) {
    Result<Layout> l = CheckLayout(gpu, named);
    ASSERT_TRUE(l.ok()) << l.status().message();
    EXPECT_TRUE(all.count(*l)) << Describe(gpu, *l);
  }
}

TEST(EnumerateLayouts, NoMigNoLayouts) {
  EXPECT_TRUE(EnumerateLayouts(Gpu("T4")).empty());
}

struct CheckCase {
  const char* name;
  const char* gpu;
  std::vector<catalog::MigInstance> layout;
  const char* error;  // empty: valid
};

TEST(CheckLayout, NamesTheProfileThePlacementAndWhy) {
  const std::vector<CheckCase> cases = {
      {"3g+2g+2g", "A100-80GB", {{"3g.40gb", 4}, {"2g.20gb", 0}, {"2g.20gb", 2}}, ""},
      {"4g+3g (R510+)", "H100-80GB", {{"4g.40gb", 0}, {"3g.40gb", 4}}, ""},
      {"bad start", "A100-80GB", {{"2g.20gb", 6}},
       "A100-80GB: 2g.20gb at 6: not a valid start (valid: 0, 2, 4)"},
      {"overlap", "H200-141GB", {{"3g.71gb", 0}, {"2g.35gb", 2}},
       "H200-141GB: 2g.35gb at 2 overlaps 3g.71gb at 0 on memory slices 2-3"},
      {"two +me", "B200", {{"1g.23gb+me", 0}, {"1g.23gb+me", 1}},
       "B200: 2 instances of 1g.23gb+me, at most 1 fit"},
      {"unknown", "H100-80GB", {{"1g.5gb", 0}}, "H100-80GB: unknown MIG profile \"1g.5gb\""},
      {"4g at 4", "A100-40GB", {{"4g.20gb", 4}},
       "A100-40GB: 4g.20gb at 4: not a valid start (valid: 0)"},
  };
  for (const CheckCase& c : cases) {
    Result<Layout> r = CheckLayout(Gpu(c.gpu), c.layout);
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(r.ok()) << c.name << ": " << r.status().message();
    } else {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_EQ(r.status().message(), c.error) << c.name;
    }
  }
}

struct NeedCase {
  int milli;
  SliceNeed need;
  const char* h100_profile;  // smallest H100-80GB profile
};

TEST(NeedForShare, ShareOfComputeAndMemoryRoundedUp) {
  // compute = ceil(7 m / 1000), memory = ceil(8 m / 1000)
  const std::vector<NeedCase> cases = {
      {50, {1, 1, false}, "1g.10gb"},     // 0.35, 0.4
      {125, {1, 1, false}, "1g.10gb"},    // 0.875, 1.0
      {126, {1, 2, false}, "1g.20gb"},    // 0.882, 1.008: a second memory slice
      {143, {2, 2, false}, "2g.20gb"},    // 1.001, 1.144: just over one slice of each
      {250, {2, 2, false}, "2g.20gb"},    // 1.75, 2
      {320, {3, 3, false}, "3g.40gb"},    // 2.24, 2.56
      {460, {4, 4, false}, "4g.40gb"},    // 3.22, 3.68
      {500, {4, 4, false}, "4g.40gb"},    // 3.5, 4
      {570, {4, 5, false}, "7g.80gb"},    // 3.99, 4.56
      {650, {5, 6, false}, "7g.80gb"},    // 4.55, 5.2
      {1000, {7, 8, false}, "7g.80gb"},
  };
  for (const NeedCase& c : cases) {
    SliceNeed n = NeedForShare(c.milli);
    EXPECT_EQ(n, c.need) << c.milli;
    int p = SmallestProfile(Gpu("H100-80GB"), n);
    ASSERT_GE(p, 0) << c.milli;
    EXPECT_EQ(Gpu("H100-80GB").mig_profiles[p].name, c.h100_profile) << c.milli;
  }
}

TEST(SmallestProfile, MediaOnlyWhenAskedAndNoneTooBig) {
  const catalog::GpuModel& gpu = Gpu("A100-40GB");
  EXPECT_EQ(gpu.mig_profiles[SmallestProfile(gpu, {1, 1, true})].name, "1g.5gb+me");
  EXPECT_EQ(gpu.mig_profiles[SmallestProfile(gpu, {1, 1, false})].name, "1g.5gb");
  EXPECT_EQ(gpu.mig_profiles[SmallestProfile(gpu, {1, 2, false})].name, "1g.10gb");
  EXPECT_EQ(gpu.mig_profiles[SmallestProfile(gpu, {3, 2, false})].name, "3g.20gb");
  EXPECT_EQ(SmallestProfile(gpu, {2, 1, true}), -1);  // no 2g+me on A100
  EXPECT_EQ(SmallestProfile(gpu, {8, 8, false}), -1);
  EXPECT_EQ(SmallestProfile(Gpu("T4"), {1, 1, false}), -1);
}

}  // namespace
}  // namespace meridian::mig
