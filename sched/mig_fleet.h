// The MIG planner (mig/) over the scheduler's fleet and ledger: the
// fragmentation of the fleet's MIG GPUs and the repartition proposals of a
// re-partitionable cluster (`repartitionable: true` in the fleet file), as
// the simulator and `meridian plan --fleet` read them (docs/mig.md).
//
// A MIG GPU of a repartitionable cluster is free-form (instances are made
// where jobs go, the ledger's empty layout); one of another cluster keeps
// its node group's layout. Which profile a held instance is comes from
// `profile_of` (the holder's demand) where given, else from its shape: the
// profile whose span and starts match, the one with the most compute.
//
// Pure functions of their arguments.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "core/ids.h"
#include "core/ledger.h"
#include "mig/fragmentation.h"
#include "mig/repartition.h"
#include "sched/fleet.h"
#include "sched/queued_job.h"

namespace meridian::sched {

// Index into the node's model's mig_profiles of the instance `job` holds; -1: unknown.
using MigProfileOf = std::function<int(JobId job, const Node& node)>;

struct MigFleetFragmentation {
  mig::Fragmentation structural;  // against every profile of each GPU's model
  // Against the profiles the waiting jobs would use; on a model no waiting
  // job would take a slice of, nothing is blocked: all free counts allocatable.
  mig::Fragmentation demand;
  bool has_demand = false;        // some waiting job would take a MIG slice
};

// Over every MIG-mode GPU of the fleet. `waiting`: the queue (its MIG demands
// make the demand set; jobs without one are ignored).
MigFleetFragmentation MeasureMigFragmentation(const Fleet& fleet, const Ledger& ledger,
                                              std::span<const QueuedJob* const> waiting,
                                              const MigProfileOf& profile_of = nullptr);

// One drain of a proposal: `job` stops (and is queued again) so that GPU
// `gpu` of `node` can be laid out anew.
struct MigDrain {
  JobId job;
  NodeId node;
  int gpu = 0;
  MigShape shape;
  // GPU-seconds of its work lost: the time since its last checkpoint (its
  // checkpoint interval; all of its run when it states none) x compute / 7.
  int64_t cost_gpu_s = 0;
};

struct MigRepartition {
  std::vector<MigDrain> drains;
  int gpus_changed = 0;
  int requests_served = 0;  // waiting MIG jobs the new layouts hold beyond today's
};

// Proposals for the repartitionable clusters' MIG GPUs against the waiting
// MIG jobs (mig::ProposeRepartition). `skip`: jobs not to drain (e.g.
// drained a moment ago).
MigRepartition ProposeMigRepartition(const Fleet& fleet, const Ledger& ledger,
                                     std::span<const QueuedJob* const> waiting, UnixSeconds now,
                                     const MigProfileOf& profile_of = nullptr,
                                     const std::function<bool(JobId)>& skip = nullptr,
                                     mig::RepartitionOptions options = {});

// A fractional-GPU job (a trace's share of one GPU, `milli` thousandths):
// each demand that may take a MIG slice takes the smallest profile holding
// that share of compute and of memory (mig::NeedForShare) instead of the
// estimator's memory-sized one; counted work on the slice scales with the
// profile's compute as MakeQueuedJob does.
void SizeMigByShare(QueuedJob& job, int milli, const Fleet& fleet);

// Whether the fleet has a repartitionable cluster with MIG-mode GPUs.
bool HasRepartitionableMig(const Fleet& fleet);

}  // namespace meridian::sched
