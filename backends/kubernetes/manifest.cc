#include "backends/kubernetes/manifest.h"

#include "backends/kubernetes/device_request.h"
#include "backends/kubernetes/names.h"
#include "backends/kubernetes/node_selection.h"
#include "backends/kubernetes/yaml.h"

namespace meridian::backends::k8s {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kManagedBy[] = "app.kubernetes.io/managed-by";
constexpr char kJobLabel[] = "meridian.dev/job";
constexpr char kTenantLabel[] = "meridian.dev/tenant";
constexpr char kClaimName[] = "gpu";
constexpr char kCheckpointVolume[] = "checkpoint";

struct Names {
  std::string job, ns, image;
  std::string checkpoint() const { return job + "-checkpoint"; }
  std::string claim() const { return job + "-gpu"; }
  std::string peers() const { return job + "-peers"; }
};

Status NameError(const std::string& field, const std::string& value, const std::string& why) {
  return Status::Invalid(field + ": \"" + value + "\" is not a valid Kubernetes name: " + why);
}

Result<Names> CheckNames(const JobSpec& job, const Placement& p, const ManifestOptions& o) {
  Names n{o.name.empty() ? job.name : o.name, o.ns.empty() ? job.tenant : o.ns,
          o.image.empty() ? job.image : o.image};
  const std::string name_field = o.name.empty() ? "name" : "--name";
  if (std::string why = CheckDns1123Label(n.job); !why.empty()) {
    return NameError(name_field, n.job, why);
  }
  if (n.job.size() > kMaxJobNameLength) {
    return NameError(name_field, n.job,
                     "is " + std::to_string(n.job.size()) + " characters; at most 52 are allowed "
                     "(63 less the \"-checkpoint\" meridian adds for the checkpoint claim)");
  }
  // A gang's Service is a DNS-1035 label; its pods' hostnames are <name>-<index>.
  if (p.pods > 1) {
    if (std::string why = CheckDns1035Label(n.peers()); !why.empty()) {
      return NameError(name_field, n.job, "a gang's headless Service \"" + n.peers() + "\" " + why);
    }
  }
  if (std::string why = CheckDns1123Label(n.ns); !why.empty()) {
    return NameError(o.ns.empty() ? "tenant" : "--namespace", n.ns, why + " (it names the namespace)");
  }
  if (n.image.empty()) {
    return Status::Invalid("image: not set; a Kubernetes pod needs a container image (set image: "
                           "in the job spec or pass --image)");
  }
  for (const auto& [k, v] : job.labels) {
    if (std::string why = CheckLabelKey(k); !why.empty()) {
      return Status::Invalid("labels." + k + ": \"" + k + "\" is not a valid Kubernetes label key: " + why);
    }
    if (std::string why = CheckLabelValue(v); !why.empty()) {
      return Status::Invalid("labels." + k + ": \"" + v + "\" is not a valid Kubernetes label value: " + why);
    }
  }
  return n;
}

Json Metadata(const std::string& name, const std::string& ns, const Json& labels) {
  Json m = {{"name", name}};
  if (!ns.empty()) m["namespace"] = ns;
  m["labels"] = labels;
  return m;
}

// 262144 MiB -> "256Gi"; 1536 MiB -> "1536Mi".
std::string MemoryQuantity(int64_t mib) {
  return mib % 1024 == 0 ? std::to_string(mib / 1024) + "Gi" : std::to_string(mib) + "Mi";
}

Json PriorityClass(Priority tier) {
  return {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", PriorityClassName(tier)}, {"labels", {{kManagedBy, "meridian"}}}}},
          {"value", PriorityClassValue(tier)},
          {"globalDefault", false},
          {"description", "meridian " + std::string(ToString(tier)) + " tier"}};
}

Json CheckpointClaim(const Names& n, const Placement& p, const ManifestOptions& o,
                     const Json& labels) {
  // Every member of a gang writes to the same directory.
  Json spec = {{"accessModes", Json::array({p.pods > 1 ? "ReadWriteMany" : "ReadWriteOnce"})},
               {"resources", {{"requests", {{"storage", o.checkpoint_size}}}}}};
  if (!o.storage_class.empty()) spec["storageClassName"] = o.storage_class;
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", Metadata(n.checkpoint(), n.ns, labels)},
          {"spec", spec}};
}

