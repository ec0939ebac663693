// The parsers on output recorded from a real slurm-wlm 22.05 cluster
// (tools/slurm-dev-cluster): testdata/*.txt, exactly as the commands printed it.
#include "backends/slurm/parse.h"

#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace meridian::backends::slurm {
namespace {

using control::RunPhase;

std::string Recorded(const std::string& name) {
  std::ifstream f("backends/slurm/testdata/" + name);
  EXPECT_TRUE(f) << "missing testdata/" << name;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class ParseTest : public ::testing::Test {
 protected:
  // The recordings print local time; they were made in UTC.
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_F(ParseTest, QueueRowsOfEveryState) {
  std::vector<QueueRow> rows = ParseQueue(Recorded("squeue.txt"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].job_id, "4");
  EXPECT_EQ(rows[0].state, "CANCELLED");
  EXPECT_EQ(rows[0].nodes, "");
  EXPECT_EQ(rows[1].state, "FAILED");
  EXPECT_EQ(rows[1].nodes, "node1");
  EXPECT_EQ(rows[1].reason, "NonZeroExitCode");
  EXPECT_EQ(rows[2].state, "PENDING");
  EXPECT_EQ(rows[2].reason, "Resources");
  EXPECT_EQ(rows[3].state, "RUNNING");
  EXPECT_EQ(rows[3].nodes, "node2");
}

TEST_F(ParseTest, QueueSkipsWhatIsNotARow) {
  EXPECT_TRUE(ParseQueue("").empty());
  EXPECT_TRUE(ParseQueue("slurm_load_jobs error: Invalid job id specified\n").empty());
  EXPECT_EQ(ParseQueue("12|RUNNING|node1|None\r\n\nx|y\n").size(), 1u);
}

TEST_F(ParseTest, RunningJobWithItsGpuIndexes) {
  auto r = ParseJobRecord(Recorded("scontrol_job_running.txt"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->job_id, "2");
  EXPECT_EQ(r->name, "meridian-j-00000002-1");
  EXPECT_EQ(r->state, "RUNNING");
  EXPECT_EQ(r->nodes, "node2");
  EXPECT_EQ(r->gpu_indexes, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->start, 1796277134);  // 2026-12-03T05:52:14Z
  EXPECT_EQ(r->exit_code, 0);
}

TEST_F(ParseTest, FailedJobExitCode) {
  auto r = ParseJobRecord(Recorded("scontrol_job_failed.txt"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, "FAILED");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->exit_signal, 0);
  EXPECT_TRUE(r->gpu_indexes.empty());  // "GRES=" once it has ended
  EXPECT_EQ(r->end, 1796277134);
  PhaseOfJob p = MapJobState(r->job_id, r->state, r->exit_code, r->exit_signal, r->nodes);
  EXPECT_EQ(p.phase, RunPhase::kExited);
  EXPECT_EQ(p.exit_code, 3);
  EXPECT_EQ(p.message, "Slurm job 1 FAILED on node1");
}

// The pending job's command is `echo 'ExitCode=0:0 JobState=COMPLETED'`: the
// fields Slurm wrote first are the ones read.
TEST_F(ParseTest, ACommandThatLooksLikeFieldsIsNotRead) {
  auto r = ParseJobRecord(Recorded("scontrol_job_pending.txt"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, "PENDING");
  EXPECT_EQ(r->reason, "Resources");
  EXPECT_EQ(r->start, 0);  // StartTime=Unknown
  EXPECT_EQ(r->nodes, "");
  auto forged = ParseJobRecord("JobId=9 JobName=x JobState=FAILED ExitCode=1:0 Command=/b ExitCode=0:0 JobState=COMPLETED");
  ASSERT_TRUE(forged.ok());
  EXPECT_EQ(forged->state, "FAILED");
  EXPECT_EQ(forged->exit_code, 1);
}

TEST_F(ParseTest, CancelledJobs) {
  auto killed = ParseJobRecord(Recorded("scontrol_job_killed.txt"));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->state, "CANCELLED");
  EXPECT_EQ(killed->exit_signal, 9);  // ExitCode=0:9, not DerivedExitCode=0:0
  PhaseOfJob p = MapJobState(killed->job_id, killed->state, killed->exit_code, killed->exit_signal, killed->nodes);
  EXPECT_EQ(p.phase, RunPhase::kKilled);
  EXPECT_EQ(p.signal, SIGKILL);

  auto before = ParseJobRecord(Recorded("scontrol_job_cancelled.txt"));
  ASSERT_TRUE(before.ok());
  PhaseOfJob q = MapJobState(before->job_id, before->state, before->exit_code, before->exit_signal, before->nodes);
  EXPECT_EQ(q.phase, RunPhase::kKilled);
  EXPECT_EQ(q.signal, SIGTERM);
  EXPECT_EQ(q.message, "Slurm job 4 CANCELLED (before it started)");
}

TEST_F(ParseTest, EpochTimesAndErrors) {
  auto r = ParseJobRecord("JobId=7 JobName=n JobState=RUNNING StartTime=1796277219 EndTime=Unknown");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start, 1796277219);
  EXPECT_EQ(r->end, 0);
  EXPECT_FALSE(ParseJobRecord("slurm_load_jobs error: Invalid job id specified").ok());
}

TEST_F(ParseTest, NodesIdleMixedDrainedDown) {
  std::vector<NodeRow> n = ParseNodes(Recorded("sinfo.txt"));
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].name, "node1");
  EXPECT_EQ(n[0].state, "idle");
  EXPECT_EQ(n[0].gres, "gpu:a100-80gb:4");
  EXPECT_EQ(n[0].cpus, 32);
  EXPECT_EQ(n[0].mem_mib, 262144);
  EXPECT_EQ(n[0].partition, "gpu");
  EXPECT_EQ(n[1].state, "mixed");
  EXPECT_EQ(n[2].state, "drained");
  EXPECT_EQ(n[2].reason, "fan failure | ticket 12");  // the reason keeps its '|'
  NodeHealth h = MapNodeState(n[2].state, n[2].reason);
  EXPECT_FALSE(h.schedulable);
  EXPECT_EQ(h.reason, "Slurm state drained: fan failure | ticket 12");

  std::vector<NodeRow> d = ParseNodes(Recorded("sinfo_down.txt"));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(MapNodeState(d[0].state, d[0].reason).reason, "Slurm state down: slurmd lost");
  EXPECT_TRUE(MapNodeState(d[1].state, d[1].reason).schedulable);
}

TEST_F(ParseTest, NodeStateTable) {
  struct Case {
    const char* state;
    bool schedulable;
  } cases[] = {
      {"idle", true},      {"mixed", true},     {"allocated", true}, {"completing", true},
      {"idle*", false},    {"down*", false},    {"drained", false},  {"draining", false},
      {"fail", false},     {"maint", false},    {"inval", false},    {"idle~", false},
      {"reserved", false}, {"future", false},   {"mixed@", false},   {"unknown", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MapNodeState(c.state, "none").schedulable, c.schedulable) << c.state;
  }
  EXPECT_EQ(MapNodeState("idle*", "none").reason, "Slurm state idle* (not responding)");
}

TEST_F(ParseTest, JobStateTable) {
  struct Case {
    const char* state;
    int code, sig;
    RunPhase phase;
  } cases[] = {
      {"PENDING", 0, 0, RunPhase::kStarting},     {"CONFIGURING", 0, 0, RunPhase::kStarting},
      {"RUNNING", 0, 0, RunPhase::kRunning},      {"COMPLETING", 0, 0, RunPhase::kRunning},
      {"SUSPENDED", 0, 0, RunPhase::kRunning},    {"COMPLETED", 0, 0, RunPhase::kExited},
      {"FAILED", 1, 0, RunPhase::kExited},        {"FAILED", 0, 11, RunPhase::kKilled},
      {"CANCELLED", 0, 15, RunPhase::kKilled},    {"TIMEOUT", 0, 0, RunPhase::kKilled},
      {"OUT_OF_MEMORY", 0, 0, RunPhase::kKilled}, {"NODE_FAIL", 0, 0, RunPhase::kLost},
      {"BOOT_FAIL", 0, 0, RunPhase::kLost},       {"PREEMPTED", 0, 0, RunPhase::kLost},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MapJobState("1", c.state, c.code, c.sig, "").phase, c.phase) << c.state;
  }
  EXPECT_EQ(MapJobState("1", "OUT_OF_MEMORY", 0, 0, "").signal, SIGKILL);
  EXPECT_EQ(MapJobState("1", "TIMEOUT", 0, 0, "n1").message,
            "Slurm job 1 TIMEOUT on n1 (it ran past its time limit)");
  EXPECT_EQ(MapJobState("1", "FAILED", 127, 0, "").message,
            "Slurm job 1 FAILED (exit 127: the command was not found on the node)");
  EXPECT_TRUE(IsTerminalJobState("NODE_FAIL"));
  EXPECT_FALSE(IsTerminalJobState("COMPLETING"));
}

