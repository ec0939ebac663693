// Fragmentation of MIG GPUs: free slice capacity that cannot be allocated.
//
// For one GPU, "free" is what no instance in use occupies (memory slices of
// 8, compute slices of 7); "allocatable" is the most of it that instances of
// the allowed profiles can still take together (the best valid extension of
// the GPU's layout: EnumerateLayouts); the rest is unallocatable until a
// neighbour frees. The allowed profiles are either every profile of the
// model ("structural" fragmentation), or those the waiting demand would use
// ("demand" fragmentation: a free 1g on a GPU when only 3g jobs wait is
// stranded for them).
//   - Free-form GPU (a repartitionable node: instances are created where
//     the jobs go): the extension may put any allowed instance on free slices.
//   - Fixed-layout GPU: only the layout's free instances can be allocated, and
//     an instance counts when some allowed request fits in it (its profile
//     has at least the request's compute and memory slices).
//
// Example (H100-80GB, free-form): a 1g.10gb held at slice 1 and one at slice
// 5 leave 6 memory and 5 compute slices free. With every profile allowed, all
// of it is allocatable (1g at 0, 2, 3, 4 and a 1g.20gb at 6: 6 memory, 5
// compute slices); with only 3g demand, none is (both 3g starts are
// blocked): 6 memory and 5 compute slices unallocatable.
//
// MigMeter caches the layouts of each model and the answer per (model,
// layout, allowed profiles); not thread-safe (one per thread).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "catalog/catalog.h"
#include "mig/geometry.h"

namespace meridian::mig {

struct Fragmentation {
  int gpus = 0;               // MIG GPUs measured
  int free_memory = 0;        // memory slices no instance in use occupies
  int allocatable_memory = 0; // of which instances of the allowed profiles can still take
  int free_compute = 0;
  int allocatable_compute = 0;
  int unallocatable_memory() const { return free_memory - allocatable_memory; }
  int unallocatable_compute() const { return free_compute - allocatable_compute; }
  void Add(const Fragmentation& o);
  friend bool operator==(const Fragmentation&, const Fragmentation&) = default;
};

// A set of profiles of one model: bit i = GpuModel::mig_profiles[i].
using ProfileSet = uint32_t;
inline constexpr ProfileSet kAllProfiles = ~ProfileSet{0};

// The smallest profiles of `gpu` holding each of `needs` (the demand's set).
ProfileSet ProfilesFor(const catalog::GpuModel& gpu, const std::vector<SliceNeed>& needs);

class MigMeter {
 public:
  // A free-form GPU whose instances in use are `held`.
  Fragmentation FreeForm(const catalog::GpuModel& gpu, const Layout& held, ProfileSet allowed);
  // A fixed-layout GPU: `layout` is its instances, `in_use` flags those held.
  Fragmentation Fixed(const catalog::GpuModel& gpu, const Layout& layout,
                      const std::vector<bool>& in_use, ProfileSet allowed);

 private:
  const std::vector<Layout>& LayoutsOf(const catalog::GpuModel& gpu);
  std::map<const catalog::GpuModel*, std::vector<Layout>> layouts_;
  std::map<std::tuple<const catalog::GpuModel*, Layout, ProfileSet>, Fragmentation> cache_;
};

}  // namespace meridian::mig
