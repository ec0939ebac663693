// Repartitioning MIG GPUs for the waiting demand: which running instances to
// drain (their jobs stop and go back to the queue) so that a GPU's layout can
// change to serve more of the waiting requests, with the cost of each drain.
//
// The GPUs are free-form (a repartitionable node: an instance is created on
// free slices when a job is placed, destroyed when it ends), so free slices
// are already usable as any instance that fits them; what blocks a waiting
// request is where the running instances sit (a 1g at slice 4 blocks both
// 3g starts when another runs at 0-3). A proposal for one GPU drains a few of
// its instances (a GPU must be empty of the instances that change), places
// them again (they move, they are not evicted: on the same GPU, or on the
// free slices of another GPU of the model, best fit) and adds instances for
// waiting requests: it is made only when it serves more requests than the
// GPU can without the drain.
//
// Algorithm (greedy, one proposal per GPU): for every GPU holding instances
// and every set of at most `max_drains_per_gpu` of them, the requests that
// fit beside the instances kept, the drained ones placed first on the same
// GPU (PlaceBeside, exact), or else on other GPUs, the requests added
// largest first while they fit; the gain is that count less the count that
// fits with no drain. The best set per GPU (most gained, then fewest drains,
// then least cost, then staying on the GPU, then the lower GPU) is kept; the
// best over all GPUs is applied, and the options are computed again against
// the fleet as it now is (requests served, instances moved in), until none
// gains or `max_proposals`. A GPU changed or given a moved instance is not
// proposed again. Cost of a drain: what the caller puts in `cost` (the
// simulator: GPU-seconds of work lost since the holder's last checkpoint).
//
// Pure function; safe to call from many threads.
#pragma once

#include <cstdint>
#include <vector>

#include "catalog/catalog.h"
#include "mig/geometry.h"

namespace meridian::mig {

struct RunningInstance {
  Placed instance;
  int64_t holder = 0;  // the caller's id of the job on it
  int64_t cost = 0;    // what draining it costs (e.g. GPU-seconds lost)
};

struct GpuNow {
  const catalog::GpuModel* model = nullptr;
  std::vector<RunningInstance> running;  // instances in use; the rest of the GPU is free
};

struct WaitingRequest {
  int64_t id = 0;
  SliceNeed need;
};

struct RepartitionOptions {
  int max_drains_per_gpu = 2;
  int max_proposals = 16;
  int max_gpus_examined = 512;  // those with the most free memory slices first
  // Whether a drained instance may move to another GPU (else only on its own).
  bool move_elsewhere = true;
};

struct Proposal {
  size_t gpu = 0;
  Layout before, after;                  // the GPU's instances in use, then after the change
  std::vector<RunningInstance> drained;  // their holders stop; each is placed again at `moved`
  std::vector<Placed> moved;             // new place of drained[i]...
  std::vector<size_t> moved_to;          // ...on this GPU (`gpu`, or another one)
  std::vector<std::pair<int64_t, Placed>> served;  // request id -> its new instance
  int gained = 0;                        // requests served beyond those that fit without drain
  int64_t cost = 0;                      // sum of the drained instances' costs
};

std::vector<Proposal> ProposeRepartition(const std::vector<GpuNow>& gpus,
                                         const std::vector<WaitingRequest>& waiting,
                                         RepartitionOptions options = {});

}  // namespace meridian::mig
