#include "mig/fractional.h"

#include <algorithm>
#include <array>
#include <optional>

#include "mig/geometry.h"
#include "mig/pack.h"

namespace meridian::mig {

namespace {

struct GpuSlot {
  bool whole = false;     // held whole
  int free_milli = 1000;  // kShared
  Layout held;            // kMig
  // kMig: per profile, free memory slices after adding one (-1: does not
  // fit; -2: not computed since the GPU last changed).
  std::array<int8_t, 32> fit;
  GpuSlot() { fit.fill(-2); }
  bool empty() const { return !whole && free_milli == 1000 && held.empty(); }
};

struct NodeSlot {
  int64_t cpu = 0, mem = 0;
  std::vector<GpuSlot> gpus;
  int free_whole() const {
    int n = 0;
    for (const GpuSlot& g : gpus) n += g.empty() ? 1 : 0;
    return n;
  }
};

int FreeAfter(const catalog::GpuModel& model, GpuSlot& g, int profile) {
  if (g.whole || profile < 0 || profile >= 32) return -1;
  if (g.fit[profile] != -2) return g.fit[profile];
  std::optional<std::vector<int>> st = PlaceBeside(model, g.held, {profile});
  int free = -1;
  if (st) {
    free = catalog::kMigMemorySlices - UsedSlices(model, g.held).size() -
           model.mig_profiles[profile].placement_span;
  }
  g.fit[profile] = static_cast<int8_t>(free);
  return free;
}

// Whole GPUs: the node with the fewest free GPUs that still holds k.
bool PlaceWhole(std::vector<NodeSlot>& nodes, const TracePod& p, int k, FillResult& r) {
  int best = -1, best_free = 1 << 30;
  for (size_t n = 0; n < nodes.size(); ++n) {
    NodeSlot& ns = nodes[n];
    if (ns.cpu < p.cpu_milli || ns.mem < p.memory_mib) continue;
    int free = ns.free_whole();
    if (free >= k && free < best_free) {
      best = static_cast<int>(n);
      best_free = free;
    }
  }
  if (best < 0) return false;
  NodeSlot& ns = nodes[best];
  int taken = 0;
  for (GpuSlot& g : ns.gpus) {
    if (taken == k) break;
    if (!g.empty()) continue;
    g.whole = true;
    g.fit.fill(-1);
    ++taken;
  }
  ns.cpu -= p.cpu_milli;
  ns.mem -= p.memory_mib;
  r.held_milli += 1000 * k;
  return true;
}

bool PlaceShare(std::vector<NodeSlot>& nodes, const TracePod& p, FillResult& r) {
  int bn = -1, bg = -1, best_left = 1 << 30;
  for (size_t n = 0; n < nodes.size(); ++n) {
    NodeSlot& ns = nodes[n];
    if (ns.cpu < p.cpu_milli || ns.mem < p.memory_mib) continue;
    for (size_t g = 0; g < ns.gpus.size(); ++g) {
      const GpuSlot& gs = ns.gpus[g];
      if (gs.whole || gs.free_milli < p.milli) continue;
      int left = gs.free_milli - p.milli;
      if (left < best_left) {
        best_left = left;
        bn = static_cast<int>(n);
        bg = static_cast<int>(g);
      }
    }
  }
  if (bn < 0) return false;
  nodes[bn].gpus[bg].free_milli -= p.milli;
  nodes[bn].cpu -= p.cpu_milli;
  nodes[bn].mem -= p.memory_mib;
  r.held_milli += p.milli;
  return true;
}

bool PlaceMig(const std::vector<TraceNode>& spec, std::vector<NodeSlot>& nodes, const TracePod& p,
              FillResult& r) {
  int bn = -1, bg = -1, bp = -1, best_free = 99;
  for (size_t n = 0; n < nodes.size(); ++n) {
    NodeSlot& ns = nodes[n];
    if (spec[n].mig == nullptr || ns.cpu < p.cpu_milli || ns.mem < p.memory_mib) continue;
    const catalog::GpuModel& model = *spec[n].mig;
    int prof = SmallestProfile(model, NeedForShare(p.milli));
    for (size_t g = 0; g < ns.gpus.size(); ++g) {
      int free = FreeAfter(model, ns.gpus[g], prof);
      if (free >= 0 && free < best_free) {
        best_free = free;
        bn = static_cast<int>(n);
        bg = static_cast<int>(g);
        bp = prof;
      }
    }
  }
  if (bn < 0) return false;
  const catalog::GpuModel& model = *spec[bn].mig;
  GpuSlot& g = nodes[bn].gpus[bg];
  // The instances in use stay; the new one goes beside them.
  Layout next = g.held;
  next.push_back({bp, (*PlaceBeside(model, g.held, {bp}))[0]});
  std::sort(next.begin(), next.end());
  if (g.held.empty()) ++r.mig_gpus;
  g.held = std::move(next);
  g.free_milli = 0;  // no longer a whole free GPU
  g.fit.fill(-2);
  nodes[bn].cpu -= p.cpu_milli;
  nodes[bn].mem -= p.memory_mib;
  r.held_milli += 1000 * model.mig_profiles[bp].compute_slices / 7;
  ++r.profiles[model.mig_profiles[bp].name];
  return true;
}

}  // namespace

FillResult Fill(const std::vector<TraceNode>& spec, const std::vector<TracePod>& pods, Sharing how) {
  FillResult r;
  std::vector<NodeSlot> nodes(spec.size());
  for (size_t n = 0; n < spec.size(); ++n) {
    nodes[n].cpu = spec[n].cpu_milli;
    nodes[n].mem = spec[n].memory_mib;
    nodes[n].gpus.resize(spec[n].gpus);
    r.gpus += spec[n].gpus;
  }
  for (const TracePod& p : pods) {
    ++r.pods;
    const bool frac = p.fractional();
    r.fractional_pods += frac ? 1 : 0;
    bool ok = false;
    if (!frac) {
      ok = PlaceWhole(nodes, p, std::max(1, p.gpus), r);
    } else if (how == Sharing::kShared) {
      ok = PlaceShare(nodes, p, r);
    } else if (how == Sharing::kMig) {
      ok = PlaceMig(spec, nodes, p, r) || PlaceWhole(nodes, p, 1, r);
    } else {
      ok = PlaceWhole(nodes, p, 1, r);
    }
    if (!ok) continue;
    ++r.placed;
    r.fractional_placed += frac ? 1 : 0;
    r.requested_milli += frac ? p.milli : 1000 * int64_t{std::max(1, p.gpus)};
  }
  for (const NodeSlot& ns : nodes) {
    for (const GpuSlot& g : ns.gpus) r.idle_gpus += g.empty() ? 1 : 0;
  }
  return r;
}

}  // namespace meridian::mig
