// The openb reader on a fixture of rows copied from the real trace, and on
// the real trace itself (../shared/data/traces/alibaba-gpu-v2023).
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "sim/readers/test_files.h"
#include "sim/trace.h"
#include "spec/fleet.h"

namespace meridian::sim {
namespace {

const TraceJob& Job(const Trace& t, const std::string& name) {
  auto it = std::find_if(t.jobs.begin(), t.jobs.end(),
                         [&](const TraceJob& j) { return j.name == name; });
  EXPECT_NE(it, t.jobs.end()) << name;
  return *it;
}

TEST(Openb, FixtureMapsEveryColumn) {
  Result<Trace> t = ReadTrace("sim/readers/testdata/openb_pods.csv", TraceFormat::kOpenb);
  ASSERT_TRUE(t.ok()) << t.status().message();
  // 9 rows: 2 Pending (never scheduled) left out, 7 kept.
  ASSERT_EQ(t->jobs.size(), 7u);
  EXPECT_TRUE(HasNote(*t, "skipped 2 pods never scheduled (pod_phase Pending"));
  const TraceJob& shared = Job(*t, "openb-pod-0001");  // 6000,12288,1,460,LS,427061..12902960
  EXPECT_EQ(shared.submit_s, 427061);
  EXPECT_EQ(shared.duration_s, 12902960 - 427061);
  EXPECT_FLOAT_EQ(shared.gpu_fraction, 0.46f);
  const JobSpec& s = *t->specs[shared.spec];
  EXPECT_TRUE(s.resources.mig);
  EXPECT_EQ(s.resources.gpus, 1);
  EXPECT_EQ(s.resources.vcpus, 6);
  EXPECT_DOUBLE_EQ(*s.resources.ram_gib, 12.0);
  EXPECT_EQ(s.priority, Priority::kHigh);  // LS
  const TraceJob& cpu = Job(*t, "openb-pod-0005");  // scheduled 2 s after creation
  EXPECT_EQ(t->specs[cpu.spec]->resources.gpus, 0);
  EXPECT_EQ(cpu.duration_s, 12902960 - 2759676);
  const TraceJob& eight = Job(*t, "openb-pod-0017");
  EXPECT_EQ(t->specs[eight.spec]->resources.gpus, 8);
  EXPECT_FALSE(t->specs[eight.spec]->resources.mig);
  EXPECT_EQ(eight.gpu_fraction, 0.0f);
  const JobSpec& be = *t->specs[Job(*t, "openb-pod-0022").spec];
  EXPECT_TRUE(be.preemptible);
  EXPECT_EQ(be.priority, Priority::kLow);
  // Sorted by submission.
  EXPECT_TRUE(std::is_sorted(t->jobs.begin(), t->jobs.end(),
                             [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; }));
}

TEST(Openb, FixtureNodeListBecomesTheFleet) {
  Result<Trace> t = ReadTrace("sim/readers/testdata/openb_pods.csv", TraceFormat::kOpenb);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(t->fleet.has_value());
  ASSERT_EQ(t->fleet->clusters.size(), 1u);
  const auto& groups = t->fleet->clusters[0].nodes;
  ASSERT_EQ(groups.size(), 3u);  // P100x2, G2x8, CPU
  EXPECT_EQ(groups[0].gpu, "V100-16GB");
  EXPECT_EQ(groups[0].count, 2);
  EXPECT_EQ(groups[0].vcpus, 64);
  EXPECT_DOUBLE_EQ(groups[0].ram_gib, 256.0);
  EXPECT_EQ(groups[1].gpu, "A100-40GB");
  EXPECT_EQ(groups[1].gpus, 8);
  EXPECT_EQ(groups[2].gpu, "");
  EXPECT_EQ(groups[2].gpus, 0);
  EXPECT_TRUE(HasNote(*t, "GPU type G2 -> A100-40GB (2 nodes)"));
  Result<std::shared_ptr<const catalog::Catalog>> cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok());
  Status s = spec::ValidateFleetAgainstCatalog(*t->fleet, **cat);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(Openb, PodsNoNodeCanHoldAreCountedNotDropped) {
  // A 4-GPU pod on a node list whose largest node has 2 GPUs.
  const std::string nodes = ScratchFile(
      "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n", "-nodes.csv");
  const std::string pods = ScratchFile(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,1000,1024,4,1000,,LS,Running,0,100,0\n"
      "p1,1000,1024,1,1000,,LS,Running,5,100,5\n",
      "-pods.csv");
  Result<Trace> t = ReadTrace(pods, TraceFormat::kOpenb, nodes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_TRUE(HasNote(*t, "skipped 1 pods no node of the node list can hold (first: p0)"));
}

TEST(Openb, BadFieldNamesLineColumnAndValue) {
  const std::string nodes = ScratchFile(
      "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n", "-nodes.csv");
  const std::string pods = ScratchFile(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,1000,1024,1,1000,,LS,Running,0,100,0\n"
      "p1,1000,1024,x,1000,,LS,Running,5,100,5\n"
      "p2,1000,1024,1,1000,H800,LS,Running,5,100,5\n",
      "-pods.csv");
  Result<Trace> t = ReadTrace(pods, TraceFormat::kOpenb, nodes);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find(pods + ":3: num_gpu: \"x\" must be a whole number >= 0"),
            std::string::npos)
      << t.status().message();
  EXPECT_NE(t.status().message().find(pods + ":4: gpu_spec: \"H800\" names \"H800\""),
            std::string::npos)
      << t.status().message();
}

// Issue 24 (fuzzing): a deletion_time beyond what int64_t holds (here 2.2e131)
// was converted to int64_t while finding the trace's end, which is undefined;
// it is now an error naming the line, the column and the value like any other
// bad count. 10^15 is the largest count taken, 10^15 + 1 is refused.
TEST(Openb, Issue24CountsBeyondTenToTheFifteenthAreErrors) {
  const std::string nodes = ScratchFile(
      "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n", "-nodes.csv");
  const std::string huge(132, '2');  // 2.2e131
  const std::string pods = ScratchFile(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p0,1000,1024,1,1000,,LS,Running,0," + huge + ",0\n"
      "p1,1000,1024,1,1000,,LS,Running,0,1000000000000001,0\n"
      "p2,1000,1024,1,1000,,LS,Running,0,1000000000000000,0\n",
      "-pods.csv");
  Result<Trace> t = ReadTrace(pods, TraceFormat::kOpenb, nodes);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = t.status().message();
  EXPECT_NE(m.find(pods + ":2: deletion_time: \"" + huge + "\" must be a whole number >= 0 and <= 10^15"),
            std::string::npos) << m;
  EXPECT_NE(m.find(pods + ":3: deletion_time: \"1000000000000001\" must be"), std::string::npos) << m;
  EXPECT_EQ(m.find(pods + ":4:"), std::string::npos) << m;
}

TEST(Openb, GpuSpecRestrictsModels) {
  Result<Trace> t = ReadTrace(DataFile(kOpenbGpuSpec), TraceFormat::kOpenb);
  ASSERT_TRUE(t.ok()) << t.status().message();
  size_t restricted = 0;
  for (const TraceJob& j : t->jobs) {
    const auto& models = t->specs[j.spec]->resources.gpu_models;
    restricted += models.empty() ? 0 : 1;
    for (const std::string& m : models) EXPECT_NE(m, "") << j.name;
  }
  EXPECT_GT(restricted, 1000u);  // README: about 33% of GPU tasks are constrained
}

// The real trace: README counts (8,152 pods; 897 Pending without a
// scheduled_time; 7,255 with both times, of which 6,203 use GPUs; 1,523
// nodes with 6,212 GPUs; 3,078 fractional single-GPU pods).
TEST(Openb, RealTraceMatchesItsReadme) {
  Result<Trace> t = ReadTrace(DataFile(kOpenbPods), TraceFormat::kOpenb);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs.size(), 7255u);
  EXPECT_TRUE(HasNote(*t, "skipped 897 pods never scheduled"));
  size_t gpu_jobs = 0, fractional = 0;
  for (const TraceJob& j : t->jobs) {
    const JobSpec& s = *t->specs[j.spec];
    gpu_jobs += *s.resources.gpus > 0 ? 1 : 0;
    fractional += j.gpu_fraction > 0 ? 1 : 0;
    EXPECT_GE(j.duration_s, 4) << j.name;  // README: min duration 4 s
    EXPECT_GE(j.submit_s, 0);
  }
  EXPECT_EQ(gpu_jobs, 6203u);
  EXPECT_EQ(fractional, 2573u);  // of the 3,078, those that were scheduled
  ASSERT_TRUE(t->fleet.has_value());
  int nodes = 0, gpus = 0;
  for (const NodeGroup& g : t->fleet->clusters[0].nodes) {
    nodes += g.count;
    gpus += g.count * g.gpus;
  }
  EXPECT_EQ(nodes, 1523);
  EXPECT_EQ(gpus, 6212);
  EXPECT_LT(t->specs.size(), t->jobs.size() / 4);  // shapes are shared
  EXPECT_FALSE(HasNote(*t, "no node of the node list can hold"));
}

}  // namespace
}  // namespace meridian::sim
