// Where a placement's pods may run, as node labels and taints: the region
// and zone in the well-known labels every cloud's Kubernetes sets
// (topology.kubernetes.io/region, topology.kubernetes.io/zone), and the
// capacity type in each managed service's own label (docs/kubernetes.md
// cites each):
//
//   provider  spot                                       flex-start                          on-demand / reserved
//   gcp       cloud.google.com/gke-spot=true             cloud.google.com/gke-flex-start=true  gke-spot and gke-flex-start absent
//   aws       eks.amazonaws.com/capacityType=SPOT        (not sold)                          eks.amazonaws.com/capacityType=ON_DEMAND
//   azure     kubernetes.azure.com/scalesetpriority=spot (not sold)                          scalesetpriority not spot
//
// Tolerations: the spot and flex-start taints these services may put on such
// nodes, and nvidia.com/gpu (GPU node pools' usual taint) for GPU pods.
// Owned fleet clusters get none of the cloud labels: their region is only
// the catalog region nearest the machines.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/kubernetes/placement.h"
#include "core/status.h"

namespace meridian::backends::k8s {

struct NodeRequirement {  // one matchExpressions entry
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
};

struct Toleration {
  std::string key;
  std::string op;     // Equal | Exists
  std::string value;  // Equal only
  std::string effect;
};

struct NodeSelection {
  std::map<std::string, std::string> selector;  // nodeSelector (sorted keys)
  std::vector<NodeRequirement> required;        // requiredDuringScheduling, one term
  std::vector<Toleration> tolerations;
};

// Errors (kInvalidArgument): a pricing model the provider's Kubernetes
// service cannot select (flex-start outside GKE).
Result<NodeSelection> NodeSelectionFor(const Placement& p);

}  // namespace meridian::backends::k8s
