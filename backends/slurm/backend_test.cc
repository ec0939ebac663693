// The Slurm backend over a scripted cluster: its commands go to an injected
// runner that answers with output recorded from slurm-wlm 22.05
// (testdata/), and its clocks are held by the test. What a real cluster
// shows is in cluster_test.cc; this shows what only a held clock and a
// record of every command can: which environment each command gets, what a
// command that hangs does, and timers that run on the injected clock.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "backends/slurm/slurm.h"

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;

std::string Testdata(const std::string& name) {
  std::ifstream f("backends/slurm/testdata/" + name);
  EXPECT_TRUE(f) << "missing testdata/" << name;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Tool(const ProcessCall& c) { return fs::path(c.argv.at(0)).filename().string(); }

bool Has(const ProcessCall& c, const std::string& arg) {
  return std::find(c.argv.begin(), c.argv.end(), arg) != c.argv.end();
}

// A cluster of recorded answers: sinfo lists node1-3 (sinfo.txt), sbatch
// submits job 42; squeue and scontrol answer from `queue` and `record`.
struct ScriptedCluster {
  std::vector<ProcessCall> calls;
  std::string queue;            // squeue's stdout
  std::string record;           // scontrol's stdout; "" = "Invalid job id specified"
  bool sbatch_hangs = false;
  int sbatch_exit = 0;          // non-zero: sbatch fails with sbatch_err
  std::string sbatch_err;
  std::string named;            // squeue --name=...'s stdout
  int scancel_failures = 0;     // scancel calls that fail before one succeeds
  std::string scancel_err = "scancel: error: Kill job error on job id 42: Unable to contact slurm "
                            "controller (connect failure)\n";
  UnixSeconds now = 1'800'000'000;
  int64_t steady = 1'000'000;

  Result<ProcessOutput> Run(const ProcessCall& c) {
    calls.push_back(c);
    ProcessOutput o;
    o.exit_code = 0;
    const std::string tool = Tool(c);
    if (tool == "sinfo") {
      o.out = Testdata("sinfo.txt");
    } else if (tool == "sbatch") {
      if (sbatch_hangs) {
        o.exit_code = -1;
        o.signal = 9;
        o.timed_out = true;
      } else if (sbatch_exit != 0) {
        o.exit_code = sbatch_exit;
        o.err = sbatch_err;
      } else {
        o.out = "42\n";
      }
    } else if (tool == "squeue") {
      const bool by_name = std::any_of(c.argv.begin(), c.argv.end(),
                                       [](const std::string& a) { return a.starts_with("--name="); });
      o.out = by_name ? named : queue;
    } else if (tool == "scancel") {
      if (scancel_failures > 0) {
        --scancel_failures;
        o.exit_code = 1;
        o.err = scancel_err;
      }
    } else if (tool == "scontrol") {
      if (record.empty()) {
        o.exit_code = 1;
        o.err = "slurm_load_jobs error: Invalid job id specified\n";
      } else {
        o.out = record;
      }
    }
    return o;
  }
  int Count(const std::string& tool) const {
    return static_cast<int>(std::count_if(calls.begin(), calls.end(),
                                          [&](const ProcessCall& c) { return Tool(c) == tool; }));
  }
};

class SlurmBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("meridian-slurm-scripted-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    // The backend looks for the client commands before it runs any.
    for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "sinfo"}) {
      std::ofstream(dir_ / "bin" / tool) << "#!/bin/sh\nexit 99\n";
      fs::permissions(dir_ / "bin" / tool, fs::perms::owner_all);
    }
    SlurmBackendOptions o;
    o.cluster = "dev";
    o.partitions = {"gpu"};
    o.bin_dir = (dir_ / "bin").string();
    o.state_dir = (dir_ / "state").string();
    o.gpu_models = {{"a100-80gb", "A100-80GB"}};
    o.refresh_ms = 500;
    o.environment.run = [this](const ProcessCall& c) { return cluster_.Run(c); };
    o.environment.clock = [this] { return cluster_.now; };
    o.environment.steady_ms = [this] { return cluster_.steady; };
    auto b = MakeSlurmBackend(o);
    ASSERT_TRUE(b.ok()) << b.status().message();
    backend_ = std::move(b).value();
  }
  void TearDown() override { fs::remove_all(dir_); }

  control::LaunchRequest Request() const {
    control::LaunchRequest r;
    r.job_id = "j-00000007";
    r.tenant = "team-a";
    r.argv = {"python3", "train.py"};
    r.env = {{"API_KEY", "s3cret-of-team-a"}};
    r.gpus = {0, 1};
    r.node = "node1";
    return r;
  }
  // Request() as attempt `attempt` of `job_id`.
  control::LaunchRequest Request(const std::string& job_id, int attempt) const {
    control::LaunchRequest r = Request();
    r.job_id = job_id;
    r.attempt = attempt;
    return r;
  }

  fs::path dir_;
  ScriptedCluster cluster_;
  std::unique_ptr<control::Backend> backend_;
};

