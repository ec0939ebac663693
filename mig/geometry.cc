#include "mig/geometry.h"

#include <algorithm>

namespace meridian::mig {

namespace {

using catalog::GpuModel;
using catalog::MigProfile;
using catalog::MigSliceSet;

bool IsMedia(const MigProfile& p) { return p.name.find("+me") != std::string::npos; }

bool HasPlacements(const MigProfile& p) {
  return !p.placement_starts.empty() && p.placement_span > 0;
}

int GpuComputeSlices(const GpuModel& gpu) {
  int n = 0;
  for (const auto& p : gpu.mig_profiles) n = std::max(n, p.compute_slices);
  return n;
}

// One candidate instance of the enumeration.
struct Item {
  int profile;
  int start;
  MigSliceSet slices;
};

struct Enumeration {
  const GpuModel& gpu;
  const EnumerateOptions& options;
  std::vector<Item> items;
  int compute_limit = 0;
  std::vector<int> count;
  Layout current;
  std::vector<Layout> out;

  bool Fits(const Item& it, MigSliceSet used, int compute) const {
    const MigProfile& p = gpu.mig_profiles[it.profile];
    return !it.slices.Overlaps(used) && count[it.profile] < p.max_instances &&
           compute + p.compute_slices <= compute_limit;
  }

  void Record(MigSliceSet used, int compute) {
    if (!options.include_empty && current.empty()) return;
    if (options.maximal_only) {
      for (const Item& it : items) {
        if (Fits(it, used, compute)) return;
      }
    }
    Layout l = current;
    std::sort(l.begin(), l.end(), [](const Placed& a, const Placed& b) {
      return a.start != b.start ? a.start < b.start : a.profile < b.profile;
    });
    out.push_back(std::move(l));
  }

  void Walk(size_t from, MigSliceSet used, int compute) {
    Record(used, compute);
    for (size_t i = from; i < items.size(); ++i) {
      const Item& it = items[i];
      if (!Fits(it, used, compute)) continue;
      ++count[it.profile];
      current.push_back({it.profile, it.start});
      Walk(i + 1, used | it.slices, compute + gpu.mig_profiles[it.profile].compute_slices);
      current.pop_back();
      --count[it.profile];
    }
  }
};

}  // namespace

std::vector<Layout> EnumerateLayouts(const GpuModel& gpu, EnumerateOptions o) {
  Enumeration e{gpu, o, {}, GpuComputeSlices(gpu), std::vector<int>(gpu.mig_profiles.size(), 0),
                {}, {}};
  for (size_t p = 0; p < gpu.mig_profiles.size(); ++p) {
    const MigProfile& prof = gpu.mig_profiles[p];
    if (!HasPlacements(prof) || (!o.media_profiles && IsMedia(prof))) continue;
    for (int s : prof.placement_starts) {
      MigSliceSet occ = catalog::OccupiedSlices(prof, s);
      if (occ.size() != prof.placement_span) continue;
      e.items.push_back({static_cast<int>(p), s, occ});
    }
  }
  if (e.items.empty()) return {};
  e.Walk(0, MigSliceSet(), 0);
  return std::move(e.out);
}

MigSliceSet UsedSlices(const GpuModel& gpu, const Layout& layout) {
  MigSliceSet used;
  for (const Placed& p : layout) used = used | catalog::OccupiedSlices(gpu.mig_profiles[p.profile], p.start);
  return used;
}

int ComputeSlices(const GpuModel& gpu, const Layout& layout) {
  int n = 0;
  for (const Placed& p : layout) n += gpu.mig_profiles[p.profile].compute_slices;
  return n;
}

Result<Layout> CheckLayout(const GpuModel& gpu, const std::vector<catalog::MigInstance>& instances) {
  Result<MigSliceSet> checked = catalog::CheckMigInstances(gpu, instances);
  if (!checked.ok()) return checked.status();
  Layout out;
  for (const auto& in : instances) {
    const MigProfile* p = catalog::FindMigProfile(gpu, in.profile);
    out.push_back({static_cast<int>(p - gpu.mig_profiles.data()), in.start});
  }
  std::sort(out.begin(), out.end(), [](const Placed& a, const Placed& b) {
    return a.start != b.start ? a.start < b.start : a.profile < b.profile;
  });
  return out;
}

std::vector<catalog::MigInstance> Named(const GpuModel& gpu, const Layout& layout) {
  std::vector<catalog::MigInstance> out;
  for (const Placed& p : layout) out.push_back({gpu.mig_profiles[p.profile].name, p.start});
  return out;
}

std::string Describe(const GpuModel& gpu, const Layout& layout) {
  if (layout.empty()) return "(empty)";
  std::string s;
  for (const Placed& p : layout) {
    s += (s.empty() ? "" : " ") + gpu.mig_profiles[p.profile].name + "@" + std::to_string(p.start);
  }
  return s;
}

SliceNeed NeedOf(const MigProfile& p) {
  return {p.compute_slices, p.memory_slices, IsMedia(p)};
}

int SmallestProfile(const GpuModel& gpu, SliceNeed need) {
  int best = -1;
  for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
    const MigProfile& p = gpu.mig_profiles[i];
    if (!HasPlacements(p) || IsMedia(p) != need.media) continue;
    if (p.compute_slices < need.compute_slices || p.memory_slices < need.memory_slices) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const MigProfile& b = gpu.mig_profiles[best];
    if (p.memory_slices < b.memory_slices ||
        (p.memory_slices == b.memory_slices && p.compute_slices < b.compute_slices)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

SliceNeed NeedForShare(int milli) {
  milli = std::clamp(milli, 1, 1000);
  return {(7 * milli + 999) / 1000, (8 * milli + 999) / 1000, false};
}

}  // namespace meridian::mig
