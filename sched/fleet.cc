#include "sched/fleet.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>

#include "spec/fleet.h"

namespace meridian::sched {

GpuModelId FindGpuModelId(const catalog::Catalog& c, std::string_view name) {
  for (size_t i = 0; i < c.gpus().size(); ++i) {
    if (c.gpus()[i].name == name) return GpuModelId(static_cast<uint16_t>(i));
  }
  return GpuModelId::Invalid();
}

RegionId FindRegionId(const catalog::Catalog& c, std::string_view id) {
  for (size_t i = 0; i < c.regions().size(); ++i) {
    if (c.regions()[i].id == id) return RegionId(static_cast<uint16_t>(i));
  }
  return RegionId::Invalid();
}

MigPlacements PlacementsOf(const catalog::MigProfile& p) {
  MigPlacements m;
  if (!p.placement_starts.empty() && p.placement_span > 0) {
    for (int s : p.placement_starts) m.starts.push_back(static_cast<uint8_t>(s));
    m.span = p.placement_span;
    m.from_catalog = true;
    return m;
  }
  m.span = p.memory_slices;
  m.starts = AlignedMigStarts(m.span, p.max_instances);
  return m;
}

namespace {

bool PlaceFrom(const std::vector<MigPlacements>& by_instance, size_t i, uint8_t used,
               std::vector<MigShape>* out) {
  if (i == by_instance.size()) return true;
  const MigPlacements& p = by_instance[i];
  for (uint8_t start : p.starts) {
    MigShape s{start, static_cast<uint8_t>(p.span)};
    if (s.start + s.span > kMigMemorySlices || (used & s.mask()) != 0) continue;
    (*out)[i] = s;
    if (PlaceFrom(by_instance, i + 1, used | s.mask(), out)) return true;
  }
  return false;
}

}  // namespace

std::vector<MigShape> PlaceMigLayout(const catalog::GpuModel& gpu,
                                     const std::vector<uint8_t>& layout) {
  // Widest first prunes the search early; results go back in layout order.
  std::vector<size_t> order(layout.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<MigPlacements> placements;
  for (uint8_t p : layout) placements.push_back(PlacementsOf(gpu.mig_profiles[p]));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return placements[a].span > placements[b].span; });
  std::vector<MigPlacements> sorted;
  for (size_t i : order) sorted.push_back(placements[i]);
  std::vector<MigShape> shapes(layout.size());
  if (!PlaceFrom(sorted, 0, 0, &shapes)) return {};
  std::vector<MigShape> out(layout.size());
  for (size_t k = 0; k < order.size(); ++k) out[order[k]] = shapes[k];
  return out;
}

class FleetBuilder {
 public:
  FleetBuilder(const FleetSpec& spec, std::shared_ptr<const catalog::Catalog> catalog)
      : spec_(spec), fleet_(std::make_shared<Fleet>()) {
    fleet_->catalog_ = std::move(catalog);
    fleet_->elastic_ = spec.elastic;
  }

  Result<std::shared_ptr<const Fleet>> Build() {
    const catalog::Catalog& cat = *fleet_->catalog_;
    if (cat.gpus().size() > kMaxGpuModels || cat.regions().size() > kMaxRegions) {
      return Status::Invalid("catalog: more GPU models or regions than the scheduler indexes");
    }
    fleet_->model_pool_.assign(cat.gpus().size(), PoolId::Invalid());
    fleet_->cluster_pools_.resize(cat.gpus().size());
    fleet_->regions_with_model_.resize(cat.gpus().size());
    fleet_->groups_of_.resize(cat.gpus().size() + 1);
    fleet_->clusters_in_.resize(cat.regions().size());
    for (size_t c = 0; c < spec_.clusters.size(); ++c) MERIDIAN_RETURN_IF_ERROR(AddCluster(c));
    fleet_->fewest_max_gpus_.assign(cat.gpus().size(), INT_MAX);
    for (size_t m = 0; m < cat.gpus().size(); ++m) {
      for (PoolId p : fleet_->cluster_pools_[m]) {
        const int most = fleet_->pools_[p.index()].max_gpus_per_node;
        if (most > 0) fleet_->fewest_max_gpus_[m] = std::min(fleet_->fewest_max_gpus_[m], most);
      }
    }
    return std::shared_ptr<const Fleet>(fleet_);
  }

