// cpu_fallback (AddCandidates): CPU nodes of the fleet (node groups without
// GPUs) as candidates for a job with resources.cpu_fallback, when CPU is the
// better way to run it:
//   cheaper   CPU cost per unit of work below the cheapest GPU candidate's:
//             CPU run hours = the run's GPU-hours on one GPU x slowdown
//             (CycleContext::RunHours), CPU cost = RunCost of the cheapest
//             CPU node it would be offered (its cluster's vcpu_hour_usd and
//             ram_gib_hour_usd in the fleet file, sched/cost.h), against
//             RunCost of every GPU candidate generated so far (fleet and
//             elastic)
//   scarce    no GPU candidate now, and no GPU frees up within the job's
//             slack: the earliest expected end (from the ledger's EarliestEnds,
//             first `scan_ends` allocations) that leaves a node of an allowed
//             model with room comes after its latest start (deadline - GPU
//             run hours), or none does; a job without a deadline waits for a
//             GPU instead; a job no GPU model fits always falls back
// In the "ever" pass CPU nodes are always offered, so a job that could run on
// CPU is never rejected as unable to run.
//
// A CPU-only job (resources.gpus: 0) always runs on CPU: it is offered the
// CPU nodes with its vCPUs and RAM free, then the spare vCPUs and RAM of GPU
// nodes (in fleet order, up to max_nodes in all); the price and carbon
// plugins judge between them.
//
// This plugin keeps no state between decisions, so the re-decision at a
// running job's checkpoint (Scheduler::Reconsider, sched/move.h) offers CPU
// and GPUs afresh: a job on CPU moves to a GPU that has freed up (and back)
// when the migrate plugin finds the move worth its cost.
//
// vCPUs: resources.vcpus (at least 1). Candidates: up to `max_nodes` CPU
// nodes with the vCPUs and RAM free, in fleet order, in allowed regions.
//
// Arguments (the CPU's price is the fleet's, not the profile's: the same
// rates are billed by `simulate` and `serve`):
//   max_nodes: 8      CPU candidates added (1..64)
//   scan_ends: 64     allocations' ends read for the earliest GPU (1..4096)
//   jobs: fallback    what it places on CPU:
//     fallback        CPU-only jobs, and jobs with cpu_fallback as above
//     cpu-only        CPU-only jobs alone, on the fleet's CPU nodes (the spare
//                     vCPUs of GPU nodes only on a fleet without CPU nodes); a
//                     job that asks for GPUs is never offered CPU. The
//                     baseline profiles: they run what the fleet can run
//                     without moving GPU work or taking GPU nodes' vCPUs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "core/units.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class CpuFallback final : public Plugin, public AddCandidatesPlugin {
 public:
  struct Options {
    int max_nodes = 8;
    int scan_ends = 64;
    enum class Jobs : uint8_t { kFallback, kCpuOnly };
    Jobs jobs = Jobs::kFallback;
  };
  static constexpr std::string_view kName = "cpu_fallback";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit CpuFallback(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  // A job with cpu_fallback: "scarce" reads the ledger's ends and the
  // clock, asked every time; a CPU-only job fits by free capacity; others
  // get no candidate from it.
  uint32_t WaitInputs(const QueuedJob& job) const override {
    if (job.cpu_only) return kWaitFreedFit;
    if (job.cpu_fallback_slowdown > 0 && options_.jobs == Options::Jobs::kFallback) return kWaitAnything;
    return kWaitStatic;
  }
  void AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                     CandidateSink& sink) const override;

  // What running the job on CPU costs on the cheapest CPU node it would be
  // offered (RunCost); nullopt: no CPU node has room.
  std::optional<Money> CpuCost(const CycleContext& ctx) const;
  // Why CPU now ("cheaper", "scarce"), or nullptr: stay on GPUs.
  const char* Reason(const CycleContext& ctx, std::span<const Candidate> generated) const;
  void AddFromPool(const CycleContext& ctx, PoolId pool, CandidateSink& sink, int* added) const;
  // The earliest expected end that leaves room on a node of an allowed model.
  std::optional<UnixSeconds> EarliestGpu(const CycleContext& ctx) const;
  // The CPU nodes of `pool` with the job's vCPUs and RAM free in an allowed
  // region, in pool order, up to `limit`, as candidates; `fn` false stops.
  static void ForEachCpuNode(const CycleContext& ctx, PoolId pool, int limit,
                             const std::function<bool(const Candidate&)>& fn);

 private:
  Options options_;
};

}  // namespace meridian::sched
