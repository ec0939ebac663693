// What an attempt of the daemon holds and costs per hour: one formula for
// the bill written when it ends (Reconciler::ReleaseAttempt), the dashboard's
// spend rates (control/aggregates.cc), and `simulate`'s bill of a run
// (sched::FleetHourRate, at the config's rates: every cluster of the daemon's
// fleet is priced by gpu_hour_usd, vcpu_hour_usd and ram_gib_hour_usd).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "control/store.h"
#include "core/job.h"
#include "core/units.h"
#include "sched/fleet.h"

namespace meridian::control {

struct ReconcilerOptions;

// One node's part of an attempt: GPUs in thousandths (a MIG slice: span / 8
// of its GPU, as `simulate` counts it), and the vCPUs and RAM held there.
struct HeldShare {
  std::string node;
  int64_t gpu_milli = 0;
  int vcpus = 0;
  int64_t ram_mib = 0;
};

// Every node of the attempt's stored allocation (a gang, or a service's
// replica set, spans several), else the placement's one node with `spec`'s
// vCPUs and RAM (nullptr: none known).
std::vector<HeldShare> HeldShares(const JobRow& row, const JobSpec* spec);

// The daemon's capacity prices as a fleet cluster's (owned).
sched::Cluster DaemonRates(const ReconcilerOptions& o);

// The attempt's rate: the sum over its shares of sched::FleetHourRate.
Money AttemptHourRate(const std::vector<HeldShare>& held, const sched::Cluster& rates);

}  // namespace meridian::control
