// A real-time service in the daemon's reconciler, on the real local backend
// and a real SQLite store: one process per replica, a replica whose process
// is killed is started again (the events say so), and a cancel stops every
// replica. The local backend runs on this machine's node only; a service's
// replicas are placed on distinct nodes (sched/plugins/realtime_replicas.h),
// so the backend here offers this machine as three nodes (SameMachineNodes)
// and launches every replica on it, as real processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "control/local_store_test.h"
#include "control/job_json.h"
#include "control/reconciler.h"
#include "control/replica_set.h"
#include "control/same_machine_nodes.h"
#include "control/retention.h"
#include "control/store.h"
#include "control/submission.h"
#include "sched/profile.h"
#include "sched/queued_job.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;
using testing::SameMachineNodes;

bool Alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

class ServiceReplicasTest : public testing::LocalStoreTest {
 protected:
  void SetUp() override {
    OpenStore("replicas");
    fs::create_directories(dir_ + "/pids");
    auto backend = std::make_unique<SameMachineNodes>(OneT4Backend(), 4);
    nodes_ = backend.get();
    backend_ = std::move(backend);
    ReconcilerOptions o;
    o.catalog = catalog::Catalog::LoadEmbedded().value();
    o.profile = sched::EmbeddedProfile("default").value();
    o.state_dir = dir_ + "/state";
    o.interval_ms = 50;
    o.clock = [this] { return clock_.load(); };
    o.backend_retry.initial_backoff_ms = 500;  // a replica's first restart waits 500 ms
    // The daemon's clock starts in 2027 while the local backend stamps a
    // process's end with the wall clock, so a service that ends in a test
    // would look older than the default 30 days to the loop's own sweep and
    // be deleted before the test reads it. The retention test sweeps itself.
    o.retention.retention_s = int64_t{10} * 365 * 86400;
    reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, o);
  }
  void TearDown() override {
    reconciler_.reset();
    backend_.reset();
    store_.reset();
    EndJobsAndRemoveDir();
  }
  // A service whose every replica process writes its pid to
  // pids/r<replica>.a<attempt>, then sleeps.
  std::string SubmitService(const std::string& extra = "") {
    NewJob job;
    job.tenant = "t";
    job.name = "svc";
    job.kind = "realtime-inference";
    job.priority = "normal";
    job.submitted_at = kHour0;
    job.spec_json = R"({"name": "svc", "kind": "realtime-inference", "tenant": "t",
        "priority": "normal", "resources": {"gpus": 1, "gpu_models": ["T4"]},)" + extra + R"(
        "grace_period": "1s", "env": {"PIDS": ")" + dir_ + R"(/pids"},
        "command": ["/bin/sh", "-c",
                    "echo $$ > $PIDS/r$MERIDIAN_REPLICA.a$MERIDIAN_ATTEMPT; exec sleep 600"]})";
    auto r = store_->Submit(job);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->job_id : "";
  }
  // The pid replica `index`'s attempt `attempt` wrote (0 until it has).
  pid_t PidOf(int index, int attempt) const {
    std::ifstream f(dir_ + "/pids/r" + std::to_string(index) + ".a" + std::to_string(attempt));
    pid_t pid = 0;
    f >> pid;
    return pid;
  }
  // The replicas as GET /v1/jobs/<id> shows them.
  nlohmann::json Replicas(const std::string& id) {
    return JobToJson(Row(id)).value("replicas", nlohmann::json::array());
  }
  // Submits the service, starts the reconciler and waits for both replicas'
  // first processes; the job's id.
  std::string StartTwoReplicas() {
    const std::string id = SubmitService();
    EXPECT_TRUE(reconciler_->Start().ok());
    EXPECT_TRUE(WaitFor([&] { return AllRunning(id, 2) && PidOf(0, 1) && PidOf(1, 1); }))
        << Events(id);
    return id;
  }
  // A daemon restart: a new reconciler on the same store and backend, with
  // `while_down` done to the store in between.
  void RestartDaemon(const std::function<void()>& while_down) {
    reconciler_->Stop();
    while_down();
    ASSERT_FALSE(HasFailure());
    reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_,
                                               reconciler_->options());
    ASSERT_TRUE(reconciler_->Start().ok());
  }
  // A reconciler (not started) whose replicas' first restart waits `ms`.
  void UseInitialBackoffMs(int64_t ms) {
    ReconcilerOptions o = reconciler_->options();
    o.backend_retry.initial_backoff_ms = ms;
    reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, o);
  }
  void CountAcrossARequeue(bool restart);
  void CancelAndWait(const std::string& id) {
    reconciler_->RequestCancel(id);
    EXPECT_TRUE(WaitFor([&] { return Row(id).state == JobState::kCancelled; })) << Events(id);
  }
  // A 1B-parameter model, and the scheduler's demand of a service of it on a
  // T4: one replica's capacity (replica_rps, requests per second) and one
  // request's time (request_ms).
  static constexpr std::string_view kModel = R"("model": {"params_b": 1, "precision": "fp16",
      "layers": 16, "hidden": 2048, "heads": 16, "seq_len": 2048, "batch": 8,
      "output_tokens": 64},)";
  sched::ModelDemand T4Demand() {
    auto spec = nlohmann::json::parse(R"({"name": "p", "kind": "realtime-inference", )" +
                                      std::string(kModel) +
                                      R"( "resources": {"gpus": 1, "gpu_models": ["T4"]},
                                      "latency": {"rps": 1}, "command": ["x"]})");
    auto parsed = SpecFromJson(spec.dump(), "probe");
    EXPECT_TRUE(parsed.ok()) << parsed.status().message();
    if (!parsed.ok()) return {};
    auto catalog = catalog::Catalog::LoadEmbedded().value();
    auto q = sched::MakeQueuedJob(std::make_shared<const JobSpec>(*parsed), *catalog,
                                  sched::EnqueueRequest{JobId(1), TenantId(0), kHour0, 1});
    EXPECT_TRUE(q.ok()) << q.status().message();
    if (!q.ok() || q->demands.size() != 1) return {};
    return q->demands[0];
  }
  bool AllRunning(const std::string& id, size_t n) {
    const nlohmann::json r = Replicas(id);
    if (r.size() != n) return false;
    for (const auto& x : r) {
      if (x["state"] != "running") return false;
    }
    return true;
  }

  // 10 minutes into UTC hour 0: 1,799,971,200 = 20,833 x 86,400 is a midnight.
  static constexpr int64_t kHour0 = 1'799'971'200 + 600;
  std::atomic<int64_t> clock_{kHour0};
  std::unique_ptr<Backend> backend_;
  SameMachineNodes* nodes_ = nullptr;  // backend_
  Metrics metrics_;
  std::unique_ptr<Reconciler> reconciler_;
};

