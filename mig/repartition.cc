#include "mig/repartition.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "mig/pack.h"

namespace meridian::mig {

namespace {

struct Fit {
  std::vector<int> order;  // indexes into the request list served, in placing order
  std::vector<int> starts; // drained first, then the served requests
};

// Places `moved` profiles then as many of `reqs` (largest first) as fit beside `held`.
std::optional<Fit> FitOn(const catalog::GpuModel& gpu, const Layout& held, const std::vector<int>& moved,
                         const std::vector<WaitingRequest>& reqs, const std::vector<int>& by_size,
                         const std::vector<bool>& taken) {
  std::vector<int> add = moved;
  std::optional<std::vector<int>> st = PlaceBeside(gpu, held, add);
  if (!st) return std::nullopt;
  Fit f;
  f.starts = *st;
  int failed_memory = 99, failed_compute = 99;  // a need no smaller than one that failed fails too
  for (int r : by_size) {
    if (taken[r]) continue;
    const SliceNeed& n = reqs[r].need;
    if (n.memory_slices >= failed_memory && n.compute_slices >= failed_compute && !n.media) continue;
    int p = SmallestProfile(gpu, n);
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
    f.order.push_back(r);
    f.starts = *next;
    if (add.size() >= 7) break;
  }
  return f;
}

struct Option {
  size_t gpu = 0;
  std::vector<int> drain;  // indexes into running
  int gained = 0;
  int64_t cost = 0;
};

Layout Held(const GpuNow& g, const std::vector<int>& drain) {
  Layout held;
  for (size_t i = 0; i < g.running.size(); ++i) {
    if (std::find(drain.begin(), drain.end(), static_cast<int>(i)) == drain.end()) {
      held.push_back(g.running[i].instance);
    }
  }
  std::sort(held.begin(), held.end());
  return held;
}

std::vector<int> Profiles(const GpuNow& g, const std::vector<int>& drain) {
  std::vector<int> out;
  for (int i : drain) out.push_back(g.running[i].instance.profile);
  return out;
}

// The best drain set of GPU g against the requests not taken; nullopt: none gains.
std::optional<Option> BestOption(const std::vector<GpuNow>& gpus, size_t g,
                                 const std::vector<WaitingRequest>& reqs, const std::vector<int>& by_size,
                                 const std::vector<bool>& taken, const RepartitionOptions& o) {
  const GpuNow& gs = gpus[g];
  const int n = static_cast<int>(gs.running.size());
  std::optional<Fit> none = FitOn(*gs.model, Held(gs, {}), {}, reqs, by_size, taken);
  const int base = none ? static_cast<int>(none->order.size()) : 0;
  std::optional<Option> best;
  std::vector<int> drain;
  auto consider = [&]() {
    std::optional<Fit> f = FitOn(*gs.model, Held(gs, drain), Profiles(gs, drain), reqs, by_size, taken);
    if (!f) return;
    int gained = static_cast<int>(f->order.size()) - base;
    if (gained <= 0) return;
    int64_t cost = 0;
    for (int i : drain) cost += gs.running[i].cost;
    auto key = [](const Option& x) {
      return std::make_tuple(-x.gained, x.drain.size(), x.cost);
    };
    Option opt{g, drain, gained, cost};
    if (!best || key(opt) < key(*best)) best = opt;
  };
  for (int a = 0; a < n; ++a) {
    drain = {a};
    consider();
    if (o.max_drains_per_gpu < 2) continue;
    for (int b = a + 1; b < n; ++b) {
      drain = {a, b};
      consider();
      if (o.max_drains_per_gpu < 3) continue;
      for (int c = b + 1; c < n; ++c) {
        drain = {a, b, c};
        consider();
      }
    }
  }
  return best;
}

}  // namespace

std::vector<Proposal> ProposeRepartition(const std::vector<GpuNow>& gpus,
                                         const std::vector<WaitingRequest>& waiting,
                                         RepartitionOptions o) {
  std::vector<Proposal> out;
  if (waiting.empty() || o.max_proposals <= 0) return out;
  std::vector<int> by_size(waiting.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    const SliceNeed& x = waiting[a].need;
    const SliceNeed& y = waiting[b].need;
    if (x.memory_slices != y.memory_slices) return x.memory_slices > y.memory_slices;
    return x.compute_slices > y.compute_slices;
  });
  // Candidates: GPUs holding instances and with free memory slices, the most free first.
  std::vector<std::pair<int, size_t>> cands;
  for (size_t g = 0; g < gpus.size(); ++g) {
    const GpuNow& gs = gpus[g];
    if (gs.model == nullptr || gs.running.empty()) continue;
    Layout held;
    for (const auto& r : gs.running) held.push_back(r.instance);
    int free = catalog::kMigMemorySlices - UsedSlices(*gs.model, held).size();
    if (free > 0) cands.push_back({-free, g});
  }
  std::sort(cands.begin(), cands.end());
  if (cands.size() > static_cast<size_t>(o.max_gpus_examined)) cands.resize(o.max_gpus_examined);
  std::vector<bool> taken(waiting.size(), false);
  std::vector<Option> options;
  for (const auto& [neg_free, g] : cands) {
    if (auto opt = BestOption(gpus, g, waiting, by_size, taken, o)) options.push_back(*opt);
  }
  std::sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    return std::make_tuple(-a.gained, a.drain.size(), a.cost, a.gpu) <
           std::make_tuple(-b.gained, b.drain.size(), b.cost, b.gpu);
  });
  for (const Option& first : options) {
    if (static_cast<int>(out.size()) >= o.max_proposals) break;
    // Recompute against what is left (earlier proposals took some requests).
    std::optional<Option> opt = BestOption(gpus, first.gpu, waiting, by_size, taken, o);
    if (!opt) continue;
    const GpuNow& gs = gpus[opt->gpu];
    Layout held = Held(gs, opt->drain);
    std::optional<Fit> f = FitOn(*gs.model, held, Profiles(gs, opt->drain), waiting, by_size, taken);
    Proposal p;
    p.gpu = opt->gpu;
    for (const auto& r : gs.running) p.before.push_back(r.instance);
    std::sort(p.before.begin(), p.before.end());
    p.after = held;
    size_t k = 0;
    for (int i : opt->drain) {
      p.drained.push_back(gs.running[i]);
      Placed moved{gs.running[i].instance.profile, f->starts[k++]};
      p.moved.push_back(moved);
      p.after.push_back(moved);
    }
    for (int r : f->order) {
      Placed at{SmallestProfile(*gs.model, waiting[r].need), f->starts[k++]};
      p.served.push_back({waiting[r].id, at});
      p.after.push_back(at);
      taken[r] = true;
    }
    std::sort(p.after.begin(), p.after.end());
    p.gained = opt->gained;
    p.cost = opt->cost;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace meridian::mig
