// ParseFleet and LoadFleetFile: the keys of a fleet file, its clusters and
// their node groups, and the checks that need only the file.
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/enums.h"
#include "spec/blocks.h"
#include "spec/fleet.h"
#include "spec/reader.h"

namespace meridian::spec {

namespace {

const std::vector<std::string> kFleetKeys = {"clusters", "elastic"};
const std::vector<std::string> kClusterKeys = {
    "name",    "region",          "pricing", "gpu_hour_usd", "vcpu_hour_usd", "ram_gib_hour_usd",
    "instance_type", "backend", "repartitionable", "slurm", "nodes"};
const std::vector<std::string> kSlurmKeys = {"partitions", "conf", "bin_dir", "gpu_types"};
const std::vector<std::string> kNodeKeys = {"count",   "gpu", "gpus",        "vcpus",
                                            "ram_gib", "mig", "name_prefix", "driver"};
const std::vector<std::string> kBackends = {"local", "slurm", "kubernetes"};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Which of a group's keys were written, and which of them read without an
// error, with their nodes for locating cross-check messages.
struct NodeKeys {
  std::set<std::string> present;
  std::map<std::string, YAML::Node> valid;
  bool ok(const std::string& key) const { return valid.count(key) > 0; }
};

void ReadNodeKey(SpecReader& r, const std::string& key, const YAML::Node& v,
                 const std::string& p, NodeGroup& out) {
  if (key == "count") {
    out.count = r.WholeNumber(v, p, 1).value_or(out.count);
  } else if (key == "gpu") {
    out.gpu = r.String(v, p).value_or("");
  } else if (key == "gpus") {
    std::optional<int> n = r.WholeNumber(v, p, 0);
    if (n && *n > kMaxGpusPerNode) {
      r.Error(v, p, SpecReader::Show(v) + " is more than " + std::to_string(kMaxGpusPerNode) +
                        " GPUs per node; split the machine into several nodes");
      n.reset();
    }
    out.gpus = n.value_or(0);
  } else if (key == "vcpus") {
    out.vcpus = r.WholeNumber(v, p, 0).value_or(0);
  } else if (key == "ram_gib") {
    out.ram_gib = r.Number(v, p, {0, false}).value_or(0);
  } else if (key == "mig") {
    out.mig = r.StringList(v, p, "[3g.40gb, 2g.20gb, 2g.20gb]");
  } else if (key == "name_prefix") {
    out.name_prefix = r.Name(v, p).value_or("");
  } else if (key == "driver") {
    ReadDriver(r, v, p, out.driver);
  }
}

// Checks between a group's keys: required keys, a GPU model with GPUs, MIG
// only on GPUs, a CPU node with CPUs.
void CheckNodeGroup(SpecReader& r, const YAML::Node& node, const std::string& path,
                    const NodeKeys& k, const NodeGroup& g) {
  if (!k.present.count("count")) {
    r.Error(node, JoinPath(path, "count"), "is required (how many nodes)");
  }
  if (!k.present.count("gpus")) {
    r.Error(node, JoinPath(path, "gpus"), "is required (GPUs per node; 0 for a CPU-only node)");
    return;
  }
  if (!k.ok("gpus")) return;
  const YAML::Node& gpus = k.valid.at("gpus");
  if (g.gpus > 0 && (!k.present.count("gpu") || (k.ok("gpu") && g.gpu.empty()))) {
    r.Error(gpus, JoinPath(path, "gpu"),
            "is required with gpus: " + std::to_string(g.gpus) +
                "; name the catalog GPU model (e.g. A100-80GB)");
  }
  if (g.gpus > 0) return;
  if (k.ok("gpu") && !g.gpu.empty()) {
    r.Error(gpus, JoinPath(path, "gpus"),
            "\"0\" but gpu is \"" + g.gpu +
                "\"; give the GPUs per node, or drop gpu for a CPU-only node");
    return;
  }
  if (k.ok("mig") && !g.mig.empty()) {
    r.Error(k.valid.at("mig"), JoinPath(path, "mig"),
            "a MIG layout on a node without GPUs (gpus: 0); drop mig or give gpu and gpus");
  }
  if (!k.present.count("vcpus")) {
    r.Error(node, JoinPath(path, "vcpus"),
            "is required for a CPU-only node (gpus: 0); give a whole number >= 1");
  } else if (k.ok("vcpus") && g.vcpus == 0) {
    r.Error(k.valid.at("vcpus"), JoinPath(path, "vcpus"),
            "\"0\" on a CPU-only node (gpus: 0); give a whole number >= 1");
  }
}

void ReadNodeGroup(SpecReader& r, const YAML::Node& node, const std::string& path,
                   NodeGroup& out) {
  NodeKeys k;
  bool is_map = ForEachKey(r, node, path, kNodeKeys,
                           [&](const std::string& key, const YAML::Node& v, const std::string& p) {
                             const size_t before = r.error_count();
                             k.present.insert(key);
                             ReadNodeKey(r, key, v, p, out);
                             if (r.error_count() == before) k.valid[key] = v;
                           });
  if (is_map) CheckNodeGroup(r, node, path, k, out);
}

// Fills empty prefixes ("a100-80gb-", "cpu-"; "a100-80gb-g2-" for a later
// group of the same model) and reports prefixes given twice in a cluster.
void SetNamePrefixes(SpecReader& r, const YAML::Node& nodes, const std::string& path,
                     std::vector<NodeGroup>& groups) {
  std::map<std::string, size_t> used;
  for (size_t j = 0; j < groups.size(); ++j) {
    if (groups[j].name_prefix.empty()) continue;
    auto [it, inserted] = used.emplace(groups[j].name_prefix, j);
    if (inserted) continue;
    const YAML::Node at = nodes[j].IsMap() && nodes[j]["name_prefix"] ? nodes[j]["name_prefix"]
                                                                       : nodes[j];
    r.Error(at, JoinPath(IndexPath(path, j), "name_prefix"),
            "\"" + groups[j].name_prefix + "\" is already used by " +
                IndexPath(path, it->second) + "; node names must be unique in a cluster");
  }
  for (size_t j = 0; j < groups.size(); ++j) {
    NodeGroup& g = groups[j];
    if (!g.name_prefix.empty()) continue;
    const std::string base = Lower(g.gpu.empty() ? "cpu" : g.gpu) + "-";
    std::string prefix = used.count(base) == 0 ? base : base + "g" + std::to_string(j) + "-";
    g.name_prefix = prefix;
    used.emplace(prefix, j);
  }
}

void ReadClusterKey(SpecReader& r, const std::string& key, const YAML::Node& v,
                    const std::string& p, ClusterSpec& out) {
  if (key == "name") {
    out.name = r.Name(v, p).value_or("");
  } else if (key == "region") {
    out.region = r.String(v, p).value_or("");
  } else if (key == "pricing") {
    std::optional<std::string> s = r.String(v, p);
    if (!s) return;
    if (*s == "owned") {
      out.pricing = CapacityPricing::kOwned;
    } else if (*s == "reserved") {
      out.pricing = CapacityPricing::kReserved;
    } else {
      r.Error(v, p, SpecReader::Show(v) + " is not a pricing; use owned or reserved");
    }
  } else if (key == "gpu_hour_usd") {
    if (std::optional<double> usd = r.Number(v, p, {0, false})) {
      out.gpu_hour = Money::FromDollars(*usd);
    }
  } else if (key == "vcpu_hour_usd") {
    if (std::optional<double> usd = r.Number(v, p, {0, false})) {
      out.vcpu_hour = Money::FromDollars(*usd);
    }
  } else if (key == "ram_gib_hour_usd") {
    if (std::optional<double> usd = r.Number(v, p, {0, false})) {
      out.ram_gib_hour = Money::FromDollars(*usd);
    }
  } else if (key == "instance_type") {
    out.instance_type = r.String(v, p).value_or("");
  } else if (key == "backend") {
    std::optional<std::string> s = r.String(v, p);
    if (!s) return;
    bool known = false;
    for (const std::string& b : kBackends) known = known || b == *s;
    if (!known) {
      r.Error(v, p, SpecReader::Show(v) + " is not a backend; use " + JoinAlternatives(kBackends));
      return;
    }
    out.backend = *s;
  } else if (key == "slurm") {
    SlurmSettings sl;
    bool has_partitions = false;
    const bool is_map = ForEachKey(r, v, p, kSlurmKeys,
               [&](const std::string& k, const YAML::Node& sv, const std::string& sp) {
                 if (k == "partitions") {
                   has_partitions = true;
                   if (!r.ExpectList(sv, sp, "[gpu]")) return;
                   if (sv.size() == 0) r.Error(sv, sp, "is empty; name at least one partition");
                   for (size_t i = 0; i < sv.size(); ++i) {
                     if (auto n = r.Name(sv[i], IndexPath(sp, i))) sl.partitions.push_back(*n);
                   }
                 } else if (k == "conf") {
                   sl.conf = r.String(sv, sp).value_or("");
                 } else if (k == "bin_dir") {
                   sl.bin_dir = r.String(sv, sp).value_or("");
                 } else if (k == "gpu_types") {
                   sl.gpu_types = r.StringMap(sv, sp);
                 }
               });
    if (is_map && !has_partitions) {
      r.Error(v, JoinPath(p, "partitions"), "is required; name at least one partition ([gpu])");
    }
    out.slurm = std::move(sl);
  } else if (key == "repartitionable") {
    out.repartitionable = r.Bool(v, p).value_or(false);
  } else if (key == "nodes") {
    if (!r.ExpectList(v, p, "[{count: 2, gpu: A100-80GB, gpus: 8}]")) return;
    if (v.size() == 0) r.Error(v, p, "is empty; list at least one node group");
    for (size_t j = 0; j < v.size(); ++j) {
      out.nodes.emplace_back();
      ReadNodeGroup(r, v[j], IndexPath(p, j), out.nodes.back());
    }
    SetNamePrefixes(r, v, p, out.nodes);
  }
}

// Which pricing keys go together: owned GPU capacity needs gpu_hour_usd,
// reserved capacity needs instance_type, and neither takes the other's key.
void CheckPricingKeys(SpecReader& r, const YAML::Node& node, const std::string& path,
                      const std::map<std::string, YAML::Node>& given, const ClusterSpec& c) {
  const bool has_gpus = [&] {
    for (const NodeGroup& g : c.nodes) {
      if (g.gpus > 0) return true;
    }
    return false;
  }();
  if (c.pricing == CapacityPricing::kOwned) {
    if (!given.count("gpu_hour_usd") && has_gpus) {
      r.Error(node, JoinPath(path, "gpu_hour_usd"),
              "is required for owned GPUs (their cost per GPU-hour used, in US dollars; 0 if "
              "you count them free)");
    }
    if (given.count("instance_type")) {
      r.Error(given.at("instance_type"), JoinPath(path, "instance_type"),
              "belongs only with pricing: reserved; owned capacity is priced by gpu_hour_usd");
    }
    return;
  }
  if (!given.count("instance_type")) {
    r.Error(node, JoinPath(path, "instance_type"),
            "is required with pricing: reserved; name the catalog instance type reserved "
            "(e.g. p4de.24xlarge)");
  }
  for (const char* key : {"gpu_hour_usd", "vcpu_hour_usd", "ram_gib_hour_usd"}) {
    if (given.count(key)) {
      r.Error(given.at(key), JoinPath(path, key),
              "belongs only with pricing: owned; reserved capacity is priced from the catalog "
              "by instance_type");
    }
  }
}

void ReadCluster(SpecReader& r, const YAML::Node& node, const std::string& path,
                 ClusterSpec& out) {
  std::map<std::string, YAML::Node> given;
  bool pricing_ok = true;
  if (!ForEachKey(r, node, path, kClusterKeys,
                  [&](const std::string& key, const YAML::Node& v, const std::string& p) {
                    const size_t before = r.error_count();
                    given[key] = v;
                    ReadClusterKey(r, key, v, p, out);
                    if (key == "pricing") pricing_ok = r.error_count() == before;
                  })) {
    return;
  }
  for (const char* required : {"name", "region", "nodes"}) {
    if (!given.count(required)) r.Error(node, JoinPath(path, required), "is required");
  }
  if (pricing_ok) CheckPricingKeys(r, node, path, given, out);
  if (out.backend != "slurm" && given.count("slurm")) {
    r.Error(given.at("slurm"), JoinPath(path, "slurm"),
            "belongs only with backend: slurm (this cluster's backend is " + out.backend + ")");
  }
}

void CheckUniqueClusterNames(SpecReader& r, const YAML::Node& clusters,
                             const std::vector<ClusterSpec>& specs) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name.empty()) continue;
    auto [it, inserted] = first.emplace(specs[i].name, i);
    if (inserted) continue;
    const YAML::Node at = clusters[i]["name"];
    r.Error(at, JoinPath(IndexPath("clusters", i), "name"),
            "\"" + specs[i].name + "\" is already used by " + IndexPath("clusters", it->second) +
                "; cluster names must be unique in a fleet");
  }
}

}  // namespace

