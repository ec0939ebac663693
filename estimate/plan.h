// The estimator's answer for one job: for every allowed GPU model, does it fit
// and how fast does it run; for every fitting (GPU model x count x offering x
// pricing model), how long, how much, how much energy and CO2; and a plain
// reason for every GPU model it rejected. This is `meridian plan`'s content.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"

namespace meridian::estimate {

// A value the spec left out that the estimator filled in, and why.
struct Assumption {
  std::string field;   // "model.micro_batch"
  std::string value;   // "1"
  std::string reason;  // "default for fine-tuning"
};

// How a training job keeps activations for the backward pass.
enum class Recompute {
  kNone,  // every layer's activations stored: 34 x s x b x h bytes per layer
  kFull,  // only each layer's input stored (2 x s x b x h); backward re-runs the
          // layer's forward, one layer's activations live at a time (4 forward passes, not 3)
};

// How a training run splits its GPUs (parallelism.h): t-way tensor parallelism
// within a node, p pipeline stages, and data parallelism over the rest with
// ZeRO-1 (optimizer state sharded) or ZeRO-3 (all state sharded).
enum class ZeroStage { kOne, kThree };
struct LayoutShape {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  ZeroStage zero = ZeroStage::kThree;
};

// Memory the job needs, in GiB, and how it is split over GPUs.
struct MemoryEstimate {
  double weights_gib = 0;
  double gradients_gib = 0;
  double optimizer_gib = 0;    // fp32 master copy + Adam moments
  double activations_gib = 0;  // per GPU
  double kv_cache_gib = 0;     // inference
  double overhead_gib = 0;     // CUDA context, fragmentation
  double total_gib = 0;        // sharded state over all GPUs + per-GPU terms
  double per_gpu_gib = 0;      // what one GPU must hold
  int gpus = 1;                // smallest count that fits, rounded to what clouds sell
  Recompute recompute = Recompute::kNone;  // training: how activations are kept
  std::string method;          // "stated vram_gib", "ZeRO-3 over 2 GPUs", "weights + KV cache"
  std::string arithmetic;      // "7e9 x 16 B = 112 GB state / 2 GPUs + 3.1 GiB act = ..."
};

// How fast the job runs on `gpus` GPUs of one model.
struct ThroughputEstimate {
  Precision precision = Precision::kBf16;
  double peak_tflops_per_gpu = 0;
  double efficiency = 0;         // achievable fraction of peak used
  bool efficiency_measured = false;  // from measured MAMF data, not the default
  std::string bound;             // "compute" | "memory-bandwidth" | "stated"
  double run_hours = 0;          // wall-clock hours of running, waiting excluded
  std::string arithmetic;        // "6 x 7e9 x 2e9 = 8.4e19 FLOP / (2 x 989 TFLOPS x 0.80) = ..."
  std::string layout;            // training: "TP 8 x PP 1 x DP 4 (ZeRO-1)"; inference: "TP 4"; "" none
  std::optional<LayoutShape> shape;  // training with a known shape on several GPUs
  double communication_share = 0;  // of a step's time: collectives and sends not hidden
  double mfu = 0;                // model FLOPs / (GPUs x dense peak x run time); 0 unknown
};

// When VRAM is short on a GPU model at its usual count: the seed's
// smaller-batch alternative, priced.
struct VramShortfall {
  std::string gpu;
  double needed_gib = 0;
  double available_gib = 0;
  int reduced_micro_batch = 0;
  double slowdown = 1;  // run time multiplier of the smaller batch
  std::string explanation;
};

// A real-time service on one GPU model (estimate/serving.h): one replica's
// capacity and request time, and the replica set realtime_replicas' default
// terms size for each hour's load (ReplicaSetSize), over the run from the
// submission, hour by hour.
struct ServiceEstimate {
  double replica_rps = 0;     // one replica's requests per second
  double request_ms = 0;      // one request alone, to its first token
  int peak_replicas = 0;      // the set for the busiest UTC hour
  int min_replicas = 0;       // for the quietest
  double replica_hours = 0;   // the set's replicas x hours over the run
  std::string arithmetic;     // "batch 16 x ... = 5.1 req/s; peak 15 req/s: 3 up, set of 4; ..."
};

// The fit and speed of one GPU model for the job.
struct GpuEstimate {
  std::string gpu;
  MemoryEstimate memory;
  ThroughputEstimate throughput;
  std::optional<VramShortfall> shortfall;
  std::optional<std::string> mig_profile;  // smallest MIG slice that holds the job
  std::optional<ServiceEstimate> service;  // a real-time service with a model shape
};

// One way to run the job: a GPU model, a number of GPUs on one or more
// instances of one offering, under one pricing model.
struct Option {
  std::string gpu;                 // "H100-80GB" or "cpu"
  int gpus = 0;                    // total GPUs across instances (billed)
  int gpus_used = 0;               // GPUs the job runs on (<= gpus)
  int instances = 1;
  catalog::Offering offering;      // the instance type, region, zone, prices
  std::vector<std::string> other_zones;  // zones of the region with an identical option
  PricingModel pricing = PricingModel::kOnDemand;
  Money price_per_hour;            // for all instances together
  double wait_hours = 0;           // expected wait before start (flex-start)
  double hours = 0;                // run time, waiting excluded (incl. expected spot rework)
  double billed_hours = 0;         // hours paid: = hours, or whole reserved terms
  Money cost;                      // price_per_hour x billed_hours (+ egress)
  Money egress_cost;               // moving the job's data to this region
  double energy_kwh = 0;
  double carbon_gco2_per_kwh = 0;  // average over the planned hours
  catalog::CarbonSourceKind carbon_source = catalog::CarbonSourceKind::kYearly;
  Co2Grams co2;
  UnixSeconds start = 0;
  UnixSeconds finish = 0;
  bool meets_deadline = true;
  bool within_budget = true;
  double memory_per_gpu_gib = 0;
  std::string image;               // custom image for a pinned driver stack, or ""
  std::vector<std::string> notes;  // plain remarks: "spot: preemptible, checkpoints every 30m"
};

struct Rejection {
  std::string gpu;     // GPU model, or "*" for the whole job
  std::string reason;  // "bf16 is not supported natively on V100-32GB"
};

struct Plan {
  JobSpec job;
  UnixSeconds at = 0;               // planning instant (submission time)
  std::optional<UnixSeconds> deadline;  // absolute, where the job has one
  std::vector<Assumption> assumptions;
  std::vector<GpuEstimate> estimates;  // one per fitting GPU model
  std::vector<Option> options;         // ranked: deadline met, then cost, then finish
  std::vector<Rejection> rejected;
  std::vector<std::string> notes;      // plan-wide remarks ("no option meets the deadline")
};

struct PlanRequest {
  UnixSeconds at = 0;      // when the job is submitted; the caller's clock
  size_t max_options = 0;  // 0 = all
};

// Plans `job` against `catalog`. The job must have been validated against the
// catalog (spec::Validate); an error here is an internal one or a job that no
// GPU and no CPU can run, which is still a Plan with every model rejected.
Result<Plan> MakePlan(const JobSpec& job, const catalog::Catalog& catalog,
                      const PlanRequest& request);

}  // namespace meridian::estimate
