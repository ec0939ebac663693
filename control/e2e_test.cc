// End to end with real processes: `meridian serve` over the local backend
// runs the jobs' commands, returns their logs and exit codes, cancels them,
// preempts one that checkpoints on SIGTERM and resumes it from its
// checkpoint, keeps a waiting head's backfill reservation (across a restart,
// until cancelled), re-adopts a running job after kill -9 of the daemon, and
// adopts one whose launch the daemon had not recorded when it died, and reads
// a job again from the store when the store did not take a change.
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "control/test_daemon.h"
#include "core/time.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using testing::GetJob;
using testing::SubmitJob;

class E2eTest : public ::testing::Test {
 protected:
  void Begin(int gpus, const std::string& config = "") {
    dir_ = testing::MakeTempDir("e2e");
    daemon_ = std::make_unique<DaemonProcess>(dir_, gpus, config);
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
  }
  void TearDown() override {
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }

  std::string Submit(const json& spec) { return SubmitJob(*http_, token_, spec); }
  json Job(const std::string& id) { return GetJob(*http_, token_, id); }
  // Polls until the job is in `state` (or 15 s pass); returns the job.
  json WaitFor(const std::string& id, const std::string& state) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = Job(id);
      if (j["state"] == state) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << j.dump() << "\n" << daemon_->Log();
    return j;
  }
  std::string Logs(const std::string& id, const std::string& stream) {
    auto r = http_->Get(("/v1/jobs/" + id + "/logs?stream=" + stream).c_str(), Auth(token_));
    return r ? r->body : "";
  }
  std::vector<std::string> States(const std::string& id) {
    auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
    std::vector<std::string> out;
    if (!r) return out;
    const json events = json::parse(r->body)["events"];
    for (const auto& e : events) {
      if (e["type"] == "state") out.push_back(e["to"]);
    }
    return out;
  }
  static json Spec(const std::string& name, std::vector<std::string> command) {
    return {{"name", name},
            {"kind", "data-science"},
            {"resources", {{"gpus", 1}, {"gpu_models", {"T4"}}}},
            {"command", command}};
  }
  static bool Has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }

  std::string dir_, token_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(E2eTest, RunsCommandsWithTheirLogsAndExitCodes) {
  Begin(4);
  json ok = Spec("hello", {"/bin/sh", "-c", "echo hello from $CUDA_VISIBLE_DEVICES; echo warn >&2"});
  const std::string good = Submit(ok);
  const std::string bad = Submit(Spec("fails", {"/bin/sh", "-c", "echo oops >&2; exit 3"}));
  const std::string missing = Submit(Spec("missing", {"/no/such/program"}));
  json g = WaitFor(good, "succeeded");
  EXPECT_EQ(g["exit_code"], 0);
  EXPECT_EQ(g["placement"]["node"], "testnode");
  ASSERT_EQ(g["placement"]["gpus"].size(), 1u);
  EXPECT_EQ(Logs(good, "stdout"),
            "hello from " + std::to_string(g["placement"]["gpus"][0].get<int>()) + "\n");
  EXPECT_EQ(Logs(good, "stderr"), "warn\n");
  std::vector<std::string> states = States(good);
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states.front(), "queued");
  EXPECT_TRUE(Has(states, "scheduled"));
  EXPECT_TRUE(Has(states, "starting"));
  EXPECT_EQ(states.back(), "succeeded");
  json b = WaitFor(bad, "failed");
  EXPECT_EQ(b["exit_code"], 3);
  EXPECT_EQ(Logs(bad, "stderr"), "oops\n");
  json m = WaitFor(missing, "failed");
  EXPECT_NE(m["reason"].get<std::string>().find("/no/such/program"), std::string::npos) << m.dump();
  // Offsets: the rest of a log from a byte on, and where to go on from.
  auto r = http_->Get(("/v1/jobs/" + good + "/logs?offset=6").c_str(), Auth(token_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body.substr(0, 4), "from");
  EXPECT_EQ(r->get_header_value("X-Job-Done"), "true");
  EXPECT_EQ(r->get_header_value("X-Next-Offset"), std::to_string(6 + r->body.size()));
}

