// A fleet for tests of GPU work that may run on CPU (cpu_fallback, moves
// between CPU and GPU): one H100 x8 node (node 0) at `gpu_hour` $/GPU-h and
// two CPU nodes (1, 2: 64 vCPUs, 256 GiB), all in onprem-a (gcp:us-central1).
#pragma once

#include "sched/fleet.h"

namespace meridian::sched::testing {

inline FleetSpec CpuFleet(double gpu_hour) {
  FleetSpec f;
  ClusterSpec a;
  a.name = "onprem-a";
  a.region = "gcp:us-central1";
  a.gpu_hour = Money::FromDollars(gpu_hour);
  a.nodes.push_back({1, "H100-80GB", 8, 64, 512, {}, "", {}, {}});
  a.nodes.push_back({2, "", 0, 64, 256, {}, "", {}, {}});
  f.clusters = {a};
  return f;
}

}  // namespace meridian::sched::testing
