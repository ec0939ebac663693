// `meridian simulate` end to end, in-process as a user runs it: a JSONL
// trace, several policies (shipped names and a profile file), --out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/test_cli.h"

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int rc;
  std::string out, err;
};

Ran Meridian(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int rc = RunMeridian(args, 1767225600, out, err);
  return {rc, out.str(), err.str()};
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SimulateCmd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meridian-simulate-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "t.jsonl")
        << R"({"name": "a", "submit_s": 0, "duration_s": 3600, "gpus": 8, "gpu_model": "H100-80GB", "tenant": "x", "kind": "training", "deadline_s": 86400, "preemptible": true})"
        << "\n"
        << R"({"name": "b", "submit_s": 60, "duration_s": 1800, "gpus": 1, "kind": "batch-inference"})" << "\n"
        << R"({"name": "c", "submit_s": 120, "gpus": 2, "kind": "fine-tuning", "model": {"params_b": 7}, "work": {"tokens": 1e8}})"
        << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(SimulateCmd, ComparesPoliciesAndWritesTheThreeFiles) {
  const std::string profile = std::string(MERIDIAN_SOURCE_DIR) + "/sched/profiles/kueue-like.yaml";
  Ran r = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--policy",
               "default,fifo-greedy," + profile, "--seed", "3", "--out", Path("out")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("POLICY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fifo-greedy"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // not a terminal: no progress bar
  for (const char* f : {"summary.json", "jobs.csv", "report.html"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / f)) << f;
  }
  const std::string summary = Slurp(dir_ / "out" / "summary.json");
  EXPECT_NE(summary.find("\"policy\": \"" + profile + "\""), std::string::npos);  // as given
  // The same command again: the same bytes.
  Ran again = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--policy",
                   "default,fifo-greedy," + profile, "--seed", "3", "--out", Path("out")});
  ASSERT_EQ(again.rc, kExitOk) << again.err;
  EXPECT_EQ(Slurp(dir_ / "out" / "summary.json"), summary);
  const std::string csv = Slurp(dir_ / "out" / "jobs.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 3 * 3);
}

// sim/migrate_test.cc's case from the command line: a preemptible 10 h job
// starts on the dearer of two owned clusters while a job that may not be
// stopped holds the cheaper one for 2 h, and moves there at its 4th
// checkpoint; --no-migrations keeps it where it started.
TEST_F(SimulateCmd, NoMigrationsTurnsMovesOff) {
  std::ofstream(dir_ / "fleet.yaml") << R"(clusters:
  - {name: here, region: "gcp:us-central1", pricing: owned, gpu_hour_usd: 2.00,
     nodes: [{count: 1, gpu: H100-80GB, gpus: 8, vcpus: 96, ram_gib: 1024}]}
  - {name: there, region: "gcp:europe-west4", pricing: owned, gpu_hour_usd: 1.00,
     nodes: [{count: 1, gpu: H100-80GB, gpus: 8, vcpus: 96, ram_gib: 1024}]}
elastic: false
)";
  std::ofstream(dir_ / "moves.jsonl")
      << R"({"name": "blocker", "submit_s": 0, "duration_s": 7200, "gpus": 8, "gpu_model": "H100-80GB", "kind": "training"})"
      << "\n"
      << R"({"name": "mover", "submit_s": 1, "duration_s": 36000, "gpus": 8, "gpu_model": "H100-80GB", "kind": "training", "preemptible": true, "checkpoint": {"interval": "30m"}})"
      << "\n";
  for (const bool off : {false, true}) {
    std::vector<std::string> args = {"simulate", "--trace", Path("moves.jsonl"), "--format", "jsonl",
                                     "--fleet", Path("fleet.yaml"), "--out", Path("out")};
    if (off) args.push_back("--no-migrations");
    Ran r = Meridian(args);
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    const std::string summary = Slurp(dir_ / "out" / "summary.json");
    EXPECT_NE(summary.find(off ? "\"migrations\": 0," : "\"migrations\": 1,"), std::string::npos) << summary;
    const std::string csv = Slurp(dir_ / "out" / "jobs.csv");
    // The last row is the mover's; its last field, moves.
    EXPECT_EQ(csv.substr(csv.rfind(',', csv.size() - 2) + 1), off ? "0\n" : "1\n") << csv;
  }
}

TEST_F(SimulateCmd, BadInputIsExitTwoWithTheReason) {
  Ran unknown = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--policy", "nope"});
  EXPECT_EQ(unknown.rc, kExitBadInput);
  EXPECT_NE(unknown.err.find("--policy nope: profile \"nope\""), std::string::npos) << unknown.err;

  std::ofstream(dir_ / "bad.jsonl") << "{\"name\": \"a\", \"submit_s\": \"soon\"}\n";
  Ran bad = Meridian({"simulate", "--trace", Path("bad.jsonl"), "--format", "jsonl"});
  EXPECT_EQ(bad.rc, kExitBadInput);
  EXPECT_NE(bad.err.find("bad.jsonl:1: submit_s"), std::string::npos) << bad.err;

  Ran no_format = Meridian({"simulate", "--trace", Path("t.jsonl")});
  EXPECT_EQ(no_format.rc, kExitBadInput);

  std::ofstream(dir_ / "fleet.yaml") << "clusters:\n  - name: x\n    region: nowhere\n    gpu_hour_usd: 1\n    nodes: [{count: 1, gpu: H100-80GB, gpus: 8}]\n";
  Ran fleet = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--fleet", Path("fleet.yaml")});
  EXPECT_EQ(fleet.rc, kExitBadInput);
  EXPECT_NE(fleet.err.find("nowhere"), std::string::npos) << fleet.err;
}

