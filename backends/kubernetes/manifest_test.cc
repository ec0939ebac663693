#include "backends/kubernetes/manifest.h"

#include <gtest/gtest.h>

namespace meridian::backends::k8s {
namespace {

using Json = nlohmann::ordered_json;

const catalog::Catalog& Cat() {
  static auto c = catalog::Catalog::LoadEmbedded().value();
  return *c;
}

JobSpec Spec() {
  JobSpec j;
  j.name = "llama-7b";
  j.tenant = "research";
  j.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  j.command = {"torchrun", "train.py"};
  j.env = {{"NCCL_DEBUG", "WARN"}};
  j.priority = Priority::kHigh;
  j.checkpoint.interval_s = 1800;
  j.grace_period_s = 120;
  return j;
}

Placement SpotGang() {
  Placement p;
  p.provider = "gcp";
  p.region = "us-central1";
  p.zone = "us-central1-a";
  p.pricing = PricingModel::kSpot;
  p.instance_type = "a3-highgpu-8g";
  p.pods = 2;
  p.gpus_per_pod = 8;
  p.gpu_model = "H100-80GB";
  return p;
}

const Json* Find(const std::vector<Manifest>& ms, const std::string& kind) {
  for (const Manifest& m : ms) {
    if (m.kind == kind) return &m.object;
  }
  return nullptr;
}

TEST(BuildManifests, GangOnSpotIsAnIndexedJobWithPeersAndAClaimPerPod) {
  auto ms = BuildManifests(Spec(), SpotGang(), Cat(), {});
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  std::vector<std::string> kinds;
  for (const Manifest& m : *ms) kinds.push_back(m.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"PriorityClass", "PersistentVolumeClaim",
                                             "ResourceClaimTemplate", "Service", "Job"}));
  const Json& job = *Find(*ms, "Job");
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 2);
  EXPECT_EQ(job["spec"]["parallelism"], 2);
  const Json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["subdomain"], "llama-7b-peers");
  EXPECT_EQ(pod["priorityClassName"], "meridian-high");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 120);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-spot"], "true");
  EXPECT_EQ(pod["nodeSelector"]["topology.kubernetes.io/zone"], "us-central1-a");
  EXPECT_EQ(pod["resourceClaims"][0]["resourceClaimTemplateName"], "llama-7b-gpu");
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "llama-7b-checkpoint");
  const Json& rct = *Find(*ms, "ResourceClaimTemplate");
  EXPECT_EQ(rct["apiVersion"], "resource.k8s.io/v1");
  const Json& exactly = rct["spec"]["spec"]["devices"]["requests"][0]["exactly"];
  EXPECT_EQ(exactly["count"], 8);
  EXPECT_EQ(exactly["deviceClassName"], "gpu.nvidia.com");
  EXPECT_EQ((*Find(*ms, "PersistentVolumeClaim"))["spec"]["accessModes"][0], "ReadWriteMany");
  EXPECT_EQ((*Find(*ms, "Service"))["spec"]["clusterIP"], "None");
}

TEST(BuildManifests, SameInputsSameText) {
  auto a = BuildManifests(Spec(), SpotGang(), Cat(), {});
  auto b = BuildManifests(Spec(), SpotGang(), Cat(), {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(RenderYaml(*a), RenderYaml(*b));
}

TEST(BuildManifests, OnDemandOnEksAndAksStaysOffSpot) {
  Placement p = SpotGang();
  p.pods = 1;
  p.pricing = PricingModel::kOnDemand;
  p.provider = "aws";
  auto ms = BuildManifests(Spec(), p, Cat(), {});
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ((*Find(*ms, "Job"))["spec"]["template"]["spec"]["nodeSelector"]
                ["eks.amazonaws.com/capacityType"],
            "ON_DEMAND");
  EXPECT_EQ(Find(*ms, "Service"), nullptr);
  p.provider = "azure";
  ms = BuildManifests(Spec(), p, Cat(), {});
  ASSERT_TRUE(ms.ok());
  const Json& term = (*Find(*ms, "Job"))["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
      ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0];
  EXPECT_EQ(term["matchExpressions"][0]["key"], "kubernetes.azure.com/scalesetpriority");
  EXPECT_EQ(term["matchExpressions"][0]["operator"], "NotIn");
}

TEST(BuildManifests, CpuJobWithoutCheckpointHasNoClaims) {
  JobSpec j = Spec();
  j.checkpoint = {};
  Placement p;
  p.cluster = "onprem-a";
  p.owned = true;
  p.vcpus_per_pod = 32;
  p.ram_mib_per_pod = 262144;
  auto ms = BuildManifests(j, p, Cat(), {});
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ(ms->size(), 2u);  // PriorityClass, Job
  const Json& c = (*Find(*ms, "Job"))["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["requests"]["cpu"], "32");
  EXPECT_EQ(c["resources"]["requests"]["memory"], "256Gi");
  EXPECT_FALSE((*Find(*ms, "Job"))["spec"]["template"]["spec"].contains("nodeSelector"));
}

TEST(BuildManifests, ErrorsNameTheField) {
  struct Case {
    const char* what;
    JobSpec job;
    ManifestOptions options;
    std::string want;
  };
  JobSpec upper = Spec();
  upper.name = "Llama_7B";
  JobSpec long_name = Spec();
  long_name.name = std::string(53, 'a');
  JobSpec tenant = Spec();
  tenant.tenant = "Research";
  JobSpec label = Spec();
  label.labels = {{"team", "foundation models"}};
  JobSpec no_image = Spec();
  no_image.image.clear();
  JobSpec digit = Spec();
  digit.name = "7b";
  ManifestOptions dotted;
  dotted.ns = "a.b";
  Case cases[] = {
      {"upper case", upper, {}, "name: \"Llama_7B\" is not a valid Kubernetes name"},
      {"too long", long_name, {}, "at most 52 are allowed"},
      {"tenant", tenant, {}, "tenant: \"Research\" is not a valid Kubernetes name"},
      {"flag", Spec(), dotted, "--namespace: \"a.b\""},
      {"label", label, {}, "labels.team: \"foundation models\" is not a valid Kubernetes label value"},
      {"image", no_image, {}, "image: not set"},
      {"gang service", digit, {}, "a gang's headless Service \"7b-peers\""},
  };
  for (const Case& c : cases) {
    auto ms = BuildManifests(c.job, SpotGang(), Cat(), c.options);
    ASSERT_FALSE(ms.ok()) << c.what;
    EXPECT_EQ(ms.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(ms.status().message().find(c.want), std::string::npos)
        << c.what << ": " << ms.status().message();
  }
}

TEST(BuildManifests, FlexStartOnlyWhereGkeLabelsIt) {
  Placement p = SpotGang();
  p.pricing = PricingModel::kFlexStart;
  auto ms = BuildManifests(Spec(), p, Cat(), {});
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ((*Find(*ms, "Job"))["spec"]["template"]["spec"]["nodeSelector"]
                ["cloud.google.com/gke-flex-start"],
            "true");
  p.provider = "aws";
  EXPECT_NE(BuildManifests(Spec(), p, Cat(), {}).status().message().find("flex-start on aws"),
            std::string::npos);
}

}  // namespace
}  // namespace meridian::backends::k8s
