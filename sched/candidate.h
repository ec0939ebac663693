// Candidate: one way to run a job that a decision considers, small and
// trivially copyable so filters can compact arrays of them in place.
//
//   kNode     whole GPUs on one fleet node
//   kGang     whole GPUs on several nodes of one cluster (a multi-node job);
//             members are listed by CycleContext::members()
//   kMigSlice one MIG instance of a fleet GPU
//   kElastic  instances of a catalog offering bought under a pricing model
//   kCpuNode  vCPUs of a fleet node (CPU fallback)
//
// `start` is when it would start: now, or later (flex-start wait, a deferral
// added by a time-shift plugin). `source` names who added it: kFrameworkSource
// for the built-in generator, else the plugin's position in the profile.
#pragma once

#include <cstdint>

#include "core/enums.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "core/time.h"

namespace meridian::sched {

enum class CandidateKind : uint8_t { kNode, kGang, kMigSlice, kElastic, kCpuNode };
inline constexpr uint16_t kFrameworkSource = 0xffff;

struct Candidate {
  CandidateKind kind = CandidateKind::kNode;
  PricingModel pricing = PricingModel::kOnDemand;  // kElastic only
  uint8_t demand = 0;          // index into QueuedJob::demands (not kCpuNode)
  uint8_t mig_gpu = 0;         // kMigSlice
  uint8_t mig_profile = 0;     // kMigSlice: index into the GPU model's mig_profiles
  MigShape mig_shape;          // kMigSlice
  uint16_t gpus_per_node = 0;  // kNode, kGang
  uint16_t gang_size = 1;      // kGang: member count
  uint32_t gang_offset = 0;    // kGang: first member in the cycle's member list
  uint16_t instances = 0;      // kElastic
  uint16_t source = kFrameworkSource;
  RegionId region;
  // While the built-in generator filters a batch: how many equivalent
  // candidates (whole GPUs on nodes of the same group with the same free
  // capacity) follow this one in its walk and share its verdict, unlisted;
  // they count as examined and rejected with it. 0 once it is feasible.
  uint16_t repeats = 0;
  NodeId node;                 // fleet kinds: the node (kGang: first member)
  OfferingId offering;         // kElastic
  UnixSeconds start = 0;
  // RunCost of this candidate, filled by the framework once the candidate is
  // feasible (before scoring), so the price plugins do not each recompute
  // it; kNoRunCost until then. Not part of the candidate's meaning.
  int64_t run_cost_micros = kNoRunCost;
  static constexpr int64_t kNoRunCost = INT64_MIN;

  bool on_fleet() const { return kind != CandidateKind::kElastic; }
};
static_assert(sizeof(Candidate) <= 56, "filters move candidates around: keep them small");

}  // namespace meridian::sched