 private:
  static std::string Path(size_t c) { return "clusters[" + std::to_string(c) + "]"; }

  PoolId NewPool(GpuModelId m, ClusterId c, RegionId r) {
    Pool p;
    p.id = PoolId(static_cast<uint32_t>(fleet_->pools_.size()));
    p.gpu_model = m;
    p.cluster = c;
    p.region = r;
    fleet_->pools_.push_back(p);
    return p.id;
  }

  PoolId ModelPool(GpuModelId m) {
    if (!m.valid()) {
      if (!fleet_->cpu_pool_.valid()) {
        fleet_->cpu_pool_ = NewPool(m, ClusterId::Invalid(), RegionId::Invalid());
      }
      return fleet_->cpu_pool_;
    }
    PoolId& p = fleet_->model_pool_[m.index()];
    if (!p.valid()) p = NewPool(m, ClusterId::Invalid(), RegionId::Invalid());
    return p;
  }

  Status AddCluster(size_t ci) {
    const catalog::Catalog& cat = *fleet_->catalog_;
    const ClusterSpec& cs = spec_.clusters[ci];
    Cluster c;
    c.id = ClusterId(static_cast<uint16_t>(fleet_->clusters_.size()));
    c.name = cs.name;
    c.region = FindRegionId(cat, cs.region);
    if (!c.region.valid()) {
      return Status::Invalid(Path(ci) + ".region: \"" + cs.region + "\" is not a catalog region");
    }
    c.pricing = cs.pricing;
    c.gpu_hour = cs.gpu_hour.value_or(Money());
    if (cs.pricing == CapacityPricing::kOwned) {
      c.vcpu_hour = cs.vcpu_hour.value_or(Money::FromDollars(kDefaultVcpuHourUsd));
      c.ram_gib_hour = cs.ram_gib_hour.value_or(Money::FromDollars(kDefaultRamGibHourUsd));
    }
    if (cs.pricing == CapacityPricing::kReserved) {
      // The committed rate per GPU-hour, for explanations; its marginal cost is 0.
      Result<spec::CapacityPrice> price = spec::PriceCluster(spec_, ci, cat);
      if (price.ok()) c.gpu_hour = price->per_gpu_hour;
    }
    c.repartitionable = cs.repartitionable;
    for (size_t i = 0; i < cat.offerings().size(); ++i) {
      const auto& o = cat.offerings()[i];
      if (!cs.instance_type.empty() && o.instance_type == cs.instance_type && o.region == cs.region) {
        c.reserved_offering = OfferingId(static_cast<uint32_t>(i));
        break;
      }
    }
    c.first_node = NodeId(static_cast<uint32_t>(fleet_->nodes_.size()));
    cluster_pool_.clear();
    for (size_t g = 0; g < cs.nodes.size(); ++g) MERIDIAN_RETURN_IF_ERROR(AddGroup(ci, g, c));
    c.node_count = static_cast<uint32_t>(fleet_->nodes_.size()) - c.first_node.value();
    fleet_->clusters_in_[c.region.index()].push_back(c.id);
    fleet_->clusters_.push_back(std::move(c));
    return Status::Ok();
  }

