#include "mig/fragmentation.h"

#include <algorithm>

namespace meridian::mig {

void Fragmentation::Add(const Fragmentation& o) {
  gpus += o.gpus;
  free_memory += o.free_memory;
  allocatable_memory += o.allocatable_memory;
  free_compute += o.free_compute;
  allocatable_compute += o.allocatable_compute;
}

ProfileSet ProfilesFor(const catalog::GpuModel& gpu, const std::vector<SliceNeed>& needs) {
  ProfileSet s = 0;
  for (const SliceNeed& n : needs) {
    int p = SmallestProfile(gpu, n);
    if (p >= 0 && p < 32) s |= ProfileSet{1} << p;
  }
  return s;
}

const std::vector<Layout>& MigMeter::LayoutsOf(const catalog::GpuModel& gpu) {
  auto it = layouts_.find(&gpu);
  if (it == layouts_.end()) it = layouts_.emplace(&gpu, EnumerateLayouts(gpu)).first;
  return it->second;
}

namespace {

int GpuComputeSlices(const catalog::GpuModel& gpu) {
  int n = 0;
  for (const auto& p : gpu.mig_profiles) n = std::max(n, p.compute_slices);
  return n;
}

bool Allowed(ProfileSet s, int profile) { return profile < 32 && ((s >> profile) & 1u) != 0; }

}  // namespace

Fragmentation MigMeter::FreeForm(const catalog::GpuModel& gpu, const Layout& held,
                                 ProfileSet allowed) {
  auto key = std::make_tuple(&gpu, held, allowed);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Fragmentation f;
  f.gpus = 1;
  f.free_memory = catalog::kMigMemorySlices - UsedSlices(gpu, held).size();
  f.free_compute = GpuComputeSlices(gpu) - ComputeSlices(gpu, held);
  for (const Layout& l : LayoutsOf(gpu)) {
    if (!std::includes(l.begin(), l.end(), held.begin(), held.end())) continue;
    int memory = 0, compute = 0;
    bool ok = true;
    for (const Placed& p : l) {
      if (std::binary_search(held.begin(), held.end(), p)) continue;
      if (!Allowed(allowed, p.profile)) {
        ok = false;
        break;
      }
      memory += gpu.mig_profiles[p.profile].placement_span;
      compute += gpu.mig_profiles[p.profile].compute_slices;
    }
    if (!ok) continue;
    f.allocatable_memory = std::max(f.allocatable_memory, memory);
    f.allocatable_compute = std::max(f.allocatable_compute, compute);
  }
  cache_.emplace(key, f);
  return f;
}

Fragmentation MigMeter::Fixed(const catalog::GpuModel& gpu, const Layout& layout,
                              const std::vector<bool>& in_use, ProfileSet allowed) {
  Fragmentation f;
  f.gpus = 1;
  f.free_memory = catalog::kMigMemorySlices;
  f.free_compute = GpuComputeSlices(gpu);
  for (size_t i = 0; i < layout.size(); ++i) {
    const catalog::MigProfile& p = gpu.mig_profiles[layout[i].profile];
    if (i < in_use.size() && in_use[i]) {
      f.free_memory -= p.placement_span;
      f.free_compute -= p.compute_slices;
      continue;
    }
    bool fits = false;
    for (size_t q = 0; q < gpu.mig_profiles.size() && !fits; ++q) {
      const catalog::MigProfile& r = gpu.mig_profiles[q];
      fits = Allowed(allowed, static_cast<int>(q)) && r.compute_slices <= p.compute_slices &&
             r.memory_slices <= p.memory_slices;
    }
    if (fits) {
      f.allocatable_memory += p.placement_span;
      f.allocatable_compute += p.compute_slices;
    }
  }
  return f;
}

}  // namespace meridian::mig