// The default profile's realtime_replicas: availability_target 0.999,
// zone_availability 0.995, no load. One replica is up 0.995 < 0.999; two:
// 1 - 0.005^2 = 0.999975 >= 0.999, so the set is 2 replicas, on 2 of the 3
// nodes, and 2 processes run.
TEST_F(ServiceReplicasTest, ServiceOfTwoReplicasRunsTwoProcesses) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(Row(id).state, JobState::kRunning);
  EXPECT_TRUE(Alive(PidOf(0, 1)));
  EXPECT_TRUE(Alive(PidOf(1, 1)));
  EXPECT_NE(PidOf(0, 1), PidOf(1, 1));
  const nlohmann::json r = Replicas(id);
  EXPECT_NE(r[0]["node"], r[1]["node"]);  // distinct nodes
  EXPECT_EQ(r[0]["restarts"], 0);
  EXPECT_EQ(r[1]["restarts"], 0);
  const std::string events = Events(id);
  EXPECT_NE(events.find("replica 0 started on node " + r[0]["node"].get<std::string>()),
            std::string::npos) << events;
  EXPECT_NE(events.find("replica 1 started on node " + r[1]["node"].get<std::string>()),
            std::string::npos) << events;
  // With nothing happening to it, its minutes are still counted: three
  // minutes from its submission, both replicas up throughout (no load: one
  // is enough; no model: no request time), all three met.
  clock_ = kHour0 + 200;
  ASSERT_TRUE(WaitFor([&] { return JobToJson(Row(id)).value("slo_counted_until", 0) == kHour0 + 180; }))
      << Row(id).handle;
  const nlohmann::json job = JobToJson(Row(id));
  EXPECT_EQ(job["slo_minutes"], 3);
  EXPECT_EQ(job["slo_minutes_met"], 3);
  EXPECT_DOUBLE_EQ(job["slo_met_frac"].get<double>(), 1.0);
  CancelAndWait(id);
}

// The set holds one T4 on each of two nodes, so at gpu_hour_usd $3,600 ($1
// a GPU-second) it costs 2 x $1 for every second from its start to its end,
// not the 1 x $1 of its first node alone. The run's clock follows the wall
// clock here: the backend stamps a process's end with it.
TEST_F(ServiceReplicasTest, ASetIsBilledForTheGpusOfEveryReplica) {
  clock_ = time(nullptr);
  reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, [&] {
    ReconcilerOptions o = reconciler_->options();
    o.gpu_hour_usd = 3600;
    return o;
  }());
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  clock_ = time(nullptr);
  CancelAndWait(id);
  const JobRow row = Row(id);
  ASSERT_TRUE(row.started_at && row.ended_at);
  const int64_t seconds = *row.ended_at - *row.started_at;
  EXPECT_GE(seconds, 2);
  EXPECT_EQ(row.cost_micro_usd, 2 * seconds * 1'000'000);
}

