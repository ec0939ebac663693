// Moving running work: the question Scheduler::Reconsider answers at a
// running job's checkpoint: stay where it runs, or stop at the checkpoint
// and restart elsewhere (another GPU model or count, a MIG slice, the CPU,
// another region or cluster, another pricing model).
//
// The framework re-runs the job's normal decision for the work it has left
// (Scheduler::Decide, with the job's own capacity counted as free) and, when
// the best placement is another one, quotes both with the functions every
// decision uses: RunCost (sched/cost.h) for dollars (a CPU node at its
// cluster's CPU rates, as `simulate` and `serve` bill it), CycleContext::RunHours
// for hours, the profile's carbon plugin (Carbon::EmissionOf) for grams, the
// catalog's egress rates (CatalogEgressUsdPerGb) for the checkpoint's
// transfer. A MovePlugin (the profile's `migrate`) turns the quote into a
// verdict with its thresholds. Nothing here changes the ledger for good (the
// job is set aside on it only while it is decided): a caller that applies a
// move releases the job and commits MoveDecision::placement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/time.h"
#include "core/units.h"
#include "sched/decision.h"
#include "sched/queued_job.h"

namespace meridian::sched {

// What made the core ask a running job whether to move.
enum class MoveOccasion : uint8_t {
  kCheckpoint,    // one of its checkpoints
  kGpusFreed,     // fleet GPUs freed (it runs on a CPU node), between its checkpoints
  kCarbonHour,    // a new hour of the grid's carbon, for a job that checkpoints
                  // less often than that (kCarbonHourS)
  kSpotReturned,  // spot it could take for less returned (it runs on on-demand)
};

// How often the grid's carbon changes (the catalog's series are hourly): a
// job whose checkpoints are further apart is asked at each hour too.
inline constexpr int64_t kCarbonHourS = 3600;

// A running job as Reconsider reads it. `job` is its queued form for the
// work it has left (QueuedJob::done set, its demands' run hours what is left:
// the simulator's SetWork), so a decision for it is the decision for a job
// with that work queued now.
struct RunningJob {
  const QueuedJob* job = nullptr;
  // What it runs on: the candidate it was placed on (Decision::chosen). Only
  // its kind, node, GPUs, gang size, MIG shape, offering, instances and
  // pricing are read (not a gang's member list, nor its start).
  Candidate placement;
  std::string where;           // its description (Decision::chosen->where)
  int checkpoints = 0;         // checkpoints taken so far: the last is number N
  double checkpoint_gb = 0;    // what a move carries to the new place
  std::optional<UnixSeconds> last_move;  // when it last moved; nullopt: never
  // What made the core ask. Between two checkpoints a move stops the job as
  // a move at a checkpoint does (SIGTERM and its grace period, in which it
  // saves its state), so `job`'s work left counts its progress up to now.
  MoveOccasion occasion = MoveOccasion::kCheckpoint;
};

// Most asks at one instant (a simulator instant, a daemon cycle): each is a
// full decision, and a tenant picks its jobs' checkpoint interval, so jobs
// checkpointing every second, or a fleet freeing GPUs every cycle, cannot
// hold up the loop that asks.
inline constexpr int kMaxMoveAsksAtOnce = 32;

// One side of a comparison: the work left, run from a start.
struct RunQuote {
  Money usd;                     // RunCost
  int64_t grams = 0;             // the carbon plugin's emission; 0 when unknown
  bool grams_known = false;
  double hours = 0;              // CycleContext::RunHours
  UnixSeconds start = 0;
  UnixSeconds finish = 0;        // start + overhead (a move's) + hours
};

// What a move costs beyond the run at the new place.
struct MoveCosts {
  Money egress_usd;              // checkpoint GB x $/GB between the regions
  double egress_usd_per_gb = 0;
  double transfer_hours = 0;     // checkpoint GB x 8 / the plugin's Gbit/s
  double restart_hours = 0;      // the job's checkpoint.restart_overhead
  double wait_hours = 0;         // until the new place starts (a flex-start wait)
  Money overhead_usd;            // the new place's $/h x (transfer + restart)
  int64_t overhead_grams = 0;    // its g/h x (transfer + restart)
  double overhead_hours() const { return transfer_hours + restart_hours; }
};

// The quote a MovePlugin judges.
struct MoveQuote {
  RunQuote stay;                 // on RunningJob::placement from now
  RunQuote move;                 // on the re-decision's choice
  MoveCosts costs;
  std::string from, to;          // placements, as decisions describe them
  // The job's deadline (absolute) and the margin a move must leave before
  // it: one reclaim's loss, its checkpoint interval plus its restart overhead.
  std::optional<UnixSeconds> deadline;
  int64_t deadline_margin_s = 0;
  int checkpoint = 0;            // RunningJob::checkpoints
  MoveOccasion occasion = MoveOccasion::kCheckpoint;  // RunningJob::occasion
};

// When the question was asked, as a verdict says it: "after checkpoint 3",
// "when GPUs freed, after checkpoint 3", "at a new carbon hour, after
// checkpoint 3" or "when spot returned, after checkpoint 3".
std::string AskedWhen(int checkpoint, MoveOccasion occasion);

enum class MoveVerdict { kStay, kMove };

struct MoveDecision {
  JobId job;
  MoveVerdict verdict = MoveVerdict::kStay;
  // Set once the re-decision found another placement (both verdicts).
  std::optional<MoveQuote> quote;
  // kMove: the decision for the new place (kPlace, or kDefer for a wait),
  // made against the ledger without the job: commit it after releasing it.
  std::optional<Decision> placement;
  // "moves from A to B after checkpoint N: saves ..." or why it stays.
  std::string reason;
};

// The extension point of a plugin that judges moves (migrate). The framework
// asks Hold first (before any re-decision: cheap), then Judge with a quote.
class MovePlugin {
 public:
  virtual ~MovePlugin() = default;
  // Why `r` is not considered for a move at `now` (not preemptible, moved
  // too recently), or nullopt.
  virtual std::optional<std::string> Hold(const RunningJob& r, UnixSeconds now) const = 0;
  // The verdict on `q`, with its reason; the framework adds the placement.
  virtual MoveDecision Judge(const MoveQuote& q) const = 0;
  // Gbit/s a checkpoint moves at between places.
  virtual double TransferGbitPerS() const = 0;
};

}  // namespace meridian::sched
