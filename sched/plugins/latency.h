// latency (PreFilter + Filter + Score): real-time services with users
// (kind realtime-inference, latency.users) run where every user region is
// within the latency SLO. Round trips are the estimator's:
//   RTT ~ 2 x great-circle km / 200 km/ms + 5 ms  (estimate::EstimateRttMs)
// precomputed for every region pair in Prepare.
//
// PreFilter: narrows generation to the regions whose worst RTT to the job's
//   users is within the SLO; Unresolvable when none is.
// Filter: rejects candidates (of any source) beyond the SLO: the worst RTT
//   plus one request's time on the candidate's GPU model
//   (ModelDemand::request_ms, estimate/serving.h; 0 when unknown).
// Score: raw = -(worst RTT in hundredths of a ms); min-max, nearest 100.
// Batch work and services without users: no-op (every candidate scores 0).
//
// SLO: the job's latency.slo_ms, else `default_slo_ms`.
//
// Arguments:
//   default_slo_ms: 100      SLO for services that state none (estimate::kDefaultLatencySloMs)
#pragma once

#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Latency final : public Plugin,
                      public PreFilterPlugin,
                      public FilterPlugin,
                      public ScorePlugin {
 public:
  struct Options {
    double default_slo_ms = 100;
  };
  static constexpr std::string_view kName = "latency";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Latency(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  // Batch work: a no-op. Services: asked every time.
  uint32_t WaitInputs(const QueuedJob& job) const override {
    return job.kind == WorkloadKind::kRealtimeInference ? kWaitAnything : kWaitStatic;
  }
  Status Prepare(const PrepareContext& p) override;
  PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  // Whether the latency rules apply to the job.
  static bool Applies(const QueuedJob& job);
  double SloMs(const QueuedJob& job) const;
  // The largest RTT from any of the job's user regions to `r` (after Prepare).
  double WorstRttMs(const QueuedJob& job, RegionId r) const;
  // One request's time on the candidate's GPU model (0 on a CPU node or when unknown).
  static double RequestMs(const CycleContext& ctx, const Candidate& c);

 private:
  Options options_;
  size_t regions_ = 0;
  std::vector<float> rtt_;  // [user region x regions_ + region], ms
};

}  // namespace meridian::sched
