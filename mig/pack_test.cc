// Pack against a brute force: every assignment of the requests to the GPUs
// (or to none), each GPU judged by an independent oracle (is the GPU's new
// multiset of profiles, beside the instances it holds, part of one of the
// layouts EnumerateLayouts lists?), best = most requests placed, then fewest
// GPUs used. Exhaustive over every multiset of up to 6 requests of the six
// plain A100-80GB profiles on 3 empty GPUs, and over held instances on
// hand-made GPUs.
#include "mig/pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/sanitizers.h"
#include "mig/test_catalog.h"

namespace meridian::mig {
namespace {

// The oracle: for every held layout, the multisets of profiles that can be
// added to it.
class Oracle {
 public:
  explicit Oracle(const catalog::GpuModel& gpu) {
    for (const Layout& l : EnumerateLayouts(gpu)) layouts_.push_back(l);
  }
  bool Fits(const Layout& held, std::vector<int> add) const {
    std::sort(add.begin(), add.end());
    auto key = std::make_pair(held, add);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    bool fits = false;
    for (const Layout& l : layouts_) {
      if (!std::includes(l.begin(), l.end(), held.begin(), held.end())) continue;
      std::vector<int> rest;
      for (const Placed& p : l) {
        if (!std::binary_search(held.begin(), held.end(), p)) rest.push_back(p.profile);
      }
      std::sort(rest.begin(), rest.end());
      if (rest == add) {
        fits = true;
        break;
      }
    }
    cache_[key] = fits;
    return fits;
  }

