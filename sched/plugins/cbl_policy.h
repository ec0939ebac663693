// cant_be_late (Filter): the baseline policies of Wu et al., "Can't Be Late:
// Optimizing Spot Instance Savings under Deadlines", NSDI'24, for the
// shipped profiles cbl-greedy and cbl-up. They judge preemptible jobs with a
// deadline; any other job, and fleet capacity, pass untouched. Elastic
// candidates are spot or not (on-demand, flex-start, reserved: "on-demand").
//
//   W  seconds of work left on the candidate at on-demand speed (RunHours)
//   T  seconds to the deadline (deadline - now)
//   r  the job's restart overhead, i its checkpoint interval (CheckpointOf)
//   safety net  T <= W + restarts x r + i: on-demand only, to the end. Spot
//               started before the net survives one reclaim there: it loses
//               at most i of work and r of restart, and on-demand's own
//               restart still fits (restarts = 2, the paper's 2d).
//   rule greedy            before the net: spot only; with none available
//                          the job waits (idle); a job on spot stays until
//                          reclaimed
//   rule uniform_progress  before the net: spot whenever it is available
//                          (risk-taking), on-demand as well while the job is
//                          behind the line C x t / D, i.e. its done share
//                          (QueuedJob::done) < (now - submitted) / (deadline -
//                          submitted); ahead of it and without spot: idle
//
// RetryAt: the net's time (deadline - W - restarts x r - i) and, for
// uniform_progress, when the line reaches the work done (submitted + done x
// D), so a waiting job is decided again then (Decision::retry_at).
//
// Not the paper's in one respect: uniform progress leaves on-demand for spot
// once ahead of C x (t + 2d) / D (hysteresis). The simulator does not move a
// running job, so a job placed on on-demand stays there to its end; that
// makes this UP costlier than the paper's (docs/simulate.md, "Can't Be Late
// baselines").
//
// Arguments:
//   rule: greedy             greedy | uniform_progress
//   restarts: 2              restart overheads the net keeps, 1..10
#pragma once

#include <optional>
#include <string>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class CantBeLate final : public Plugin, public FilterPlugin {
 public:
  enum class Rule : uint8_t { kGreedy, kUniformProgress };
  struct Options {
    Rule rule = Rule::kGreedy;
    int restarts = 2;
  };
  static constexpr std::string_view kName = "cant_be_late";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit CantBeLate(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  std::optional<UnixSeconds> RetryAt(const CycleContext& ctx) const override;

  // Seconds to the deadline at or below which only on-demand is taken, for
  // `work_s` seconds of work left.
  int64_t NetSeconds(const QueuedJob& job, double work_s) const;
  // Whether the job is behind the uniform-progress line at `now`.
  static bool Behind(const QueuedJob& job, UnixSeconds now);
  // "" when `c` may be taken now, else why not.
  std::string_view Verdict(const CycleContext& ctx, const Candidate& c) const;

 private:
  Options options_;
};

}  // namespace meridian::sched
