// The Kubernetes Jobs reader on testdata/k8s_jobs.json, a `kubectl get jobs
// -A -o json` List that the official schemas accept (the k8s_schema_golden
// test checks it), and on small Lists for the errors.
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/readers/test_files.h"
#include "sim/trace.h"

namespace meridian::sim {
namespace {

using Models = std::vector<std::string>;

Result<Trace> Read(const std::string& path, const std::string& map = "") {
  TraceOptions o;
  o.gpu_map_path = map;
  return ReadTrace(path, TraceFormat::kK8sJobs, EmbeddedCatalog(), o);
}

std::string Fixture() { return std::string(MERIDIAN_READERS_TESTDATA) + "/k8s_jobs.json"; }

TEST(K8sJobs, ReadsTheFixture) {
  Result<Trace> t = Read(Fixture());
  ASSERT_TRUE(t.ok()) << t.status().message();
  // Five Jobs: "waiting" never started, "still-running" has not finished.
  ASSERT_EQ(t->jobs.size(), 3u) << NotesOf(*t);

  const struct {
    const char* name;
    int64_t submit_s, duration_s;
    int32_t recorded_wait_s;  // startTime - creationTimestamp
    int gpus;
    Models models;
    const char* tenant;
  } want[] = {
      // Created 09:00:00Z (the earliest: 0), started 09:00:30Z (waited 30 s), completed
      // 10:30:30Z: 5400 s. Containers 4 + 0 GPUs; the init container's 1
      // is less. GFD product NVIDIA-A100-SXM4-80GB: A100-80GB.
      {"team-a/train-a100", 0, 5400, 30, 4, {"A100-80GB"}, "team-a"},
      // Created 09:10 (600 s); started 09:20 (waited 600 s), Failed at 11:20: 7200 s. Two
      // pods of 8 GPUs in parallel: a gang of 16. GKE nvidia-h100-80gb by
      // node affinity: H100-80GB. Tenant: its Kueue queue.
      {"team-b/dist", 600, 7200, 600, 16, {"H100-80GB"}, "research"},
      // Created 10:00 (3600 s), started 10:00:05 (waited 5 s); 10 min. One DRA claim, no product: 1 GPU,
      // any model.
      {"team-c/dra", 3600, 600, 5, 1, {}, "team-c"},
  };
  for (const auto& w : want) {
    const TraceJob* j = FindJob(*t, w.name);
    ASSERT_NE(j, nullptr);
    const JobSpec& spec = *t->specs[j->spec];
    EXPECT_EQ(j->submit_s, w.submit_s) << w.name;
    EXPECT_EQ(j->duration_s, w.duration_s) << w.name;
    EXPECT_EQ(j->recorded_wait_s, w.recorded_wait_s) << w.name;
    EXPECT_EQ(spec.resources.gpus, w.gpus) << w.name;
    EXPECT_EQ(spec.resources.gpu_models, w.models) << w.name;
    EXPECT_EQ(spec.work.recorded_on, w.models.empty() ? "" : w.models.front()) << w.name;
    EXPECT_EQ(spec.tenant, w.tenant) << w.name;
  }
  EXPECT_EQ(t->specs[FindJob(*t, "team-b/dist")->spec]->labels.at("k8s.pods"), "2");

  EXPECT_TRUE(HasNote(*t, "1 Jobs never started")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs not finished")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs with DRA resourceClaims")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs with parallelism > 1")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 Jobs take their tenant from kueue.x-k8s.io/queue-name")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "second 0 is the earliest creationTimestamp, 2026-03-01T09:00:00Z")) << NotesOf(*t);
}

TEST(K8sJobs, GpuMapOverridesProductLabels) {
  const std::string map = ScratchFile("NVIDIA-A100-SXM4-80GB: A100-40GB\n", ".yaml");
  Result<Trace> t = Read(Fixture(), map);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->specs[FindJob(*t, "team-a/train-a100")->spec]->resources.gpu_models, Models{"A100-40GB"});
}

std::string OneJob(const std::string& created, const std::string& gpu) {
  return R"({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "x", "namespace": "ns", "creationTimestamp": )" + created + R"(},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "i",
      "resources": {"limits": {"nvidia.com/gpu": )" + gpu + R"(}}}]}}},
    "status": {"startTime": "2026-03-01T10:00:00Z", "completionTime": "2026-03-01T11:00:00Z"}}]})";
}

// Issue 24 (fuzzing): a number beyond a double threw past the reader (abort);
// it is an error naming the file, like any JSON that does not parse.
TEST(K8sJobs, Issue24NumberBeyondADoubleIsAnError) {
  const std::string file = ScratchFile(R"({"items": [1e999]})", ".json");
  Result<Trace> t = Read(file);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message().rfind(file + ": is not valid JSON: ", 0), 0u) << t.status().message();
  EXPECT_NE(t.status().message().find("number overflow parsing '1e999'"), std::string::npos)
      << t.status().message();
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
