#include "sim/mig_cycle.h"

#include <algorithm>
#include <bit>

namespace meridian::sim {

namespace {
constexpr int64_t kRedrainS = 3600;
constexpr int64_t kSampleS = 900;
constexpr int64_t kEveryCycleGpus = 4096;
}  // namespace

MigCycle::MigCycle(const sched::Fleet& fleet, size_t jobs)
    : fleet_(fleet), repartition_(sched::HasRepartitionableMig(fleet)), drained_at_(jobs, 0) {
  for (const sched::Node& n : fleet.nodes()) mig_gpus_ += std::popcount(n.mig_gpus);
  mig_ = mig_gpus_ > 0;
}

std::vector<sched::MigDrain> MigCycle::Drains(const Ledger& ledger,
                                              std::span<const sched::QueuedJob* const> waiting,
                                              UnixSeconds now, const sched::MigProfileOf& profile_of) {
  if (!repartition_ || waiting.empty()) return {};
  auto skip = [&](JobId j) {
    const UnixSeconds at = j.value() < drained_at_.size() ? drained_at_[j.value()] : 0;
    return at != 0 && now - at < kRedrainS;
  };
  // Moves within a GPU only: a drained job goes back to the queue and lands
  // where the scheduler puts it, and moves to other GPUs cost more than they
  // gained on the measured runs (docs/mig.md).
  mig::RepartitionOptions o;
  o.move_elsewhere = false;
  sched::MigRepartition r = sched::ProposeMigRepartition(fleet_, ledger, waiting, now, profile_of, skip, o);
  for (const sched::MigDrain& d : r.drains) {
    if (d.job.value() < drained_at_.size()) drained_at_[d.job.value()] = now;
    ++stats_.drains;
    stats_.drain_gpu_s += d.cost_gpu_s;
  }
  stats_.gpus_repartitioned += r.gpus_changed;
  return r.drains;
}

void MigCycle::Sample(const Ledger& ledger, std::span<const sched::QueuedJob* const> waiting,
                      UnixSeconds now, const sched::MigProfileOf& profile_of) {
  if (!mig_ || (mig_gpus_ > kEveryCycleGpus && now < next_sample_)) return;
  next_sample_ = now + kSampleS;
  sched::MigFleetFragmentation f = sched::MeasureMigFragmentation(fleet_, ledger, waiting, profile_of);
  Close(now);
  ++stats_.samples;
  last_free_ = f.structural.free_memory;
  last_any_ = f.structural.unallocatable_memory();
  last_demand_ = f.demand.unallocatable_memory();
}

void MigCycle::Close(UnixSeconds end) {
  if (stats_.samples > 0 && end > last_t_) {
    const int64_t dt = end - last_t_;
    stats_.span_s += dt;
    stats_.free_slice_s += last_free_ * dt;
    stats_.unallocatable_any_s += last_any_ * dt;
    stats_.unallocatable_demand_s += last_demand_ * dt;
  }
  last_t_ = std::max(last_t_, end);
}

}  // namespace meridian::sim
