// MIG geometry planner, one GPU at a time: every valid layout of a GPU model
// (EnumerateLayouts), the check of one layout (CheckLayout), and the smallest
// profile that holds a request (SmallestProfile, ProfileForShare).
//
// A layout is a set of GPU instances, each a profile of the model at one of
// the profile's placement starts (catalog/mig.h: the catalog's placement data,
// NVIDIA MIG User Guide geometry, docs/mig.md). Valid: no two instances share
// a memory slice, at most max_instances per profile, at most 7 compute slices.
//
// Pure functions of their arguments; safe to call from many threads.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/mig.h"
#include "core/status.h"

namespace meridian::mig {

// One instance of a layout: a profile (index into GpuModel::mig_profiles) at
// a memory-slice start.
struct Placed {
  int profile = 0;
  int start = 0;
  friend bool operator==(const Placed&, const Placed&) = default;
  // By start, then profile: the order of a Layout.
  friend std::strong_ordering operator<=>(const Placed& a, const Placed& b) {
    if (auto c = a.start <=> b.start; c != 0) return c;
    return a.profile <=> b.profile;
  }
};

// Instances sorted by (start, profile): one layout has one representation.
using Layout = std::vector<Placed>;

struct EnumerateOptions {
  bool maximal_only = false;   // only layouts to which no instance can be added
  bool media_profiles = true;  // include the "+me" profiles
  bool include_empty = true;   // the layout with no instance (MIG mode, nothing created)
};

// Every valid layout of `gpu`, in a fixed order (depth-first over the
// profile/start pairs in catalog order). Empty for a GPU without MIG or
// without placement data. A100/H100/H200/B200: 2,319 layouts, 239 maximal
// (723 and 78 without "+me"); the derivation is in docs/mig.md.
std::vector<Layout> EnumerateLayouts(const catalog::GpuModel& gpu, EnumerateOptions o = {});

// The memory slices a layout occupies, and its compute slices.
catalog::MigSliceSet UsedSlices(const catalog::GpuModel& gpu, const Layout& layout);
int ComputeSlices(const catalog::GpuModel& gpu, const Layout& layout);

// Checks a layout given by profile names and starts. Errors (InvalidArgument,
// NotFound) name the GPU, the profile, the start and the reason:
// "A100-80GB: 2g.20gb at 6: not a valid start (valid: 0, 2, 4)".
Result<Layout> CheckLayout(const catalog::GpuModel& gpu,
                           const std::vector<catalog::MigInstance>& instances);

// Names of a layout: "3g.40gb@4 2g.20gb@0 2g.20gb@2" style pairs.
std::vector<catalog::MigInstance> Named(const catalog::GpuModel& gpu, const Layout& layout);
std::string Describe(const catalog::GpuModel& gpu, const Layout& layout);

// What a slice request needs: compute slices (of 7) and memory slices (of 8),
// and whether it needs the media engines ("+me").
struct SliceNeed {
  int compute_slices = 1;
  int memory_slices = 1;
  bool media = false;
  friend bool operator==(const SliceNeed&, const SliceNeed&) = default;
};

// The need a profile of `gpu` stands for (its compute and memory slices).
SliceNeed NeedOf(const catalog::MigProfile& p);

// The smallest profile of `gpu` holding `need`: fewest memory slices, then
// fewest compute slices, then catalog order; a "+me" profile only when the
// need asks for media. -1 when none holds it.
int SmallestProfile(const catalog::GpuModel& gpu, SliceNeed need);

// A fractional-GPU request of `milli` thousandths of one GPU (the openb
// trace's gpu_milli) as a need: that share of the compute slices and the
// same share of the memory slices, each rounded up:
// compute = ceil(7 x milli / 1000), memory = ceil(8 x milli / 1000).
// 460 -> 4 compute, 4 memory (a 4g); 320 -> 3, 3 (a 3g, which has 4 memory slices).
SliceNeed NeedForShare(int milli);

}  // namespace meridian::mig
