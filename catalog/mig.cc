#include "catalog/mig.h"

#include <algorithm>
#include <numeric>

namespace meridian::catalog {

namespace {

std::string Join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string Names(const std::vector<std::string>& names) {
  std::string s = "[";
  for (const auto& n : names) s += (s.size() > 1 ? ", " : "") + n;
  return s + "]";
}

// "memory slice 3", "memory slices 2-3" (the members of an instance's span
// are consecutive, and so is the overlap of two spans).
std::string SliceRange(MigSliceSet s) {
  std::vector<int> v = s.ToVector();
  if (v.size() == 1) return "memory slice " + std::to_string(v[0]);
  return "memory slices " + std::to_string(v.front()) + "-" + std::to_string(v.back());
}

// The profile named `name`, with placement data.
Result<const MigProfile*> Lookup(const GpuModel& gpu, std::string_view name) {
  if (gpu.mig_profiles.empty()) return Status::NotFound(gpu.name + " has no MIG profiles");
  const MigProfile* p = FindMigProfile(gpu, name);
  if (p == nullptr) {
    return Status::NotFound(gpu.name + ": unknown MIG profile \"" + std::string(name) + "\"");
  }
  if (p->placement_starts.empty() || p->placement_span <= 0) {
    return Status::NotFound(gpu.name + ": MIG profile " + p->name + " has no placement data");
  }
  return p;
}

int IndexOf(const GpuModel& gpu, const MigProfile* p) {
  return static_cast<int>(p - gpu.mig_profiles.data());
}

// The compute slices of the whole GPU: those of its largest profile (7g).
int ComputeSlicesOf(const GpuModel& gpu) {
  int n = 0;
  for (const auto& p : gpu.mig_profiles) n = std::max(n, p.compute_slices);
  return n;
}

// Backtracking search for PlaceMigLayout. `order` lists instance indexes,
// largest span first, instances of one profile adjacent.
struct LayoutSearch {
  const std::vector<const MigProfile*>& profiles;
  const std::vector<int>& order;
  std::vector<int> starts;
  int deepest = 0;  // how far the search got: order[deepest] found no room

