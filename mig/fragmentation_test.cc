// Fragmentation cases on hand-made GPUs, each with the arithmetic in a comment.
#include "mig/fragmentation.h"

#include <gtest/gtest.h>

#include "mig/test_catalog.h"

namespace meridian::mig {
namespace {

Layout L(const catalog::GpuModel& gpu, const std::vector<catalog::MigInstance>& named) {
  Result<Layout> l = CheckLayout(gpu, named);
  EXPECT_TRUE(l.ok()) << l.status().message();
  return l.ok() ? *l : Layout{};
}

ProfileSet Only(const catalog::GpuModel& gpu, std::initializer_list<const char*> names) {
  ProfileSet s = 0;
  for (const char* n : names) s |= ProfileSet{1} << ProfileIndex(gpu, n);
  return s;
}

struct FreeFormCase {
  const char* name;
  std::vector<catalog::MigInstance> held;
  std::vector<const char*> allowed;  // empty: every profile
  Fragmentation want;                // gpus, free mem, alloc mem, free compute, alloc compute
};

TEST(MigMeter, FreeFormGpus) {
  const catalog::GpuModel& gpu = Gpu("H100-80GB");
  const std::vector<FreeFormCase> cases = {
      // Empty: 8 memory, 7 compute free, all allocatable (a 7g).
      {"empty", {}, {}, {1, 8, 8, 7, 7}},
      // 1g at 1 and 5: 6 memory / 5 compute free; 1g at 0, 2, 3, 4 + 1g.20gb at 6 take it all.
      {"two 1g, all profiles", {{"1g.10gb", 1}, {"1g.10gb", 5}}, {}, {1, 6, 6, 5, 5}},
      // Only 3g waits: both 3g starts (0, 4) are blocked: nothing allocatable.
      {"two 1g, 3g demand", {{"1g.10gb", 1}, {"1g.10gb", 5}}, {"3g.40gb"}, {1, 6, 0, 5, 0}},
      // 1g at 0 and 3g demand: the 3g at 4 takes 4 memory, 3 compute; slices 1-3 stay.
      {"1g at 0, 3g demand", {{"1g.10gb", 0}}, {"3g.40gb"}, {1, 7, 4, 6, 3}},
      // 7 x 1g: slice 7 is free but only a double-memory 1g at 6 could use it.
      {"seven 1g", {{"1g.10gb", 0}, {"1g.10gb", 1}, {"1g.10gb", 2}, {"1g.10gb", 3},
                    {"1g.10gb", 4}, {"1g.10gb", 5}, {"1g.10gb", 6}}, {}, {1, 1, 0, 0, 0}},
      // 4g at 0 with 2g demand: 2g at 4 only (no 2g starts at 6): 2 of 4 memory, 2 of 3 compute.
      {"4g, 2g demand", {{"4g.40gb", 0}}, {"2g.20gb"}, {1, 4, 2, 3, 2}},
  };
  MigMeter meter;
  for (const FreeFormCase& c : cases) {
    ProfileSet allowed = kAllProfiles;
    if (!c.allowed.empty()) {
      allowed = 0;
      for (const char* a : c.allowed) allowed |= Only(gpu, {a});
    }
    EXPECT_EQ(meter.FreeForm(gpu, L(gpu, c.held), allowed), c.want) << c.name;
  }
}

TEST(MigMeter, FixedLayoutGpus) {
  const catalog::GpuModel& gpu = Gpu("A100-80GB");
  // 3g at 4, 2g at 0 and 2: the 2g at 0 in use.
  Layout l = L(gpu, {{"2g.20gb", 0}, {"2g.20gb", 2}, {"3g.40gb", 4}});
  std::vector<bool> used = {true, false, false};
  MigMeter meter;
  // Every profile: free 6 memory (2g at 2, 3g at 4), 5 compute; all allocatable.
  EXPECT_EQ(meter.Fixed(gpu, l, used, kAllProfiles), (Fragmentation{1, 6, 6, 5, 5}));
  // Only 4g.40gb waits: neither free instance holds 4 compute: all stranded.
  EXPECT_EQ(meter.Fixed(gpu, l, used, Only(gpu, {"4g.40gb"})), (Fragmentation{1, 6, 0, 5, 0}));
  // 3g demand: the 3g at 4 (4 memory, 3 compute) holds it; the 2g at 2 does not.
  EXPECT_EQ(meter.Fixed(gpu, l, used, Only(gpu, {"3g.40gb"})), (Fragmentation{1, 6, 4, 5, 3}));
  // 1g demand: a 1g fits in both free instances (waste is allowed).
  EXPECT_EQ(meter.Fixed(gpu, l, used, Only(gpu, {"1g.10gb"})), (Fragmentation{1, 6, 6, 5, 5}));
}

TEST(MigMeter, ProfilesForTheDemand) {
  const catalog::GpuModel& gpu = Gpu("H200-141GB");
  ProfileSet s = ProfilesFor(gpu, {NeedForShare(460), NeedForShare(50), {8, 8, false}});
  EXPECT_EQ(s, Only(gpu, {"4g.71gb", "1g.18gb"}));  // no profile holds 8 compute
  Fragmentation a{1, 2, 1, 3, 2}, b{2, 4, 4, 5, 5};
  a.Add(b);
  EXPECT_EQ(a, (Fragmentation{3, 6, 5, 8, 7}));
  EXPECT_EQ(a.unallocatable_memory(), 1);
  EXPECT_EQ(a.unallocatable_compute(), 1);
}

}  // namespace
}  // namespace meridian::mig
