// `meridian serve` on a Slurm cluster whose commands fail: the real daemon
// with slurm.bin_dir pointing at small sh stand-ins for sbatch, squeue,
// scontrol, scancel and sinfo. They answer with output recorded from
// slurm-wlm 22.05 (testdata/) and fail as a controller that does not answer
// makes them fail, as often as each test says (a count in a file next to
// them). What the daemon does then: a transient launch failure is tried
// again with backoff and noted in the job's events, the last one fails the
// job with the reason, a refusal fails it at once; a cancel Slurm does not
// take is sent again until it does, and so is a preemption's. An sbatch that
// hangs holds up no API request, and a cancel that comes meanwhile stops the
// job it submits; neither does an squeue that hangs while a restarted daemon
// looks up an attempt by its name.
#include <signal.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "control/test_daemon.h"

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;
using control::testing::Auth;
using control::testing::DaemonProcess;
using control::testing::GetJob;
using control::testing::MakeTempDir;
using control::testing::SubmitJob;
using nlohmann::json;

std::string Testdata(const std::string& name) {
  std::ifstream f("backends/slurm/testdata/" + name);
  EXPECT_TRUE(f) << "missing testdata/" << name;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Each command fails the first N times it runs, N in bin/<tool>.fail, with
// the text of bin/<tool>.err on stderr, and counts its runs in bin/<tool>.calls.
const char kCounted[] = R"sh(d=$(dirname "$0"); t=$(basename "$0")
n=$(cat "$d/$t.calls" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$d/$t.calls"
if [ "$n" -le "$(cat "$d/$t.fail" 2>/dev/null || echo 0)" ]; then cat "$d/$t.err" >&2; exit 1; fi
)sh";

const char kUnreachable[] =
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
    "failure)\n";

class SlurmServeFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("slurm-failures");
    bin_ = dir_ + "/bin";
    fs::create_directories(bin_);
    // Submitted jobs are 42, 43, ...; each runs on node1 until a scancel of it
    // is taken, then it is cancelled.
    std::string running = Testdata("scontrol_job_running.txt");
    running.replace(running.find("JobId=2 "), 8, "JobId=42 ");
    // The first job's first attempt, so a restarted daemon's Adopt takes it.
    running.replace(running.find("JobName=meridian-j-00000002-1"), 29, "JobName=meridian-j-00000001-1");
    std::string cancelled = Testdata("scontrol_job_cancelled.txt");
    cancelled.replace(cancelled.find("JobId=4 "), 8, "JobId=42 ");
    std::ofstream(bin_ + "/running.txt") << running;
    std::ofstream(bin_ + "/cancelled.txt") << cancelled;
    std::ofstream(bin_ + "/sinfo.txt") << "node1|idle|gpu:a100-80gb:4|32|262144|gpu|none\n";
    Tool("sinfo", "cat \"$d/sinfo.txt\"\n");
    Tool("sbatch", "s=$(cat \"$d/submitted\" 2>/dev/null || echo 0); s=$((s+1)); "
                   "echo $s > \"$d/submitted\"; echo $((41+s))\n");
    Tool("squeue", "for a in \"$@\"; do case \"$a\" in --jobs=*) ids=\"${a#--jobs=}\";; "
                   "--name=meridian-j-00000001-1) ids=42;; esac; done\n"
                   "for id in $(echo \"$ids\" | tr , ' '); do\n"
                   "  if [ -e \"$d/taken.$id\" ]; then echo \"$id|CANCELLED||None\"; "
                   "else echo \"$id|RUNNING|node1|None\"; fi\ndone\n");
    Tool("scontrol", "for id in \"$@\"; do :; done\n"
                     "if [ -e \"$d/taken.$id\" ]; then sed \"s/JobId=42 /JobId=$id /\" \"$d/cancelled.txt\"; "
                     "else sed \"s/JobId=42 /JobId=$id /\" \"$d/running.txt\"; fi\n");
    Tool("scancel", "for id in \"$@\"; do :; done\ntouch \"$d/taken.$id\"\n");
    std::ofstream(dir_ + "/fleet.yaml")
        << "clusters:\n  - name: dev\n    region: gcp:us-central1\n    gpu_hour_usd: 1.0\n"
        << "    backend: slurm\n    slurm: {partitions: [gpu], bin_dir: " << bin_ << "}\n"
        << "    nodes: [{count: 1, gpu: A100-80GB, gpus: 4, vcpus: 32, ram_gib: 256}]\n";
  }
  void TearDown() override {
    daemon_.reset();
    control::testing::RemoveTempDir(dir_);
  }

  void Tool(const std::string& name, const std::string& body) {
    const std::string path = bin_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << kCounted << body;
    fs::permissions(path, fs::perms::owner_all);
  }
  void FailFirst(const std::string& tool, int times, const std::string& err) {
    std::ofstream(bin_ + "/" + tool + ".fail") << times << "\n";
    std::ofstream(bin_ + "/" + tool + ".err") << err;
  }
  int Calls(const std::string& tool) const {
    std::ifstream f(bin_ + "/" + tool + ".calls");
    int n = 0;
    f >> n;
    return n;
  }
  void Begin(int launch_attempts) {
    daemon_ = std::make_unique<DaemonProcess>(
        dir_, "region: gcp:us-central1\nreconcile_interval_ms: 50\nfleet: " + dir_ +
                  "/fleet.yaml\nbackend_retry: {launch_attempts: " +
                  std::to_string(launch_attempts) +
                  ", initial_backoff: 100ms, max_backoff: 1s}\n");
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
  }
  // The daemon killed, its store as a death between a launch and its commit
  // leaves it (job `id` scheduled, no handle), and the next squeue (the
  // restarted daemon's lookup by name) failing as an unreachable controller.
  void DieBeforeTheCommitAndFailTheFirstLookup(const std::string& id) {
    daemon_->Kill(SIGKILL);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/meridian.db").c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE jobs SET state='scheduled', handle='' WHERE id='" + id + "'";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    std::ofstream(bin_ + "/squeue.calls") << 0;
    FailFirst("squeue", 1, "squeue: error: Unable to contact slurm controller (connect failure)\n");
  }
  // While a Slurm command hangs (held for as long as the test says): /v1/plan
  // for a 1-GPU job and a read of job `id` both answer within 3 s. node1 has
  // 4 GPUs and `id` keeps 1, so the plan places. Returns the job as read.
  json PlanAndReadWhileHung(const std::string& id) {
    auto quick = daemon_->Client();
    quick->set_read_timeout(3, 0);
    const auto t0 = std::chrono::steady_clock::now();
    auto plan = quick->Post("/v1/plan", Auth(token_), Spec(1).dump(), "application/json");
    EXPECT_TRUE(plan) << "no answer to /v1/plan while a Slurm command hangs";
    if (!plan) return json();
    EXPECT_EQ(plan->status, 200) << plan->body;
    EXPECT_EQ(json::parse(plan->body)["decisions"][0]["decision"], "place") << plan->body;
    const json job = GetJob(*quick, token_, id);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
    return job;
  }
  static json Spec(int gpus) {
    return {{"name", "train"},
            {"kind", "training"},
            {"resources", {{"gpus", gpus}, {"gpu_models", {"A100-80GB"}}}},
            {"command", {"python3", "train.py"}}};
  }
  std::string Submit(const json& spec = Spec(1)) { return SubmitJob(*http_, token_, spec); }
  std::vector<std::string> States(const std::string& id) {
    auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
    std::vector<std::string> out;
    if (!r) return out;
    const json body = json::parse(r->body);
    for (const json& e : body["events"]) {
      if (e["type"] == "state") out.push_back(e["to"]);
    }
    return out;
  }
  // The job once it is in `state` (waits up to 15 s), else as it was last.
  json WaitFor(const std::string& id, const std::string& state) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = GetJob(*http_, token_, id);
      if (j["state"] == state) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return j;
  }
  std::vector<std::string> Notes(const std::string& id, const std::string& prefix) {
    auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
    std::vector<std::string> out;
    if (!r) return out;
    const json body = json::parse(r->body);
    for (const json& e : body["events"]) {
      const std::string m = e["message"];
      if (e["type"] == "note" && m.starts_with(prefix)) out.push_back(m);
    }
    return out;
  }

  std::string dir_, bin_, token_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(SlurmServeFailureTest, ALaunchTheControllerDidNotAnswerIsTriedAgainWithBackoffAndRuns) {
  FailFirst("sbatch", 2, kUnreachable);
  Begin(5);
  const std::string id = Submit();
  const json j = WaitFor(id, "running");
  ASSERT_EQ(j["state"], "running") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["attempts"], 1) << j.dump();
  EXPECT_EQ(Calls("sbatch"), 3);  // two failures, then the submission
  // The waits double from initial_backoff: 100 ms, then 100 * 2 = 200 ms.
  const std::string said = "sbatch exited with 1: " + std::string(kUnreachable, sizeof kUnreachable - 2);
  EXPECT_EQ(Notes(id, "launch try"),
            (std::vector<std::string>{"launch try 1 of 5 failed: " + said + "; trying again in 100ms",
                                      "launch try 2 of 5 failed: " + said + "; trying again in 200ms"}));
}

