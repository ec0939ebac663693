// Fleet: a FleetSpec expanded into the nodes the scheduler places work on,
// with the indexes a decision uses instead of scanning: pools of nodes per GPU
// model and per (GPU model, cluster), clusters per region, and the ledger
// capacities (free-capacity indexes live in the Ledger, keyed by these pools).
//
// Node names are "<cluster>-<prefix><index>" where prefix is the node group's
// name_prefix or the lower-cased GPU model plus "-" ("onprem-a-a100-80gb-0"),
// "cpu-" for CPU-only nodes, and the index counts per (cluster, prefix).
//
// MIG: every GPU of a node group with a `mig` layout is in MIG mode and
// partitioned into the layout's instances, each placed at a valid start of its
// profile: the catalog's placement_starts where present, otherwise the aligned
// rule of AlignedMigStarts (core/ledger.h). Layouts are checked to fit one GPU.
//
// A Fleet is immutable once built and safe to share between threads; it keeps
// a pointer to the catalog, which must outlive it.
#pragma once

#include <bitset>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/fleet.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "core/status.h"

namespace meridian::sched {

// Regions of the catalog as a bit set (RegionId = position in catalog.regions()).
inline constexpr size_t kMaxRegions = 512;
using RegionSet = std::bitset<kMaxRegions>;
// GPU models of the catalog as a bit set (GpuModelId = position in catalog.gpus()).
inline constexpr size_t kMaxGpuModels = 64;
using GpuModelSet = std::bitset<kMaxGpuModels>;

// One MIG instance of a node's layout.
struct MigInstance {
  uint8_t profile = 0;  // index into the GPU model's mig_profiles
  MigShape shape;
};

struct Node {
  NodeId id;
  std::string name;
  ClusterId cluster;
  RegionId region;
  GpuModelId gpu_model;  // invalid for a CPU-only node
  int gpus = 0;
  int vcpus = 0;
  int64_t ram_mib = 0;
  uint64_t mig_gpus = 0;             // GPUs in MIG mode
  std::vector<MigInstance> mig;      // the layout of every MIG-mode GPU
  PoolId model_pool;                 // all nodes of the GPU model (or all CPU nodes)
  PoolId cluster_pool;               // the model's nodes in this cluster
  uint32_t group = 0;                // node group index within the cluster
};

struct Cluster {
  ClusterId id;
  std::string name;
  RegionId region;
  CapacityPricing pricing = CapacityPricing::kOwned;
  Money gpu_hour;             // owned: cost per GPU-hour used; reserved: the committed
                              // rate per GPU-hour (spec::PriceCluster), paid anyway
  // Owned: a run on CPUs, per vCPU-hour and per GiB-hour of RAM it holds
  // (ClusterSpec::vcpu_hour); reserved: 0, the instances are paid anyway.
  Money vcpu_hour;
  Money ram_gib_hour;
  OfferingId reserved_offering;  // reserved: the catalog offering reserved (may be invalid)
  bool repartitionable = false;
  NodeId first_node;
  uint32_t node_count = 0;
};

// A node group as expanded: `count` identical nodes from `first` on. The
// "can it ever run" pass judges one representative per group.
struct NodeGroupInfo {
  ClusterId cluster;
  PoolId cluster_pool;
  GpuModelId gpu_model;
  NodeId first;
  uint32_t count = 0;
  DriverPin driver;  // the group's declared driver / CUDA stack (empty: undeclared)
};

// A pool: nodes of one GPU model, in the whole fleet or in one cluster.
struct Pool {
  PoolId id;
  GpuModelId gpu_model;  // invalid: CPU-only nodes
  ClusterId cluster;     // invalid: fleet-wide pool of the model
  RegionId region;       // cluster pools only
  int max_gpus_per_node = 0;
  int max_mig_span = 0;  // largest MIG instance in any member's layout
};

class Fleet {
 public:
  // Expands `spec` over `catalog`. Errors name the field: clusters[1].region,
  // clusters[0].nodes[2].gpu, clusters[0].nodes[1].mig[2].
  static Result<std::shared_ptr<const Fleet>> Build(const FleetSpec& spec,
                                                    std::shared_ptr<const catalog::Catalog> catalog);

