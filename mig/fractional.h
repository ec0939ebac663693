// Fractional-GPU pods (the Alibaba openb trace's gpu_milli) on a cluster's
// own nodes, three ways: whole GPUs, the trace's own sharing, and MIG slices.
//
// A static fill, as trace-driven packing studies run it: the pods arrive in
// the order given (creation time), none leaves, and each goes to the node
// and GPU that fits it best, or is not placed (the next pod is still tried).
// Every pod also needs its CPU and memory on the node.
//   - kWhole: a pod takes max(1, gpus) whole GPUs (a fractional pod, one).
//   - kShared: the trace's sharing: a fractional pod takes its gpu_milli of
//     one GPU that has that much left, best fit (least left after); a pod of
//     whole GPUs takes GPUs nothing is shared on.
//   - kMig: each GPU of a node with a MIG model is a MIG GPU of that model
//     whose instances are made where pods go (a repartitionable node); a
//     fractional pod takes an instance of the smallest profile holding its
//     share (NeedForShare: compute = ceil(7 m / 1000) slices, memory =
//     ceil(8 m / 1000) slices), best fit (fewest free memory slices after,
//     placed exactly by PlaceBeside); whole-GPU pods take GPUs without
//     instances. On nodes without a MIG model a fractional pod takes a whole
//     GPU (as the simulator places it).
// Node order breaks ties: the first best node in the list wins.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace meridian::mig {

struct TraceNode {
  std::string type;  // the trace's GPU type ("G2", "T4"), for reports
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  const catalog::GpuModel* mig = nullptr;  // the MIG model its GPUs are; nullptr: none
};

struct TracePod {
  int gpus = 1;     // >= 1
  int milli = 1000; // share of one GPU when gpus == 1 (1..1000)
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  bool fractional() const { return gpus == 1 && milli < 1000; }
};

enum class Sharing { kWhole, kShared, kMig };

struct FillResult {
  int64_t pods = 0, placed = 0;
  int64_t fractional_pods = 0, fractional_placed = 0;
  int64_t gpus = 0;                 // GPUs of the nodes
  int64_t requested_milli = 0;      // GPU demand of the placed pods (gpus x 1000 or milli)
  int64_t held_milli = 0;           // GPU capacity they hold: whole GPUs, shares, MIG compute x 1000 / 7
  int64_t idle_gpus = 0;            // GPUs with nothing on them at the end
  int64_t mig_gpus = 0;             // GPUs holding MIG instances
  std::map<std::string, int64_t> profiles;  // MIG instances made, per profile
  // GPU capacity nothing holds at the end, in GPUs (the "unallocated GPUs").
  double unallocated_gpus() const { return static_cast<double>(gpus * 1000 - held_milli) / 1000.0; }
};

FillResult Fill(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods, Sharing how);

}  // namespace meridian::mig