TEST_F(SlurmServeFailureTest, ALaunchThatFailsTransientlyEveryTryFailsTheJobAfterTheLast) {
  FailFirst("sbatch", 1000, kUnreachable);
  Begin(3);
  const std::string id = Submit();
  const json j = WaitFor(id, "failed");
  ASSERT_EQ(j["state"], "failed") << j.dump() << daemon_->Log();
  const std::string said = "sbatch exited with 1: " + std::string(kUnreachable, sizeof kUnreachable - 2);
  EXPECT_EQ(j["reason"], "launch failed after 3 tries: " + said);
  EXPECT_EQ(Calls("sbatch"), 3);
  EXPECT_EQ(Notes(id, "launch try").size(), 2u);  // tries 1 and 2; the third failed the job
}

TEST_F(SlurmServeFailureTest, ALaunchTheControllerRefusedFailsTheJobAtOnce) {
  FailFirst("sbatch", 1000,
            "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
  Begin(5);
  const std::string id = Submit();
  const json j = WaitFor(id, "failed");
  ASSERT_EQ(j["state"], "failed") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["reason"],
            "launch failed: sbatch exited with 1: sbatch: error: Batch job submission failed: "
            "Invalid partition name specified");
  EXPECT_EQ(Calls("sbatch"), 1);
  EXPECT_TRUE(Notes(id, "launch try").empty());
}