// SIGINT replica 1's process, a failure of its own (not a reclaim, which is
// a SIGKILL): the backend sees it killed by signal 2, and the replica's
// first restart waits initial_backoff_ms = 500 ms (BackoffMs(1) = 500 *
// 2^0); its second process is attempt 2.
TEST_F(ServiceReplicasTest, KilledReplicaIsRestartedAndTheEventsSaySo) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  const pid_t first = PidOf(1, 1);
  ASSERT_EQ(kill(first, SIGINT), 0);
  ASSERT_TRUE(WaitFor([&] { return PidOf(1, 2) != 0 && AllRunning(id, 2); })) << Events(id);
  EXPECT_TRUE(Alive(PidOf(1, 2)));
  EXPECT_TRUE(Alive(PidOf(0, 1)));  // replica 0 untouched
  EXPECT_EQ(PidOf(0, 2), 0);
  const nlohmann::json r = Replicas(id);
  EXPECT_EQ(r[1]["restarts"], 1);
  EXPECT_EQ(r[1]["attempt"], 2);
  EXPECT_EQ(r[0]["restarts"], 0);
  EXPECT_EQ(Row(id).state, JobState::kRunning);
  const std::string events = Events(id);
  EXPECT_NE(events.find("replica 1 was killed by signal 2; restarting in 500ms (restart 1)"),
            std::string::npos) << events;
  EXPECT_NE(events.find("replica 1 started on node " + r[1]["node"].get<std::string>() +
                        " (attempt 2"),
            std::string::npos) << events;
  CancelAndWait(id);
}

// A cancel stops both replicas (SIGTERM; sleep ends on it): the job is
// cancelled, every replica shows stopped, and no replica process is left.
TEST_F(ServiceReplicasTest, CancelStopsEveryReplicaAndLeavesNoProcess) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  const pid_t p0 = PidOf(0, 1), p1 = PidOf(1, 1);
  CancelAndWait(id);
  EXPECT_TRUE(WaitFor([&] { return !Alive(p0) && !Alive(p1); }, 5));
  const nlohmann::json r = Replicas(id);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["state"], "stopped");
  EXPECT_EQ(r[1]["state"], "stopped");
  EXPECT_EQ(PidOf(0, 2), 0);  // neither was started again
  EXPECT_EQ(PidOf(1, 2), 0);
}

// A daemon restart (a new reconciler on the same store and backend) takes
// the running set back: both processes are adopted, not started again, and
// a replica killed afterwards is restarted by the new reconciler.
TEST_F(ServiceReplicasTest, RestartedDaemonAdoptsTheSetAndKeepsIt) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  reconciler_->Stop();
  reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_,
                                             reconciler_->options());
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return Events(id).find("re-adopted its 2 replicas") != std::string::npos; }))
      << Events(id);
  EXPECT_TRUE(Alive(PidOf(0, 1)));
  EXPECT_TRUE(Alive(PidOf(1, 1)));
  ASSERT_EQ(kill(PidOf(0, 1), SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return PidOf(0, 2) != 0 && AllRunning(id, 2); })) << Events(id);
  EXPECT_EQ(PidOf(1, 2), 0);
  EXPECT_EQ(Replicas(id)[0]["restarts"], 1);
  CancelAndWait(id);
}