 private:
  std::vector<Layout> layouts_;  // sorted by (start, profile), as Placed orders
  mutable std::map<std::pair<Layout, std::vector<int>>, bool> cache_;
};

struct Best {
  int placed = -1;
  int gpus = 0;
};

Best BruteForce(const Oracle& oracle, const catalog::GpuModel& model,
                const std::vector<GpuState>& gpus, const std::vector<SliceRequest>& reqs) {
  Best best;
  std::vector<std::vector<int>> add(gpus.size());
  // Each request to a GPU or to none; a GPU whose multiset no longer fits
  // ends the branch (the layouts are closed under removing instances).
  std::function<void(size_t, int)> walk = [&](size_t i, int placed) {
    if (i == reqs.size()) {
      int used = 0;
      for (size_t g = 0; g < gpus.size(); ++g) used += (!add[g].empty() || !gpus[g].held.empty()) ? 1 : 0;
      if (placed > best.placed || (placed == best.placed && used < best.gpus)) best = {placed, used};
      return;
    }
    const int p = SmallestProfile(model, reqs[i].need);
    for (size_t g = 0; g < gpus.size(); ++g) {
      add[g].push_back(p);
      if (oracle.Fits(gpus[g].held, add[g])) walk(i + 1, placed + 1);
      add[g].pop_back();
    }
    walk(i + 1, placed);
  };
  walk(0, 0);
  return best;
}

std::vector<SliceRequest> Requests(const catalog::GpuModel& gpu, const std::vector<int>& profiles) {
  std::vector<SliceRequest> out;
  for (int p : profiles) out.push_back({gpu.mig_profiles[p].name, NeedOf(gpu.mig_profiles[p])});
  return out;
}

// Checks Pack's own result is valid: every GPU's layout passes CheckLayout and
// keeps the held instances.
void ExpectValid(const catalog::GpuModel& gpu, const std::vector<GpuState>& gpus,
                 const PackResult& r) {
  for (size_t g = 0; g < gpus.size(); ++g) {
    Result<Layout> ok = CheckLayout(gpu, Named(gpu, r.layouts[g]));
    EXPECT_TRUE(ok.ok()) << ok.status().message();
    for (const Placed& h : gpus[g].held) {
      EXPECT_TRUE(std::count(r.layouts[g].begin(), r.layouts[g].end(), h)) << Describe(gpu, r.layouts[g]);
    }
  }
}

TEST(Pack, MatchesBruteForceOnEveryMultisetUpToSix) {
  const catalog::GpuModel& gpu = Gpu("A100-80GB");
  Oracle oracle(gpu);
  std::vector<int> plain;
  for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
    if (gpu.mig_profiles[i].name.find("+me") == std::string::npos) plain.push_back(static_cast<int>(i));
  }
  ASSERT_EQ(plain.size(), 6u);
  std::vector<GpuState> gpus(3, GpuState{&gpu, {}, false});
  // Under the sanitizers (-O0, many times slower), multisets of up to five;
  // the optimized build sweeps up to six.
  const size_t kMaxSize = kUnderSanitizers ? 5 : 6;
  int cases = 0, greedy_optimal = 0;
  std::vector<int> chosen;
  std::function<void(size_t)> multisets = [&](size_t from) {
    if (!chosen.empty()) {
      std::vector<SliceRequest> reqs = Requests(gpu, chosen);
      PackResult r = Pack(gpus, reqs);
      Best b = BruteForce(oracle, gpu, gpus, reqs);
      PackResult g = Pack(gpus, reqs, {.exact_up_to = 0});
      ExpectValid(gpu, gpus, g);
      greedy_optimal += static_cast<int>(g.placed.size()) == b.placed && g.gpus_used == b.gpus;
      ++cases;
      std::string what;
      for (const auto& q : reqs) what += q.id + " ";
      EXPECT_EQ(static_cast<int>(r.placed.size()), b.placed) << what;
      EXPECT_EQ(r.gpus_used, b.gpus) << what;
      ExpectValid(gpu, gpus, r);
    }
    if (chosen.size() == kMaxSize) return;
    for (size_t k = from; k < plain.size(); ++k) {
      chosen.push_back(plain[k]);
      multisets(k);
      chosen.pop_back();
    }
  };
  multisets(0);
  // Non-empty multisets of at most k of 6 kinds: C(6 + k, k) - 1, 923 for
  // k = 6 and 461 for k = 5.
  EXPECT_EQ(cases, kMaxSize == 6 ? 923 : 461);
  // The greedy alone misses one, of six slices: 4 x 2g + 2 x 3g (3 GPUs, not
  // 2).
  EXPECT_EQ(greedy_optimal, kMaxSize == 6 ? 922 : 461);
}

struct HeldCase {
  const char* name;
  std::vector<std::vector<catalog::MigInstance>> held;  // per GPU
  std::vector<const char*> requests;
  int placed, gpus_used, gpus_opened;
};

TEST(Pack, AroundHeldInstancesMatchesBruteForce) {
  const catalog::GpuModel& gpu = Gpu("H100-80GB");
  Oracle oracle(gpu);
  const std::vector<HeldCase> cases = {
      // A 1g at slice 0 leaves 1-7: a 3g fits at 4; the 2g pair at 2.
      {"1g held, 3g+2g", {{{"1g.10gb", 0}}, {}}, {"3g.40gb", "2g.20gb"}, 2, 1, 0},
      // 1g at 1 and at 5 block both 3g starts of GPU 0: the 3g opens GPU 1.
      {"1g at 1 and 5 block 3g", {{{"1g.10gb", 1}, {"1g.10gb", 5}}, {}}, {"3g.40gb", "1g.10gb"}, 2, 2, 1},
      // 4g at 0 held: the 3g goes beside it (4g + 3g), the 1g to the empty GPU.
      {"4g held", {{{"4g.40gb", 0}}, {}}, {"3g.40gb", "1g.10gb"}, 2, 2, 1},
      // Both GPUs half full with a 3g at 0: two 3g fill them; a 4g fits nowhere.
      {"no room for 4g", {{{"3g.40gb", 0}}, {{"3g.40gb", 0}}}, {"3g.40gb", "3g.40gb", "4g.40gb"}, 2, 2, 0},
      // 7 x 1g then a double-memory 1g: slice 7 is only reachable from start 6.
      {"seven 1g + 1g.20gb", {{}, {}},
       {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.20gb"}, 8, 2, 2},
  };
  for (const HeldCase& c : cases) {
    std::vector<GpuState> gpus;
    for (const auto& h : c.held) {
      Result<Layout> l = CheckLayout(gpu, h);
      ASSERT_TRUE(l.ok()) << c.name << ": " << l.status().message();
      gpus.push_back({&gpu, *l, false});
    }
    std::vector<SliceRequest> reqs;
    for (const char* p : c.requests) reqs.push_back({p, NeedOf(*catalog::FindMigProfile(gpu, p))});
    PackResult r = Pack(gpus, reqs);
    EXPECT_EQ(static_cast<int>(r.placed.size()), c.placed) << c.name;
    EXPECT_EQ(r.gpus_used, c.gpus_used) << c.name;
    EXPECT_EQ(r.gpus_opened, c.gpus_opened) << c.name;
    Best b = BruteForce(oracle, gpu, gpus, reqs);
    EXPECT_EQ(b.placed, c.placed) << c.name;
    EXPECT_EQ(b.gpus, c.gpus_used) << c.name;
    ExpectValid(gpu, gpus, r);
  }
}

TEST(Pack, WholeGpusAndModelsWithoutMigTakeNothing) {
  const catalog::GpuModel& h100 = Gpu("H100-80GB");
  const catalog::GpuModel& t4 = Gpu("T4");
  std::vector<GpuState> gpus = {{&h100, {}, true}, {&t4, {}, false}, {&h100, {}, false}};
  PackResult r = Pack(gpus, {{"a", {1, 1, false}}, {"b", {7, 8, false}}, {"c", {1, 1, false}}});
  // Only GPU 2 takes instances: two 1g place more requests than the 7g.
  ASSERT_EQ(r.placed.size(), 2u);
  EXPECT_EQ(r.placed[0].request, 0u);
  EXPECT_EQ(r.placed[0].gpu, 2u);
  EXPECT_EQ(r.placed[1].request, 2u);
  EXPECT_EQ(r.placed[1].gpu, 2u);
  EXPECT_EQ(r.unplaced, (std::vector<size_t>{1}));
  EXPECT_EQ(r.gpus_used, 2);  // the whole GPU and GPU 2
}

}  // namespace
}  // namespace meridian::mig
