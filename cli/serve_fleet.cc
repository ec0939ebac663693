#include "cli/serve_fleet.h"

#include <cctype>
#include <filesystem>
#include <vector>

#include "backends/kubernetes/backend.h"
#include "backends/kubernetes/kubectl.h"
#include "backends/slurm/slurm.h"
#include "spec/fleet.h"

namespace meridian::cli {
namespace {

// meridian-log-relay beside this program (both are installed together).
std::string LogRelayPath() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "meridian-log-relay" : (self.parent_path() / "meridian-log-relay").string();
}

Result<FleetBackend> Slurm(const std::string& fleet_path, const FleetSpec& fleet,
                           const catalog::Catalog& cat, const std::string& state_dir,
                           int64_t max_log_bytes) {
  const ClusterSpec& cl = fleet.clusters[0];
  if (!cl.slurm) {
    return Status::Invalid(spec::LocateFleetField(fleet, "clusters[0]") +
                           ": slurm: is required to run the cluster; name its partitions "
                           "(slurm: {partitions: [gpu], conf: /etc/slurm/slurm.conf})");
  }
  backends::SlurmBackendOptions so;
  so.cluster = cl.name;
  so.partitions = cl.slurm->partitions;
  so.slurm_conf = cl.slurm->conf;
  so.bin_dir = cl.slurm->bin_dir;
  so.state_dir = state_dir;
  so.max_log_bytes = max_log_bytes;
  so.log_relay = LogRelayPath();
  auto lower = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  for (const auto& g : cat.gpus()) so.gpu_models[lower(g.name)] = g.name;
  for (const auto& [type, model] : cl.slurm->gpu_types) so.gpu_models[lower(type)] = model;
  // A node group with a MIG layout declares how the GPUs behind MIG-typed
  // GRES are split; one such group per cluster.
  for (size_t i = 0; i < cl.nodes.size(); ++i) {
    const NodeGroup& g = cl.nodes[i];
    if (g.mig.empty()) continue;
    if (so.mig) {
      return Status::Invalid(spec::LocateFleetField(fleet, "clusters[0].nodes[" + std::to_string(i) + "].mig") +
                             ": a Slurm cluster has one MIG layout (one node group with mig:)");
    }
    so.mig = backends::SlurmBackendOptions::MigNodes{g.gpu, g.gpus, g.mig};
  }
  auto b = backends::MakeSlurmBackend(so);
  if (!b.ok()) return b.status().WithContext(fleet_path + ": clusters[0]");
  return FleetBackend{std::move(b).value(), ""};
}

// The kubernetes backend declares one kind of node (model, GPUs, vCPUs,
// RAM, MIG layout), so the cluster has one node group. A MIG placement is
// claimed by its profile: the DRA driver picks the instance on the node.
Result<FleetBackend> Kubernetes(const std::string& config, const FleetSpec& fleet,
                                const KubernetesServeSettings& k8s,
                                std::shared_ptr<const catalog::Catalog> catalog,
                                int64_t max_log_bytes) {
  const ClusterSpec& cl = fleet.clusters[0];
  if (cl.nodes.size() != 1) {
    return Status::Invalid(spec::LocateFleetField(fleet, "clusters[0].nodes") +
                           ": a kubernetes cluster under meridian serve has one "
                           "node group; this one has " + std::to_string(cl.nodes.size()));
  }
  const NodeGroup& g = cl.nodes[0];
  if (k8s.image.empty()) {
    return Status::Invalid(config + ": kubernetes.image: is required to run a kubernetes cluster "
                           "(the container image of every attempt, e.g. "
                           "nvcr.io/nvidia/pytorch:24.05-py3)");
  }
  auto kubeconfig = backends::k8s::FindKubeconfig(k8s.kubeconfig);
  if (!kubeconfig.ok()) return kubeconfig.status().WithContext(config + ": kubernetes.kubeconfig");
  backends::k8s::KubernetesBackendOptions o;
  o.kubeconfig = *kubeconfig;
  o.kubectl = k8s.kubectl;
  o.ns = k8s.ns;
  o.image = k8s.image;
  o.gpu_model = g.gpu;
  o.gpus = g.gpus;
  o.nodes = g.count;
  o.vcpus = g.vcpus;
  o.ram_gib = g.ram_gib;
  o.mig = g.mig;
  o.max_log_bytes = max_log_bytes;
  o.catalog = std::move(catalog);
  FleetBackend out{backends::k8s::MakeKubernetesBackend(o), ""};
  out.note = kubeconfig->empty()
                 ? "export-only: no kubeconfig (kubernetes.kubeconfig, $KUBECONFIG and "
                   "~/.kube/config name none); the nodes are not schedulable and jobs wait"
                 : "kubernetes: applying Jobs in namespace " + o.ns + " with --kubeconfig " +
                       *kubeconfig;
  return out;
}

}  // namespace

Result<FleetBackend> BackendFromFleet(const std::string& config, const std::string& fleet_path,
                                      const KubernetesServeSettings& k8s,
                                      std::shared_ptr<const catalog::Catalog> catalog,
                                      const std::string& state_dir, int64_t max_log_bytes,
                                      control::ReconcilerOptions* ro) {
  auto fleet = spec::LoadFleetFile(fleet_path);
  if (!fleet.ok()) return fleet.status();
  MERIDIAN_RETURN_IF_ERROR(spec::ValidateFleetAgainstCatalog(*fleet, *catalog));
  const bool one = fleet->clusters.size() == 1;
  const std::string backend = one ? fleet->clusters[0].backend : "";
  if (!one || (backend != "slurm" && backend != "kubernetes")) {
    return Status::Invalid(fleet_path + ": clusters: meridian serve runs one cluster with backend: "
                           "slurm or kubernetes; this file has " +
                           std::to_string(fleet->clusters.size()) + " cluster(s)" +
                           (fleet->clusters.empty() ? "" : ", the first with backend: " +
                                                               fleet->clusters[0].backend));
  }
  const ClusterSpec& cl = fleet->clusters[0];
  ro->region = cl.region;
  ro->gpu_hour_usd = cl.gpu_hour ? cl.gpu_hour->dollars() : 0;
  ro->vcpu_hour_usd = cl.vcpu_hour ? cl.vcpu_hour->dollars() : kDefaultVcpuHourUsd;
  ro->ram_gib_hour_usd = cl.ram_gib_hour ? cl.ram_gib_hour->dollars() : kDefaultRamGibHourUsd;
  if (backend == "slurm") return Slurm(fleet_path, *fleet, *catalog, state_dir, max_log_bytes);
  return Kubernetes(config, *fleet, k8s, std::move(catalog), max_log_bytes);
}

}  // namespace meridian::cli
