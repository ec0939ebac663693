// Placement: what the kubernetes backend needs of a scheduler decision, in
// the backend's own terms: which capacity (a fleet cluster, or a cloud's
// region and zone bought under a pricing model), how many pods (a gang's
// members), how many GPUs of which model each pod claims, or which MIG
// profile. Built from a Decision that holds an allocation; plain value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/enums.h"
#include "core/status.h"
#include "core/units.h"
#include "sched/decision.h"
#include "sched/fleet.h"
#include "sched/queued_job.h"

namespace meridian::backends::k8s {

struct Placement {
  // Fleet capacity: the cluster and the node meridian chose (a gang: its
  // first member). Empty for capacity bought from a cloud.
  std::string cluster;
  std::string node;
  bool owned = false;        // a fleet cluster of owned machines (no cloud labels)
  // The cloud and its own names ("gcp", "us-central1", "us-central1-a");
  // empty where not known (owned machines) or not chosen (zone).
  std::string provider;
  std::string region;
  std::string zone;
  // How the capacity is bought; nullopt for fleet capacity (owned or reserved).
  std::optional<PricingModel> pricing;
  std::string instance_type;  // cloud capacity
  Money price_per_hour;       // cloud capacity, all instances together
  int pods = 1;               // > 1: a gang, or a service's replicas (an Indexed Job)
  // The pods are a real-time service's replicas, each serving on its own in
  // its own zone, rather than a gang's members working together.
  bool replicas = false;
  int gpus_per_pod = 0;       // 0: a CPU job
  std::string gpu_model;      // catalog model; "" for a CPU job
  std::string mig_profile;    // "" for whole GPUs
  std::vector<std::string> mig_uuids;  // or these MIG instances, by UUID
  int vcpus_per_pod = 0;      // 0: not stated
  int64_t ram_mib_per_pod = 0;
  std::string where;          // the decision's own words ("gcp:us-central1 a2-ultragpu-8g x1 spot")
};

// The placement of `decision` for `job`. Errors (kInvalidArgument) for a
// decision without an allocation, with the decision's reason.
Result<Placement> PlacementOf(const sched::Decision& decision, const sched::QueuedJob& job,
                              const sched::Fleet& fleet);

}  // namespace meridian::backends::k8s