TEST_F(SlurmBackendTest, EveryCommandGetsOnlyTheMinimalEnvironmentAndTheJobsSecretsStayInItsFile) {
  setenv("MERIDIAN_DAEMON_ONLY", "daemon-secret", 1);
  auto handle = backend_->Launch(Request());
  unsetenv("MERIDIAN_DAEMON_ONLY");
  ASSERT_TRUE(handle.ok()) << handle.status().message();
  EXPECT_EQ(*handle, "slurm:dev:42");
  ASSERT_EQ(cluster_.Count("sbatch"), 1);
  // PATH, and what Slurm's own commands are told (SLURM_CONF when set, the
  // time format): nothing else of the daemon's, nothing of the job's.
  for (const ProcessCall& c : cluster_.calls) {
    for (const std::string& e : c.env) {
      const std::string name = e.substr(0, e.find('='));
      EXPECT_TRUE(name == "PATH" || name == "SLURM_CONF" || name == "SLURM_TIME_FORMAT")
          << Tool(c) << " got " << e;
      EXPECT_EQ(e.find("s3cret"), std::string::npos) << Tool(c);
    }
    for (const std::string& a : c.argv) EXPECT_EQ(a.find("s3cret"), std::string::npos) << Tool(c);
    EXPECT_EQ(c.input, "") << Tool(c);
  }
  const fs::path env_file = dir_ / "state" / "jobs" / "j-00000007" / "attempt-1.env";
  std::ifstream f(env_file);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("s3cret-of-team-a"), std::string::npos) << text.str();
  struct stat st{};
  ASSERT_EQ(stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SlurmBackendTest, ASbatchThatHangsFailsTheLaunchNamingTheCommandAndItsTimeout) {
  cluster_.sbatch_hangs = true;
  auto handle = backend_->Launch(Request());
  ASSERT_FALSE(handle.ok());
  const std::string sbatch = (dir_ / "bin" / "sbatch").string();
  EXPECT_EQ(handle.status().message(), "\"" + sbatch + "\" did not finish within 15000 ms (killed)");
  // Nothing watched: a later Poll asks Slurm about no job.
  EXPECT_TRUE(backend_->Poll().empty());
  EXPECT_EQ(cluster_.Count("squeue"), 0);
}

TEST_F(SlurmBackendTest, AJobSlurmForgotEndsAtTheInjectedClocksTime) {
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  cluster_.queue = "";   // squeue no longer lists it
  cluster_.record = "";  // scontrol: Invalid job id
  cluster_.now = 1'800'000'123;
  auto seen = backend_->Poll();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].phase, control::RunPhase::kLost);
  EXPECT_EQ(seen[0].ended, 1'800'000'123);
}

TEST_F(SlurmBackendTest, SqueueRunsAtMostOncePerRefreshIntervalOfTheInjectedSteadyClock) {
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  cluster_.queue = "42|PENDING||Resources\n";
  backend_->Poll();  // the launch asks for a look at once
  EXPECT_EQ(cluster_.Count("squeue"), 1);
  cluster_.steady += 499;  // refresh_ms is 500
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("squeue"), 1);
  cluster_.steady += 1;
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("squeue"), 2);
}

TEST_F(SlurmBackendTest, AStopsGracePeriodRunsOnTheInjectedSteadyClock) {
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  // Running, as Slurm recorded job 2 running on node2 (the same fields for 42).
  std::string record = Testdata("scontrol_job_running.txt");
  record.replace(record.find("JobId=2 "), 8, "JobId=42 ");
  cluster_.record = record;
  cluster_.queue = "42|RUNNING|node1|None\n";
  auto seen = backend_->Poll();
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_EQ(seen[0].phase, control::RunPhase::kRunning);

  ASSERT_TRUE(backend_->Stop("slurm:dev:42", 30).ok());
  ASSERT_EQ(cluster_.Count("scancel"), 1);
  EXPECT_TRUE(Has(cluster_.calls.back(), "--signal=TERM"));
  cluster_.steady += 29'999;  // 1 ms short of the grace period
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("scancel"), 1);
  cluster_.steady += 1;
  backend_->Poll();
  ASSERT_EQ(cluster_.Count("scancel"), 2);
  const auto last = std::find_if(cluster_.calls.rbegin(), cluster_.calls.rend(),
                                 [](const ProcessCall& c) { return Tool(c) == "scancel"; });
  EXPECT_EQ(last->argv, (std::vector<std::string>{(dir_ / "bin" / "scancel").string(), "42"}));
}

