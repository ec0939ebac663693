// Decision: the scheduler's answer for one job, with its explanation.
//
//   kPlace    run now on `allocation`
//   kPreempt  run now on `allocation` once `victims` are evicted
//   kDefer    will run at `start` (> now) on `allocation`: a deferral chosen by a
//             plugin, or a flex-start request's expected wait
//   kWait     cannot run now (Unschedulable); `start` is the earliest time capacity
//             frees up on a node it could use, if known; `retry_at` when else
//             the verdict may change (spot coming back, a time rule)
//   kReject   can never run as asked (Unresolvable); `filters` say why
//   kError    a plugin or the ledger failed; `status` says how
//
// The explanation: per-plugin scores of the chosen candidate and the runner-up,
// rejection counts per filter with example reasons, the pricing model and why,
// the start time and why. FormatDecision (explain.h) renders it as text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ledger.h"
#include "core/status.h"
#include "sched/candidate.h"

namespace meridian::sched {

enum class DecisionKind { kPlace, kPreempt, kDefer, kWait, kReject, kError };
std::string_view ToString(DecisionKind k);

// One score plugin's view of one candidate.
struct ScoreLine {
  std::string_view plugin;  // its registry name, a string literal (Plugin::name)
  int64_t raw = 0;         // in the plugin's own units (higher = better after its sign)
  int64_t normalized = 0;  // 0..100
  int64_t weight = 1;
  int64_t weighted() const { return normalized * weight; }
  std::string note;        // the plugin's arithmetic, when explained in full
};

struct ScoredCandidate {
  Candidate candidate;
  std::string where;       // "onprem-a-a100-80gb-0 GPUs 0-3", "gcp:us-central1 a3-highgpu-8g x2 spot"
  int64_t total = 0;       // sum of weighted scores
  std::vector<ScoreLine> scores;
};

// What one filter (or the ledger's final check) turned away.
struct FilterLine {
  std::string plugin;
  uint32_t rejected = 0;
  std::vector<std::string> examples;  // "node x: reason", at most a few
};

struct Decision {
  JobId job;
  DecisionKind kind = DecisionKind::kError;
  Status status;                          // non-OK for kWait (Unschedulable), kReject, kError
  std::optional<Allocation> allocation;   // kPlace, kPreempt, kDefer
  std::vector<JobId> victims;             // kPreempt
  UnixSeconds start = 0;
  std::string start_reason;
  std::vector<NodeId> start_nodes;        // kWait: the node(s) of the earliest start
  // kWait: a cycle plugin (backfill) keeps start_nodes for this job from
  // `start` for the rest of the cycle; later jobs may not run past it there.
  bool reserved = false;
  // kWait: the earliest time after now at which the verdict may change for a
  // reason other than capacity freeing (`start`): a spot count change on an
  // offering the job could use (MarketView::NextSpotChange), or a filter's own
  // time rule (FilterPlugin::RetryAt). nullopt: none known. A caller that
  // decides only when something arrives or ends decides the job again then.
  std::optional<UnixSeconds> retry_at;
  std::optional<PricingModel> pricing;    // elastic capacity; nullopt on the fleet
  std::string pricing_reason;
  std::optional<ScoredCandidate> chosen;
  std::optional<ScoredCandidate> runner_up;
  std::vector<FilterLine> filters;        // filters that rejected something, profile order
  uint32_t candidates = 0;                // examined
  uint32_t feasible = 0;                  // passed every filter
  bool ever_pass = false;                 // the "can it ever run" pass ran
  // kWait handed back by Scheduler::DecideInCycle without deciding again:
  // nothing the job's verdict depends on has changed since its last full
  // decision, which said why (only job, kind, status's code and retry_at are
  // set here; the explanation, start and start_nodes are that decision's).
  bool kept = false;
};

}  // namespace meridian::sched
