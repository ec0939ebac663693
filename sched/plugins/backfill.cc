#include "sched/plugins/backfill.h"

#include <algorithm>

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> Backfill::Create(PluginArgs& args) {
  int n = static_cast<int>(args.Integer("reservations", 1, 1, 64));
  return FinishPlugin<Backfill>(args, n);
}

Status Backfill::Permit(const CycleContext& ctx, const Candidate& c) const {
  if (reservations_.empty() || !c.on_fleet()) return Status::Ok();
  const UnixSeconds end = c.start + static_cast<UnixSeconds>(ctx.RunHours(c) * 3600.0 + 0.5);
  for (const Reservation& r : reservations_) {
    if (r.job == ctx.job().id || end <= r.start) continue;
    for (NodeId n : ctx.members(c)) {
      if (std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end()) {
        return Status::Unschedulable("would run past the start reserved for the queue's head");
      }
    }
  }
  return Status::Ok();
}

void Backfill::BeginCycle(const Snapshot&) { reservations_.clear(); }
void Backfill::EndCycle() { reservations_.clear(); }

void Backfill::Decided(const Snapshot& snap, const QueuedJob& job, Decision* d) {
  if (d->kind != DecisionKind::kWait || static_cast<int>(reservations_.size()) >= max_reservations_) {
    return;
  }
  if (d->start <= snap.now || d->start_nodes.empty()) return;
  reservations_.push_back({job.id, d->start, d->start_nodes});
  d->reserved = true;
}

}  // namespace meridian::sched