  const catalog::Catalog& catalog() const { return *catalog_; }
  const std::shared_ptr<const catalog::Catalog>& catalog_ptr() const { return catalog_; }
  bool elastic() const { return elastic_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId n) const { return nodes_[n.index()]; }
  const std::vector<Cluster>& clusters() const { return clusters_; }
  const Cluster& cluster(ClusterId c) const { return clusters_[c.index()]; }
  const std::vector<Pool>& pools() const { return pools_; }
  const Pool& pool(PoolId p) const { return pools_[p.index()]; }
  const std::vector<NodeGroupInfo>& groups() const { return groups_; }
  // Indexes into groups() of the model's groups (CPU-only: invalid model), fleet order.
  const std::vector<uint32_t>& GroupsOf(GpuModelId m) const;

  // The fleet-wide pool of a GPU model (invalid when the fleet has none).
  PoolId ModelPool(GpuModelId m) const;
  // The cluster pools of a GPU model, in fleet order of their first node.
  const std::vector<PoolId>& ClusterPools(GpuModelId m) const;
  // The fewest GPUs the largest whole-GPU node of any of those clusters has
  // (INT_MAX when none): a job of no more GPUs fits one node in every
  // cluster, so needs no gang. 0 for a model the fleet does not know.
  int FewestMaxGpus(GpuModelId m) const;
  // Pool of CPU-only nodes fleet-wide (invalid when none).
  PoolId CpuPool() const { return cpu_pool_; }
  // Regions the fleet has nodes of the model in.
  const RegionSet& RegionsWithModel(GpuModelId m) const;
  const std::vector<ClusterId>& ClustersIn(RegionId r) const;

  // The ledger's view of the nodes: capacities and pool membership.
  std::vector<NodeCapacity> Capacities() const;
  // A new, empty ledger over this fleet.
  Result<Ledger> NewLedger() const;

 private:
  std::shared_ptr<const catalog::Catalog> catalog_;
  bool elastic_ = true;
  std::vector<Node> nodes_;
  std::vector<Cluster> clusters_;
  std::vector<Pool> pools_;
  std::vector<NodeGroupInfo> groups_;
  std::vector<std::vector<uint32_t>> groups_of_;   // by GpuModelId; last = CPU-only
  std::vector<PoolId> model_pool_;                 // by GpuModelId
  std::vector<std::vector<PoolId>> cluster_pools_;  // by GpuModelId
  std::vector<int> fewest_max_gpus_;                // by GpuModelId
  std::vector<RegionSet> regions_with_model_;      // by GpuModelId
  std::vector<std::vector<ClusterId>> clusters_in_;  // by RegionId
  PoolId cpu_pool_;

  friend class FleetBuilder;
};

// Catalog positions of names, for building ids.
GpuModelId FindGpuModelId(const catalog::Catalog& c, std::string_view name);
RegionId FindRegionId(const catalog::Catalog& c, std::string_view id);

// Where instances of MIG profile `p` may sit: the catalog's placement_starts
// and placement_span where present, otherwise the aligned rule with span =
// memory_slices (from_catalog false: the MIG placement data is being added to
// the catalog; until then this rule stands in for it).
struct MigPlacements {
  std::vector<uint8_t> starts;
  int span = 0;
  bool from_catalog = false;
};
MigPlacements PlacementsOf(const catalog::MigProfile& p);

// Places the profiles `layout` (indexes into gpu.mig_profiles) on one GPU:
// each at one of its valid starts, none overlapping. Empty result when the
// layout cannot be placed.
std::vector<MigShape> PlaceMigLayout(const catalog::GpuModel& gpu,
                                     const std::vector<uint8_t>& layout);

}  // namespace meridian::sched
