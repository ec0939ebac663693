// AdjustForProfile: how a job's measured profile changes its request when the
// scheduler decides for it again (a requeue after preemption, a lost node, a
// checkpoint restart). The spec the user wrote is kept; the next attempt asks
// for what the measurement says it needs:
//   more-vcpus          resources.vcpus raised to the recommendation, capped
//                       at the largest node's vCPUs
//   mig-slice           resources.mig allowed, resources.vram_gib set to the
//                       measured memory with headroom (so a slice is sized)
//   smaller-gpu,        resources.gpu_models narrowed to the recommended
//   more-bandwidth-gpu  model, when the fleet has it
// Anything else leaves the spec as it is.
#pragma once

#include <set>
#include <string>

#include "core/job.h"
#include "telemetry/config.h"
#include "telemetry/recommend.h"

namespace meridian::telemetry {

struct Adjustment {
  bool changed = false;
  JobSpec spec;       // the spec for the next attempt
  std::string note;   // "measured input-bound (...): vcpus 4 -> 18"
};

struct FleetShape {
  std::set<std::string> gpu_models;  // models some node has
  int max_node_vcpus = 0;            // 0: unknown, no cap
};

Adjustment AdjustForProfile(const JobSpec& spec, const Classification& c, const Recommendation& r,
                            const FleetShape& fleet, const Thresholds& t);

}  // namespace meridian::telemetry