TEST_F(ParseTest, GpuGres) {
  auto g = ParseGpuGres("gpu:a100-80gb:8(S:0-1),nic:1");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->type, "a100-80gb");
  EXPECT_EQ(g->count, 8);
  auto untyped = ParseGpuGres("gpu:4");
  ASSERT_TRUE(untyped.ok());
  EXPECT_EQ(untyped->type, "");
  EXPECT_EQ(untyped->count, 4);
  auto none = ParseGpuGres("(null)");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->count, 0);
  auto mixed = ParseGpuGres("gpu:a100:4,gpu:v100:2");
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("\"a100\" and \"v100\""), std::string::npos);
  EXPECT_FALSE(ParseGpuGres("gpu:a100:x").ok());
}

// Counts past an int, alone or summed over items of one type (found by the
// slurm_output fuzz target: two counts of -1,798,545,043-ish wrapped), are an
// error naming the GRES, not a wrapped count. 2,147,483,647 = INT_MAX.
TEST_F(ParseTest, GpuGresCountsPastAnIntAreAnError) {
  auto alone = ParseGpuGres("gpu:a100:2147483648");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("GPU count 2147483648 is more than a node can hold"),
            std::string::npos)
      << alone.status().message();
  auto summed = ParseGpuGresTypes("gpu:a100:2147483000,gpu:a100:1000");
  ASSERT_FALSE(summed.ok());
  EXPECT_NE(summed.status().message().find("GPU count 1000 (with 2147483000 before it)"), std::string::npos)
      << summed.status().message();
  auto at_max = ParseGpuGresTypes("gpu:a100:2147483000,gpu:a100:647");
  ASSERT_TRUE(at_max.ok());
  EXPECT_EQ(at_max->front().count, 2147483647);
}

