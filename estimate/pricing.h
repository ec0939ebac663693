// Which pricing models an offering is sold to a job under, and on what terms:
// on-demand always; spot only to preemptible jobs (with expected rework from
// reclaims); flex-start only to deferrable work that fits in its maximum run
// and whose slack covers the expected wait; reserved only where priced, and
// then paid for whole terms (kReservedTermHours) whether used or not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/time.h"
#include "estimate/defaults.h"

namespace meridian::estimate {

struct PricingTerms {
  PricingModel model = PricingModel::kOnDemand;
  Money per_instance_hour;
  double wait_hours = 0;       // expected wait before the run starts
  double run_multiplier = 1;   // run time factor (spot rework)
  double term_hours = 0;       // reserved: hours of one commitment, paid in whole; 0 = none
  std::vector<std::string> notes;
};

// Hours paid for `run_hours` of use under `t`: the run itself, or for a
// commitment the whole terms it needs, max(1, ceil(run / term)) x term.
double BilledHours(const PricingTerms& t, double run_hours);

// "reserved: 1-year term (8760 h) paid whether used or not: 8760 h paid, 720.0 h used";
// "" without a commitment.
std::string CommitmentNote(const PricingTerms& t, double run_hours);

// When and for how long the job would run, as the pricing rules need it.
struct RunWindow {
  double run_hours = 0;                  // before any spot rework
  UnixSeconds at = 0;                    // submission
  std::optional<UnixSeconds> deadline;   // absolute
  int instances = 1;                     // instances the run spans (spot rework)
};

// The job's checkpoint interval and restart overhead: its own, else the
// defaults (kDefaultCheckpointIntervalS, kDefaultRestartOverheadS). The one
// place these defaults are applied: pricing, the scheduler's plugins and the
// simulator all read them here.
struct CheckpointTerms {
  int64_t interval_s = kDefaultCheckpointIntervalS;
  int64_t restart_overhead_s = kDefaultRestartOverheadS;
};
CheckpointTerms CheckpointOf(const Checkpoint& stated);

// The GB (10^9 bytes) a checkpoint of the job carries when it moves: its
// checkpoint.size_gb, else the training state the memory model holds,
// kTrainingBytesPerParam x model.params_b (0 without params_b).
double CheckpointGb(const JobSpec& job);

// Hours of work one spot reclaim loses: half a checkpoint interval plus the
// restart overhead.
double SpotLossHours(const JobSpec& job);

// Run-time factor of spot on `instances` instances: each instance is
// reclaimed kSpotReclaimsPerHour times an hour on its own, and a reclaim of
// any stops the run, so a gang of n is reclaimed n times as often. Each
// reclaim loses `loss_h`, so progress runs at 1 - n x rate x loss and the run
// takes 1 / (1 - n x rate x loss). nullopt when the loss per hour is half the
// hour or more (spot is refused).
std::optional<double> SpotRunMultiplier(double loss_h, int instances);
std::optional<double> SpotRunMultiplier(const JobSpec& job, int instances);

// "" when flex-start may carry the job, else why not.
std::string FlexStartRefusal(const JobSpec& job, const catalog::MarketParameters& market,
                             const RunWindow& w);

// The flex-start price per instance-hour: the catalog's, else (GCP only, where
// flex-start is sold) on-demand less the market's flex-start discount;
// nullopt where neither applies.
std::optional<Money> FlexStartPrice(const catalog::Offering& o,
                                    const catalog::MarketParameters& market);

// The catalog's price per instance-hour of `o` under `m` (flex-start as
// FlexStartPrice); nullopt where `o` is not sold that way.
std::optional<Money> CatalogPrice(const catalog::Offering& o, PricingModel m,
                                  const catalog::MarketParameters& market);

// Every pricing model under which `o` may run `job`.
std::vector<PricingTerms> PricingFor(const JobSpec& job, const catalog::Offering& o,
                                     const catalog::MarketParameters& market,
                                     const RunWindow& w);

}  // namespace meridian::estimate