TEST_F(SlurmServeFailureTest, ACancelSlurmDoesNotTakeIsSentAgainUntilItDoes) {
  const std::string refused =
      "scancel: error: Kill job error on job id 42: Unable to contact slurm controller (connect "
      "failure)\n";
  FailFirst("scancel", 2, refused);
  Begin(5);
  const std::string id = Submit();
  ASSERT_EQ(WaitFor(id, "running")["state"], "running") << daemon_->Log();
  auto r = http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  const json j = WaitFor(id, "cancelled");
  ASSERT_EQ(j["state"], "cancelled") << j.dump() << daemon_->Log();
  EXPECT_EQ(Calls("scancel"), 3);  // two refusals, then taken: nothing sent after
  const std::string said = "scancel --signal=TERM 42 exited with 1: " +
                           refused.substr(0, refused.size() - 1);
  EXPECT_EQ(Notes(id, "cancel:"),
            (std::vector<std::string>{"cancel: stop try 1 failed: " + said + "; trying again in 100ms",
                                      "cancel: stop try 2 failed: " + said + "; trying again in 200ms",
                                      "cancel: the backend took the stop after 2 failed tries"}));
}

// The victim of a preemption whose scancel Slurm does not take at first: the
// stop is sent again until it is, so the victim leaves checkpointing and the
// preemptor runs.
TEST_F(SlurmServeFailureTest, APreemptionStopSlurmDoesNotTakeIsSentAgainAndThePreemptorRuns) {
  const std::string refused =
      "scancel: error: Kill job error on job id 42: Unable to contact slurm controller (connect "
      "failure)\n";
  Begin(5);
  json low = Spec(4);  // all of node1's GPUs
  low["priority"] = "low";
  low["preemptible"] = true;
  low["grace_period"] = "10s";
  const std::string victim = Submit(low);
  ASSERT_EQ(WaitFor(victim, "running")["state"], "running") << daemon_->Log();
  FailFirst("scancel", 2, refused);
  json urgent = Spec(4);
  urgent["priority"] = "critical";
  const std::string preemptor = Submit(urgent);
  const json p = WaitFor(preemptor, "running");
  ASSERT_EQ(p["state"], "running") << p.dump() << daemon_->Log();
  EXPECT_EQ(Calls("scancel"), 3);  // two refusals, then taken
  const std::vector<std::string> states = States(victim);
  ASSERT_GE(states.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(states.begin(), states.begin() + 7),
            (std::vector<std::string>{"queued", "scheduled", "starting", "running", "checkpointing",
                                      "preempted", "queued"}));
  const std::string said = "scancel --signal=TERM 42 exited with 1: " +
                           refused.substr(0, refused.size() - 1);
  EXPECT_EQ(Notes(victim, "preemption:"),
            (std::vector<std::string>{
                "preemption: stop try 1 failed: " + said + "; trying again in 100ms",
                "preemption: stop try 2 failed: " + said + "; trying again in 200ms",
                "preemption: the backend took the stop after 2 failed tries"}));
}

