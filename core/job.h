// JobSpec: what a user asks meridian to run, as parsed from a job spec file
// (docs/job-spec.md). Every optional field the user left out stays empty here;
// the estimator fills defaults and reports which ones it used. A JobSpec is a
// plain value: copy it, compare it, share it read-only between threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enums.h"
#include "core/time.h"
#include "core/units.h"

namespace meridian {

// The network being trained or served. All fields optional.
struct ModelShape {
  std::optional<double> params_b;        // billions of parameters
  std::optional<Precision> precision;    // compute precision (default per kind)
  std::optional<int> layers;
  std::optional<int> hidden;             // hidden size (d_model)
  std::optional<int> heads;              // attention heads
  std::optional<int> kv_heads;           // grouped-query attention KV heads (default = heads)
  std::optional<int> seq_len;            // training sequence length or inference context
  std::optional<int> micro_batch;        // sequences per GPU per step (training)
  std::optional<int> batch;              // concurrent sequences (inference)
  std::optional<int> output_tokens;      // generated tokens per request (inference)
  bool operator==(const ModelShape&) const = default;
};

// How much work the job is, in one of three forms.
struct Work {
  enum class Form { kNone, kTokens, kFlops, kGpuHours };
  Form form = Form::kNone;  // kNone: a service or script that runs until it exits
  double tokens = 0;        // kTokens: tokens processed (trained on or generated)
  double flops = 0;         // kFlops: total floating-point operations
  double gpu_hours = 0;     // kGpuHours: measured GPU-hours ...
  std::string on_gpu;       // ... on this reference GPU model
  // The GPU model a trace's recorded run time was measured on (set by the
  // trace readers, not a spec key; "" = none). The job ran there, so its
  // precision never keeps it off that model (estimate/run_time.h).
  std::string recorded_on;
  std::optional<int64_t> duration_s;  // a service's planned run time (work.duration)
  // kFlops: FLOPs per byte moved to and from GPU memory (work.arithmetic_intensity),
  // for the roofline; nullopt: compute-bound (docs/estimator.md, "Roofline").
  std::optional<double> arithmetic_intensity;
  // Training: tokens per optimizer step (work.global_batch_tokens), which
  // sets the micro-batches of a parallel layout; nullopt: the estimator's
  // default (docs/estimator.md, section 3a).
  std::optional<double> global_batch_tokens;
  bool operator==(const Work&) const = default;
};

struct CpuFallback {
  double slowdown = 0;  // how many times slower on CPU than on one GPU; 0 = no fallback
  bool operator==(const CpuFallback&) const = default;
};

struct Resources {
  std::optional<int> gpus;               // nullopt = "auto"; 0 = CPU-only job
  std::vector<std::string> gpu_models;   // allowed models; empty = any
  std::optional<double> vram_gib;        // stated memory need per GPU, overrides the model
  std::optional<int> vcpus;
  std::optional<double> ram_gib;
  bool mig = false;                      // may run on a MIG slice
  std::optional<CpuFallback> cpu_fallback;
  bool operator==(const Resources&) const = default;
};

struct Deadline {
  std::optional<int64_t> after_submit_s;  // "72h": relative to submission
  std::optional<UnixSeconds> at;          // RFC 3339 absolute time
  bool set() const { return after_submit_s || at; }
  bool operator==(const Deadline&) const = default;
};

struct Checkpoint {
  std::optional<int64_t> interval_s;
  std::optional<int64_t> restart_overhead_s;
  std::optional<double> size_gb;  // what a move carries; unset: estimated (estimate::CheckpointGb)
  bool operator==(const Checkpoint&) const = default;
};

struct DataLocation {
  std::string region;  // "provider:region"; empty = no input data to move
  double size_gb = 0;
  bool operator==(const DataLocation&) const = default;
};

struct Latency {
  std::optional<double> slo_ms;
  std::vector<std::string> users;  // regions the users are near
  // A service's load, in requests per second: flat (rps) or one figure per
  // UTC hour of the day (rps_by_hour, 24 entries); at most one of the two.
  std::optional<double> rps;
  std::vector<double> rps_by_hour;
  // One request's shape for an LLM: prompt and generated tokens; nullopt:
  // the model's (seq_len - output_tokens, output_tokens).
  std::optional<int> tokens_in;
  std::optional<int> tokens_out;
  bool has_load() const { return rps.has_value() || !rps_by_hour.empty(); }
  // Requests per second in UTC hour `hour` (0..23); 0 without a load.
  double RpsAt(int hour) const {
    if (!rps_by_hour.empty()) return rps_by_hour[static_cast<size_t>(hour) % rps_by_hour.size()];
    return rps.value_or(0);
  }
  double PeakRps() const {
    double peak = rps.value_or(0);
    for (double v : rps_by_hour) peak = v > peak ? v : peak;
    return peak;
  }
  bool operator==(const Latency&) const = default;
};

struct DriverPin {
  std::string version;  // e.g. "550.54.15"
  std::string cuda;     // e.g. "12.4"
  bool set() const { return !version.empty() || !cuda.empty(); }
  bool operator==(const DriverPin&) const = default;
};

// Where a spec was read from, so later checks (the catalog, the estimator) can
// point at the line the user wrote. Empty when the spec was built in code.
struct SpecOrigin {
  std::string source;  // file name as given to the parser, e.g. "jobs.yaml"
  std::string path;    // "jobs[1]" for the second job of a `jobs:` list, "" for a lone job
  // Field path within the job ("resources.gpu_models[0]") -> 1-based (line, column).
  std::map<std::string, std::pair<int, int>> marks;
  bool operator==(const SpecOrigin&) const = default;
};

struct JobSpec {
  std::string name;
  std::string tenant = "default";
  WorkloadKind kind = WorkloadKind::kTraining;
  ModelShape model;
  Work work;
  Resources resources;
  Deadline deadline;
  std::optional<Money> budget;
  Priority priority = Priority::kNormal;
  bool preemptible = false;
  Checkpoint checkpoint;
  DataLocation data;
  std::vector<std::string> residency;  // allowed geographies ("eu") or region ids
  Latency latency;
  DriverPin driver;
  std::vector<std::string> command;     // argv, run by the control plane
  std::map<std::string, std::string> env;
  std::string working_dir;
  std::string image;  // container image, for backends that run one (kubernetes)
  std::optional<int64_t> grace_period_s;  // SIGTERM to SIGKILL on preemption
  std::map<std::string, std::string> labels;
  SpecOrigin origin;  // not part of the job's meaning; for error messages only
  bool operator==(const JobSpec&) const = default;
};

}  // namespace meridian