  Result<std::vector<MigInstance>> Layout(const std::string& path, const NodeGroup& g,
                                          const catalog::GpuModel& gpu) {
    std::vector<uint8_t> profiles;
    for (size_t k = 0; k < g.mig.size(); ++k) {
      auto it = std::find_if(gpu.mig_profiles.begin(), gpu.mig_profiles.end(),
                             [&](const catalog::MigProfile& p) { return p.name == g.mig[k]; });
      if (it == gpu.mig_profiles.end()) {
        std::string known;
        for (const auto& p : gpu.mig_profiles) known += (known.empty() ? "" : ", ") + p.name;
        return Status::Invalid(path + ".mig[" + std::to_string(k) + "]: \"" + g.mig[k] +
                               "\" is not a MIG profile of " + gpu.name +
                               (known.empty() ? " (it has no MIG)" : " (known: " + known + ")"));
      }
      profiles.push_back(static_cast<uint8_t>(it - gpu.mig_profiles.begin()));
    }
    std::vector<MigShape> shapes = PlaceMigLayout(gpu, profiles);
    if (shapes.empty()) {
      return Status::Invalid(path + ".mig: these instances cannot be placed together on one " +
                             gpu.name + " (8 memory slices; placements per profile overlap)");
    }
    std::vector<MigInstance> out;
    for (size_t k = 0; k < profiles.size(); ++k) out.push_back({profiles[k], shapes[k]});
    return out;
  }

  Status AddGroup(size_t ci, size_t gi, const Cluster& c) {
    const catalog::Catalog& cat = *fleet_->catalog_;
    const ClusterSpec& cs = spec_.clusters[ci];
    const NodeGroup& g = cs.nodes[gi];
    const std::string path = Path(ci) + ".nodes[" + std::to_string(gi) + "]";
    GpuModelId model = GpuModelId::Invalid();
    std::vector<MigInstance> layout;
    if (!g.gpu.empty()) {
      model = FindGpuModelId(cat, g.gpu);
      if (!model.valid()) {
        return Status::Invalid(path + ".gpu: \"" + g.gpu + "\" is not a GPU model in the catalog");
      }
      if (!g.mig.empty()) {
        auto l = Layout(path, g, cat.gpus()[model.index()]);
        if (!l.ok()) return l.status();
        layout = std::move(l).value();
      }
    }
    if (g.gpus < 0 || g.gpus > kMaxGpusPerNode) {
      return Status::Invalid(path + ".gpus: \"" + std::to_string(g.gpus) + "\" must be 0.." +
                             std::to_string(kMaxGpusPerNode));
    }
    if (g.count < 0) return Status::Invalid(path + ".count: must be >= 0");
    std::string prefix = g.name_prefix;
    if (prefix.empty()) {
      prefix = g.gpu.empty() ? "cpu" : g.gpu;
      std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      prefix += "-";
    }
    PoolId mpool = ModelPool(model);
    uint16_t mkey = model.valid() ? model.value() : 0xffff;
    auto [it, fresh] = cluster_pool_.emplace(mkey, PoolId::Invalid());
    if (fresh) {
      it->second = NewPool(model, c.id, c.region);
      if (model.valid()) fleet_->cluster_pools_[model.index()].push_back(it->second);
    }
    PoolId cpool = it->second;
    int max_span = 0;
    for (const MigInstance& m : layout) max_span = std::max<int>(max_span, m.shape.span);
    for (PoolId p : {mpool, cpool}) {
      Pool& pool = fleet_->pools_[p.index()];
      pool.max_gpus_per_node = std::max(pool.max_gpus_per_node, layout.empty() ? g.gpus : 0);
      pool.max_mig_span = std::max(pool.max_mig_span, max_span);
    }
    if (model.valid() && g.count > 0) fleet_->regions_with_model_[model.index()].set(c.region.index());
    if (g.count > 0) {
      uint32_t gi_index = static_cast<uint32_t>(fleet_->groups_.size());
      fleet_->groups_.push_back({c.id, cpool, model,
                                 NodeId(static_cast<uint32_t>(fleet_->nodes_.size())),
                                 static_cast<uint32_t>(g.count), g.driver});
      fleet_->groups_of_[model.valid() ? model.index() : cat.gpus().size()].push_back(gi_index);
    }
    for (int k = 0; k < g.count; ++k) {
      Node n;
      n.id = NodeId(static_cast<uint32_t>(fleet_->nodes_.size()));
      n.name = g.names.size() == static_cast<size_t>(g.count)
                   ? g.names[static_cast<size_t>(k)]
                   : cs.name + "-" + prefix + std::to_string(name_index_[cs.name + "\n" + prefix]++);
      n.cluster = c.id;
      n.region = c.region;
      n.gpu_model = model;
      n.gpus = g.gpus;
      n.vcpus = g.vcpus;
      n.ram_mib = static_cast<int64_t>(std::llround(g.ram_gib * 1024.0));
      n.mig_gpus = layout.empty() ? 0 : (g.gpus == 64 ? ~0ull : (1ull << g.gpus) - 1);
      n.mig = layout;
      n.model_pool = mpool;
      n.cluster_pool = cpool;
      n.group = static_cast<uint32_t>(gi);
      fleet_->nodes_.push_back(std::move(n));
    }
    return Status::Ok();
  }