// The daemon died between sbatch and committing the handle, and when it
// comes back the controller does not answer the lookup by name at first: it
// asks again (the job keeps its place) rather than submit a second Slurm
// job, then adopts job 42.
TEST_F(SlurmServeFailureTest, AnUnrecordedLaunchIsLookedUpAgainWhenSlurmDoesNotAnswerAtRestart) {
  Begin(5);
  const std::string id = Submit();  // j-00000001
  ASSERT_EQ(WaitFor(id, "running")["state"], "running") << daemon_->Log();
  DieBeforeTheCommitAndFailTheFirstLookup(id);
  daemon_->Start();
  http_ = daemon_->Client();
  const json j = WaitFor(id, "running");
  ASSERT_EQ(j["state"], "running") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Calls("sbatch"), 1);  // never submitted again
  EXPECT_EQ(Notes(id, "the backend could not say"),
            (std::vector<std::string>{
                "the backend could not say whether attempt 1 was launched: squeue "
                "--name=meridian-j-00000001-1 exited with 1: squeue: error: Unable to contact "
                "slurm controller (connect failure); asking again in 100ms"}));
  const std::vector<std::string> states = States(id);
  ASSERT_GE(states.size(), 2u);
  EXPECT_EQ(std::vector<std::string>(states.end() - 2, states.end()),
            (std::vector<std::string>{"starting", "running"}));
}

