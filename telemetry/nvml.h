// Nvml: NVIDIA's management library, loaded at run time with
// dlopen("libnvidia-ml.so.1") and its functions resolved by name, so meridian
// builds and runs where no NVIDIA software is installed. Reads, per GPU and
// per MIG instance, SM and memory-bandwidth utilization, memory used, power
// and clocks, and where the driver reports them the memory and SM share of
// each process.
//
// A figure a device does not support (utilization of a MIG instance on most
// drivers) stays kUnknown. Threading: one Nvml is used from one thread (the
// sampler's).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "telemetry/sample.h"

namespace meridian::telemetry {

class Nvml {
 public:
  // Loads `library` and initializes NVML; the error says why not (no such
  // library, a missing function, nvmlInit failed) in one line.
  static Result<std::unique_ptr<Nvml>> Load(const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();

  int device_count() const;
  // Every GPU, then the MIG instances of each GPU in MIG mode. `job_pids`:
  // processes whose per-process figures are summed into job_* fields.
  std::vector<GpuReading> Read(const std::vector<pid_t>& job_pids) const;

  struct Api;

 private:
  Nvml() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
};

}  // namespace meridian::telemetry