// A 1B-parameter model on T4s; one replica's capacity c is the scheduler's
// (ModelDemand::replica_rps), and the load is 0.5 c in every hour but UTC
// hour 1, 2.5 c there. Loads (ceil(rps / c)): 1, and 3 in hour 1. Sizes
// under the default profile's terms (target 0.999, zone 0.995, 3 max):
//   load <= 1: the availability count, 2 (0.995 < 0.999 <= 1 - 0.005^2);
//   load 3: P(3 of 3 up) = 0.995^3 = 0.98507 < 0.999;
//           P(>= 3 of 4) = 0.995^4 + 4 x 0.995^3 x 0.005 = 0.98015 + 0.01970
//           = 0.99985 >= 0.999: 4.
// The scheduler places the peak set, 4 replicas on the 4 nodes; hour 0 runs
// 2 of them, hour 1 starts replicas 2 and 3, the next day's hour 0 stops them.
TEST_F(ServiceReplicasTest, HourlyLoadAddsAndStopsReplicasAtTheHour) {
  const double c = T4Demand().replica_rps;
  ASSERT_GT(c, 0);
  nlohmann::json hours = nlohmann::json::array();
  for (int h = 0; h < 24; ++h) hours.push_back(h == 1 ? 2.5 * c : 0.5 * c);
  const std::string id =
      SubmitService(std::string(kModel) + R"("latency": {"rps_by_hour": )" + hours.dump() + "},");
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return PidOf(0, 1) && PidOf(1, 1) && Replicas(id).size() == 4 &&
                                   Replicas(id)[1]["state"] == "running"; }))
      << Events(id);
  nlohmann::json r = Replicas(id);
  EXPECT_EQ(r[2]["state"], "stopped");
  EXPECT_EQ(r[3]["state"], "stopped");
  EXPECT_EQ(PidOf(2, 1), 0);

  clock_ = kHour0 + 3600;  // UTC hour 1
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 4) && PidOf(2, 1) && PidOf(3, 1); }))
      << Events(id);
  EXPECT_TRUE(Alive(PidOf(2, 1)));
  EXPECT_TRUE(Alive(PidOf(3, 1)));
  EXPECT_NE(Events(id).find("UTC hour 1 ("), std::string::npos);
  EXPECT_NE(Events(id).find("needs 4 of the 4 replicas placed"), std::string::npos) << Events(id);

  clock_ = kHour0 + 86400;  // the next day's hour 0
  const pid_t p2 = PidOf(2, 1), p3 = PidOf(3, 1);
  ASSERT_TRUE(WaitFor([&] {
    r = Replicas(id);
    return r[2]["state"] == "stopped" && r[3]["state"] == "stopped";
  })) << Events(id);
  EXPECT_TRUE(WaitFor([&] { return !Alive(p2) && !Alive(p3); }, 5));
  EXPECT_TRUE(Alive(PidOf(0, 1)));
  EXPECT_TRUE(Alive(PidOf(1, 1)));
  EXPECT_EQ(r[2]["restarts"], 0);  // stopped for the hour, not restarted
  EXPECT_EQ(PidOf(2, 2), 0);
  CancelAndWait(id);
}


// A spot reclaim as the local backend sees one: replica 1's process group
// killed by SIGKILL from outside. Its replacement is launched at once: the
// restart backoff is set to 60 s here, so a replacement made after a backoff
// would not come within the 20 s WaitFor allows. The replacement takes 90 s
// of the daemon's clock to come up (the clock moves on in its launch), so
// the service is short one replica from the reclaim (at kHour0) to the
// replacement running (kHour0 + 90): 90 s = 1.5 replica-minutes, replica 0
// none.
TEST_F(ServiceReplicasTest, ReclaimedReplicaIsReplacedAtOnceAndItsShortfallIsCounted) {
  UseInitialBackoffMs(60000);
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  nodes_->BeforeLaunch([&](const LaunchRequest& r) {
    if (r.job_id == id + ".r1" && r.attempt == 2) clock_ += 90;
  });
  const pid_t first = PidOf(1, 1);
  ASSERT_EQ(kill(-first, SIGKILL), 0);  // its group: the process was its leader
  ASSERT_TRUE(WaitFor([&] { return PidOf(1, 2) != 0 && AllRunning(id, 2); })) << Events(id);
  EXPECT_FALSE(Alive(first));
  EXPECT_TRUE(Alive(PidOf(1, 2)));
  EXPECT_TRUE(Alive(PidOf(0, 1)));
  const nlohmann::json job = JobToJson(Row(id));
  EXPECT_EQ(job["replicas"][1]["short_s"], 90);
  EXPECT_EQ(job["replicas"][1]["restarts"], 1);
  EXPECT_EQ(job["replicas"][0]["short_s"], 0);
  EXPECT_EQ(job["short_of_capacity_s"], 90);
  const std::string events = Events(id);
  EXPECT_NE(events.find("replica 1 was killed by signal 9: reclaimed; replacing it at once "
                        "(restart 1)"),
            std::string::npos) << events;
  EXPECT_NE(events.find("replica 1 is back after 90s short of capacity (1.5 replica-minutes; "
                        "the service: 1.5 in all)"),
            std::string::npos) << events;
  EXPECT_EQ(events.find("restarting in"), std::string::npos) << events;
  nodes_->BeforeLaunch(nullptr);
  CancelAndWait(id);
}

