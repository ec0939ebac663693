#include "mig/pack.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <numeric>
#include <tuple>

namespace meridian::mig {

namespace {

using catalog::GpuModel;
using catalog::MigProfile;
using catalog::MigSliceSet;

int GpuComputeSlices(const GpuModel& gpu) {
  int n = 0;
  for (const auto& p : gpu.mig_profiles) n = std::max(n, p.compute_slices);
  return n;
}

struct Search {
  const GpuModel& gpu;
  const std::vector<int>& add;
  const std::vector<int>& order;
  std::vector<int> starts;

  bool Place(size_t depth, MigSliceSet used) {
    if (depth == order.size()) return true;
    const MigProfile& p = gpu.mig_profiles[add[order[depth]]];
    int after = -1;  // identical instances take ascending starts
    if (depth > 0 && add[order[depth - 1]] == add[order[depth]]) after = starts[order[depth - 1]];
    for (int s : p.placement_starts) {
      if (s <= after) continue;
      MigSliceSet occ = catalog::OccupiedSlices(p, s);
      if (occ.size() != p.placement_span || occ.Overlaps(used)) continue;
      starts[order[depth]] = s;
      if (Place(depth + 1, used | occ)) return true;
    }
    return false;
  }
};

// A model's layouts with their instance counts per profile.
struct ModelLayouts {
  std::vector<Layout> layouts;
  std::vector<std::vector<int>> counts;  // per layout, per profile
};

// A model's layouts, computed once per distinct geometry (the profiles'
// names, slices, counts and placements) for the life of the process; the
// cache is shared by all threads under a mutex, and its entries never move.
const ModelLayouts& LayoutsOf(const GpuModel& gpu) {
  static std::mutex mu;
  static std::map<std::string, ModelLayouts> cache;
  std::string key;
  for (const MigProfile& p : gpu.mig_profiles) {
    key += p.name + "/" + std::to_string(p.compute_slices) + "/" + std::to_string(p.max_instances) +
           "/" + std::to_string(p.placement_span) + ":";
    for (int s : p.placement_starts) key += std::to_string(s) + ",";
    key += ";";
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  ModelLayouts m;
  m.layouts = EnumerateLayouts(gpu);
  for (const Layout& l : m.layouts) {
    std::vector<int> c(gpu.mig_profiles.size(), 0);
    for (const Placed& p : l) ++c[p.profile];
    m.counts.push_back(std::move(c));
  }
  return cache.emplace(std::move(key), std::move(m)).first->second;
}

enum class Goal { kSlices, kCount };

// One pass: GPUs in order (those holding instances first), each given the
// layout that serves the most remaining demand by `goal`.
PackResult FillGpus(const std::vector<GpuState>& gpus, const std::vector<SliceRequest>& requests,
                    Goal goal) {
  PackResult r;
  r.layouts.resize(gpus.size());
  std::vector<bool> done(requests.size(), false);
  size_t left = requests.size();
  std::vector<size_t> order(gpus.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_partition(order.begin(), order.end(),
                        [&](size_t g) { return !gpus[g].held.empty(); });
  for (size_t g : order) {
    const GpuState& gs = gpus[g];
    r.layouts[g] = gs.held;
    if (gs.whole || !gs.held.empty()) ++r.gpus_used;
    if (gs.whole || gs.model == nullptr || gs.model->mig_profiles.empty() || left == 0) continue;
    const GpuModel& gpu = *gs.model;
    // Remaining demand per profile of this model, requests in input order.
    std::vector<std::vector<size_t>> demand(gpu.mig_profiles.size());
    for (size_t q = 0; q < requests.size(); ++q) {
      if (done[q]) continue;
      int p = SmallestProfile(gpu, requests[q].need);
      if (p >= 0) demand[p].push_back(q);
    }
    std::vector<int> held(gpu.mig_profiles.size(), 0);
    for (const Placed& p : gs.held) ++held[p.profile];
    const ModelLayouts& ml = LayoutsOf(gpu);
    int best = -1;
    std::tuple<int, int, int, int> best_score{0, 0, 0, 0};
    for (size_t l = 0; l < ml.layouts.size(); ++l) {
      const Layout& lay = ml.layouts[l];
      if (!std::includes(lay.begin(), lay.end(), gs.held.begin(), gs.held.end())) continue;
      int slices = 0, count = 0, square = 0, fixed = 0;
      for (size_t p = 0; p < demand.size(); ++p) {
        int m = std::min<int>(ml.counts[l][p] - held[p], static_cast<int>(demand[p].size()));
        const int span = gpu.mig_profiles[p].placement_span;
        slices += m * span;
        square += m * span * span;
        fixed += m * (catalog::kMigMemorySlices - static_cast<int>(gpu.mig_profiles[p].placement_starts.size()));
        count += m;
      }
      // Ties: larger instances first, then those with fewer valid starts
      // (they fit in fewer places).
      std::tuple<int, int, int, int> score = goal == Goal::kSlices
                                                 ? std::make_tuple(slices, square, fixed, count)
                                                 : std::make_tuple(count, slices, square, fixed);
      if (score > best_score) {
        best_score = score;
        best = static_cast<int>(l);
      }
    }
    if (best < 0) continue;
    // The chosen layout's instances that serve requests (the others are not
    // created), placed again from the lowest starts so the free slices stay
    // together.
    std::vector<size_t> next(demand.size(), 0);
    std::vector<int> add;
    std::vector<size_t> owner;
    for (const Placed& p : ml.layouts[best]) {
      if (std::binary_search(gs.held.begin(), gs.held.end(), p)) continue;
      if (next[p.profile] >= demand[p.profile].size()) continue;
      add.push_back(p.profile);
      owner.push_back(demand[p.profile][next[p.profile]++]);
    }
    std::vector<int> starts = *PlaceBeside(gpu, gs.held, add);
    for (size_t i = 0; i < add.size(); ++i) {
      done[owner[i]] = true;
      --left;
      r.placed.push_back({owner[i], g, {add[i], starts[i]}});
      r.layouts[g].push_back({add[i], starts[i]});
    }
    std::sort(r.layouts[g].begin(), r.layouts[g].end());
    if (gs.held.empty() && !gs.whole) {
      ++r.gpus_used;
      ++r.gpus_opened;
    }
  }
  for (size_t q = 0; q < requests.size(); ++q) {
    if (!done[q]) r.unplaced.push_back(q);
  }
  std::sort(r.placed.begin(), r.placed.end(),
            [](const Assignment& a, const Assignment& b) { return a.request < b.request; });
  return r;
}

// Branch and bound over the GPU of each request (largest first), from the
// greedy result as the bound: a GPU in use, the first empty GPU of each model
// (empty GPUs of one model are interchangeable), or none.
struct Exact {
  const std::vector<GpuState>& gpus;
  const std::vector<SliceRequest>& requests;
  std::vector<size_t> order;
  std::vector<std::vector<int>> added;
  std::vector<std::vector<size_t>> owners;
  int best_placed = 0, best_used = 0;
  std::vector<std::vector<int>> best_added;
  std::vector<std::vector<size_t>> best_owners;
  bool improved = false;

  bool InUse(size_t g) const {
    return gpus[g].whole || !gpus[g].held.empty() || !added[g].empty();
  }

  void Go(size_t i, int placed, int used) {
    const int remaining = static_cast<int>(order.size() - i);
    if (placed + remaining < best_placed) return;
    if (placed + remaining == best_placed && used >= best_used) return;
    if (i == order.size()) {
      best_placed = placed;
      best_used = used;
      best_added = added;
      best_owners = owners;
      improved = true;
      return;
    }
    const size_t q = order[i];
    std::vector<const GpuModel*> opened;
    for (size_t g = 0; g < gpus.size(); ++g) {
      const GpuState& gs = gpus[g];
      if (gs.whole || gs.model == nullptr) continue;
      const bool in_use = InUse(g);
      if (!in_use) {
        if (std::find(opened.begin(), opened.end(), gs.model) != opened.end()) continue;
        opened.push_back(gs.model);
      }
      int prof = SmallestProfile(*gs.model, requests[q].need);
      if (prof < 0) continue;
      added[g].push_back(prof);
      if (PlaceBeside(*gs.model, gs.held, added[g])) {
        owners[g].push_back(q);
        Go(i + 1, placed + 1, used + (in_use ? 0 : 1));
        owners[g].pop_back();
      }
      added[g].pop_back();
    }
    Go(i + 1, placed, used);
  }
};

PackResult FromAssignment(const std::vector<GpuState>& gpus, const std::vector<std::vector<int>>& added,
                          const std::vector<std::vector<size_t>>& owners, size_t request_count) {
  PackResult r;
  r.layouts.resize(gpus.size());
  std::vector<bool> done(request_count, false);
  for (size_t g = 0; g < gpus.size(); ++g) {
    r.layouts[g] = gpus[g].held;
    if (!added[g].empty()) {
      std::vector<int> starts = *PlaceBeside(*gpus[g].model, gpus[g].held, added[g]);
      for (size_t i = 0; i < added[g].size(); ++i) {
        Placed p{added[g][i], starts[i]};
        r.layouts[g].push_back(p);
        r.placed.push_back({owners[g][i], g, p});
        done[owners[g][i]] = true;
      }
      std::sort(r.layouts[g].begin(), r.layouts[g].end());
    }
    const bool held = gpus[g].whole || !gpus[g].held.empty();
    if (held || !added[g].empty()) ++r.gpus_used;
    if (!held && !added[g].empty()) ++r.gpus_opened;
  }
  for (size_t q = 0; q < request_count; ++q) {
    if (!done[q]) r.unplaced.push_back(q);
  }
  std::sort(r.placed.begin(), r.placed.end(),
            [](const Assignment& a, const Assignment& b) { return a.request < b.request; });
  return r;
}

}  // namespace

std::optional<std::vector<int>> PlaceBeside(const GpuModel& gpu, const Layout& held,
                                            const std::vector<int>& add) {
  std::vector<int> count(gpu.mig_profiles.size(), 0);
  int compute = 0;
  for (const Placed& p : held) {
    ++count[p.profile];
    compute += gpu.mig_profiles[p.profile].compute_slices;
  }
  for (int a : add) {
    const MigProfile& p = gpu.mig_profiles[a];
    if (p.placement_starts.empty() || ++count[a] > p.max_instances) return std::nullopt;
    compute += p.compute_slices;
  }
  if (compute > GpuComputeSlices(gpu)) return std::nullopt;
  std::vector<int> order(add.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const MigProfile& x = gpu.mig_profiles[add[a]];
    const MigProfile& y = gpu.mig_profiles[add[b]];
    if (x.placement_span != y.placement_span) return x.placement_span > y.placement_span;
    if (x.placement_starts.size() != y.placement_starts.size()) {
      return x.placement_starts.size() < y.placement_starts.size();
    }
    return add[a] < add[b];
  });
  Search s{gpu, add, order, std::vector<int>(add.size(), 0)};
  if (!s.Place(0, UsedSlices(gpu, held))) return std::nullopt;
  return s.starts;
}

PackResult Pack(const std::vector<GpuState>& gpus, const std::vector<SliceRequest>& requests,
                PackOptions options) {
  PackResult greedy = FillGpus(gpus, requests, Goal::kSlices);
  if (!greedy.unplaced.empty()) {
    PackResult by_count = FillGpus(gpus, requests, Goal::kCount);
    if (by_count.placed.size() > greedy.placed.size() ||
        (by_count.placed.size() == greedy.placed.size() && by_count.gpus_used < greedy.gpus_used)) {
      greedy = std::move(by_count);
    }
  }
  if (requests.size() > options.exact_up_to) return greedy;
  // Is the greedy result optimal? The search only looks for a better one.
  int held_gpus = 0;
  for (const GpuState& g : gpus) held_gpus += (g.whole || !g.held.empty()) ? 1 : 0;
  if (greedy.unplaced.empty() && greedy.gpus_opened == 0) return greedy;
  Exact e{gpus, requests, {}, std::vector<std::vector<int>>(gpus.size()),
          std::vector<std::vector<size_t>>(gpus.size()), static_cast<int>(greedy.placed.size()),
          greedy.gpus_used, {}, {}, false};
  e.order.resize(requests.size());
  std::iota(e.order.begin(), e.order.end(), size_t{0});
  std::stable_sort(e.order.begin(), e.order.end(), [&](size_t a, size_t b) {
    const SliceNeed& x = requests[a].need;
    const SliceNeed& y = requests[b].need;
    if (x.memory_slices != y.memory_slices) return x.memory_slices > y.memory_slices;
    return x.compute_slices > y.compute_slices;
  });
  e.Go(0, 0, held_gpus);
  if (!e.improved) return greedy;
  return FromAssignment(gpus, e.best_added, e.best_owners, requests.size());
}

}  // namespace meridian::mig
