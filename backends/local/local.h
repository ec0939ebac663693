// The local backend: runs each attempt as a real process on this machine, in
// its own process group, with the assigned GPUs in CUDA_VISIBLE_DEVICES (or
// MIG instance UUIDs), its stdout/stderr appended to files in the attempt's
// log directory, and MERIDIAN_CHECKPOINT_DIR pointing at a directory that is
// kept across attempts. Stop sends SIGTERM to the group, then SIGKILL after
// the grace period. Commands are exec'd from argv; never through a shell.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/backend.h"

namespace meridian::backends {

struct LocalBackendOptions {
  std::string state_dir;   // where attempt records live (exit status files, ...)
  std::string node_name;   // this machine's node name ("" = hostname)
  // GPUs to declare for scheduling (tests, or machines without NVML): model
  // and count. Empty: none (a CPU node).
  std::string gpu_model;
  int gpus = 0;
  std::optional<int> vcpus;       // default: the machine's online CPUs
  std::optional<double> ram_gib;  // default: the machine's memory
};

std::unique_ptr<control::Backend> MakeLocalBackend(const LocalBackendOptions& options);

}  // namespace meridian::backends