// The service's minutes met, as the daemon counts them by the rule `simulate`
// counts by (estimate/service_slo.h). The load is 1.5 c for one replica's
// capacity c: ceil(1.5) = 2 replicas needed in every minute. The set under
// the default profile's terms: P(2 of 2 up) = 0.995^2 = 0.990025 < 0.999;
// P(>= 2 of 3) = 0.995^3 + 3 x 0.995^2 x 0.005 = 0.985075 + 0.014850 =
// 0.999925 >= 0.999: 3 replicas. No users: a minute meets the latency rule
// when one request's time is within latency.slo_ms, set here to twice that
// time (this model's request on a T4 takes longer than the default 100 ms).
// On the daemon's clock,
// from the submission at t0 (all three up there):
//   t0+120 replica 0 fails; its replacement runs at t0+240: 2 of 3 up, met;
//   t0+240 replicas 1 and 2 fail; both run again at t0+420: 1 up, short;
//   t0+600 counted. Minutes 0-9 due, 4, 5 and 6 ([240, 420)) missed: 7 of
// 10 met, 0.7. The replacements take their time on the clock in their
// launches; the restart backoff (2 s) keeps both failures of t0+240 seen
// before either replacement is launched.
TEST_F(ServiceReplicasTest, MinutesShortOfTheLoadCountAgainstTheServicesSlo) {
  UseInitialBackoffMs(2000);
  const sched::ModelDemand d = T4Demand();
  const double c = d.replica_rps;
  ASSERT_GT(c, 0);
  const std::string id = SubmitService(std::string(kModel) + R"("latency": {"rps": )" +
                                       std::to_string(1.5 * c) + R"(, "slo_ms": )" +
                                       std::to_string(2 * d.request_ms) + "},");
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 3) && PidOf(0, 1) && PidOf(1, 1) && PidOf(2, 1); }))
      << Events(id);
  nodes_->BeforeLaunch([&](const LaunchRequest& r) {
    if (r.job_id == id + ".r0" && r.attempt == 2) clock_ = kHour0 + 240;
    if ((r.job_id == id + ".r1" || r.job_id == id + ".r2") && r.attempt == 2) clock_ = kHour0 + 420;
  });
  clock_ = kHour0 + 120;
  ASSERT_EQ(kill(PidOf(0, 1), SIGINT), 0);
  ASSERT_TRUE(WaitFor([&] { return PidOf(0, 2) != 0 && AllRunning(id, 3); })) << Events(id);
  ASSERT_EQ(clock_.load(), kHour0 + 240);
  ASSERT_EQ(kill(PidOf(1, 1), SIGINT), 0);
  ASSERT_EQ(kill(PidOf(2, 1), SIGINT), 0);
  ASSERT_TRUE(WaitFor([&] { return PidOf(1, 2) && PidOf(2, 2) && AllRunning(id, 3); })) << Events(id);
  clock_ = kHour0 + 600;
  ASSERT_TRUE(WaitFor([&] { return JobToJson(Row(id)).value("slo_counted_until", 0) == kHour0 + 600; }))
      << Row(id).handle;
  nlohmann::json job = JobToJson(Row(id));
  EXPECT_EQ(job["slo_minutes"], 10);
  EXPECT_EQ(job["slo_minutes_met"], 7);
  EXPECT_DOUBLE_EQ(job["slo_met_frac"].get<double>(), 0.7);
  // Each replica was short while down: 120 s, 180 s, 180 s.
  EXPECT_EQ(job["short_of_capacity_s"], 480);
  nodes_->BeforeLaunch(nullptr);
  CancelAndWait(id);
  job = JobToJson(Row(id));  // the tally stays with the ended service
  EXPECT_EQ(job["slo_minutes"], 10);
  EXPECT_EQ(job["slo_minutes_met"], 7);
}

