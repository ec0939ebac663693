// TelemetrySampler: the daemon's sampler thread. Every interval (telemetry
// config, default 5 s) it reads each running job's process group from /proc
// and, where NVML loaded, the node's GPUs and MIG instances; keeps a bounded
// ring of samples per running job (a window's worth); classifies each job
// over the window with its recommendation; and once per store_every writes a
// compact row per job to the store. Without NVML it says so once on stderr
// and samples CPU and I/O only.
//
// Who reads it: /metrics (Gauges), GET /v1/jobs/{id}/utilization (View), and
// the reconciler, which asks for a job's measured profile (Profile) when it
// decides for that job again.
//
// Threading: the loop runs on its own thread; every public call is safe from
// any thread (one mutex over the rings and the last classifications).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "control/metrics.h"
#include "control/store.h"
#include "telemetry/classify.h"
#include "telemetry/config.h"
#include "telemetry/group.h"
#include "telemetry/nvml.h"
#include "telemetry/recommend.h"
#include "telemetry/ring.h"

namespace meridian::control {

struct SamplerOptions {
  telemetry::TelemetryConfig config;
  std::shared_ptr<const catalog::Catalog> catalog;
  std::string region;          // the catalog region the daemon's nodes are in
  double gpu_hour_usd = 0;     // what a GPU-hour on them costs
  std::string proc_root = "/proc";
  std::function<int64_t()> clock_ms;  // default: the system clock, Unix ms
};

// One job as the sampler sees it.
struct JobTelemetry {
  std::string job_id;
  std::vector<telemetry::JobSample> samples;  // oldest first
  telemetry::Classification classification;
  telemetry::Recommendation recommendation;
  telemetry::JobContext context;
};

class TelemetrySampler {
 public:
  TelemetrySampler(Store* store, SamplerOptions options);
  ~TelemetrySampler();

  void Start();
  void Stop();
  // One round on the caller's thread (the loop calls it; tests may too).
  void SampleOnce();

  std::optional<JobTelemetry> View(const std::string& job_id) const;
  std::vector<JobTelemetry> Views() const;
  // Prometheus gauge families: per job (class, GPU, CPU, I/O) and per node.
  std::vector<GaugeFamily> Gauges() const;
  // "" when NVML loaded; otherwise why GPU figures are missing.
  std::string gpu_status() const;
  const telemetry::TelemetryConfig& config() const { return options_.config; }

 private:
  struct Tracked {
    std::unique_ptr<telemetry::GroupCounters> group;
    std::string handle;
    telemetry::SampleRing ring;
    JobTelemetry view;
    int64_t last_stored_ms = 0;
    explicit Tracked(size_t capacity) : ring(capacity) {}
  };

  void Loop();
  int64_t NowMs() const;
  void StoreRows(int64_t now_ms);

  Store* store_;
  SamplerOptions options_;
  telemetry::ProcFs proc_;
  std::unique_ptr<telemetry::Nvml> nvml_;  // null: no GPU figures
  std::string gpu_status_;

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Tracked>> jobs_;
  telemetry::NodeSample node_, node_before_;

  std::mutex loop_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace meridian::control
