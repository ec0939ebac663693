#include "telemetry/attribution.h"

#include <algorithm>

namespace meridian::telemetry {

std::vector<GpuReading> JobGpus(const std::vector<GpuReading>& node, const std::vector<int>& gpus,
                                bool mig) {
  std::vector<GpuReading> out;
  for (const GpuReading& g : node) {
    if (std::find(gpus.begin(), gpus.end(), g.index) == gpus.end()) continue;
    if (!mig && g.mig_gi < 0) out.push_back(g);
    if (mig && g.mig_gi >= 0 && Known(g.job_mem_used_mib) && g.job_mem_used_mib > 0) out.push_back(g);
  }
  return out;
}

}  // namespace meridian::telemetry