// The service's minutes go on being counted across a preemption and its
// requeue, and the minutes it waits in the queue count as missed. On two
// nodes of one T4 each, a preemptible service of a load one replica serves
// (half its capacity) runs 2 replicas (availability, as above); at t0+120 a
// critical 1-GPU job preempts it, and the set of 2 cannot come back until
// that job ends, which the test lets it do at t0+300. On the daemon's clock:
//   [t0, t0+120)      2 up: minutes 0 and 1 met
//   [t0+120, t0+300)  queued, nothing up: minutes 2, 3 and 4 missed
//   [t0+300, t0+420)  2 up again: minutes 5 and 6 met
// 7 minutes, 4 met. With `restart`, the daemon is restarted while the
// service waits in the queue, and counts the same.
void ServiceReplicasTest::CountAcrossARequeue(bool restart) {
  ReconcilerOptions o = reconciler_->options();
  reconciler_.reset();
  auto two = std::make_unique<SameMachineNodes>(OneT4Backend(), 2);
  nodes_ = two.get();
  backend_ = std::move(two);
  reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, o);
  const sched::ModelDemand d = T4Demand();
  ASSERT_GT(d.replica_rps, 0);
  const std::string id = SubmitService(std::string(kModel) + R"("preemptible": true, "latency": {"rps": )" +
                                       std::to_string(0.5 * d.replica_rps) + R"(, "slo_ms": )" +
                                       std::to_string(2 * d.request_ms) + "},");
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 2); })) << Events(id);
  auto counted_until = [&](int64_t t) {
    return WaitFor([&] { return JobToJson(Row(id)).value("slo_counted_until", 0) == t; });
  };
  clock_ = kHour0 + 120;
  ASSERT_TRUE(counted_until(kHour0 + 120)) << Row(id).handle;

  const std::string go = dir_ + "/go";
  NewJob critical;
  critical.tenant = "t";
  critical.name = "critical";
  critical.kind = "batch-inference";
  critical.priority = "critical";
  critical.submitted_at = kHour0 + 120;
  critical.spec_json = R"({"name": "critical", "kind": "batch-inference", "tenant": "t",
      "priority": "critical", "resources": {"gpus": 1, "gpu_models": ["T4"]},
      "command": ["/bin/sh", "-c", "while [ ! -e )" + go + R"( ]; do sleep 0.05; done"]})";
  auto c = store_->Submit(critical);
  ASSERT_TRUE(c.ok()) << c.status().message();
  reconciler_->Notify();
  ASSERT_TRUE(WaitFor([&] { return Row(c->job_id).state == JobState::kRunning; }))
      << Events(id) << Events(c->job_id);
  EXPECT_EQ(Row(id).state, JobState::kQueued) << Events(id);
  if (restart) {
    // What was counted is stored with the queued service.
    EXPECT_EQ(JobToJson(Row(id)).value("slo_counted_until", 0), kHour0 + 120) << Row(id).handle;
    RestartDaemon([] {});
    ASSERT_FALSE(HasFailure());
  }
  clock_ = kHour0 + 300;
  std::ofstream(go) << "go\n";
  ASSERT_TRUE(WaitFor([&] { return Row(c->job_id).state == JobState::kSucceeded; }))
      << Events(c->job_id);
  ASSERT_TRUE(WaitFor([&] { return Row(id).state == JobState::kRunning && AllRunning(id, 2); }))
      << Events(id);
  EXPECT_EQ(Row(id).attempts, 2);
  clock_ = kHour0 + 420;
  ASSERT_TRUE(counted_until(kHour0 + 420)) << Row(id).handle;
  const nlohmann::json job = JobToJson(Row(id));
  EXPECT_EQ(job["slo_minutes"], 7) << job.dump();
  EXPECT_EQ(job["slo_minutes_met"], 4) << job.dump();
  CancelAndWait(id);
}

TEST_F(ServiceReplicasTest, TheSloCountGoesOnAcrossARequeueAndCountsTheWaitAsMissed) {
  CountAcrossARequeue(false);
}

TEST_F(ServiceReplicasTest, TheSloCountSurvivesADaemonRestartWhileTheServiceIsQueued) {
  CountAcrossARequeue(true);
}

// A replica reclaimed (SIGKILL from outside) again and again before it has
// served kReplicaSteadyS = 300 s, as an OOM-killed one is: the first
// reclaim is replaced at once, the second after initial_backoff_ms = 500 ms
// (BackoffMs(1)), the third after 1 s (BackoffMs(2) = 500 x 2), and the
// events say why. Once a replacement has served 300 s on the daemon's
// clock, its next reclaim is a first one again: replaced at once.
TEST_F(ServiceReplicasTest, ReplicaReclaimedAgainAndAgainBacksOffUntilItStaysUp) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  // Kills replica 1's attempt `attempt` (its process group) and waits for the
  // next; the steady milliseconds between.
  auto reclaim = [&](int attempt) -> int64_t {
    const auto t = std::chrono::steady_clock::now();
    EXPECT_EQ(kill(-PidOf(1, attempt), SIGKILL), 0);
    EXPECT_TRUE(WaitFor([&] { return PidOf(1, attempt + 1) != 0; })) << Events(id);
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
        .count();
  };
  reclaim(1);
  const int64_t second = reclaim(2);
  const int64_t third = reclaim(3);
  EXPECT_GE(second, 500);
  EXPECT_GE(third, 1000);
  std::string events = Events(id);
  EXPECT_NE(events.find("replica 1 was killed by signal 9: reclaimed; replacing it at once "
                        "(restart 1)"),
            std::string::npos) << events;
  EXPECT_NE(events.find("replica 1 was killed by signal 9: reclaimed, its end 2 in a row before "
                        "serving 300s (a crash loop, or the OOM killer); replacing it in 500ms "
                        "(restart 2)"),
            std::string::npos) << events;
  EXPECT_NE(events.find("reclaimed, its end 3 in a row before serving 300s (a crash loop, or "
                        "the OOM killer); replacing it in 1s (restart 3)"),
            std::string::npos) << events;
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 2); })) << Events(id);
  clock_ += 300;  // attempt 4 has served 300 s
  reclaim(4);
  events = Events(id);
  EXPECT_NE(events.find("reclaimed; replacing it at once (restart 4)"), std::string::npos) << events;
  EXPECT_EQ(Replicas(id)[1]["restarts"], 4);
  CancelAndWait(id);
}

