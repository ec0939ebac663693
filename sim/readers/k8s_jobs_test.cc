// The Kubernetes Jobs reader on testdata/k8s_jobs.json, a `kubectl get jobs
// -A -o json` List that the official schemas accept (the k8s_schema_golden
// test checks it), and on small Lists for the errors.
#include <algorithm>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "sim/readers/test_files.h"
#include "sim/trace.h"

namespace meridian::sim {
namespace {

using Models = std::vector<std::string>;

const catalog::Catalog& Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return **c;
}

Result<Trace> Read(const std::string& path, const std::string& map = "") {
  TraceOptions o;
  o.gpu_map_path = map;
  return ReadTrace(path, TraceFormat::kK8sJobs, Embedded(), o);
}

std::string Fixture() { return std::string(MERIDIAN_READERS_TESTDATA) + "/k8s_jobs.json"; }

const TraceJob* Job(const Trace& t, const std::string& name) {
  for (const TraceJob& j : t.jobs) {
    if (j.name == name) return &j;
  }
  ADD_FAILURE() << "no job " << name;
  return nullptr;
}

std::string Notes(const Trace& t) {
  std::string all;
  for (const std::string& n : t.notes) all += n + "\n";
  return all;
}

bool HasNote(const Trace& t, const std::string& text) {
  return Notes(t).find(text) != std::string::npos;
}

TEST(K8sJobs, ReadsTheFixture) {
  Result<Trace> t = Read(Fixture());
  ASSERT_TRUE(t.ok()) << t.status().message();
  // Five Jobs: "waiting" never started, "still-running" has not finished.
  ASSERT_EQ(t->jobs.size(), 3u) << Notes(*t);

  // Created 09:00:00Z (the earliest: 0), started 09:00:30Z, completed
  // 10:30:30Z: 5400 s. Containers 4 + 0 GPUs; the init container's 1 is
  // less. GFD product NVIDIA-A100-SXM4-80GB: A100-80GB.
  const TraceJob& a = *Job(*t, "team-a/train-a100");
  EXPECT_EQ(a.submit_s, 0);
  EXPECT_EQ(a.duration_s, 5400);
  const JobSpec& as = *t->specs[a.spec];
  EXPECT_EQ(as.resources.gpus, 4);
  EXPECT_EQ(as.resources.gpu_models, Models{"A100-80GB"});
  EXPECT_EQ(as.work.recorded_on, "A100-80GB");
  EXPECT_EQ(as.tenant, "team-a");

  // Created 09:10 (600 s); started 09:20, Failed at 11:20: 7200 s. Two pods
  // of 8 GPUs in parallel: a gang of 16. GKE nvidia-h100-80gb by node
  // affinity: H100-80GB. Tenant: its Kueue queue.
  const TraceJob& b = *Job(*t, "team-b/dist");
  EXPECT_EQ(b.submit_s, 600);
  EXPECT_EQ(b.duration_s, 7200);
  const JobSpec& bs = *t->specs[b.spec];
  EXPECT_EQ(bs.resources.gpus, 16);
  EXPECT_EQ(bs.resources.gpu_models, Models{"H100-80GB"});
  EXPECT_EQ(bs.tenant, "research");
  EXPECT_EQ(bs.labels.at("k8s.pods"), "2");

  // Created 10:00 (3600 s); 10 min. One DRA claim, no product: 1 GPU, any model.
  const TraceJob& c = *Job(*t, "team-c/dra");
  EXPECT_EQ(c.submit_s, 3600);
  EXPECT_EQ(c.duration_s, 600);
  EXPECT_EQ(t->specs[c.spec]->resources.gpus, 1);
  EXPECT_TRUE(t->specs[c.spec]->resources.gpu_models.empty());

  EXPECT_TRUE(HasNote(*t, "1 Jobs never started")) << Notes(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs not finished")) << Notes(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs with DRA resourceClaims")) << Notes(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs with parallelism > 1")) << Notes(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs take their tenant from kueue.x-k8s.io/queue-name")) << Notes(*t);
  EXPECT_TRUE(HasNote(*t, "second 0 is the earliest creationTimestamp, 2026-03-01T09:00:00Z")) << Notes(*t);
}

TEST(K8sJobs, GpuMapOverridesProductLabels) {
  const std::string map = ScratchFile("NVIDIA-A100-SXM4-80GB: A100-40GB\n", ".yaml");
  Result<Trace> t = Read(Fixture(), map);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->specs[Job(*t, "team-a/train-a100")->spec]->resources.gpu_models, Models{"A100-40GB"});
}

std::string OneJob(const std::string& created, const std::string& gpu) {
  return R"({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "x", "namespace": "ns", "creationTimestamp": )" + created + R"(},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "i",
      "resources": {"limits": {"nvidia.com/gpu": )" + gpu + R"(}}}]}}},
    "status": {"startTime": "2026-03-01T10:00:00Z", "completionTime": "2026-03-01T11:00:00Z"}}]})";
}

TEST(K8sJobs, ErrorsNameTheItemAndField) {
  const std::string bad_time = ScratchFile(OneJob("\"yesterday\"", "\"1\""), ".json");
  Result<Trace> t = Read(bad_time);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind(bad_time + ": items[0] (ns/x): metadata.creationTimestamp: "
                                                  "\"yesterday\" is not an RFC 3339 time", 0),
            0u) << t.status().message();

  const std::string fraction = ScratchFile(OneJob("\"2026-03-01T09:00:00Z\"", "\"500m\""), ".json");
  t = Read(fraction);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            fraction + ": items[0] (ns/x): spec.template.spec.containers[0].resources."
                       "limits[\"nvidia.com/gpu\"]: \"500m\" is not a whole number of GPUs");

  // A whole number as a JSON number is fine: 1 GPU, 1 h.
  t = Read(ScratchFile(OneJob("\"2026-03-01T09:00:00Z\"", "1"), ".json"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs.at(0).duration_s, 3600);

  const std::string not_list = ScratchFile(R"({"kind": "Job"})", ".json");
  t = Read(not_list);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            not_list + ": items: is missing; expected the List of `kubectl get jobs -A -o json`");
  EXPECT_FALSE(Read(ScratchFile("{", ".json")).ok());
}

}  // namespace
}  // namespace meridian::sim
