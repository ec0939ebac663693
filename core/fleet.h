// FleetSpec: the capacity a platform team owns or has reserved, as written in
// a fleet file (docs/fleet.md): clusters in catalog regions, each with groups
// of identical nodes. A node has GPUs of one model (or none: a CPU node),
// vCPUs and RAM; its GPUs may be partitioned into MIG instances. A FleetSpec is
// a plain value; the scheduler expands it into nodes and tracks allocations in
// its ledger.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/units.h"

namespace meridian {

// How a cluster's capacity is paid for.
enum class CapacityPricing {
  kOwned,     // bought hardware: `gpu_hour_usd` is its cost per GPU-hour used
  kReserved,  // a cloud reservation: the catalog price, paid whether used or not
};

// `count` identical nodes.
struct NodeGroup {
  int count = 1;
  std::string gpu;  // catalog GPU model; empty for a CPU-only node
  int gpus = 0;     // GPUs per node
  int vcpus = 0;
  double ram_gib = 0;
  // MIG layout applied to every GPU of these nodes, as profile names
  // ("3g.40gb", "2g.20gb", "2g.20gb"); empty = whole GPUs.
  std::vector<std::string> mig;
  std::string name_prefix;  // node names are <cluster>-<prefix><index>; default from gpu
  DriverPin driver;         // the nodes' GPU driver / CUDA stack, where declared
  // Set in code, not read from a file: the nodes' own names, one per node
  // (the daemon's registered nodes, so that decisions name them as the API
  // does); empty: <cluster>-<prefix><index>.
  std::vector<std::string> names;
};

// How meridian reaches a Slurm cluster (`backend: slurm`, docs/slurm.md).
struct SlurmSettings {
  std::vector<std::string> partitions;  // the partitions meridian schedules; at least one
  std::string conf;                     // slurm.conf the client commands read (SLURM_CONF); "" = Slurm's default
  std::string bin_dir;                  // where sbatch, squeue, ... are; "" = PATH
  std::map<std::string, std::string> gpu_types;  // GRES type -> catalog GPU model
};

// The CPU rates of an owned cluster whose fleet file gives none: GCP's N2
// on-demand list rates in us-central1 (https://cloud.google.com/compute/vm-instance-pricing,
// "N2 standard": $0.031611 per vCPU-hour, $0.004237 per GiB-hour).
inline constexpr double kDefaultVcpuHourUsd = 0.031611;
inline constexpr double kDefaultRamGibHourUsd = 0.004237;

struct ClusterSpec {
  std::string name;
  std::string region;  // catalog region id, "gcp:us-central1"
  CapacityPricing pricing = CapacityPricing::kOwned;
  std::optional<Money> gpu_hour;   // owned: cost per GPU-hour
  std::string instance_type;       // reserved: the catalog offering reserved
  std::string backend = "local";   // how jobs are launched there: local | slurm | kubernetes
  bool repartitionable = false;    // MIG layouts may be changed by the scheduler
  std::optional<SlurmSettings> slurm;  // backend: slurm
  std::vector<NodeGroup> nodes;
  // Owned: what a run on CPUs (a CPU node, or a GPU node's spare vCPUs for a
  // CPU-only job) costs per vCPU-hour and per GiB-hour of RAM it holds;
  // unset: kDefaultVcpuHourUsd and kDefaultRamGibHourUsd.
  std::optional<Money> vcpu_hour;
  std::optional<Money> ram_gib_hour;
};

struct FleetSpec {
  std::vector<ClusterSpec> clusters;
  bool elastic = true;  // may also provision the catalog's offerings
  // Where the fleet was read from ("clusters[1].nodes[0].gpus" -> line,
  // column), for error messages only; empty when built in code.
  SpecOrigin origin;
};

}  // namespace meridian
