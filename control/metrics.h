// The daemon's counters and histograms, rendered in the Prometheus text
// exposition format at /metrics. Updated lock-free from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace meridian::control {

// A cumulative histogram over fixed bucket bounds, in seconds.
class Histogram {
 public:
  Histogram();
  void Observe(double seconds);
  // "# HELP/# TYPE" and the _bucket/_sum/_count lines of `name`.
  void Render(const std::string& name, const std::string& help, std::string* out) const;

 private:
  static constexpr std::array<double, 14> kBounds = {
      1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 1.0};
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

// Decision kinds as the scheduler names them (sched::DecisionKind order).
inline constexpr const char* kDecisionKinds[] = {"place", "preempt", "defer",
                                                 "wait",  "reject",  "error"};

struct Metrics {
  std::atomic<uint64_t> submissions{0};          // jobs created
  std::atomic<uint64_t> submissions_replayed{0};  // idempotent retries answered
  std::array<std::atomic<uint64_t>, 6> decisions{};
  std::atomic<uint64_t> kept_verdicts{0};  // waits kept without deciding again
  Histogram decision_seconds;
  Histogram cycle_seconds;
  Histogram submit_seconds;
  std::atomic<uint64_t> preemptions{0};
  std::atomic<uint64_t> moves{0};  // attempts stopped at a checkpoint to move
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> launch_retries{0};  // transient launch failures tried again
  std::atomic<uint64_t> stop_retries{0};    // transient stop failures sent again
  std::atomic<int64_t> spend_micro_usd{0};
  std::atomic<int64_t> co2_mg{0};
  // MIG fragmentation after the last scheduling cycle (docs/mig.md), memory
  // slices; rendered when the fleet has MIG GPUs.
  std::atomic<int64_t> mig_gpus{0};
  std::atomic<int64_t> mig_free_slices{0};
  std::atomic<int64_t> mig_unallocatable_slices{0};         // by any profile
  std::atomic<int64_t> mig_unallocatable_demand_slices{0};  // by the queue's profiles
};

struct GaugeLine {
  std::string labels;  // `state="queued"`
  double value = 0;
};

// The exposition text: the counters of `m`, then each gauge family given.
struct GaugeFamily {
  std::string name, help;
  std::vector<GaugeLine> lines;
};
std::string RenderMetrics(const Metrics& m, const std::vector<GaugeFamily>& gauges);

// Whether a line is one job's (it has a `job` label): a tenant's own figures,
// which /metrics shows to admins only unless configured otherwise.
bool IsPerJobLine(const GaugeLine& line);

}  // namespace meridian::control
