// backfill (Permit + cycle hook): EASY backfill (Lifka, "The ANL/IBM SP
// scheduling system", JSSPP 1995; Slurm's sched/backfill). Within one
// Scheduler::RunCycle, the first `reservations` jobs that wait (the queue's
// head) reserve their earliest start: the time and the node(s) the
// scheduler's earliest-start answer gives (Decision::start, start_nodes).
// A later job may start now only where it cannot delay them: its candidate is
// refused when it uses a reserved node and would still run at the reserved
// start (start + its run hours > reserved start). Jobs that finish before,
// or use other nodes or elastic capacity, fill around the reservation.
//
// Reservations live only for the cycle (cleared at its start and end); a lone
// Decide sees none. Each cycle derives them again from the ledger and the
// queue, so whoever keeps those (the simulator; the daemon's store across a
// restart) keeps the reservations; the reserving decision says so
// (Decision::reserved). Later reservations do not see earlier ones (two heads may
// reserve the same node); with reservations: 1 that cannot happen. A refused
// candidate counts against the profile's permit_attempts, so a job may wait
// although nodes further down its ranking were free of reservations.
//
// Arguments:
//   reservations: 1   waiting jobs that reserve, from the head (1..64)
#pragma once

#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Backfill final : public Plugin, public PermitPlugin, public CyclePlugin {
 public:
  struct Reservation {
    JobId job;
    UnixSeconds start = 0;
    std::vector<NodeId> nodes;
  };
  static constexpr std::string_view kName = "backfill";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Backfill(int reservations) : max_reservations_(reservations) {}

  std::string_view name() const override { return kName; }
  Status Permit(const CycleContext& ctx, const Candidate& c) const override;
  void BeginCycle(const Snapshot& snap) override;
  void Decided(const Snapshot& snap, const QueuedJob& job, Decision* d) override;
  void EndCycle() override;
  // Full decisions while it still has reservations to make this cycle.
  bool WantsDecision(const QueuedJob&) const override {
    return static_cast<int>(reservations_.size()) < max_reservations_;
  }

  const std::vector<Reservation>& reservations() const { return reservations_; }

 private:
  int max_reservations_;
  std::vector<Reservation> reservations_;
};

}  // namespace meridian::sched
