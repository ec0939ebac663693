// The sacct reader on a hand-written `sacct --parsable2 --allocations`
// output (testdata/sacct_berlin.txt, the documented --format columns) and on
// small files for each edge case. Times in the fixture are Europe/Berlin
// local times on 2026-03-01, CET = UTC+1: Submit 10:00 local = 09:00 UTC.
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/readers/test_files.h"
#include "sim/trace.h"

namespace meridian::sim {
namespace {

using Models = std::vector<std::string>;

std::string Fixture() { return std::string(MERIDIAN_READERS_TESTDATA) + "/sacct_berlin.txt"; }

Result<Trace> Read(const std::string& path, const std::string& zone = "Europe/Berlin",
                   const std::string& map = "") {
  TraceOptions o;
  o.time_zone = zone;
  o.gpu_map_path = map;
  return ReadTrace(path, TraceFormat::kSacct, EmbeddedCatalog(), o);
}

TEST(Sacct, ReadsTheFixture) {
  Result<Trace> t = Read(Fixture());
  ASSERT_TRUE(t.ok()) << t.status().message();
  // 9 rows: 4103 (Start None) and 4104 (Start Unknown) never started,
  // 4106.batch is a step: 6 jobs.
  ASSERT_EQ(t->jobs.size(), 6u) << NotesOf(*t);
  EXPECT_EQ(t->format, TraceFormat::kSacct);

  // 4100: Submit 10:00 CET = 09:00 UTC, the earliest: 0. Elapsed 01:30:00 =
  // 5400 s; Timelimit 02:00:00 = 7200 s. gres/gpu:a100=4: the a100 family,
  // recorded on its first model in catalog order.
  const TraceJob& a = *FindJob(*t, "4100");
  EXPECT_EQ(a.submit_s, 0);
  EXPECT_EQ(a.duration_s, 5400);
  EXPECT_EQ(a.time_limit_s, 7200);
  // Start 10:05:00 - Submit 10:00:00 = 300 s recorded wait.
  EXPECT_EQ(a.recorded_wait_s, 300);
  const JobSpec& as = *t->specs[a.spec];
  EXPECT_EQ(as.resources.gpus, 4);
  EXPECT_EQ(as.resources.gpu_models, (Models{"A100-40GB", "A100-80GB"}));
  EXPECT_EQ(as.work.recorded_on, "A100-40GB");
  EXPECT_EQ(as.tenant, "vision");
  EXPECT_EQ(as.resources.vcpus, 8);
  EXPECT_EQ(as.resources.ram_gib, 64.0);
  EXPECT_EQ(as.labels.at("slurm.partition"), "gpu");
  EXPECT_EQ(as.labels.at("slurm.qos"), "normal");

  // 4101: 10:30 local, 1800 s after 4100. TIMEOUT, Elapsed 1-02:00:00 =
  // 86400 + 7200 = 93600 s; Timelimit 2-00:00:00 = 172800 s. Account empty:
  // the tenant is the user. 16 GPUs on node=2: one gang of 16.
  const TraceJob& b = *FindJob(*t, "4101");
  EXPECT_EQ(b.submit_s, 1800);
  EXPECT_EQ(b.duration_s, 93600);
  EXPECT_EQ(b.time_limit_s, 172800);
  // Start 11:00:00 - Submit 10:30:00 = 1800 s.
  EXPECT_EQ(b.recorded_wait_s, 1800);
  const JobSpec& bs = *t->specs[b.spec];
  EXPECT_EQ(bs.tenant, "bob");
  EXPECT_EQ(bs.resources.gpus, 16);
  EXPECT_EQ(bs.labels.at("slurm.nodes"), "2");
  EXPECT_EQ(bs.resources.gpu_models, (Models{"H100-80GB", "H100-NVL-94GB", "H100-PCIE-80GB"}));
  EXPECT_EQ(bs.work.recorded_on, "H100-80GB");
  EXPECT_EQ(bs.resources.ram_gib, 1024.0);  // mem=1T

  // 4102: OUT_OF_MEMORY at 11:00 local: 3600 s. Elapsed "10:00" is MM:SS:
  // 600 s. UNLIMITED: no limit. Untyped gres/gpu=1 and no map: any model.
  const TraceJob& c = *FindJob(*t, "4102");
  EXPECT_EQ(c.submit_s, 3600);
  EXPECT_EQ(c.duration_s, 600);
  EXPECT_EQ(c.time_limit_s, -1);
  EXPECT_TRUE(t->specs[c.spec]->resources.gpu_models.empty());
  EXPECT_EQ(t->specs[c.spec]->work.recorded_on, "");
  EXPECT_DOUBLE_EQ(*t->specs[c.spec]->resources.ram_gib, 8000.0 / 1024);  // mem=8000M

  // 4106: PREEMPTED, 13:00 local = 12:00 UTC, 3 h after 09:00 UTC: 10800 s;
  // a 1 h run.
  const TraceJob& d = *FindJob(*t, "4106");
  EXPECT_EQ(d.submit_s, 10800);
  EXPECT_EQ(d.duration_s, 3600);
  EXPECT_EQ(t->specs[d.spec]->resources.gpu_models, Models{"V100-32GB"});
  // 4107: NODE_FAIL at 14:00 local, 4 h in: 14400 s; 20 min; Partition_Limit: none.
  EXPECT_EQ(FindJob(*t, "4107")->submit_s, 14400);
  EXPECT_EQ(FindJob(*t, "4107")->duration_s, 1200);
  EXPECT_EQ(FindJob(*t, "4107")->time_limit_s, -1);
  // 4108: FAILED after 5 min; rtx_a6000 is no catalog family: any model.
  EXPECT_EQ(FindJob(*t, "4108")->duration_s, 300);
  EXPECT_TRUE(t->specs[FindJob(*t, "4108")->spec]->resources.gpu_models.empty());

  EXPECT_TRUE(HasNote(*t, "second 0 is the earliest Submit, 2026-03-01T09:00:00Z (in Europe/Berlin)")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "2 jobs never started")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 job step rows")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "replayed by state: 1 COMPLETED, 1 FAILED, 1 NODE_FAIL, 1 OUT_OF_MEMORY, "
                          "1 PREEMPTED, 1 TIMEOUT")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "GPUs: type rtx_a6000 in partition ws -> any model (no catalog family; map it "
                          "with --gpu-map): 1 jobs")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "GPUs: untyped in partition debug -> any model: 1 jobs")) << NotesOf(*t);
}

