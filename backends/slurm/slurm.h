// The Slurm backend: control::Backend over a real Slurm cluster, through
// Slurm's own client commands (docs/slurm.md). Each attempt is one batch job,
// submitted with sbatch on the node and GPUs meridian chose (--nodelist,
// --gres=gpu:<type>:<n>), in that node's partition, with a time limit from
// the job's deadline; it is watched with squeue and `scontrol show job`,
// signalled and cancelled with scancel, and the cluster's nodes and GRES come
// from sinfo. The handle is "slurm:<cluster>:<Slurm job id>", so a restarted
// daemon adopts the job from its stored handle.
//
// Threading: the daemon calls it from one thread; calls are serialized by an
// internal mutex anyway. Every command runs as a child process with a
// timeout (backends/common/subprocess.h), never through a shell; the
// runner and the clock come from `environment`, so tests can script a cluster.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/environment.h"
#include "control/backend.h"

namespace meridian::backends {

struct SlurmBackendOptions {
  std::string cluster;                  // the fleet cluster's name (in handles)
  std::vector<std::string> partitions;  // the partitions meridian schedules
  std::string slurm_conf;               // SLURM_CONF for the commands; "" = Slurm's default
  std::string bin_dir;                  // where sbatch, squeue, ... are; "" = the daemon's PATH
  std::string state_dir;                // the batch script; jobs' default working directories
  // Slurm GPU GRES type (as written in gres.conf, any case) -> catalog GPU
  // model: "a100" -> "A100-80GB". A node whose GRES type is not here is
  // reported not schedulable, with the reason.
  std::map<std::string, std::string> gpu_models;
  // The MIG layout the cluster's GPUs are partitioned with (the fleet node
  // group's gpu, gpus and mig), for nodes whose GPU GRES are typed by MIG
  // profile (gpu:3g.40gb:16): Slurm lists instances per profile, not which
  // GPU holds them, so the layout is declared and checked against the counts.
  struct MigNodes {
    std::string model;
    int gpus = 0;
    std::vector<std::string> layout;  // every GPU's instances, by profile
  };
  std::optional<MigNodes> mig;
  // The most a job's stdout.log and stderr.log hold together, earlier
  // attempts' included (serve.yaml's node.max_log_bytes; 0: no cap), cut on
  // the compute node by `log_relay` (meridian-log-relay, at this path on
  // every node) as the local backend cuts its jobs' logs.
  int64_t max_log_bytes = 0;
  std::string log_relay;
  int64_t refresh_ms = 500;             // at most one squeue (and one sinfo) per this
  int command_timeout_ms = 15000;
  BackendEnvironment environment;  // unset members: the system's (SystemEnvironment)
};

// Errors: a missing partition list, a command not found, an unwritable state_dir.
Result<std::unique_ptr<control::Backend>> MakeSlurmBackend(const SlurmBackendOptions& options);

}  // namespace meridian::backends