// The stored set keeps what the tally and the backoff read (each replica's
// serving stretches, since when it serves, its failures in a row) and the
// service's tally; a set stored as a bare array before the tally was kept
// still reads, without a tally.
TEST(ReplicaSetHandleTest, KeepsTheTallyAndReadsASetStoredWithoutOne) {
  Replica r;
  r.index = 1;
  r.node = "m1";
  r.gpus = {0};
  r.state = ReplicaState::kRunning;
  r.up_since = 1'800'000'060;
  r.served = {{1'800'000'000, 1'800'000'030}};
  r.failures = 2;
  const std::string handle = ReplicaSetHandle({r}, ServiceTally{1'800'000'060, 4, 3});
  auto set = ParseReplicaSetHandle(handle);
  ASSERT_TRUE(set.has_value()) << handle;
  ASSERT_EQ(set->size(), 1u);
  EXPECT_EQ((*set)[0].up_since, 1'800'000'060);
  EXPECT_EQ((*set)[0].served, r.served);
  EXPECT_EQ((*set)[0].failures, 2);
  auto slo = ParseServiceTally(handle);
  ASSERT_TRUE(slo.has_value());
  EXPECT_EQ(slo->until, 1'800'000'060);
  EXPECT_EQ(slo->minutes, 4);
  EXPECT_EQ(slo->met, 3);

  const std::string old = R"(replicas:[{"index": 0, "node": "m0", "gpus": [0], "state": "running",
      "restarts": 1, "attempt": 2, "handle": "pid:42", "short_s": 90}])";
  auto old_set = ParseReplicaSetHandle(old);
  ASSERT_TRUE(old_set.has_value());
  EXPECT_EQ((*old_set)[0].handle, "pid:42");
  EXPECT_EQ((*old_set)[0].up_since, 0);
  EXPECT_TRUE((*old_set)[0].served.empty());
  EXPECT_FALSE(ParseServiceTally(old).has_value());
  EXPECT_FALSE(ParseServiceTally("pid:42").has_value());
}

// The store as a daemon's death between the backend's launch of replica 1's
// first process and its commit leaves it: replica 1 starting, attempt 0, no
// handle. `cancel`: a cancel was requested meanwhile.
void ForgetReplicaOnesLaunch(Store* store, const std::string& id, bool cancel) {
  auto row = store->GetJob(id);
  ASSERT_TRUE(row.ok()) << row.status().message();
  auto set = ParseReplicaSetHandle(row->handle);
  ASSERT_TRUE(set.has_value()) << row->handle;
  (*set)[1].state = ReplicaState::kStarting;
  (*set)[1].attempt = 0;
  (*set)[1].handle = "";
  JobUpdate u;
  u.job_id = id;
  u.handle = ReplicaSetHandle(*set, ParseServiceTally(row->handle).value_or(ServiceTally{}));
  if (cancel) u.cancel_requested = true;
  auto applied = store->Apply({u});
  ASSERT_TRUE(applied.ok() && applied->at(0)) << "the store did not take the rewrite";
}

// The restarted daemon looks replica 1's attempt 1 up by its name and adopts
// the process it finds instead of launching a second one: replica 1 still
// runs the pid its attempt 1 wrote (a second launch of attempt 1 would write
// another), and a cancel stops that process, so it is watched.
TEST_F(ServiceReplicasTest, ReplicaLaunchedButNotRecordedIsFoundByItsNameAfterARestart) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  const pid_t p1 = PidOf(1, 1);
  RestartDaemon([&] { ForgetReplicaOnesLaunch(store_.get(), id, false); });
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 2); })) << Events(id);
  const std::string events = Events(id);
  EXPECT_NE(events.find("found replica 1's attempt 1 (pid:"), std::string::npos) << events;
  EXPECT_NE(events.find(") under its name after a daemon restart; adopted"), std::string::npos)
      << events;
  EXPECT_EQ(Replicas(id)[1]["attempt"], 1);
  EXPECT_EQ(PidOf(1, 1), p1);
  EXPECT_TRUE(Alive(p1));
  CancelAndWait(id);
  EXPECT_TRUE(WaitFor([&] { return !Alive(p1); }, 5));
}

