// ValidateFleetAgainstCatalog and PriceCluster: the checks on a parsed fleet
// that need the catalog, and what reserved capacity costs.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/enums.h"
#include "spec/fleet.h"
#include "spec/reader.h"
#include "spec/suggest.h"

namespace meridian::spec {

namespace {

std::string ClusterPath(size_t i) { return IndexPath("clusters", i); }
std::string GroupPath(size_t i, size_t j) { return IndexPath(ClusterPath(i) + ".nodes", j); }

std::string ShowList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? ", " : "") + items[i];
  return out + "]";
}

std::string ShowNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

const catalog::MigProfile* FindProfile(const catalog::GpuModel& g, const std::string& name) {
  for (const catalog::MigProfile& p : g.mig_profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> MigModels(const catalog::Catalog& c) {
  std::vector<std::string> names;
  for (const catalog::GpuModel& g : c.gpus()) {
    if (!g.mig_profiles.empty()) names.push_back(g.name);
  }
  return names;
}

// Whether the layout's instances fit one GPU: their compute and memory slices
// within the model's (those of its largest profile: 7 and 8 on A100/H100),
// and no profile more often than its max_instances. Where the instances sit
// is the placement check's question, not this one.
void CheckMigCapacity(Findings& f, const std::string& field, const catalog::GpuModel& g,
                      const std::vector<std::string>& layout) {
  int compute = 0, memory = 0, max_compute = 0, max_memory = 0;
  std::map<std::string, int> uses;
  for (const catalog::MigProfile& p : g.mig_profiles) {
    max_compute = std::max(max_compute, p.compute_slices);
    max_memory = std::max(max_memory, p.memory_slices);
  }
  for (const std::string& name : layout) {
    const catalog::MigProfile* p = FindProfile(g, name);
    if (p == nullptr) return;  // reported by name already
    compute += p->compute_slices;
    memory += p->memory_slices;
    ++uses[name];
  }
  const std::string shown = ShowList(layout);
  if (compute > max_compute) {
    f.Add(field, shown + " needs " + std::to_string(compute) + " compute slices; one " + g.name +
                     " has " + std::to_string(max_compute));
  }
  if (memory > max_memory) {
    f.Add(field, shown + " needs " + std::to_string(memory) + " memory slices; one " + g.name +
                     " has " + std::to_string(max_memory));
  }
  for (const auto& [name, n] : uses) {
    const catalog::MigProfile* p = FindProfile(g, name);
    if (n <= p->max_instances) continue;
    f.Add(field, shown + " has " + std::to_string(n) + " x " + name + "; at most " +
                     std::to_string(p->max_instances) + " fit on one " + g.name);
  }
}

void CheckMig(Findings& f, const catalog::Catalog& c, const std::string& path,
              const NodeGroup& group) {
  if (group.mig.empty()) return;
  const catalog::GpuModel* g = c.FindGpu(group.gpu);
  if (g == nullptr) return;  // reported as an unknown model
  const std::string field = JoinPath(path, "mig");
  if (g->mig_profiles.empty()) {
    f.Add(field, ShowList(group.mig) + " but " + g->name +
                     " has no MIG profiles; drop mig or use a MIG-capable model (" +
                     JoinAlternatives(MigModels(c)) + ")");
    return;
  }
  std::vector<std::string> names;
  for (const catalog::MigProfile& p : g->mig_profiles) names.push_back(p.name);
  bool all_known = true;
  for (size_t k = 0; k < group.mig.size(); ++k) {
    if (FindProfile(*g, group.mig[k]) != nullptr) continue;
    all_known = false;
    f.Add(IndexPath(field, k), "\"" + group.mig[k] + "\" is not a MIG profile of " + g->name +
                                   SuggestFrom(group.mig[k], names, "profiles"));
  }
  if (all_known) CheckMigCapacity(f, field, *g, group.mig);
}

// The offerings of `instance_type` in `region` (one per zone where priced per
// zone), in catalog order.
std::vector<const catalog::Offering*> OfferingsOf(const catalog::Catalog& c,
                                                  const std::string& region,
                                                  const std::string& instance_type) {
  std::vector<const catalog::Offering*> out;
  for (const catalog::Offering& o : c.offerings()) {
    if (o.region == region && o.instance_type == instance_type) out.push_back(&o);
  }
  return out;
}

// Why `instance_type` cannot be reserved in the cluster's region: sold only
// elsewhere (listing where), or not at all (suggesting what the region sells).
std::string NotSoldReason(const catalog::Catalog& c, const ClusterSpec& cluster) {
  std::set<std::string> elsewhere, here;
  for (const catalog::Offering& o : c.offerings()) {
    if (o.instance_type == cluster.instance_type) elsewhere.insert(o.region);
    if (o.region == cluster.region) here.insert(o.instance_type);
  }
  std::string why = "\"" + cluster.instance_type + "\" is not sold in " + cluster.region +
                    " according to the catalog";
  if (!elsewhere.empty()) {
    std::vector<std::string> regions(elsewhere.begin(), elsewhere.end());
    if (regions.size() > 6) {
      regions.resize(6);
      regions.push_back("others");
    }
    return why + "; it is sold in " + JoinAlternatives(regions);
  }
  if (here.empty()) return why;
  std::vector<std::string> types(here.begin(), here.end());
  std::vector<std::string> near = CloseMatches(cluster.instance_type, types);
  if (!near.empty()) return why + "; did you mean " + JoinAlternatives(near) + "?";
  return why;
}

// The reserved instance type and whether the nodes match it.
void CheckReserved(Findings& f, const catalog::Catalog& c, size_t i, const ClusterSpec& cluster) {
  if (cluster.instance_type.empty() || c.FindRegion(cluster.region) == nullptr) return;
  std::vector<const catalog::Offering*> sold = OfferingsOf(c, cluster.region, cluster.instance_type);
  if (sold.empty()) {
    f.Add(JoinPath(ClusterPath(i), "instance_type"), NotSoldReason(c, cluster));
    return;
  }
  const catalog::Offering& o = *sold.front();
  for (size_t j = 0; j < cluster.nodes.size(); ++j) {
    const NodeGroup& g = cluster.nodes[j];
    const std::string path = GroupPath(i, j);
    if (g.gpu != o.gpu_model) {
      f.Add(JoinPath(path, g.gpu.empty() ? "gpus" : "gpu"),
            "\"" + (g.gpu.empty() ? std::string("none") : g.gpu) + "\" but the reserved " +
                o.instance_type + " has " + std::to_string(o.gpu_count) + " x " + o.gpu_model);
    } else if (g.gpus != o.gpu_count) {
      f.Add(JoinPath(path, "gpus"), "\"" + std::to_string(g.gpus) + "\" but the reserved " +
                                        o.instance_type + " has " + std::to_string(o.gpu_count) +
                                        " GPUs per node");
    }
    if (g.vcpus > o.vcpus) {
      f.Add(JoinPath(path, "vcpus"), "\"" + std::to_string(g.vcpus) + "\" is more than the " +
                                         std::to_string(o.vcpus) + " of " + o.instance_type);
    }
    if (g.ram_gib > o.ram_gib) {
      f.Add(JoinPath(path, "ram_gib"),
            "\"" + ShowNumber(g.ram_gib) + "\" is more than the " + ShowNumber(o.ram_gib) +
                " GiB of " + o.instance_type);
    }
  }
}

}  // namespace

Status ValidateFleetAgainstCatalog(const FleetSpec& fleet, const catalog::Catalog& catalog) {
  Findings f(fleet.origin);
  for (size_t i = 0; i < fleet.clusters.size(); ++i) {
    const ClusterSpec& cluster = fleet.clusters[i];
    if (std::optional<std::string> why = UnknownRegion(catalog, cluster.region)) {
      f.Add(JoinPath(ClusterPath(i), "region"), *why);
    }
    for (size_t j = 0; j < cluster.nodes.size(); ++j) {
      const NodeGroup& g = cluster.nodes[j];
      if (g.gpu.empty()) continue;
      if (std::optional<std::string> why = UnknownGpuModel(catalog, g.gpu)) {
        f.Add(JoinPath(GroupPath(i, j), "gpu"), *why);
        continue;
      }
      CheckMig(f, catalog, GroupPath(i, j), g);
    }
    if (cluster.pricing == CapacityPricing::kReserved) CheckReserved(f, catalog, i, cluster);
    if (cluster.slurm) {
      for (const auto& [type, model] : cluster.slurm->gpu_types) {
        if (std::optional<std::string> why = UnknownGpuModel(catalog, model)) {
          f.Add(JoinPath(ClusterPath(i), "slurm.gpu_types." + type), *why);
        }
      }
    }
  }
  return f.ToStatus();
}

Result<CapacityPrice> PriceCluster(const FleetSpec& fleet, size_t cluster_index,
                                   const catalog::Catalog& catalog) {
  const ClusterSpec& cluster = fleet.clusters.at(cluster_index);
  CapacityPrice price;
  price.pricing = cluster.pricing;
  if (cluster.pricing == CapacityPricing::kOwned) {
    price.per_gpu_hour = cluster.gpu_hour.value_or(Money());
    price.source = cluster.gpu_hour ? "gpu_hour_usd in the fleet file"
                                    : "no GPUs, so no GPU-hour cost";
    return price;
  }
  std::vector<const catalog::Offering*> sold =
      OfferingsOf(catalog, cluster.region, cluster.instance_type);
  if (sold.empty()) {
    return Status::Invalid(LocateFleetField(fleet, JoinPath(ClusterPath(cluster_index),
                                                            "instance_type")) +
                           ": " + NotSoldReason(catalog, cluster));
  }
  // The lowest 1-year reserved rate over the region's zones, else the lowest
  // on-demand rate.
  const catalog::Offering* best = nullptr;
  bool reserved = false;
  for (const catalog::Offering* o : sold) {
    if (!o->reserved_1y_per_hour) continue;
    if (!reserved || *o->reserved_1y_per_hour < *best->reserved_1y_per_hour) best = o;
    reserved = true;
  }
  if (!reserved) {
    for (const catalog::Offering* o : sold) {
      if (best == nullptr || o->on_demand_per_hour < best->on_demand_per_hour) best = o;
    }
  }
  const Money node_hour = reserved ? *best->reserved_1y_per_hour : best->on_demand_per_hour;
  price.per_node_hour = node_hour;
  price.per_gpu_hour = best->gpu_count > 0 ? Money::FromMicros(node_hour.micros() / best->gpu_count)
                                           : Money();
  price.paid_when_idle = true;
  price.source = std::string(reserved ? "catalog 1-year reserved rate"
                                      : "catalog on-demand rate (no 1-year reserved rate listed)") +
                 " of " + best->instance_type + " in " + best->region +
                 (best->zone.empty() ? "" : " (zone " + best->zone + ")");
  return price;
}

}  // namespace meridian::spec
