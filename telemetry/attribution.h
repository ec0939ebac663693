// JobGpus: which of a node's GPU readings belong to one job. Whole GPUs by
// the indexes the scheduler assigned (CUDA_VISIBLE_DEVICES order = NVML
// index); a MIG placement by the instances on those GPUs where NVML sees the
// job's processes (job_mem_used_mib > 0), since a GPU's other instances run
// other jobs and its whole-GPU figures mix them all.
#pragma once

#include <vector>

#include "telemetry/sample.h"

namespace meridian::telemetry {

std::vector<GpuReading> JobGpus(const std::vector<GpuReading>& node, const std::vector<int>& gpus,
                                bool mig);

}  // namespace meridian::telemetry
