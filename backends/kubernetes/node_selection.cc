#include "backends/kubernetes/node_selection.h"

namespace meridian::backends::k8s {

namespace {

constexpr char kGkeSpot[] = "cloud.google.com/gke-spot";
constexpr char kGkeFlexStart[] = "cloud.google.com/gke-flex-start";
constexpr char kEksCapacityType[] = "eks.amazonaws.com/capacityType";
constexpr char kAksPriority[] = "kubernetes.azure.com/scalesetpriority";

Status CapacityLabels(const Placement& p, NodeSelection* s) {
  const PricingModel m = *p.pricing;
  const bool spot = m == PricingModel::kSpot;
  const bool flex = m == PricingModel::kFlexStart;
  if (flex && p.provider != "gcp") {
    return Status::Invalid("pricing model flex-start on " + p.provider +
                           ": only GKE labels flex-start nodes (cloud.google.com/gke-flex-start)");
  }
  if (p.provider == "gcp") {
    if (spot) {
      s->selector[kGkeSpot] = "true";
      s->tolerations.push_back({kGkeSpot, "Equal", "true", "NoSchedule"});
    } else if (flex) {
      s->selector[kGkeFlexStart] = "true";
      s->tolerations.push_back({kGkeFlexStart, "Equal", "true", "NoSchedule"});
    } else {
      // On-demand and reserved work stays off capacity that can be taken back.
      s->required.push_back({kGkeSpot, "DoesNotExist", {}});
      s->required.push_back({kGkeFlexStart, "DoesNotExist", {}});
    }
  } else if (p.provider == "aws") {
    s->selector[kEksCapacityType] = spot ? "SPOT" : "ON_DEMAND";
  } else if (p.provider == "azure") {
    if (spot) {
      s->selector[kAksPriority] = "spot";
      s->tolerations.push_back({kAksPriority, "Equal", "spot", "NoSchedule"});
    } else {
      s->required.push_back({kAksPriority, "NotIn", {"spot"}});
    }
  }
  // Other providers (lambda) run no managed Kubernetes service with a
  // capacity label of its own: region and zone only.
  return Status::Ok();
}

}  // namespace

Result<NodeSelection> NodeSelectionFor(const Placement& p) {
  NodeSelection s;
  if (!p.region.empty()) s.selector["topology.kubernetes.io/region"] = p.region;
  if (!p.zone.empty()) s.selector["topology.kubernetes.io/zone"] = p.zone;
  if (p.pricing) {
    MERIDIAN_RETURN_IF_ERROR(CapacityLabels(p, &s));
  } else if (!p.owned && !p.provider.empty()) {
    // A reserved fleet cluster: reservations are on-demand capacity held for us.
    Placement on_demand = p;
    on_demand.pricing = PricingModel::kOnDemand;
    MERIDIAN_RETURN_IF_ERROR(CapacityLabels(on_demand, &s));
  }
  if (p.gpus_per_pod > 0) s.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule"});
  return s;
}

}  // namespace meridian::backends::k8s
