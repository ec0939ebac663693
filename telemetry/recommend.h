// Recommend: what to change for a classified job, and what the change is
// expected to do, in the job's own figures and the catalog's prices.
//
//   input-bound (CPU)  more vCPUs for the loader: enough that the GPU would
//                      reach target_gpu_sm_pct if the loader scales with cores
//   input-bound (I/O)  move the data to the run's region (the catalog's egress
//                      $/GB once, against the GPU money the stall burns per
//                      hour), or faster storage when it is already there
//   memory-bound       a GPU model with more memory bandwidth that holds the
//                      job's memory
//   healthy CPU job    more vCPUs when it saturates its own and its
//   short of cores     threads queue for a CPU (run-queue wait)
//   healthy, partly    a MIG slice of its GPU that holds its memory and its
//   used GPU           share of the SMs, else a cheaper GPU model that does
//   idle               check the job: what the held GPUs cost per hour
//
// Pure: reads the catalog, no clock, no I/O.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "telemetry/classify.h"
#include "telemetry/config.h"

namespace meridian::telemetry {

// What is known of the job beyond its samples.
struct JobContext {
  std::string gpu_model;     // catalog model of its GPUs; "" a CPU job
  int gpus = 0;
  std::string mig_profile;   // the MIG slice it holds; "" whole GPUs
  int vcpus = 0;             // its allocation; 0 not stated
  int node_vcpus = 0;        // the node's vCPUs (the most it could get); 0 unknown
  std::string run_region;    // catalog region it runs in
  std::string data_region;   // where its input data is; "" none stated
  double data_gb = 0;
  double gpu_hour_usd = 0;   // what one of its GPUs costs per hour; 0: the catalog's cheapest
};

struct Recommendation {
  // "none", "more-vcpus", "move-data", "faster-storage", "more-bandwidth-gpu",
  // "mig-slice", "smaller-gpu", "check-job"
  std::string action = "none";
  std::string text;              // what to do
  std::string expected_effect;   // what it should change, in figures
  int vcpus = 0;                 // more-vcpus: the allocation to ask for
  std::string gpu_model;         // more-bandwidth-gpu, smaller-gpu
  std::string mig_profile;       // mig-slice
  double speedup = 1;            // expected job speed-up (1: none)
  double usd_per_hour_before = 0, usd_per_hour_after = 0;  // the job's GPU cost rate
  double egress_usd = 0;         // move-data: moving the data once
  double stall_usd_per_hour = 0; // move-data, faster-storage: GPU money idle per hour
};

Recommendation Recommend(const Classification& c, const JobContext& job, const Thresholds& t,
                         const catalog::Catalog& catalog);

// The catalog's lowest on-demand price of one GPU of `model` per hour (any
// region); 0 when no offering has it.
double CheapestGpuHourUsd(const catalog::Catalog& catalog, const std::string& model);

}  // namespace meridian::telemetry