// What the controller printed decides whether meridian tries again
// (control/backend.h, IsTransient): a refusal is permanent, a controller that
// did not answer or said "not now" is transient. Messages from slurm-wlm
// 22.05's slurm_errno texts.
TEST_F(SlurmBackendTest, SbatchFailuresAreTransientOnlyWhenTheControllerDidNotRefuse) {
  struct Case {
    std::string err;
    bool transient;
  } cases[] = {
      {"sbatch: error: Batch job submission failed: Invalid partition name specified\n", false},
      {"sbatch: error: Batch job submission failed: Requested node configuration is not "
       "available\n", false},
      {"sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
       "specification\n", false},
      {"sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
       "failure)\n", true},
      {"sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying\n"
       "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n",
       true},
      {"", true},  // it said nothing: not a refusal
  };
  for (const Case& c : cases) {
    cluster_.sbatch_exit = 1;
    cluster_.sbatch_err = c.err;
    auto handle = backend_->Launch(Request());
    ASSERT_FALSE(handle.ok()) << c.err;
    // control::IsTransient: kInternal is transient, kInvalidArgument permanent.
    EXPECT_EQ(handle.status().code(),
              c.transient ? StatusCode::kInternal : StatusCode::kInvalidArgument)
        << handle.status().message();
    EXPECT_TRUE(handle.status().message().starts_with("sbatch exited with 1: ")) << c.err;
  }
  // A refusal is not looked for by name on the next try: sbatch ran and said no.
  EXPECT_EQ(cluster_.Count("squeue"), 0);
}

TEST_F(SlurmBackendTest, ARetryAfterASbatchTimeoutAdoptsTheJobItSubmittedAfterAll) {
  cluster_.sbatch_hangs = true;
  auto first = backend_->Launch(Request());
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kInternal) << first.status().message();
  // The controller had taken it: squeue --name lists job 42 as meridian-j-00000007-1.
  cluster_.sbatch_hangs = false;
  cluster_.named = "42|PENDING||Resources\n";
  auto second = backend_->Launch(Request());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(*second, "slurm:dev:42");
  EXPECT_EQ(cluster_.Count("sbatch"), 1);  // not submitted twice
  const auto look = std::find_if(cluster_.calls.begin(), cluster_.calls.end(),
                                 [](const ProcessCall& c) { return Tool(c) == "squeue"; });
  ASSERT_NE(look, cluster_.calls.end());
  EXPECT_TRUE(Has(*look, "--name=meridian-j-00000007-1"));
  // Watched like any launch: its stop reaches Slurm job 42.
  EXPECT_TRUE(backend_->Stop("slurm:dev:42", 0).ok());
  EXPECT_EQ(cluster_.calls.back().argv.back(), "42");
}

TEST_F(SlurmBackendTest, ARetryAfterATimeoutThatSubmittedNothingSubmitsOnce) {
  cluster_.sbatch_hangs = true;
  ASSERT_FALSE(backend_->Launch(Request()).ok());
  cluster_.sbatch_hangs = false;
  cluster_.named = "";  // squeue --name lists nothing
  auto second = backend_->Launch(Request());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(*second, "slurm:dev:42");
  EXPECT_EQ(cluster_.Count("sbatch"), 2);
  EXPECT_EQ(cluster_.Count("squeue"), 1);
}

TEST_F(SlurmBackendTest, FindLaunchedLooksTheAttemptUpByItsJobName) {
  cluster_.named = "41|COMPLETED|node1|None\n43|RUNNING|node1|None\n";
  auto found = backend_->FindLaunched("j-00000007", 2);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, "slurm:dev:43");  // the live one first
  EXPECT_TRUE(Has(cluster_.calls.back(), "--name=meridian-j-00000007-2"));
  cluster_.named = "";
  found = backend_->FindLaunched("j-00000007", 2);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST_F(SlurmBackendTest, AStopSlurmDoesNotTakeIsTransientAndTheGraceKillIsSentAgain) {
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  std::string record = Testdata("scontrol_job_running.txt");
  record.replace(record.find("JobId=2 "), 8, "JobId=42 ");
  cluster_.record = record;
  cluster_.queue = "42|RUNNING|node1|None\n";
  ASSERT_EQ(backend_->Poll().size(), 1u);

  cluster_.scancel_failures = 1;
  Status st = backend_->Stop("slurm:dev:42", 30);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.message();
  ASSERT_TRUE(backend_->Stop("slurm:dev:42", 30).ok());  // the reconciler's retry
  EXPECT_EQ(cluster_.Count("scancel"), 2);
  // At the end of the grace period the scancel fails once: the next Poll sends it again.
  cluster_.scancel_failures = 1;
  cluster_.steady += 30'000;
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("scancel"), 3);
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("scancel"), 4);
  backend_->Poll();
  EXPECT_EQ(cluster_.Count("scancel"), 4);  // taken: not sent again
}

