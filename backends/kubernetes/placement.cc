#include "backends/kubernetes/placement.h"

#include <bit>

namespace meridian::backends::k8s {

namespace {

// "gcp:us-central1" -> {"gcp", "us-central1"}.
std::pair<std::string, std::string> SplitRegion(const std::string& id) {
  size_t colon = id.find(':');
  if (colon == std::string::npos) return {"", id};
  return {id.substr(0, colon), id.substr(colon + 1)};
}

int Ceil(int a, int b) { return b <= 0 ? a : (a + b - 1) / b; }

void SetElastic(const ElasticLease& lease, const sched::Candidate* c,
                const sched::QueuedJob& job, const catalog::Catalog& cat, Placement* p) {
  const catalog::Offering& o = cat.offerings()[lease.offering.index()];
  std::tie(p->provider, p->region) = SplitRegion(o.region);
  p->zone = o.zone;
  p->pricing = lease.pricing;
  p->instance_type = o.instance_type;
  p->price_per_hour = lease.price_per_hour;
  p->pods = lease.instances;
  p->gpu_model = o.gpu_model;
  int gpus = o.gpu_count * lease.instances;
  if (c != nullptr && c->demand < job.demands.size()) gpus = job.demands[c->demand].gpus;
  // A service's replicas each hold the whole demand (realtime_replicas).
  const int instances = job.kind == WorkloadKind::kRealtimeInference
                            ? Ceil(gpus, o.gpu_count)
                            : lease.instances;
  p->gpus_per_pod = std::min(o.gpu_count, Ceil(gpus, instances));
}

Status SetFleet(const Allocation& a, const sched::Candidate* c, const sched::Fleet& fleet,
                Placement* p) {
  const sched::Node& first = fleet.node(a.nodes.front().node);
  const sched::Cluster& cl = fleet.cluster(first.cluster);
  for (const NodeShare& s : a.nodes) {
    const sched::Cluster& other = fleet.cluster(fleet.node(s.node).cluster);
    if (other.id != cl.id) {
      // A service's replicas in distinct clusters: a Job runs in one cluster.
      return Status::Invalid("placed in clusters " + cl.name + " and " + other.name +
                             "; one set of manifests runs in one Kubernetes cluster");
    }
  }
  p->cluster = cl.name;
  p->node = first.name;
  p->owned = cl.pricing == CapacityPricing::kOwned;
  // Reserved capacity sits in a real cloud region; owned machines only name
  // the catalog region nearest them, which no node of theirs is labelled with.
  if (!p->owned) {
    std::tie(p->provider, p->region) =
        SplitRegion(fleet.catalog().regions()[cl.region.index()].id);
  }
  p->pods = static_cast<int>(a.nodes.size());
  const NodeShare& share = a.nodes.front();
  if (first.gpu_model.valid()) p->gpu_model = fleet.catalog().gpus()[first.gpu_model.index()].name;
  if (share.mig) {
    p->gpus_per_pod = 1;
    if (c != nullptr && c->kind == sched::CandidateKind::kMigSlice) {
      const auto& profiles = fleet.catalog().gpus()[first.gpu_model.index()].mig_profiles;
      if (c->mig_profile < profiles.size()) p->mig_profile = profiles[c->mig_profile].name;
    }
  } else {
    p->gpus_per_pod = std::popcount(share.gpus);
  }
  if (p->gpus_per_pod == 0) p->gpu_model.clear();  // CPU fallback on a GPU node
  p->vcpus_per_pod = share.vcpus;
  p->ram_mib_per_pod = share.ram_mib;
  return Status::Ok();
}

}  // namespace

Result<Placement> PlacementOf(const sched::Decision& d, const sched::QueuedJob& job,
                              const sched::Fleet& fleet) {
  if (!d.allocation) {
    std::string why = d.status.ok() ? std::string(sched::ToString(d.kind)) : d.status.message();
    return Status::Invalid("cannot be placed: " + why);
  }
  const Allocation& a = *d.allocation;
  const sched::Candidate* c = d.chosen ? &d.chosen->candidate : nullptr;
  Placement p;
  if (a.elastic) {
    SetElastic(*a.elastic, c, job, fleet.catalog(), &p);
  } else if (!a.nodes.empty()) {
    MERIDIAN_RETURN_IF_ERROR(SetFleet(a, c, fleet, &p));
  } else {
    return Status::Internal("decision holds an allocation of neither nodes nor cloud capacity");
  }
  if (p.mig_profile.empty() && p.gpus_per_pod > 0 && c != nullptr &&
      c->kind == sched::CandidateKind::kMigSlice) {
    return Status::Internal("MIG decision without a profile");
  }
  // The job's stated CPU and memory, per pod, where the fleet share does not say.
  if (p.vcpus_per_pod == 0 && job.vcpus > 0) p.vcpus_per_pod = Ceil(job.vcpus, p.pods);
  if (p.ram_mib_per_pod == 0 && job.ram_mib > 0) {
    p.ram_mib_per_pod = (job.ram_mib + p.pods - 1) / p.pods;
  }
  p.replicas = p.pods > 1 && job.kind == WorkloadKind::kRealtimeInference;
  if (d.chosen) p.where = d.chosen->where;
  return p;
}

}  // namespace meridian::backends::k8s