// A policy that rejects more than 1% of the jobs is named on stderr after
// the table, with its reasons in full; at 1% or less nothing is said. The
// fleet (examples/fleets/cpu-tight.yaml) is 4 x 8 A100-80GB, no elastic
// capacity, so the one job pinned to H100-80GB can never run:
//   1 of 10 = 10.0% > 1%: a warning per policy;  1 of 100 = 1.0%: none.
TEST_F(SimulateCmd, RejectionsOverOnePercentAreNamedOnStderrInFull) {
  const std::string fleet = std::string(MERIDIAN_SOURCE_DIR) + "/examples/fleets/cpu-tight.yaml";
  struct Case {
    int jobs;  // one of them pinned to H100-80GB
    std::string want_err;
  } cases[] = {
      {10,
       "warning: default rejected 1 of 10 jobs (10.0%); top reasons:\n"
       "  1 x rejected: no node or offering of an allowed GPU model in an allowed region; "
       "the fleet has no node of H100-80GB\n"
       "warning: fifo-strict rejected 1 of 10 jobs (10.0%); top reasons:\n"
       "  1 x rejected: no node or offering of an allowed GPU model in an allowed region; "
       "the fleet has no node of H100-80GB\n"},
      {100, ""},
  };
  for (const Case& c : cases) {
    const std::string trace = Path("r.jsonl");
    {
      std::ofstream f(trace);
      f << R"({"name": "h100", "submit_s": 0, "duration_s": 600, "gpus": 1, "gpu_model": "H100-80GB"})" << "\n";
      for (int i = 1; i < c.jobs; ++i) {
        f << R"({"name": "a)" << i << R"(", "submit_s": )" << i
          << R"(, "duration_s": 600, "gpus": 1, "gpu_model": "A100-80GB"})" << "\n";
      }
    }
    testutil::CliRun r = testutil::Meridian({"simulate", "--trace", trace, "--format", "jsonl", "--fleet",
                                             fleet, "--policy", "default,fifo-strict", "-q"});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    EXPECT_EQ(r.err, c.want_err) << c.jobs;
    // The table compares the jobs both policies finished: all but the H100 job.
    EXPECT_NE(r.out.find("Over the " + std::to_string(c.jobs - 1) + " jobs every policy finished"),
              std::string::npos) << r.out;
  }
}

// A team's Slurm history end to end: the reader's fixture (6 started jobs)
// on a fleet of 4 x 8 A100-80GB (examples/fleets/cpu-tight.yaml; the H100
// and V100 jobs have no node there and are rejected, which is a result, not
// an error). A file whose only job never started has no usable row: exit 2,
// naming the file.
TEST_F(SimulateCmd, SacctHistoryEndToEnd) {
  const std::string trace = std::string(MERIDIAN_SOURCE_DIR) + "/sim/readers/testdata/sacct_berlin.txt";
  const std::string fleet = std::string(MERIDIAN_SOURCE_DIR) + "/examples/fleets/cpu-tight.yaml";
  std::ofstream(dir_ / "map.yaml") << "a100: A100-80GB\n";
  Ran r = Meridian({"simulate", "--trace", trace, "--format", "sacct", "--tz", "Europe/Berlin",
                    "--gpu-map", Path("map.yaml"), "--fleet", fleet, "--policy", "fifo-backfill"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("fifo-backfill"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("trace: 2 jobs never started"), std::string::npos) << r.err;

  std::ofstream(dir_ / "never.txt")
      << "JobIDRaw|Submit|Start|End|State|AllocTRES\n"
      << "1|2026-03-01T10:00:00|Unknown|Unknown|PENDING|\n";
  Ran none = Meridian({"simulate", "--trace", Path("never.txt"), "--format", "sacct", "--tz", "UTC"});
  EXPECT_EQ(none.rc, kExitBadInput);
  EXPECT_NE(none.err.find(Path("never.txt") + ": no job in the file started"), std::string::npos)
      << none.err;

  Ran zone = Meridian({"simulate", "--trace", trace, "--format", "sacct", "--tz", "Europe/Berln"});
  EXPECT_EQ(zone.rc, kExitBadInput);
  EXPECT_NE(zone.err.find("--tz: \"Europe/Berln\""), std::string::npos) << zone.err;
}

// The Kubernetes history the same way: 3 finished Jobs.
TEST_F(SimulateCmd, K8sJobsHistoryEndToEnd) {
  const std::string trace = std::string(MERIDIAN_SOURCE_DIR) + "/sim/readers/testdata/k8s_jobs.json";
  Ran r = Meridian({"simulate", "--trace", trace, "--format", "k8s-jobs", "-q"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("POLICY"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace meridian::cli
