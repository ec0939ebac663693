// "What would meridian have saved" (`meridian report savings`,
// docs/savings.md): a team's history as it ran, from the recorded Submit,
// Start and End of each job, beside each policy replaying the same jobs on
// the same fleet, and beside the same fleet plus the catalog's cloud
// capacity. The history is priced and summarized by the functions
// `simulate` uses (sim/charge.h, Summarize), so every column reads alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace meridian::sim {

// The recorded history as a run: job i started recorded_wait_s after its
// submission and ran duration_s, on the first fleet cluster holding its GPU
// model (recorded_on, else its first allowed model; else the first cluster
// with GPUs), priced and charged carbon as the engine charges a run there.
// Jobs without a recorded start stay kPending. `notes` says what was
// assumed.
struct History {
  PolicyRun run;
  int64_t recorded = 0;  // jobs with a recorded start
  std::vector<std::string> notes;
};
History AsItRan(const Trace& trace, const World& world);

// Wait percentiles, which Summary leaves out: over the jobs that started.
struct WaitSpread {
  double p50_s = 0, p99_s = 0;
};
WaitSpread WaitsOf(const Trace& trace, const std::vector<JobOutcome>& jobs);

// As it ran against a replay (fifo-backfill on the same fleet), over the
// jobs with a recorded start that the replay started: how far the replay's
// waits are from the recorded ones.
struct Validation {
  std::string policy;
  int64_t jobs = 0;
  double mean_abs_error_s = 0;              // mean |replayed wait - recorded wait|
  double recorded_avg_s = 0, replayed_avg_s = 0;
  std::optional<double> ratio;              // replayed avg / recorded avg; unset when 0
  double within_10min = 0, within_1h = 0;   // shares of jobs
  // 90% of jobs within 1 h, and the averages within a factor of 2 or 10
  // minutes of each other.
  bool close = false;
};
Validation Validate(const Trace& trace, const PolicyRun& history, const PolicyRun& replay);

// One figure that differs between a baseline (as it ran, or the first
// policy) and a column, worked out from the per-job results over the jobs
// done in both.
enum class Metric { kWait, kJct, kCost, kCo2 };
struct Difference {
  Metric metric = Metric::kWait;
  std::string from_name, to_name;
  int64_t jobs = 0;                 // done in both
  double from_sum = 0, to_sum = 0;  // seconds, micro-dollars or grams
  int64_t less = 0, more = 0;       // jobs whose figure went down, up
  size_t largest = 0;               // trace index of the largest change
  double largest_from = 0, largest_to = 0;
  double from_avg() const { return jobs ? from_sum / static_cast<double>(jobs) : 0; }
  double to_avg() const { return jobs ? to_sum / static_cast<double>(jobs) : 0; }
};

// One column of the comparison.
struct SavingsColumn {
  std::string name;
  const PolicyRun* run = nullptr;
  Summary summary;
  WaitSpread waits;
};

// Everything the report shows. `fleet` holds the history and one column per
// policy on the fleet alone; `burst`, when set, the burst policy on the
// fleet plus elastic capacity (its World must carry the elastic index).
struct Savings {
  const Trace* trace = nullptr;
  const World* world = nullptr;        // the fleet alone
  const World* burst_world = nullptr;  // the fleet plus cloud capacity
  std::string fleet_source;
  History history;
  std::vector<PolicyRun> runs;         // on the fleet alone, command-line order
  std::optional<PolicyRun> burst;      // on the fleet plus cloud capacity
  std::string burst_base;              // the policy `burst` ran (to set it beside)
  std::string validation_policy = "fifo-backfill";
};

// The columns: as it ran (when the trace has recorded starts), each policy,
// then the burst run.
std::vector<SavingsColumn> Columns(const Savings& s);

// The `count` biggest relative differences against the baseline (the
// history, else the first column), at most one per metric.
std::vector<Difference> BiggestDifferences(const Savings& s, size_t count = 3);

// The validation against `validation_policy`, when the history and that
// run are both there.
std::optional<Validation> ValidationOf(const Savings& s);

// savings.txt (also printed by the command) and savings.html (one page,
// inline CSS and SVG, no script, no network).
std::string SavingsText(const Savings& s);
std::string SavingsHtml(const Savings& s);

// Creates `dir` if needed and writes savings.txt and savings.html into it.
Status WriteSavings(const Savings& s, const std::string& dir);

}  // namespace meridian::sim
