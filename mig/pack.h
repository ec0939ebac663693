// Packing slice requests onto a fleet's MIG GPUs: each request becomes an
// instance of the smallest profile of the GPU's model that holds it
// (SmallestProfile), placed so that few GPUs are used and the instances
// already held stay where they are.
//
// Algorithm, in two steps.
//  1. Greedy fill, GPU by GPU (a cutting-stock greedy): the GPUs holding
//     instances first, then the empty ones in order; each GPU gets, of all
//     the valid layouts of its model that contain its held instances
//     (EnumerateLayouts), the one serving the most remaining requests by
//     memory slices (ties: larger instances, then instances with fewer valid
//     starts, then more requests). When some requests stay unplaced, a
//     second fill that ranks by the number of requests first is tried too,
//     and the better result kept (more placed, then fewer GPUs used).
//  2. Up to PackOptions::exact_up_to requests, a branch and bound over the
//     GPU of each request (largest first; empty GPUs of one model are
//     interchangeable, so only the first is tried; the greedy result is the
//     bound) returns an optimal packing: the most requests placed, then the
//     fewest GPUs used. Placement on one GPU is exact (PlaceBeside: the held
//     instances stay, the new ones are placed together by backtracking), so
//     3g + 2g + 2g, which fits only with the 3g on slices 4-7, is found.
// mig/pack_test.cc checks both against a brute force over every assignment
// for every multiset of up to 6 requests on 3 GPUs: the result is optimal in
// all 923 cases; the greedy alone is optimal in 922 (it uses 3 GPUs for
// 4 x 2g + 2 x 3g, which fit on 2 as 3g + 2g + 2g twice).
//
// Safe to call from many threads; each model's layouts are enumerated once
// per process and kept (a few hundred KB per distinct MIG geometry).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "mig/geometry.h"

namespace meridian::mig {

// One GPU of the fleet as the packer sees it.
struct GpuState {
  const catalog::GpuModel* model = nullptr;
  Layout held;         // instances in use; they are not moved
  bool whole = false;  // held whole (not in MIG mode): nothing is packed onto it
};

struct SliceRequest {
  std::string id;
  SliceNeed need;
};

struct Assignment {
  size_t request = 0;  // index into the requests
  size_t gpu = 0;      // index into the GPUs
  Placed instance;     // profile of that GPU's model, and its start
};

struct PackResult {
  std::vector<Assignment> placed;  // in request order
  std::vector<size_t> unplaced;    // request indexes no GPU can hold
  std::vector<Layout> layouts;     // per GPU: held and new instances together
  int gpus_used = 0;    // GPUs holding any instance (or held whole) afterwards
  int gpus_opened = 0;  // GPUs empty before that hold a new instance
};

struct PackOptions {
  // Up to this many requests, a branch and bound proves the result optimal
  // (most requests placed, then fewest GPUs used); beyond, the greedy stands.
  size_t exact_up_to = 10;
};

PackResult Pack(const std::vector<GpuState>& gpus, const std::vector<SliceRequest>& requests,
                PackOptions options = {});

// Starts for `add` (profile indexes) on a GPU of `gpu` whose `held` instances
// stay: in the order of `add`; nullopt when they cannot all be placed
// (overlap, max_instances or the compute slices).
std::optional<std::vector<int>> PlaceBeside(const catalog::GpuModel& gpu, const Layout& held,
                                            const std::vector<int>& add);

}  // namespace meridian::mig