// The same file in UTC: every time an hour later in UTC terms, so second 0
// moves, and the offsets between jobs stay.
TEST(Sacct, TimeZoneMovesSecondZero) {
  Result<Trace> t = Read(Fixture(), "UTC");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(HasNote(*t, "2026-03-01T10:00:00Z (in UTC)")) << NotesOf(*t);
  EXPECT_EQ(FindJob(*t, "4101")->submit_s, 1800);
}

TEST(Sacct, GpuMapPinsTypesAndPartitions) {
  const std::string map = ScratchFile("a100: A100-80GB\npartition:debug: T4\nrtx_a6000: L40S\n", ".yaml");
  Result<Trace> t = Read(Fixture(), "Europe/Berlin", map);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->specs[FindJob(*t, "4100")->spec]->resources.gpu_models, Models{"A100-80GB"});
  EXPECT_EQ(t->specs[FindJob(*t, "4100")->spec]->work.recorded_on, "A100-80GB");
  EXPECT_EQ(t->specs[FindJob(*t, "4102")->spec]->resources.gpu_models, Models{"T4"});  // untyped, partition debug
  EXPECT_EQ(t->specs[FindJob(*t, "4108")->spec]->resources.gpu_models, Models{"L40S"});
  // Not in the map: read as a catalog name.
  EXPECT_EQ(t->specs[FindJob(*t, "4106")->spec]->resources.gpu_models, Models{"V100-32GB"});
}

TEST(Sacct, BadMapTargetIsAnErrorWithSuggestions) {
  const std::string map = ScratchFile("a100: A100-80\n", ".yaml");
  Result<Trace> t = Read(Fixture(), "UTC", map);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(map + ":1: a100: \"A100-80\" is not a GPU model in the catalog; did you mean"),
            std::string::npos) << t.status().message();
}

// JobID (array tasks) in any column order, ReqTRES only, no Elapsed (End -
// Start), steps of array tasks, a job still running, a requeued ID.
TEST(Sacct, ArrayTasksColumnOrderAndRunningJobs) {
  const std::string path = ScratchFile(
      "State|JobID|Submit|Start|End|ReqTRES|Elapsed\n"
      "PENDING|4108_[1-3]|2026-03-01T10:00:00|Unknown|Unknown|gres/gpu=1|00:00:00\n"
      "COMPLETED|4108_4|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T10:10:00|gres/gpu=1|\n"
      "COMPLETED|4108_4.batch|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T10:10:00|gres/gpu=1|\n"
      "RUNNING|5000|2026-03-01T11:00:00|2026-03-01T11:00:00|Unknown|gres/gpu:l4=1|00:45:00\n"
      "REQUEUED|5001|2026-03-01T11:00:00|2026-03-01T11:00:00|2026-03-01T11:01:00||\n"
      "COMPLETED|5001|2026-03-01T11:00:00|2026-03-01T11:05:00|2026-03-01T11:06:00||\n",
      ".txt");
  Result<Trace> t = Read(path, "UTC");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 4u) << NotesOf(*t);
  // No Elapsed value: End - Start = 10 min.
  EXPECT_EQ(FindJob(*t, "4108_4")->duration_s, 600);
  // Running: Elapsed so far, 45 min; submitted an hour after second 0.
  EXPECT_EQ(FindJob(*t, "5000")->duration_s, 2700);
  EXPECT_EQ(FindJob(*t, "5000")->submit_s, 3600);
  EXPECT_EQ(t->specs[FindJob(*t, "5000")->spec]->resources.gpu_models, Models{"L4"});
  // No TRES at all: a CPU-only job; the repeated ID gets #2.
  EXPECT_EQ(t->specs[FindJob(*t, "5001")->spec]->resources.gpus, 0);
  EXPECT_EQ(FindJob(*t, "5001#2")->duration_s, 60);
  EXPECT_TRUE(HasNote(*t, "1 jobs never started")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 job step rows")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 jobs still running")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "1 rows repeat a job ID")) << NotesOf(*t);
  EXPECT_TRUE(HasNote(*t, "2 jobs without GPUs in their TRES")) << NotesOf(*t);  // 5001, 5001#2
}