Result<FleetSpec> ParseFleet(std::string_view yaml, std::string_view source_name) {
  FleetSpec fleet;
  fleet.origin.source = std::string(source_name);
  SpecReader r(fleet.origin.source);
  r.BeginJob("", &fleet.origin.marks);
  std::optional<YAML::Node> doc =
      LoadOneDocument(r, yaml, "a fleet file needs clusters: [...]",
                      "list every cluster under one clusters:");
  if (!doc) return r.ToStatus();
  const YAML::Node& root = *doc;
  std::optional<YAML::Node> clusters_key;
  if (!ForEachKey(r, root, "", kFleetKeys,
                  [&](const std::string& key, const YAML::Node& v, const std::string& p) {
                    if (key == "elastic") fleet.elastic = r.Bool(v, p).value_or(true);
                    if (key == "clusters") clusters_key = v;
                  })) {
    return r.ToStatus();
  }
  const YAML::Node clusters = clusters_key.value_or(YAML::Node());
  if (!clusters_key) {
    r.Error(root, "clusters",
            "is required; list the owned or reserved clusters (clusters: [] for none)");
  } else if (r.ExpectList(clusters, "clusters", "[{name: onprem-a, region: ..., nodes: [...]}]")) {
    if (clusters.size() == 0 && !fleet.elastic) {
      r.Error(clusters, "clusters",
              "is empty and elastic is false; the fleet would have no capacity");
    }
    for (size_t i = 0; i < clusters.size(); ++i) {
      fleet.clusters.emplace_back();
      ReadCluster(r, clusters[i], IndexPath("clusters", i), fleet.clusters.back());
    }
    CheckUniqueClusterNames(r, clusters, fleet.clusters);
  }
  if (!r.ok()) return r.ToStatus();
  return fleet;
}

Result<FleetSpec> LoadFleetFile(const std::string& path) {
  Result<std::string> text = ReadSpecFile(path);
  if (!text.ok()) return text.status();
  return ParseFleet(*text, path);
}

std::string LocateFleetField(const FleetSpec& fleet, const std::string& field) {
  return LocateInOrigin(fleet.origin, field);
}

}  // namespace meridian::spec