TEST_F(SlurmBackendTest, AStopOfAJobSlurmHasEndedIsDone) {
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  cluster_.scancel_failures = 1;
  cluster_.scancel_err = "scancel: error: Kill job error on job id 42: Invalid job id specified\n";
  EXPECT_TRUE(backend_->Stop("slurm:dev:42", 0).ok());
}

// Retention retires a finished job: what the backend wrote for it under its
// state directory goes, another job's stays, and an attempt whose sbatch
// timed out is no longer looked up by name before a submission.
TEST_F(SlurmBackendTest, RetireRemovesTheJobsFilesAndForgetsItsUncertainSubmissions) {
  cluster_.sbatch_hangs = true;
  ASSERT_FALSE(backend_->Launch(Request()).ok());  // attempt 1: uncertain
  cluster_.sbatch_hangs = false;
  ASSERT_TRUE(backend_->Launch(Request("j-00000008", 1)).ok());
  const fs::path jobs = dir_ / "state" / "jobs";
  ASSERT_TRUE(fs::exists(jobs / "j-00000007" / "attempt-1.env"));
  ASSERT_TRUE(fs::exists(jobs / "j-00000007" / "work"));
  ASSERT_TRUE(fs::exists(jobs / "j-00000007" / "logs"));

  ASSERT_TRUE(backend_->Retire("j-00000007", 1).ok());
  EXPECT_FALSE(fs::exists(jobs / "j-00000007"));
  EXPECT_TRUE(fs::exists(jobs / "j-00000008" / "attempt-1.env"));
  // Attempt 1 again (as a job with a reused id would be): submitted at once,
  // with no squeue --name lookup first.
  const int squeues = cluster_.Count("squeue");
  ASSERT_TRUE(backend_->Launch(Request()).ok());
  EXPECT_EQ(cluster_.Count("squeue"), squeues);
  EXPECT_EQ(cluster_.Count("sbatch"), 3);  // the timed-out one, j-00000008's, this one
}

// Issue 24: a service's replicas ran as jobs of their own (j-00000007.r0,
// .r1: control::ReplicaRunId), each with its directory and its own
// attempts; retiring the service removes them all, as the local backend's
// Retire does, and forgets a replica's uncertain submission.
TEST_F(SlurmBackendTest, RetireRemovesAServicesReplicaRunsToo) {
  ASSERT_TRUE(backend_->Launch(Request("j-00000007.r0", 1)).ok());
  ASSERT_TRUE(backend_->Launch(Request("j-00000007.r0", 2)).ok());  // replica 0 restarted once
  cluster_.sbatch_hangs = true;
  ASSERT_FALSE(backend_->Launch(Request("j-00000007.r1", 3)).ok());  // uncertain
  cluster_.sbatch_hangs = false;
  ASSERT_TRUE(backend_->Launch(Request("j-00000008.r0", 1)).ok());
  const fs::path jobs = dir_ / "state" / "jobs";
  ASSERT_TRUE(fs::exists(jobs / "j-00000007.r0" / "attempt-2.env"));
  ASSERT_TRUE(fs::exists(jobs / "j-00000007.r1" / "attempt-3.env"));

  // The service itself ran one attempt (its replicas' are counted apart).
  ASSERT_TRUE(backend_->Retire("j-00000007", 1).ok());
  EXPECT_FALSE(fs::exists(jobs / "j-00000007.r0"));
  EXPECT_FALSE(fs::exists(jobs / "j-00000007.r1"));
  EXPECT_TRUE(fs::exists(jobs / "j-00000008.r0" / "attempt-1.env"));
  // Replica 1's third launch again: submitted at once, no squeue --name first.
  const int squeues = cluster_.Count("squeue");
  ASSERT_TRUE(backend_->Launch(Request("j-00000007.r1", 3)).ok());
  EXPECT_EQ(cluster_.Count("squeue"), squeues);
}

TEST_F(SlurmBackendTest, RetireRefusesAJobIdThatIsNotAName) {
  fs::create_directories(dir_ / "state" / "keep");
  for (const std::string id : {"..", "", "../keep", "j/1"}) {
    const Status st = backend_->Retire(id, 1);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << id;
  }
  EXPECT_TRUE(fs::exists(dir_ / "state" / "keep"));
}

}  // namespace
}  // namespace meridian::backends