TEST_F(E2eTest, CancelStopsARunningProcess) {
  Begin(4);
  const std::string id = Submit(Spec("sleeper", {"/bin/sleep", "60"}));
  WaitFor(id, "running");
  auto r = http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = WaitFor(id, "cancelled");
  EXPECT_FALSE(j["ended_at"].is_null());
}

TEST_F(E2eTest, PreemptedJobResumesFromItsCheckpoint) {
  // One GPU: the urgent job needs the low one's. At $3600 a GPU-hour a
  // second of it costs $1.
  Begin(1, "gpu_hour_usd: 3600\n");
  // Counts steps; on SIGTERM writes the step to the checkpoint and exits; a
  // resumed run starts from the stored step and finishes at once.
  const std::string script =
      "d=\"$MERIDIAN_CHECKPOINT_DIR\"; n=0; "
      "if [ -f \"$d/step\" ]; then n=$(cat \"$d/step\"); echo \"resumed from $n\"; exit 0; fi; "
      "trap 'echo $n > \"$d/step\"; echo \"checkpoint at $n\"; exit 0' TERM; "
      "while true; do n=$((n+1)); sleep 0.05; done";
  json low = Spec("low", {"/bin/sh", "-c", script});
  low["priority"] = "low";
  low["preemptible"] = true;
  low["grace_period"] = "10s";
  const std::string victim = Submit(low);
  WaitFor(victim, "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  json urgent = Spec("urgent", {"/bin/sleep", "0.2"});
  urgent["priority"] = "critical";
  const std::string hi = Submit(urgent);
  WaitFor(hi, "succeeded");
  json v = WaitFor(victim, "succeeded");
  EXPECT_EQ(v["attempts"], 2);
  std::vector<std::string> states = States(victim);
  EXPECT_TRUE(Has(states, "checkpointing"));
  EXPECT_TRUE(Has(states, "preempted"));
  const std::string out = Logs(victim, "stdout");
  size_t at = out.find("resumed from ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_GT(std::stoi(out.substr(at + 13)), 0) << out;
  EXPECT_NE(out.find("checkpoint at"), std::string::npos) << out;
  // The preempted attempt is billed: it ran at least 2.5 s, 2 whole seconds
  // of start and end times, so at least $2. (The resumed one ends at once:
  // at most a second.)
  EXPECT_GE(v["cost_usd"].get<double>(), 2.0) << v.dump();
}

// A run on CPUs is billed at the config's CPU rates, as `simulate` bills it
// (sched::FleetHourRate), not at $0 as when only GPUs were priced, and never
// as a GPU. At $3,600 a vCPU-hour a second of one vCPU costs $1; a GPU-hour
// at $360,000 would cost $100 a second.
TEST_F(E2eTest, ACpuOnlyJobIsBilledForItsVcpusAndRam) {
  Begin(1, "gpu_hour_usd: 360000\nvcpu_hour_usd: 3600\nram_gib_hour_usd: 1800\n");
  json cpu = Spec("cpu", {"/bin/sleep", "2"});
  cpu["resources"] = {{"gpus", 0}, {"vcpus", 2}, {"ram_gib", 1}};
  const std::string id = Submit(cpu);
  json j = WaitFor(id, "succeeded");
  // Per second: 2 vCPUs x $1 + 1 GiB x $0.50 = $2.50, over the whole
  // seconds from its started_at to its ended_at (the interval it is billed
  // for); as a GPU it would be $100 a second.
  auto started = ParseRfc3339(j["started_at"].get<std::string>());
  auto ended = ParseRfc3339(j["ended_at"].get<std::string>());
  ASSERT_TRUE(started.ok() && ended.ok()) << j.dump();
  const int64_t seconds = *ended - *started;
  EXPECT_GE(seconds, 1) << j.dump();  // a 2 s sleep
  EXPECT_NEAR(j["cost_usd"].get<double>(), 2.5 * static_cast<double>(seconds), 1e-6) << j.dump();
  EXPECT_EQ(j["co2_g"].get<double>(), 0.0) << j.dump();  // no GPU drawn
}

// Backfill in the daemon as in the simulator: a 4-GPU job waiting behind a
// running 3-GPU one reserves its start, so a 1-GPU job that would run past
// that start does not take the free GPU; it runs after the big one.
TEST_F(E2eTest, AWaitingHeadKeepsItsGpusFromLongerLaterJobs) {
  Begin(4);
  auto spec = [](const std::string& name, int gpus, double gpu_hours, const std::string& command) {
    json j = Spec(name, {"/bin/sh", "-c", command});
    j["resources"]["gpus"] = gpus;
    j["work"] = {{"gpu_hours", gpu_hours}, {"on", "T4"}};
    return j;
  };
  const std::string go = dir_ + "/go";
  const std::string small_running = Submit(spec("running", 3, 0.003,  // ~4 s on 3 GPUs
                                                "while [ ! -e " + go + " ]; do sleep 0.05; done"));
  WaitFor(small_running, "running");
  json big_spec = spec("big", 4, 0.004, "sleep 0.2");
  big_spec["priority"] = "high";  // the queue's head
  const std::string big = Submit(big_spec);
  const std::string late = Submit(spec("late", 1, 1.0, "sleep 0.2"));  // an hour: past the head's start
  for (int i = 0; i < 20; ++i) {  // a second of reconcile cycles
    EXPECT_EQ(Job(late)["state"], "queued") << Job(late).dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::ofstream(go) << "go\n";
  json b = WaitFor(big, "succeeded");
  json after = WaitFor(late, "succeeded");
  // RFC 3339 times of one format compare as strings.
  EXPECT_LE(b["started_at"].get<std::string>(), after["started_at"].get<std::string>())
      << b.dump() << after.dump();
}

// The head's reservation is derived each cycle from the store's running
// jobs and queue, so it holds across a kill -9 of the daemon; the head's
// reason says what it holds; cancelling it frees the GPUs at once.
TEST_F(E2eTest, AHeldHeadKeepsItsGpusAcrossARestartUntilCancelled) {
  Begin(2);
  const std::string go = dir_ + "/go";
  json running = Spec("running", {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done"});
  const std::string a = Submit(running);
  WaitFor(a, "running");
  json big_spec = Spec("big", {"/bin/sleep", "0.2"});
  big_spec["resources"]["gpus"] = 2;  // the whole node: from a's expected end, an hour on
  const std::string big = Submit(big_spec);
  json late_spec = Spec("late", {"/bin/sleep", "0.2"});
  late_spec["work"] = {{"duration", "2h"}};  // past the head's start whatever the second
  const std::string late = Submit(late_spec);
  auto held = [&] {
    const std::string reason = "held: testnode reserved from ";
    json b = Job(big);
    for (int i = 0; i < 300 && b["reason"].get<std::string>().rfind(reason, 0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      b = Job(big);
    }
    EXPECT_EQ(b["reason"].get<std::string>().rfind(reason, 0), 0u) << b.dump();
    for (int i = 0; i < 20; ++i) {  // a second of reconcile cycles
      json l = Job(late);
      ASSERT_EQ(l["state"], "queued") << l.dump() << "\n" << daemon_->Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  held();
  daemon_->Kill(SIGKILL);
  daemon_->Start();
  http_ = daemon_->Client();
  WaitFor(a, "running");
  held();
  auto r = http_->Post(("/v1/jobs/" + big + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  WaitFor(big, "cancelled");
  WaitFor(late, "succeeded");
  std::ofstream(go) << "go\n";
  WaitFor(a, "succeeded");
}

TEST_F(E2eTest, RestartedDaemonReadoptsARunningJob) {
  Begin(4);
  // The job runs until the test lets it end, after the new daemon is up, so
  // a slow restart cannot see it already finished.
  const std::string go = dir_ + "/go";
  const std::string id = Submit(Spec(
      "survivor", {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done; echo done"}));
  WaitFor(id, "running");
  daemon_->Kill(SIGKILL);
  daemon_->Start();
  http_ = daemon_->Client();
  auto up = http_->Get(("/v1/jobs/" + id).c_str(), Auth(token_));
  ASSERT_TRUE(up);
  std::ofstream(go) << "go\n";
  json j = WaitFor(id, "succeeded");
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Logs(id, "stdout"), "done\n");
  auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("re-adopted"), std::string::npos) << r->body;
}

// The daemon died after the backend started the attempt but before it
// committed "starting" with the handle: the store says "scheduled", no
// handle. The restarted daemon finds attempt 1 by its name (the local
// backend's attempt record) and adopts it instead of running a second one.
TEST_F(E2eTest, ALaunchWhoseHandleWasNotCommittedIsFoundByItsNameAfterARestart) {
  Begin(4);
  const std::string go = dir_ + "/go";
  const std::string id = Submit(Spec(
      "unrecorded", {"/bin/sh", "-c",
                  "echo attempt $MERIDIAN_ATTEMPT; while [ ! -e " + go +
                      " ]; do sleep 0.05; done; echo done"}));
  WaitFor(id, "running");
  daemon_->Kill(SIGKILL);
  {
    // The store as a death between Launch and its commit leaves it.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/meridian.db").c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE jobs SET state='scheduled', handle='', started_at=NULL WHERE id='" + id + "'";
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
  }
  daemon_->Start();
  http_ = daemon_->Client();
  WaitFor(id, "running");
  std::ofstream(go) << "go\n";
  json j = WaitFor(id, "succeeded");
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(Logs(id, "stdout"), "attempt 1\ndone\n");  // one attempt ran, once
  auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
  ASSERT_TRUE(r);
  const json events = json::parse(r->body)["events"];
  std::string found;
  for (const json& e : events) {
    if (e["type"] == "state" && e["from"] == "scheduled" && e["to"] == "starting") found = e["message"];
  }
  EXPECT_TRUE(found.starts_with("found attempt 1 (pid:")) << r->body;
  EXPECT_TRUE(found.ends_with(") under its name after a daemon restart; adopted")) << r->body;
  // Before the death: queued, scheduled, starting, running (then set back to
  // scheduled without an event); after: found (starting), running, the end.
  // Never queued again: no second attempt.
  EXPECT_EQ(States(id), (std::vector<std::string>{"queued", "scheduled", "starting", "running",
                                                  "starting", "running", "succeeded"}));
}

// The store holds another state than the daemon expected when the job ends
// (here: set back to "scheduled", as if "starting" had never been written),
// so the daemon's "succeeded" is not taken. The daemon does not count the job
// as done: it reads the job again from the store, finds attempt 1 by its name
// and records its end. Taking the skipped change as done would have left the
// job "scheduled", and a restart would have run it a second time.
TEST_F(E2eTest, AChangeTheStoreDidNotTakeIsReadAgainFromTheStore) {
  Begin(4);
  const std::string go = dir_ + "/go";
  const std::string id = Submit(Spec(
      "apart", {"/bin/sh", "-c",
                "echo attempt $MERIDIAN_ATTEMPT; while [ ! -e " + go +
                    " ]; do sleep 0.05; done; echo done"}));
  WaitFor(id, "running");
  {
    // Another writer changes the job under the running daemon.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/meridian.db").c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    const std::string sql =
        "UPDATE jobs SET state='scheduled', handle='' WHERE id='" + id + "'";
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  std::ofstream(go) << "go\n";
  json j = WaitFor(id, "succeeded");
  EXPECT_EQ(j["attempts"], 1);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(Logs(id, "stdout"), "attempt 1\ndone\n");
  auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find(") under its name after the store did not take a change; adopted"),
            std::string::npos)
      << r->body;
  EXPECT_NE(daemon_->Log().find(id + ": the store did not take the change to succeeded"),
            std::string::npos)
      << daemon_->Log();
}

}  // namespace
}  // namespace meridian::control
