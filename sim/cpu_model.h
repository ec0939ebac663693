// CpuModel: how a training job's speed depends on the vCPUs feeding its GPUs,
// for replays of traces whose jobs carry a CPU profile (docs/telemetry.md).
//
// The data loader and the GPU run as a pipeline, so a step takes the longer
// of the two. The trace's run time holds at the GPU share of vCPUs
// (`share`: the fleet's vCPUs per GPU x the job's GPUs). There:
//   input_bound_fraction f  share of the step the GPU waits for input
//                           (what telemetry measures as 1 - GPU busy)
//   cpu_sensitivity k       share of the loader's time that scales with cores
//                           (1: decoding, augmentation; 0: waiting on storage)
// With c vCPUs the loader takes (1 - k) + k x share / c of a step, the GPU
// 1 - f, and the run takes T x max(1 - f, loader). Fewer vCPUs than the
// share slow a sensitive job down; more speed an input-bound one up, until
// the GPU is the bottleneck (at most 1 / (1 - f)). Synergy (Mohan et al.,
// OSDI'22) allocates by the same kind of per-job sensitivity.
#pragma once

namespace meridian::sim {

struct CpuProfile {
  double input_bound_fraction = -1;  // -1: the job has no CPU profile
  double cpu_sensitivity = -1;
  bool set() const { return input_bound_fraction >= 0; }
};

// The run-time factor with `vcpus` when the recorded time holds at `share`.
double CpuTimeFactor(const CpuProfile& p, double share, double vcpus);

// The vCPUs the sensitivity policy gives: the fewest at which the loader
// keeps up with the GPU, at least 1 and at most `cap` x share (the loader
// can never catch up when k <= f: the cap).
int SensitiveVcpus(const CpuProfile& p, double share, double cap);

}  // namespace meridian::sim