// 2026-10-25, Berlin: 01:59 CEST = 23:59 UTC (Oct 24); 02:30 is ambiguous
// and read as its first occurrence, CEST: 00:30 UTC. 31 min = 1860 s apart.
TEST(Sacct, AmbiguousLocalTimeIsTheFirstOccurrence) {
  const std::string path = ScratchFile(
      "JobIDRaw|Submit|Start|End|State|AllocTRES\n"
      "1|2026-10-25T01:59:00|2026-10-25T01:59:00|2026-10-25T02:10:00|COMPLETED|gres/gpu=1\n"
      "2|2026-10-25T02:30:00|2026-10-25T02:30:00|2026-10-25T02:40:00|COMPLETED|gres/gpu=1\n",
      ".txt");
  Result<Trace> t = Read(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(FindJob(*t, "2")->submit_s, 1860);
  // 02:10 CEST (the first 02:10) - 01:59 CEST = 11 min.
  EXPECT_EQ(FindJob(*t, "1")->duration_s, 660);
}

TEST(Sacct, TheOnlyRowMalformedIsAnError) {
  const std::string path = ScratchFile(
      "JobIDRaw|Submit|Start|End|State|AllocTRES\n"
      "1|yesterday|2026-03-01T10:00:00|2026-03-01T11:00:00|COMPLETED|gres/gpu=1\n",
      ".txt");
  Result<Trace> t = Read(path, "UTC");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            path + ":2: Submit: \"yesterday\" is not a sacct time (YYYY-MM-DDTHH:MM:SS; leave "
                   "SLURM_TIME_FORMAT unset)");
}

TEST(Sacct, MalformedRowsBesideGoodOnesAreSkippedAndCounted) {
  // Every row submitted, started and ended alike; they differ in the last two fields.
  const std::string times = "|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T11:00:00|COMPLETED|";
  const std::string path = ScratchFile("JobIDRaw|Submit|Start|End|State|AllocTRES|Elapsed\n"
                                       "1" + times + "gres/gpu=1|01:00:00\n" +
                                       "2" + times + "gres/gpu=1|1:xx\n" +
                                       "3" + times + "gres/gpu=x|01:00:00\n" +
                                       "4|2026-03-01T10:00:00|COMPLETED\n",
                                       ".txt");
  Result<Trace> t = Read(path, "UTC");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs.size(), 1u);
  EXPECT_TRUE(HasNote(*t, "3 malformed rows skipped; the first: " + path +
                              ":3: Elapsed: \"1:xx\" is not a duration ([D-]HH:MM:SS)")) << NotesOf(*t);
}

TEST(Sacct, NoUsableRowIsAnErrorNamingEveryProblem) {
  const std::string path = ScratchFile(
      "JobIDRaw|Submit|Start|End|State|AllocTRES\n"
      "1|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T09:00:00|COMPLETED|gres/gpu=1\n"
      "2|2026-03-01T10:00:00|2026-03-01T10:00:00|2026-03-01T11:00:00|COMPLETED|cpu=1,node\n",
      ".txt");
  Result<Trace> t = Read(path, "UTC");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            path + ":2: End: \"2026-03-01T09:00:00\" is before Start\n" + path +
                ":3: AllocTRES: \"cpu=1,node\" item \"node\" is not key=count");
  const std::string never = ScratchFile(
      "JobIDRaw|Submit|Start|End|State|AllocTRES\n"
      "1|2026-03-01T10:00:00|None|2026-03-01T11:00:00|CANCELLED by 0|\n",
      ".txt");
  t = Read(never, "UTC");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            never + ": no job in the file started (1 never started, 0 step rows); nothing to replay");
}

// A million-job trace holds a million TraceJobs: the recorded wait lives in
// padding, so a job is no bigger than before it was added.
TEST(Sacct, TraceJobStaysSmall) { EXPECT_LE(sizeof(TraceJob), 88u); }

TEST(Sacct, HeaderMustNameTheNeededColumns) {
  const std::string path = ScratchFile("JobIDRaw|Submit|Start|End|AllocTRES\n", ".txt");
  Result<Trace> t = Read(path, "UTC");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().substr(0, path.size() + 40),
            (path + ":1: header: lacks the column State; run ").substr(0, path.size() + 40));
  Result<Trace> bad_zone = Read(Fixture(), "Mars/Olympus");
  ASSERT_FALSE(bad_zone.ok());
  EXPECT_NE(bad_zone.status().message().find("--tz: \"Mars/Olympus\""), std::string::npos);
}

}  // namespace
}  // namespace meridian::sim
