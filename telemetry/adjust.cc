#include "telemetry/adjust.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meridian::telemetry {

Adjustment AdjustForProfile(const JobSpec& spec, const Classification& c, const Recommendation& r,
                            const FleetShape& fleet, const Thresholds& t) {
  Adjustment a;
  a.spec = spec;
  const std::string why =
      "measured " + std::string(ToString(c.job_class)) + " (" + c.summary + "): ";
  Resources& res = a.spec.resources;
  if (r.action == "more-vcpus") {
    const int before = res.vcpus.value_or(0);
    int want = r.vcpus;
    if (fleet.max_node_vcpus > 0) want = std::min(want, fleet.max_node_vcpus);
    if (want > before) {
      res.vcpus = want;
      a.changed = true;
      a.note = why + "vcpus " + (before > 0 ? std::to_string(before) : "unstated") + " -> " +
               std::to_string(want);
    }
  } else if (r.action == "mig-slice" && !res.mig && Known(c.figures.gpu_mem_used_mib)) {
    res.mig = true;
    const double gib = std::ceil(c.figures.gpu_mem_used_mib / 1024.0 * t.mig_headroom);
    res.vram_gib = gib;
    a.changed = true;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f GiB", gib);
    a.note = why + "may run on a MIG slice (" + r.mig_profile + " fits), vram_gib " + buf;
  } else if ((r.action == "smaller-gpu" || r.action == "more-bandwidth-gpu") &&
             fleet.gpu_models.count(r.gpu_model) > 0 &&
             !(res.gpu_models.size() == 1 && res.gpu_models[0] == r.gpu_model)) {
    res.gpu_models = {r.gpu_model};
    a.changed = true;
    a.note = why + "gpu_models -> " + r.gpu_model;
  }
  return a;
}

}  // namespace meridian::telemetry
