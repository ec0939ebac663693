// ValidateAgainstCatalog: names that the catalog lacks and deadlines that
// cannot be met, each located and explained.
#include <gtest/gtest.h>

#include "spec/spec.h"
#include "spec/test_catalog.h"

namespace meridian::spec {
namespace {

// 2026-03-01T09:00:00Z.
constexpr UnixSeconds kSubmitted = 1772355600;

JobSpec Parse(const std::string& extra) {
  auto specs = ParseJobSpecs("name: x\nkind: training\n" + extra + "\n", "v.yaml");
  EXPECT_TRUE(specs.ok()) << specs.status().message();
  return specs.ok() ? specs->front() : JobSpec{};
}

TEST(ValidateAgainstCatalog, AcceptsKnownNames) {
  auto cat = testing::SpecTestCatalog();
  ASSERT_NE(cat, nullptr);
  const char* good[] = {
      "resources: {gpu_models: [H100-80GB, L4]}",
      "work: {gpu_hours: 10, on: A10G}",
      "data: {region: gcp:us-central1, size_gb: 10}",
      "latency: {users: [gcp:europe-west4]}",
      "residency: [eu, us, aws:us-east-1]",
      "resources: {mig: true, gpu_models: [L4, A100-80GB]}",
      "deadline: 2026-03-01T09:00:01Z",
      "deadline: 1h\nwork: {duration: 1h}",
  };
  for (const char* extra : good) {
    Status st = ValidateAgainstCatalog(Parse(extra), *cat, kSubmitted);
    EXPECT_TRUE(st.ok()) << extra << ": " << st.message();
  }
}

TEST(ValidateAgainstCatalog, RejectsWithLocationValueAndReason) {
  auto cat = testing::SpecTestCatalog();
  ASSERT_NE(cat, nullptr);
  struct Case {
    const char* extra;
    std::vector<std::string> want;
  } cases[] = {
      {"resources: {gpu_models: [H100]}",
       {"v.yaml:3:26: resources.gpu_models[0]: \"H100\" is not a GPU model in the catalog; did "
        "you mean H100-80GB?"}},
      {"resources: {gpu_models: [L4, a100]}",
       {"resources.gpu_models[1]: \"a100\"", "did you mean A100-40GB or A100-80GB?"}},
      {"resources: {gpu_models: [TPU-v5e]}",
       {"resources.gpu_models[0]: \"TPU-v5e\" is not a GPU model",
        "known models: A100-40GB, A100-80GB, H100-80GB"}},
      {"work: {gpu_hours: 10, on: H10-80GB}",
       {"v.yaml:3:27: work.on: \"H10-80GB\" is not a GPU model", "did you mean H100-80GB?"}},
      {"data: {region: gcp:us-central2, size_gb: 1}",
       {"data.region: \"gcp:us-central2\" is not a region in the catalog",
        "did you mean gcp:us-central1"}},
      {"data: {region: us-central1}", {"data.region: \"us-central1\"", "did you mean gcp:us-central1?"}},
      {"latency: {users: [gcp:europe-west4, aws:eu-west-9]}",
       {"latency.users[1]: \"aws:eu-west-9\" is not a region", "did you mean aws:us-west-2?"}},
      {"residency: [eu, europe]",
       {"v.yaml:3:17: residency[1]: \"europe\" is neither a geography nor a region id",
        "did you mean gcp:europe-west4 or azure:westeurope?"}},
      {"residency: [mars]",
       {"residency[0]: \"mars\" is neither", "geographies: asia, eu or us"}},
      {"residency: [ue]", {"residency[0]: \"ue\"", "did you mean"}},
      {"resources: {mig: true, gpu_models: [L4, T4]}",
       {"resources.mig: \"true\" but none of resources.gpu_models (L4 or T4) can be split"}},
      {"deadline: 2026-03-01T09:00:00Z",
       {"v.yaml:3:11: deadline: \"2026-03-01T09:00:00Z\" is at or before submission "
        "(2026-03-01T09:00:00Z)"}},
      {"deadline: 2025-12-31T00:00:00Z", {"deadline:", "is at or before submission"}},
      {"deadline: 2d\nwork: {duration: 30d}",
       {"deadline: \"2d\" leaves 2d, less than work.duration (30d)"}},
      {"deadline: 2026-03-02T09:00:00Z\nwork: {duration: 30d}",
       {"deadline: \"2026-03-02T09:00:00Z\" leaves 1d, less than work.duration (30d)"}},
      {"deadline: 5m\ncheckpoint: {restart_overhead: 10m}",
       {"deadline: \"5m\" leaves 5m, no more than checkpoint.restart_overhead (10m)"}},
  };
  for (const Case& c : cases) {
    Status st = ValidateAgainstCatalog(Parse(c.extra), *cat, kSubmitted);
    ASSERT_FALSE(st.ok()) << c.extra;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    for (const std::string& want : c.want) {
      EXPECT_NE(st.message().find(want), std::string::npos)
          << c.extra << "\n  want: " << want << "\n  got:  " << st.message();
    }
  }
}

TEST(ValidateAgainstCatalog, ListedJobsCarryTheirIndex) {
  auto cat = testing::SpecTestCatalog();
  auto specs = ParseJobSpecs(
      "jobs:\n  - {name: a, kind: training}\n  - {name: b, kind: training, "
      "resources: {gpu_models: [H100-80GB, B100]}}\n",
      "list.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  Status st = ValidateAgainstCatalog((*specs)[1], *cat, kSubmitted);
  EXPECT_NE(st.message().find("list.yaml:3:67: jobs[1].resources.gpu_models[1]: \"B100\""),
            std::string::npos)
      << st.message();
}

TEST(ValidateAgainstCatalog, SpecsBuiltInCodeHaveNoPosition) {
  auto cat = testing::SpecTestCatalog();
  JobSpec job;
  job.name = "x";
  job.resources.gpu_models = {"H100"};
  Status st = ValidateAgainstCatalog(job, *cat, kSubmitted);
  EXPECT_EQ(st.message().rfind("resources.gpu_models[0]: \"H100\" is not a GPU model", 0), 0u)
      << st.message();
}

}  // namespace
}  // namespace meridian::spec