Json ClaimTemplate(const Names& n, const DeviceRequest& r, const Json& labels) {
  Json selectors = Json::array();
  for (const std::string& e : r.selectors) selectors.push_back({{"cel", {{"expression", e}}}});
  Json exactly = {{"deviceClassName", r.device_class},
                  {"allocationMode", "ExactCount"},
                  {"count", r.count},
                  {"selectors", selectors}};
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", Metadata(n.claim(), n.ns, labels)},
          {"spec",
           {{"metadata", {{"labels", labels}}},
            {"spec", {{"devices", {{"requests", Json::array({{{"name", kClaimName},
                                                             {"exactly", exactly}}})}}}}}}}};
}

Json PeerService(const Names& n, const Json& labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", Metadata(n.peers(), n.ns, labels)},
          {"spec",
           {{"clusterIP", "None"},
            // Members resolve each other before they are ready: rendezvous comes first.
            {"publishNotReadyAddresses", true},
            {"selector", {{kJobLabel, n.job}}}}}};
}

Json Env(const JobSpec& job, const Names& n, const Placement& p) {
  std::map<std::string, std::string> env(job.env.begin(), job.env.end());
  env["MERIDIAN_JOB_NAME"] = n.job;
  if (job.checkpoint.interval_s) env["MERIDIAN_CHECKPOINT_DIR"] = kCheckpointMount;
  if (p.replicas) {
    env["MERIDIAN_REPLICAS"] = std::to_string(p.pods);
  } else if (p.pods > 1) {
    env["MERIDIAN_GANG_SIZE"] = std::to_string(p.pods);
    env["MERIDIAN_GANG_LEADER"] = n.job + "-0." + n.peers();
  }
  Json out = Json::array();
  for (const auto& [k, v] : env) out.push_back({{"name", k}, {"value", v}});
  if (p.pods > 1) {
    // The member's index, which the Job controller sets as an annotation.
    out.push_back(
        {{"name", p.replicas ? "MERIDIAN_REPLICA" : "MERIDIAN_GANG_RANK"},
         {"valueFrom",
          {{"fieldRef",
            {{"fieldPath", "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}}});
  }
  return out;
}

Json Container(const JobSpec& job, const Names& n, const Placement& p) {
  Json c = {{"name", "main"}, {"image", n.image}};
  if (!job.command.empty()) c["command"] = job.command;
  if (!job.working_dir.empty()) c["workingDir"] = job.working_dir;
  c["env"] = Env(job, n, p);
  Json resources = Json::object();
  if (p.vcpus_per_pod > 0 || p.ram_mib_per_pod > 0) {
    Json req = Json::object();
    if (p.vcpus_per_pod > 0) req["cpu"] = std::to_string(p.vcpus_per_pod);
    if (p.ram_mib_per_pod > 0) req["memory"] = MemoryQuantity(p.ram_mib_per_pod);
    resources["requests"] = req;
  }
  if (p.gpus_per_pod > 0) resources["claims"] = Json::array({{{"name", kClaimName}}});
  if (!resources.empty()) c["resources"] = resources;
  if (job.checkpoint.interval_s) {
    c["volumeMounts"] = Json::array({{{"name", kCheckpointVolume}, {"mountPath", kCheckpointMount}}});
  }
  return c;
}

Json Affinity(const NodeSelection& s) {
  Json exprs = Json::array();
  for (const NodeRequirement& r : s.required) {
    Json e = {{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) e["values"] = r.values;
    exprs.push_back(e);
  }
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", Json::array({{{"matchExpressions", exprs}}})}}}}}};
}

Json PodSpec(const JobSpec& job, const Names& n, const Placement& p, const NodeSelection& s) {
  Json spec = {{"restartPolicy", "Never"}, {"priorityClassName", PriorityClassName(job.priority)}};
  if (p.pods > 1) spec["subdomain"] = n.peers();
  if (job.grace_period_s) spec["terminationGracePeriodSeconds"] = *job.grace_period_s;
  if (!s.selector.empty()) spec["nodeSelector"] = Json(s.selector);
  if (!s.required.empty()) spec["affinity"] = Affinity(s);
  if (p.replicas) {
    // One replica per zone: the availability the scheduler counted on.
    spec["topologySpreadConstraints"] = Json::array(
        {{{"maxSkew", 1},
          {"topologyKey", "topology.kubernetes.io/zone"},
          {"whenUnsatisfiable", "DoNotSchedule"},
          {"labelSelector", {{"matchLabels", {{kJobLabel, n.job}}}}}}});
  }
  if (!s.tolerations.empty()) {
    Json t = Json::array();
    for (const Toleration& x : s.tolerations) {
      Json e = {{"key", x.key}, {"operator", x.op}};
      if (!x.value.empty()) e["value"] = x.value;
      e["effect"] = x.effect;
      t.push_back(e);
    }
    spec["tolerations"] = t;
  }
  spec["containers"] = Json::array({Container(job, n, p)});
  if (p.gpus_per_pod > 0) {
    spec["resourceClaims"] =
        Json::array({{{"name", kClaimName}, {"resourceClaimTemplateName", n.claim()}}});
  }
  if (job.checkpoint.interval_s) {
    spec["volumes"] = Json::array(
        {{{"name", kCheckpointVolume}, {"persistentVolumeClaim", {{"claimName", n.checkpoint()}}}}});
  }
  return spec;
}

Json Annotations(const Placement& p) {
  Json a = Json::object();
  if (!p.cluster.empty()) a["meridian.dev/cluster"] = p.cluster;
  if (!p.node.empty()) a["meridian.dev/node"] = p.node;
  if (p.pricing) {
    a["meridian.dev/pricing"] = std::string(ToString(*p.pricing));
    a["meridian.dev/instance-type"] = p.instance_type;
    a["meridian.dev/price-per-hour-usd"] = p.price_per_hour.ToString();
  }
  if (!p.where.empty()) a["meridian.dev/placement"] = p.where;
  return a;
}

Json JobObject(const JobSpec& job, const Names& n, const Placement& p, const NodeSelection& s,
               const Json& labels, int64_t ttl_after_finished_s) {
  Json meta = Metadata(n.job, n.ns, labels);
  meta["annotations"] = Annotations(p);
  // meridian requeues a failed attempt itself (elsewhere, from its checkpoint).
  Json spec = {{"backoffLimit", 0}, {"ttlSecondsAfterFinished", ttl_after_finished_s}};
  if (p.pods > 1) {
    spec["completionMode"] = "Indexed";
    spec["completions"] = p.pods;
    spec["parallelism"] = p.pods;
  }
  Json pod_labels = {{kManagedBy, "meridian"}, {kJobLabel, n.job}};
  spec["template"] = {{"metadata", {{"labels", pod_labels}}}, {"spec", PodSpec(job, n, p, s)}};
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", meta}, {"spec", spec}};
}

}  // namespace

std::string PriorityClassName(Priority p) { return "meridian-" + std::string(ToString(p)); }

int64_t PriorityClassValue(Priority p) {
  switch (p) {
    case Priority::kCritical: return 1000000;
    case Priority::kHigh: return 100000;
    case Priority::kNormal: return 10000;
    case Priority::kLow: return 1000;
  }
  return 0;
}

Result<std::vector<Manifest>> BuildManifests(const JobSpec& job, const Placement& p,
                                             const catalog::Catalog& catalog,
                                             const ManifestOptions& o) {
  auto names = CheckNames(job, p, o);
  if (!names.ok()) return names.status();
  const Names& n = *names;
  auto selection = NodeSelectionFor(p);
  if (!selection.ok()) return selection.status();
  Json labels = {{kManagedBy, "meridian"}, {kJobLabel, n.job}, {kTenantLabel, job.tenant}};
  if (!CheckLabelValue(job.tenant).empty()) labels.erase(kTenantLabel);
  for (const auto& [k, v] : job.labels) labels[k] = v;

  std::vector<Manifest> out;
  out.push_back({"PriorityClass", PriorityClassName(job.priority), PriorityClass(job.priority)});
  if (job.checkpoint.interval_s) {
    out.push_back({"PersistentVolumeClaim", n.checkpoint(), CheckpointClaim(n, p, o, labels)});
  }
  if (p.gpus_per_pod > 0) {
    auto r = p.mig_uuids.empty()
                 ? DeviceRequestFor(catalog, p.gpu_model, p.mig_profile, p.gpus_per_pod, job.driver)
                 : Result<DeviceRequest>(DeviceRequestForMigUuids(p.mig_uuids));
    if (!r.ok()) return r.status().WithContext("resources.gpu_models");
    out.push_back({"ResourceClaimTemplate", n.claim(), ClaimTemplate(n, *r, labels)});
  }
  if (p.pods > 1) out.push_back({"Service", n.peers(), PeerService(n, labels)});
  out.push_back({"Job", n.job, JobObject(job, n, p, *selection, labels, o.ttl_seconds_after_finished)});
  return out;
}

std::string RenderYaml(const std::vector<Manifest>& manifests) {
  std::vector<Json> docs;
  for (const Manifest& m : manifests) docs.push_back(m.object);
  return ToYamlStream(docs);
}

}  // namespace meridian::backends::k8s
