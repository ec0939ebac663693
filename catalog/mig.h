// MIG geometry: where GPU instances may sit on a MIG-capable GPU and whether
// a set of them fits. A GPU in MIG mode has 8 memory slices (0..7) and 7
// compute slices; an instance of a profile starts at one of the profile's
// placement starts and occupies `placement_span` consecutive memory slices
// (MigProfile, filled from data/catalog/mig_placements.csv). The hardware
// refuses an instance whose memory slices overlap another's (NVML,
// nvmlDeviceGetGpuInstancePossiblePlacements), more instances of a profile
// than its max_instances, and more compute slices than the GPU has.
//
// Everything here is a pure function of its arguments and safe to call from
// many threads. MigSliceSet and FreeMigStarts(profile, used) do not allocate:
// they are the scheduler's hot path.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "core/status.h"

namespace meridian::catalog {

inline constexpr int kMigMemorySlices = 8;
inline constexpr int kMigComputeSlices = 7;

// A set of memory slices, or of start positions: bit i is slice i (0..7).
class MigSliceSet {
 public:
  constexpr MigSliceSet() = default;
  static constexpr MigSliceSet FromBits(uint8_t bits) { return MigSliceSet(bits); }
  // Slices [start, start + span), clipped to 0..7.
  static constexpr MigSliceSet Span(int start, int span) {
    if (start < 0 || span <= 0 || start >= kMigMemorySlices) return {};
    int end = start + span > kMigMemorySlices ? kMigMemorySlices : start + span;
    return MigSliceSet(static_cast<uint8_t>(((1u << end) - 1) & ~((1u << start) - 1)));
  }

  constexpr uint8_t bits() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr int size() const { return std::popcount(bits_); }
  constexpr bool Contains(int slice) const {
    return slice >= 0 && slice < kMigMemorySlices && (bits_ >> slice & 1u) != 0;
  }
  constexpr bool Overlaps(MigSliceSet o) const { return (bits_ & o.bits_) != 0; }
  constexpr MigSliceSet operator|(MigSliceSet o) const { return MigSliceSet(bits_ | o.bits_); }
  constexpr MigSliceSet operator&(MigSliceSet o) const { return MigSliceSet(bits_ & o.bits_); }
  constexpr bool operator==(const MigSliceSet&) const = default;
  // The members in ascending order: {0, 2, 4}.
  std::vector<int> ToVector() const;

 private:
  constexpr explicit MigSliceSet(uint8_t bits) : bits_(bits) {}
  uint8_t bits_ = 0;
};

// One GPU instance on a GPU: its profile name (one of GpuModel::mig_profiles)
// and the memory slice it starts at.
struct MigInstance {
  std::string profile;
  int start = 0;
  bool operator==(const MigInstance&) const = default;
};

// The profile of `gpu` named `name`; nullptr when the GPU has none.
const MigProfile* FindMigProfile(const GpuModel& gpu, std::string_view name);

// The valid starts of `profile` as a set (bit s: an instance may start at s).
MigSliceSet PlacementStarts(const MigProfile& profile);

// The memory slices an instance of `profile` starting at `start` occupies.
MigSliceSet OccupiedSlices(const MigProfile& profile, int start);

// Starts where one more instance of `profile` fits beside the memory slices
// `used`: a valid start whose span is free. Geometry only (no instance count
// or compute check: see NextMigStarts). Empty when none fits.
MigSliceSet FreeMigStarts(const MigProfile& profile, MigSliceSet used);

// Checks instances already placed (e.g. read back from `nvidia-smi mig -lgi`):
// known profiles, each at a valid start, no two sharing a memory slice, at
// most max_instances per profile, at most 7 compute slices in all. Returns the
// memory slices they occupy. Errors (InvalidArgument / NotFound) name the
// instance and the reason: "A100-80GB: 2g.20gb at 6: not a valid start
// (valid: 0, 2, 4)".
Result<MigSliceSet> CheckMigInstances(const GpuModel& gpu,
                                      const std::vector<MigInstance>& instances);

// Starts where one more instance of `profile` may go on a GPU holding
// `placed`, with every rule of CheckMigInstances applied to the result.
// Empty set: it does not fit now. Error: `placed` is itself invalid, or the
// profile is unknown or has no placement data.
Result<MigSliceSet> NextMigStarts(const GpuModel& gpu, const std::vector<MigInstance>& placed,
                                  std::string_view profile);

// Places a layout (one instance per name, on an empty GPU): finds a start
// for every instance so that the whole is valid, searching all choices (a
// greedy left-to-right fill misses layouts such as 3g + 2g + 2g, which fits
// only with the 3g on slices 4-7). Returns the instances in the order given.
// Of the valid assignments it returns the first in this search order:
// instances with the largest span first (ties by profile name), each trying
// its starts from the lowest; instances of one profile get ascending starts in
// input order. Error (Unresolvable: no such GPU ever holds it; NotFound:
// unknown profile) names the profile and why: "A100-80GB: 4g.40gb x2: at most
// 1 instance fits".
Result<std::vector<MigInstance>> PlaceMigLayout(const GpuModel& gpu,
                                                const std::vector<std::string>& profiles);

}  // namespace meridian::catalog