// MIG instances offered as GRES typed by profile (tools/slurm-dev-cluster
// --mig 3g.40gb,4g.40gb on 2 GPUs), counted per type in listed order.
TEST_F(ParseTest, GpuGresTypesOfAMigNode) {
  auto t = ParseGpuGresTypes("gpu:3g.40gb:2(S:0),gpu:4g.40gb:2(S:0),nic:1,gpu:3g.40gb:1");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].type, "3g.40gb");
  EXPECT_EQ((*t)[0].count, 3);
  EXPECT_EQ((*t)[1].type, "4g.40gb");
  EXPECT_EQ((*t)[1].count, 2);
  EXPECT_TRUE(ParseGpuGresTypes("(null)")->empty());
  EXPECT_TRUE(IsMigProfileName("3g.40gb"));
  EXPECT_TRUE(IsMigProfileName("1g.10gb+me"));
  EXPECT_TRUE(IsMigProfileName("7g.141gb"));
  EXPECT_FALSE(IsMigProfileName("a100-80gb"));
  EXPECT_FALSE(IsMigProfileName("3g.40"));
  EXPECT_FALSE(IsMigProfileName("g.40gb"));
  EXPECT_FALSE(IsMigProfileName("3g.40gb --uid=0"));
}

TEST_F(ParseTest, SubmittedIdsAndIndexLists) {
  EXPECT_EQ(*ParseSubmitted("12\n"), "12");
  EXPECT_EQ(*ParseSubmitted("13;meridian-dev\n"), "13");
  EXPECT_EQ(*ParseSubmitted("sbatch: warning: x\n14\n"), "14");
  EXPECT_FALSE(ParseSubmitted("Submitted batch job 12").ok());
  EXPECT_EQ(*ParseIndexList("0-1,3,5-6"), (std::vector<int>{0, 1, 3, 5, 6}));
  EXPECT_FALSE(ParseIndexList("3-1").ok());
  EXPECT_FALSE(ParseIndexList("a").ok());
}

}  // namespace
}  // namespace meridian::backends::slurm