  const FleetSpec& spec_;
  std::shared_ptr<Fleet> fleet_;
  std::map<uint16_t, PoolId> cluster_pool_;  // GPU model -> pool, current cluster
  std::map<std::string, int> name_index_;
};

Result<std::shared_ptr<const Fleet>> Fleet::Build(const FleetSpec& spec,
                                                  std::shared_ptr<const catalog::Catalog> catalog) {
  if (!catalog) return Status::Invalid("fleet: no catalog");
  return FleetBuilder(spec, std::move(catalog)).Build();
}

PoolId Fleet::ModelPool(GpuModelId m) const {
  return m.index() < model_pool_.size() ? model_pool_[m.index()] : PoolId::Invalid();
}

const std::vector<PoolId>& Fleet::ClusterPools(GpuModelId m) const {
  static const std::vector<PoolId> kNone;
  return m.index() < cluster_pools_.size() ? cluster_pools_[m.index()] : kNone;
}

int Fleet::FewestMaxGpus(GpuModelId m) const {
  return m.index() < fewest_max_gpus_.size() ? fewest_max_gpus_[m.index()] : 0;  // 0: look
}

const std::vector<uint32_t>& Fleet::GroupsOf(GpuModelId m) const {
  static const std::vector<uint32_t> kNone;
  if (groups_of_.empty()) return kNone;
  return m.valid() && m.index() + 1 < groups_of_.size() ? groups_of_[m.index()] : groups_of_.back();
}

const RegionSet& Fleet::RegionsWithModel(GpuModelId m) const {
  static const RegionSet kNone;
  return m.index() < regions_with_model_.size() ? regions_with_model_[m.index()] : kNone;
}

const std::vector<ClusterId>& Fleet::ClustersIn(RegionId r) const {
  static const std::vector<ClusterId> kNone;
  return r.index() < clusters_in_.size() ? clusters_in_[r.index()] : kNone;
}

std::vector<NodeCapacity> Fleet::Capacities() const {
  std::vector<NodeCapacity> caps;
  caps.reserve(nodes_.size());
  for (const Node& n : nodes_) {
    NodeCapacity c;
    c.gpus = n.gpus;
    c.mig_gpus = n.mig_gpus;
    if (!clusters_[n.cluster.index()].repartitionable) {
      for (const MigInstance& m : n.mig) c.mig_layout.push_back(m.shape);
    }
    c.vcpus = n.vcpus;
    c.ram_mib = n.ram_mib;
    c.pools = {n.model_pool, n.cluster_pool};
    caps.push_back(std::move(c));
  }
  return caps;
}

Result<Ledger> Fleet::NewLedger() const { return Ledger::Create(Capacities(), pools_.size()); }

}  // namespace meridian::sched
