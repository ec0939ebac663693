// `meridian serve` on a fleet file's cluster (the config's `fleet:`): the one
// cluster's backend becomes the daemon's, and its region and GPU-hour price
// the reconciler's. `backend: slurm` drives Slurm (docs/slurm.md);
// `backend: kubernetes` applies each attempt as a Job with DRA claims through
// kubectl, with the config's `kubernetes:` settings (docs/kubernetes.md).
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "control/backend.h"
#include "control/reconciler.h"

namespace meridian::cli {

// serve.yaml's `kubernetes:` block (read with the rest of the config).
struct KubernetesServeSettings {
  std::string kubeconfig;  // "" = $KUBECONFIG, then ~/.kube/config; none: export-only
  std::string kubectl = "kubectl";
  std::string ns = "default";
  std::string image;  // every attempt's container image; required
};

struct FleetBackend {
  std::unique_ptr<control::Backend> backend;
  std::string note;  // a line for the operator at start ("" = none)
};

// `config` names serve.yaml in errors; `state_dir` is the backend's own;
// `max_log_bytes` is node.max_log_bytes (the Slurm backend cuts logs there,
// the Kubernetes backend where it copies each pod log).
Result<FleetBackend> BackendFromFleet(const std::string& config, const std::string& fleet_path,
                                      const KubernetesServeSettings& k8s,
                                      std::shared_ptr<const catalog::Catalog> catalog,
                                      const std::string& state_dir, int64_t max_log_bytes,
                                      control::ReconcilerOptions* ro);

}  // namespace meridian::cli
