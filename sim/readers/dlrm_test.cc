// The DLRM reader on a fixture of rows copied from the real trace, and on
// the real trace (../shared/data/traces/alibaba-gpu-v2025-dlrm).
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/readers/test_files.h"
#include "sim/trace.h"

namespace meridian::sim {
namespace {

const TraceJob& Job(const Trace& t, const std::string& name) {
  auto it = std::find_if(t.jobs.begin(), t.jobs.end(),
                         [&](const TraceJob& j) { return j.name == name; });
  EXPECT_NE(it, t.jobs.end()) << name;
  return *it;
}

TEST(Dlrm, FixtureTimesEachWindowCase) {
  // The fixture's last time is 91,730 s: its window's end.
  Result<Trace> t = ReadTrace("sim/readers/testdata/dlrm.csv", TraceFormat::kDlrm);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 6u);
  const TraceJob& whole = Job(*t, "instance_0");  // no times: the whole window
  EXPECT_EQ(whole.submit_s, 0);
  EXPECT_EQ(whole.duration_s, 91730);
  const TraceJob& full = Job(*t, "instance_7281");  // 610, 683, 91730
  EXPECT_EQ(full.submit_s, 610);
  EXPECT_EQ(full.duration_s, 91730 - 683);
  const TraceJob& before = Job(*t, "instance_2454");  // deleted at 85 only
  EXPECT_EQ(before.submit_s, 0);
  EXPECT_EQ(before.duration_s, 85);
  const TraceJob& after = Job(*t, "instance_7280");  // 475, 623, still running
  EXPECT_EQ(after.submit_s, 475);
  EXPECT_EQ(after.duration_s, 91730 - 623);
  const JobSpec& gpu = *t->specs[whole.spec];
  EXPECT_EQ(gpu.kind, WorkloadKind::kRealtimeInference);
  EXPECT_EQ(gpu.resources.gpus, 1);
  EXPECT_EQ(gpu.resources.vcpus, 12);
  EXPECT_DOUBLE_EQ(*gpu.resources.ram_gib, 120.0);
  EXPECT_EQ(gpu.labels.at("app"), "app_0");
  EXPECT_EQ(gpu.labels.at("max_instance_per_node"), "8");
  EXPECT_EQ(t->specs[full.spec]->resources.gpus, 0);
  EXPECT_EQ(t->specs[full.spec]->labels.count("max_instance_per_node"), 0u);
  // instance_0 and instance_7300 differ only in disk: one shape.
  EXPECT_EQ(Job(*t, "instance_7300").spec, whole.spec);
  EXPECT_FALSE(t->fleet.has_value());
}

TEST(Dlrm, BadNumberNamesLineAndColumn) {
  const std::string path = ScratchFile(
      "instance_sn,role,app_name,cpu_request,gpu_request,rdma_request,memory_request,"
      "max_instance_per_node,creation_time,scheduled_time,deletion_time\n"
      "i0,HN,app_0,12,1,25,120.0,8,,,\n"
      "i1,HN,app_0,12,1.5,25,120.0,8,1,2,3\n"
      "i2,HN,app_0,12,1,25,-3,8,1,2,3\n",
      ".csv");
  Result<Trace> t = ReadTrace(path, TraceFormat::kDlrm);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(path + ":3: gpu_request: \"1.5\" must be a whole number"),
            std::string::npos)
      << t.status().message();
  EXPECT_NE(t.status().message().find(path + ":4: memory_request: \"-3\" must be a number >= 0"),
            std::string::npos)
      << t.status().message();
}

// Found by fuzzing: a vCPU request past int's range was converted to int.
// It, and a time past 1e15 s, are refused naming the line and column (times
// are read in a first pass over the file, so each case has its own file).
TEST(Dlrm, ValuesPastTheirRangeAreRefusedNamingLineAndColumn) {
  const std::string header =
      "instance_sn,role,app_name,cpu_request,gpu_request,rdma_request,memory_request,"
      "max_instance_per_node,creation_time,scheduled_time,deletion_time\n";
  const std::string cpu = ScratchFile(header + "i0,HN,app_0,3e19,1,25,120.0,8,1,2,3\n", ".csv");
  Result<Trace> t = ReadTrace(cpu, TraceFormat::kDlrm);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(cpu + ":2: cpu_request: \"3e19\" must be at most 2147483647 vCPUs"),
            std::string::npos)
      << t.status().message();
  const std::string time = ScratchFile(header + "i1,HN,app_0,12,1,25,120.0,8,1,2,2e15\n", ".time.csv");
  t = ReadTrace(time, TraceFormat::kDlrm);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(time + ":2: deletion_time: \"2e15\" must be at most 1e15 seconds"),
            std::string::npos)
      << t.status().message();
}

// README: 23,871 instances (16,485 CN, 7,386 HN with one GPU), 156 apps,
// window about 31 days, all durations >= 0.
TEST(Dlrm, RealTraceMatchesItsReadme) {
  Result<Trace> t = ReadTrace(DataFile(kDlrmTrace), TraceFormat::kDlrm);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 23871u);
  size_t gpu = 0;
  std::set<std::string> apps;
  for (const TraceJob& j : t->jobs) {
    const JobSpec& s = *t->specs[j.spec];
    gpu += *s.resources.gpus == 1 ? 1 : 0;
    apps.insert(s.labels.at("app"));
    EXPECT_GE(j.duration_s, 0);
    EXPECT_LE(j.submit_s + j.duration_s, 31 * 86400);
  }
  EXPECT_EQ(gpu, 7386u);
  EXPECT_EQ(apps.size(), 156u);
}

}  // namespace
}  // namespace meridian::sim
