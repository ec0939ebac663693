#include "control/retention.h"

#include <filesystem>
#include <iostream>
#include <vector>

namespace meridian::control {

namespace fs = std::filesystem;

Retention::Retention(Store* store, Backend* backend, std::string state_dir,
                     RetentionOptions options)
    : store_(store), backend_(backend), state_dir_(std::move(state_dir)), options_(options) {}

void Retention::RunIfDue(UnixSeconds now) {
  if (now < next_sweep_) return;
  auto n = Sweep(now);
  if (!n.ok()) {
    std::cerr << "meridian serve: retention: " << n.status().message() << std::endl;
    next_sweep_ = now + options_.sweep_every_s;
    return;
  }
  // A full batch: more may be left, so the next cycle sweeps again.
  next_sweep_ = *n >= options_.batch ? now : now + options_.sweep_every_s;
}

Result<int> Retention::Sweep(UnixSeconds now) {
  const UnixSeconds cutoff = now - options_.retention_s;
  auto jobs = store_->FinishedBefore(cutoff, options_.batch);
  if (!jobs.ok()) return jobs.status();
  std::vector<std::string> ids;
  for (const Store::FinishedJob& job : *jobs) {
    const std::string& id = job.id;
    ids.push_back(id);
    // Ids come from the store ("j-" and digits), so the path stays below jobs/.
    if (!SeqFromJobId(id)) return Status::Internal("stored job id \"" + id + "\" is malformed");
    std::error_code ec;
    const fs::path dir = fs::path(state_dir_) / "jobs" / id;
    fs::remove_all(dir, ec);
    if (ec) {
      std::cerr << "meridian serve: retention: " << dir.string()
                << ": cannot remove (left behind): " << ec.message() << std::endl;
    }
    if (Status st = backend_->Retire(id, job.attempts); !st.ok()) {
      std::cerr << "meridian serve: retention: " << id << ": " << st.message() << std::endl;
    }
  }
  auto deleted = store_->DeleteFinishedJobs(ids, cutoff);
  if (!deleted.ok()) return deleted.status();
  auto keys = store_->DeleteExpiredKeys(now - kIdempotencyKeyTtlS, options_.batch);
  if (!keys.ok()) return keys.status();
  if (!deleted->empty()) {
    std::cerr << "meridian serve: retention: deleted " << deleted->size()
              << " finished jobs that ended before " << FormatRfc3339(cutoff) << std::endl;
  }
  return static_cast<int>(deleted->size());
}

}  // namespace meridian::control