// The same death, with the service's cancel requested meanwhile: the
// process found by its name is adopted and stopped, and the service ends
// cancelled with no replica process left.
TEST_F(ServiceReplicasTest, ReplicaLaunchedButNotRecordedOfACancelledServiceIsStopped) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  const pid_t p0 = PidOf(0, 1), p1 = PidOf(1, 1);
  RestartDaemon([&] { ForgetReplicaOnesLaunch(store_.get(), id, true); });
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WaitFor([&] { return Row(id).state == JobState::kCancelled; })) << Events(id);
  EXPECT_TRUE(WaitFor([&] { return !Alive(p0) && !Alive(p1); }, 5));
  EXPECT_NE(Events(id).find("found replica 1's attempt 1"), std::string::npos) << Events(id);
  EXPECT_EQ(PidOf(1, 2), 0);
}

// A death between the backend's launches of a new service's replicas and
// the commit of either: the store holds the service scheduled, with its set
// (stored with the placement) and no replica's process. The restarted
// daemon finds both by their names and adopts them: the service goes on
// from scheduled to starting and running with the two processes it had,
// and launches none again.
TEST_F(ServiceReplicasTest, ScheduledServiceWhoseLaunchesWereNotRecordedAdoptsThem) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  const pid_t p0 = PidOf(0, 1), p1 = PidOf(1, 1);
  RestartDaemon([&] {
    auto set = ParseReplicaSetHandle(Row(id).handle);
    ASSERT_TRUE(set.has_value());
    for (Replica& r : *set) {
      r.state = ReplicaState::kStarting;
      r.attempt = 0;
      r.handle = "";
    }
    JobUpdate u;
    u.job_id = id;
    u.state = JobState::kScheduled;
    u.handle = ReplicaSetHandle(*set, ParseServiceTally(Row(id).handle).value_or(ServiceTally{}));
    u.clear_ended = true;  // started_at back to null
    auto applied = store_->Apply({u});
    ASSERT_TRUE(applied.ok() && applied->at(0)) << "the store did not take the rewrite";
  });
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WaitFor([&] { return Row(id).state == JobState::kRunning && AllRunning(id, 2); }))
      << Events(id);
  const std::string events = Events(id);
  EXPECT_NE(events.find("found replica 0's attempt 1 (pid:"), std::string::npos) << events;
  EXPECT_NE(events.find("found replica 1's attempt 1 (pid:"), std::string::npos) << events;
  EXPECT_EQ(PidOf(0, 1), p0);
  EXPECT_EQ(PidOf(1, 1), p1);
  EXPECT_TRUE(Alive(p0));
  EXPECT_TRUE(Alive(p1));
  EXPECT_EQ(Replicas(id)[0]["attempt"], 1);
  EXPECT_EQ(Replicas(id)[1]["attempt"], 1);
  CancelAndWait(id);
}

// Retention deletes a finished service with its replicas' attempt records:
// replica 0 ran attempt 1, replica 1 attempts 1 and 2 (reclaimed once), and
// none of their .run or .status files is left once the service is 30 days
// (the default retention) and a second past its end.
TEST_F(ServiceReplicasTest, RetentionRemovesTheReplicasAttemptRecords) {
  const std::string id = StartTwoReplicas();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(kill(-PidOf(1, 1), SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return PidOf(1, 2) != 0 && AllRunning(id, 2); })) << Events(id);
  CancelAndWait(id);
  reconciler_->Stop();
  const fs::path attempts = fs::path(dir_) / "state" / "attempts";
  for (const std::string run : {".r0.1.run", ".r1.1.run", ".r1.2.run", ".r0.1.status",
                                ".r1.2.status"}) {
    ASSERT_TRUE(fs::exists(attempts / (id + run))) << id + run;
  }
  const JobRow row = Row(id);
  ASSERT_TRUE(row.ended_at.has_value());
  Retention retention(store_.get(), backend_.get(), dir_ + "/state", RetentionOptions{});
  auto deleted = retention.Sweep(*row.ended_at + 30 * 86400 + 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(*deleted, 1);
  EXPECT_EQ(store_->GetJob(id).status().code(), StatusCode::kNotFound);
  std::vector<std::string> left;
  for (const auto& f : fs::directory_iterator(attempts)) {
    if (f.path().filename().string().starts_with(id)) left.push_back(f.path().filename());
  }
  EXPECT_TRUE(left.empty()) << left.size() << " left, the first " << left[0];
}

}  // namespace
}  // namespace meridian::control