  bool Place(size_t depth, MigSliceSet used) {
    if (depth == order.size()) return true;
    deepest = std::max(deepest, static_cast<int>(depth));
    const MigProfile& p = *profiles[order[depth]];
    // Instances of one profile take ascending starts: the search never tries
    // two orders of identical instances.
    int after = -1;
    if (depth > 0 && profiles[order[depth - 1]] == &p) after = starts[order[depth - 1]];
    for (int s : p.placement_starts) {
      if (s <= after) continue;
      MigSliceSet occ = OccupiedSlices(p, s);
      if (occ.size() != p.placement_span || occ.Overlaps(used)) continue;
      starts[order[depth]] = s;
      if (Place(depth + 1, used | occ)) return true;
    }
    return false;
  }
};

}  // namespace

std::vector<int> MigSliceSet::ToVector() const {
  std::vector<int> out;
  for (int i = 0; i < kMigMemorySlices; ++i) {
    if (Contains(i)) out.push_back(i);
  }
  return out;
}

const MigProfile* FindMigProfile(const GpuModel& gpu, std::string_view name) {
  for (const auto& p : gpu.mig_profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

MigSliceSet PlacementStarts(const MigProfile& profile) {
  MigSliceSet out;
  for (int s : profile.placement_starts) out = out | MigSliceSet::Span(s, 1);
  return out;
}

MigSliceSet OccupiedSlices(const MigProfile& profile, int start) {
  return MigSliceSet::Span(start, profile.placement_span);
}

MigSliceSet FreeMigStarts(const MigProfile& profile, MigSliceSet used) {
  MigSliceSet out;
  for (int s : profile.placement_starts) {
    MigSliceSet occ = OccupiedSlices(profile, s);
    if (occ.size() == profile.placement_span && !occ.Overlaps(used)) {
      out = out | MigSliceSet::Span(s, 1);
    }
  }
  return out;
}

Result<MigSliceSet> CheckMigInstances(const GpuModel& gpu,
                                      const std::vector<MigInstance>& instances) {
  MigSliceSet used;
  int compute = 0;
  std::vector<int> count(gpu.mig_profiles.size(), 0);
  std::vector<MigSliceSet> occupied;
  for (size_t i = 0; i < instances.size(); ++i) {
    const MigInstance& in = instances[i];
    Result<const MigProfile*> found = Lookup(gpu, in.profile);
    if (!found.ok()) return found.status();
    const MigProfile& p = **found;
    const std::string where = gpu.name + ": " + p.name + " at " + std::to_string(in.start);
    if (!PlacementStarts(p).Contains(in.start)) {
      return Status::Invalid(where + ": not a valid start (valid: " + Join(p.placement_starts) + ")");
    }
    MigSliceSet occ = OccupiedSlices(p, in.start);
    if (occ.Overlaps(used)) {
      for (size_t j = 0; j < i; ++j) {
        if (occupied[j].Overlaps(occ)) {
          return Status::Invalid(where + " overlaps " + instances[j].profile + " at " +
                                 std::to_string(instances[j].start) + " on " +
                                 SliceRange(occupied[j] & occ));
        }
      }
    }
    if (++count[IndexOf(gpu, &p)] > p.max_instances) {
      return Status::Invalid(gpu.name + ": " + std::to_string(count[IndexOf(gpu, &p)]) +
                             " instances of " + p.name + ", at most " +
                             std::to_string(p.max_instances) + " fit");
    }
    compute += p.compute_slices;
    if (compute > ComputeSlicesOf(gpu)) {
      return Status::Invalid(gpu.name + ": the instances need " + std::to_string(compute) +
                             " compute slices, the GPU has " +
                             std::to_string(ComputeSlicesOf(gpu)));
    }
    used = used | occ;
    occupied.push_back(occ);
  }
  return used;
}

Result<MigSliceSet> NextMigStarts(const GpuModel& gpu, const std::vector<MigInstance>& placed,
                                  std::string_view profile) {
  Result<MigSliceSet> used = CheckMigInstances(gpu, placed);
  if (!used.ok()) return used.status();
  Result<const MigProfile*> found = Lookup(gpu, profile);
  if (!found.ok()) return found.status();
  const MigProfile& p = **found;
  int same = 0, compute = p.compute_slices;
  for (const auto& in : placed) {
    const MigProfile* q = FindMigProfile(gpu, in.profile);
    compute += q->compute_slices;
    if (q == &p) ++same;
  }
  if (same >= p.max_instances || compute > ComputeSlicesOf(gpu)) return MigSliceSet();
  return FreeMigStarts(p, *used);
}

Result<std::vector<MigInstance>> PlaceMigLayout(const GpuModel& gpu,
                                                const std::vector<std::string>& names) {
  std::vector<const MigProfile*> profiles;
  std::vector<int> count(gpu.mig_profiles.size(), 0);
  int compute = 0, memory = 0;
  for (const auto& name : names) {
    Result<const MigProfile*> found = Lookup(gpu, name);
    if (!found.ok()) return found.status();
    const MigProfile& p = **found;
    profiles.push_back(&p);
    compute += p.compute_slices;
    memory += p.placement_span;
    if (++count[IndexOf(gpu, &p)] > p.max_instances) {
      int n = static_cast<int>(std::count(names.begin(), names.end(), name));
      return Status::Unresolvable(gpu.name + ": " + p.name + " x" + std::to_string(n) +
                                  ": at most " + std::to_string(p.max_instances) +
                                  (p.max_instances == 1 ? " instance fits" : " instances fit"));
    }
  }
  const std::string layout = gpu.name + ": " + Names(names);
  if (compute > ComputeSlicesOf(gpu)) {
    return Status::Unresolvable(layout + " needs " + std::to_string(compute) +
                                " compute slices, the GPU has " +
                                std::to_string(ComputeSlicesOf(gpu)));
  }
  if (memory > kMigMemorySlices) {
    return Status::Unresolvable(layout + " needs " + std::to_string(memory) +
                                " memory slices, the GPU has " + std::to_string(kMigMemorySlices));
  }
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (profiles[a]->placement_span != profiles[b]->placement_span) {
      return profiles[a]->placement_span > profiles[b]->placement_span;
    }
    return profiles[a]->name < profiles[b]->name;
  });
  LayoutSearch search{profiles, order, std::vector<int>(names.size(), 0)};
  if (!search.Place(0, MigSliceSet())) {
    const MigProfile& stuck = *profiles[order[search.deepest]];
    return Status::Unresolvable(layout + " has no valid placement: " + stuck.name +
                                " finds no free start (valid: " + Join(stuck.placement_starts) +
                                ") beside the instances placed before it, largest first");
  }
  std::vector<MigInstance> out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) out.push_back({profiles[i]->name, search.starts[i]});
  return out;
}

}  // namespace meridian::catalog