// Issue 24: a restarted daemon looked attempts up by name (FindLaunched)
// under the reconciler's lock. Here the first lookup fails, and the one it
// retries hangs (the stand-in squeue waits while bin/hold exists): /v1/plan
// and job reads answer meanwhile, and once squeue answers the attempt is
// adopted, not launched again.
TEST_F(SlurmServeFailureTest, AHungLookupByNameAfterARestartHoldsUpNoPlan) {
  Begin(5);
  const std::string id = Submit();  // j-00000001, Slurm job 42
  ASSERT_EQ(WaitFor(id, "running")["state"], "running") << daemon_->Log();
  DieBeforeTheCommitAndFailTheFirstLookup(id);
  std::ofstream(bin_ + "/hold") << "";
  Tool("squeue", "for a in \"$@\"; do case \"$a\" in --jobs=*) ids=\"${a#--jobs=}\";; "
                 "--name=meridian-j-00000001-1) ids=42; touch \"$d/lookup.started\"; "
                 "while [ -e \"$d/hold\" ]; do sleep 0.05; done;; esac; done\n"
                 "for id in $(echo \"$ids\" | tr , ' '); do echo \"$id|RUNNING|node1|None\"; done\n");
  daemon_->Start();
  for (int i = 0; i < 200 && !fs::exists(bin_ + "/lookup.started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(bin_ + "/lookup.started")) << daemon_->Log();
  EXPECT_EQ(PlanAndReadWhileHung(id)["state"], "scheduled");  // its attempt kept, not relaunched
  fs::remove(bin_ + "/hold");
  http_ = daemon_->Client();
  const json j = WaitFor(id, "running");
  ASSERT_EQ(j["state"], "running") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Calls("sbatch"), 1);  // adopted, never submitted again
}

// sbatch hangs, as it does while slurmctld takes a submission and does not
// answer: the stand-in waits while bin/hold exists. The job it submits is a
// real process (a sleep in a session of its own, its pid in bin/pid.<id>)
// that scancel kills.
class SlurmServeHangTest : public SlurmServeFailureTest {
 protected:
  void SetUp() override {
    SlurmServeFailureTest::SetUp();
    std::ofstream(bin_ + "/hold") << "";
    Tool("sbatch", "touch \"$d/sbatch.started\"\n"
                   "while [ -e \"$d/hold\" ]; do sleep 0.05; done\n"
                   "s=$(cat \"$d/submitted\" 2>/dev/null || echo 0); s=$((s+1)); "
                   "echo $s > \"$d/submitted\"; id=$((41+s))\n"
                   "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > \"$d/pid.$id\"\n"
                   // In its own session (field 6 of stat) before sbatch ends
                   // and the daemon's runner kills sbatch's process group.
                   "while [ \"$(cut -d' ' -f6 /proc/$!/stat)\" != $! ]; do sleep 0.01; done\n"
                   "echo $id\n");
    Tool("scancel", "for id in \"$@\"; do :; done\ntouch \"$d/taken.$id\"\n"
                    "kill -KILL $(cat \"$d/pid.$id\")\n");
  }
  void TearDown() override {
    fs::remove(bin_ + "/hold");
    for (const auto& e : fs::directory_iterator(bin_)) {
      if (e.path().filename().string().starts_with("pid.")) {
        if (pid_t pid = Pid(e.path().filename().string().substr(4)); pid > 0) kill(pid, SIGKILL);
      }
    }
    SlurmServeFailureTest::TearDown();
  }
  // Waits up to 10 s for the daemon to be inside sbatch.
  bool SbatchStarted() {
    for (int i = 0; i < 200 && !fs::exists(bin_ + "/sbatch.started"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return fs::exists(bin_ + "/sbatch.started");
  }
  pid_t Pid(const std::string& slurm_id) const {
    std::ifstream f(bin_ + "/pid." + slurm_id);
    pid_t pid = -1;
    f >> pid;
    return pid;
  }
  // Whether `pid` runs (a zombie nobody reaped has ended).
  static bool Running(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), {});
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
  }
};

// Issue 24: the reconciler held its lock through Launch, so a hung sbatch
// held up /v1/plan until it returned.
TEST_F(SlurmServeHangTest, AHungSbatchHoldsUpNeitherPlansNorJobReadsAndTheJobRunsOnceItReturns) {
  Begin(5);
  const std::string id = Submit();
  ASSERT_TRUE(SbatchStarted()) << daemon_->Log();
  EXPECT_EQ(PlanAndReadWhileHung(id)["state"], "scheduled");
  EXPECT_FALSE(fs::exists(bin_ + "/submitted"));  // sbatch was still held throughout
  fs::remove(bin_ + "/hold");
  const json j = WaitFor(id, "running");
  ASSERT_EQ(j["state"], "running") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Calls("sbatch"), 1);
  EXPECT_TRUE(Running(Pid("42")));
}

// A cancel that comes while sbatch hangs: the Slurm job sbatch then submits
// is cancelled, its process killed, and the job ends cancelled.
TEST_F(SlurmServeHangTest, ACancelDuringAHungSbatchStopsTheJobItSubmits) {
  Begin(5);
  const std::string id = Submit();
  ASSERT_TRUE(SbatchStarted()) << daemon_->Log();
  auto r = http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  fs::remove(bin_ + "/hold");
  const json j = WaitFor(id, "cancelled");
  ASSERT_EQ(j["state"], "cancelled") << j.dump() << daemon_->Log();
  EXPECT_EQ(Calls("sbatch"), 1);
  EXPECT_TRUE(fs::exists(bin_ + "/taken.42"));  // scancel named the submitted job
  const pid_t pid = Pid("42");
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(Running(pid));
  EXPECT_EQ(States(id),
            (std::vector<std::string>{"queued", "scheduled", "starting", "cancelled"}));
}

}  // namespace
}  // namespace meridian::backends
