#include "mig/repartition.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>

#include "mig/pack.h"

namespace meridian::mig {

namespace {

// The fleet as proposals change it: each GPU's instances, and which GPUs a
// proposal has touched (changed, or given a moved instance): not proposed again.
struct State {
  const std::vector<GpuNow>& gpus;
  std::vector<Layout> layout;
  std::vector<bool> locked;
  const std::vector<WaitingRequest>& reqs;
  std::vector<int> by_size;  // request indexes, largest first
  std::vector<bool> taken;
};

// Requests placed beside `held` after `first` (profiles that must fit),
// largest first while they fit. nullopt: `first` does not fit.
struct Fit {
  std::vector<int> served;  // request indexes
  std::vector<int> starts;  // first..., then served...
};

std::optional<Fit> FitOn(const State& st, const catalog::GpuModel& gpu, const Layout& held,
                         const std::vector<int>& first) {
  std::vector<int> add = first;
  std::optional<std::vector<int>> s = PlaceBeside(gpu, held, add);
  if (!s) return std::nullopt;
  Fit f;
  f.starts = *s;
  int failed_memory = 99, failed_compute = 99;  // a need no smaller than one that failed fails too
  for (int r : st.by_size) {
    if (st.taken[r]) continue;
    const SliceNeed& n = st.reqs[r].need;
    if (!n.media && n.memory_slices >= failed_memory && n.compute_slices >= failed_compute) continue;
    const int p = SmallestProfile(gpu, n);
    if (p < 0) continue;
    add.push_back(p);
    std::optional<std::vector<int>> next = PlaceBeside(gpu, held, add);
    if (!next) {
      add.pop_back();
      if (!n.media) {
        failed_memory = std::min(failed_memory, n.memory_slices);
        failed_compute = std::min(failed_compute, n.compute_slices);
      }
      continue;
    }
    f.served.push_back(r);
    f.starts = *next;
    if (add.size() >= 7) break;
  }
  return f;
}

Layout Without(const GpuNow& g, const std::vector<int>& drain) {
  Layout held;
  for (size_t i = 0; i < g.running.size(); ++i) {
    if (std::find(drain.begin(), drain.end(), static_cast<int>(i)) == drain.end()) {
      held.push_back(g.running[i].instance);
    }
  }
  std::sort(held.begin(), held.end());
  return held;
}

// Another GPU of the same model for each drained profile, best fit (fewest
// free memory slices after), none of them `g`; nullopt when one finds none.
std::optional<std::vector<std::pair<size_t, int>>> Elsewhere(const State& st, size_t g,
                                                             const std::vector<int>& profiles) {
  const catalog::GpuModel* model = st.gpus[g].model;
  std::vector<std::pair<size_t, int>> out;  // (gpu, start)
  std::vector<std::vector<int>> extra(st.gpus.size());
  for (int p : profiles) {
    int best = -1, best_free = 99, best_start = 0;
    for (size_t h = 0; h < st.gpus.size(); ++h) {
      if (h == g || st.gpus[h].model != model) continue;
      std::vector<int> add = extra[h];
      add.push_back(p);
      std::optional<std::vector<int>> s = PlaceBeside(*model, st.layout[h], add);
      if (!s) continue;
      int used = UsedSlices(*model, st.layout[h]).size();
      for (int a : add) used += model->mig_profiles[a].placement_span;
      const int free = catalog::kMigMemorySlices - used;
      if (free < best_free) {
        best_free = free;
        best = static_cast<int>(h);
        best_start = s->back();
      }
    }
    if (best < 0) return std::nullopt;
    extra[best].push_back(p);
    out.push_back({static_cast<size_t>(best), best_start});
  }
  // Starts again per target GPU, all its new instances together.
  for (size_t h = 0; h < extra.size(); ++h) {
    if (extra[h].empty()) continue;
    std::vector<int> s = *PlaceBeside(*model, st.layout[h], extra[h]);
    size_t k = 0;
    for (auto& [gpu, start] : out) {
      if (gpu == h) start = s[k++];
    }
  }
  return out;
}

// One way to change GPU g.
struct Option {
  size_t gpu = 0;
  std::vector<int> drain;  // indexes into running
  bool elsewhere = false;  // the drained instances move to other GPUs
  int gained = 0;
  int64_t cost = 0;
};

auto Key(const Option& o) { return std::make_tuple(-o.gained, o.drain.size(), o.cost, o.elsewhere, o.gpu); }

std::optional<Option> BestOption(const State& st, size_t g, const RepartitionOptions& o) {
  const GpuNow& gs = st.gpus[g];
  const catalog::GpuModel& model = *gs.model;
  std::optional<Fit> none = FitOn(st, model, st.layout[g], {});
  const int base = none ? static_cast<int>(none->served.size()) : 0;
  std::optional<Option> best;
  std::vector<int> drain;
  auto consider = [&]() {
    std::vector<int> profiles;
    int64_t cost = 0;
    for (int i : drain) {
      profiles.push_back(gs.running[i].instance.profile);
      cost += gs.running[i].cost;
    }
    const Layout held = Without(gs, drain);
    for (bool elsewhere : {false, true}) {
      if (elsewhere && !o.move_elsewhere) continue;
      std::optional<Fit> f;
      if (!elsewhere) {
        f = FitOn(st, model, held, profiles);
      } else if (Elsewhere(st, g, profiles)) {
        f = FitOn(st, model, held, {});
      }
      if (!f) continue;
      Option opt{g, drain, elsewhere, static_cast<int>(f->served.size()) - base, cost};
      if (opt.gained > 0 && (!best || Key(opt) < Key(*best))) best = opt;
    }
  };
  const int n = static_cast<int>(gs.running.size());
  std::function<void(int)> subsets = [&](int from) {
    if (!drain.empty()) consider();
    if (static_cast<int>(drain.size()) >= o.max_drains_per_gpu) return;
    for (int i = from; i < n; ++i) {
      drain.push_back(i);
      subsets(i + 1);
      drain.pop_back();
    }
  };
  subsets(0);
  return best;
}

Proposal Apply(State& st, const Option& opt) {
  const GpuNow& gs = st.gpus[opt.gpu];
  const catalog::GpuModel& model = *gs.model;
  Proposal p;
  p.gpu = opt.gpu;
  p.before = st.layout[opt.gpu];
  const Layout held = Without(gs, opt.drain);
  std::vector<int> profiles;
  for (int i : opt.drain) profiles.push_back(gs.running[i].instance.profile);
  std::optional<std::vector<std::pair<size_t, int>>> away;
  if (opt.elsewhere) away = Elsewhere(st, opt.gpu, profiles);
  std::optional<Fit> f = FitOn(st, model, held, opt.elsewhere ? std::vector<int>{} : profiles);
  p.after = held;
  size_t k = 0;
  for (size_t d = 0; d < opt.drain.size(); ++d) {
    p.drained.push_back(gs.running[opt.drain[d]]);
    if (opt.elsewhere) {
      const auto [h, start] = (*away)[d];
      const Placed moved{profiles[d], start};
      p.moved.push_back(moved);
      p.moved_to.push_back(h);
      st.layout[h].push_back(moved);
      std::sort(st.layout[h].begin(), st.layout[h].end());
      st.locked[h] = true;
    } else {
      const Placed moved{profiles[d], f->starts[k++]};
      p.moved.push_back(moved);
      p.moved_to.push_back(opt.gpu);
      p.after.push_back(moved);
    }
  }
  for (int r : f->served) {
    const Placed at{SmallestProfile(model, st.reqs[r].need), f->starts[k++]};
    p.served.push_back({st.reqs[r].id, at});
    p.after.push_back(at);
    st.taken[r] = true;
  }
  std::sort(p.after.begin(), p.after.end());
  st.layout[opt.gpu] = p.after;
  st.locked[opt.gpu] = true;
  p.gained = opt.gained;
  p.cost = opt.cost;
  return p;
}

}  // namespace

std::vector<Proposal> ProposeRepartition(const std::vector<GpuNow>& gpus,
                                         const std::vector<WaitingRequest>& waiting,
                                         RepartitionOptions o) {
  std::vector<Proposal> out;
  if (waiting.empty() || o.max_proposals <= 0) return out;
  State st{gpus, {}, std::vector<bool>(gpus.size(), false), waiting, {},
           std::vector<bool>(waiting.size(), false)};
  for (const GpuNow& g : gpus) {
    Layout l;
    for (const RunningInstance& r : g.running) l.push_back(r.instance);
    std::sort(l.begin(), l.end());
    st.layout.push_back(std::move(l));
  }
  st.by_size.resize(waiting.size());
  std::iota(st.by_size.begin(), st.by_size.end(), 0);
  std::stable_sort(st.by_size.begin(), st.by_size.end(), [&](int a, int b) {
    const SliceNeed& x = waiting[a].need;
    const SliceNeed& y = waiting[b].need;
    if (x.memory_slices != y.memory_slices) return x.memory_slices > y.memory_slices;
    return x.compute_slices > y.compute_slices;
  });
  // Candidates: GPUs holding instances and with free memory slices or a
  // request no free slice holds, the most free first.
  std::vector<std::pair<int, size_t>> cands;
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (gpus[g].model == nullptr || gpus[g].running.empty()) continue;
    cands.push_back({-(catalog::kMigMemorySlices - UsedSlices(*gpus[g].model, st.layout[g]).size()), g});
  }
  std::sort(cands.begin(), cands.end());
  if (cands.size() > static_cast<size_t>(o.max_gpus_examined)) cands.resize(o.max_gpus_examined);
  // Rounds: the best option over the GPUs not yet touched, applied; then the
  // options again, against the fleet as it now is (a GPU that could serve a
  // request without a drain may need one once another GPU took that request).
  while (static_cast<int>(out.size()) < o.max_proposals) {
    std::optional<Option> best;
    for (const auto& [neg_free, g] : cands) {
      if (st.locked[g]) continue;
      std::optional<Option> opt = BestOption(st, g, o);
      if (opt && (!best || Key(*opt) < Key(*best))) best = opt;
    }
    if (!best) break;
    out.push_back(Apply(st, *best));
  }
  return out;
}

}  // namespace meridian::mig
