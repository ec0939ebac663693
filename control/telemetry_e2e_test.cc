// The daemon's telemetry end to end: `meridian serve` samples the process
// groups of the jobs it runs (real /proc; no GPU here, so the CPU rules) and
// answers /v1/jobs/{id}/utilization, /metrics, and the stored series; bad
// telemetry config is refused with the field named.
#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;

constexpr char kTelemetry[] =
    "telemetry:\n  interval: 200ms\n  window: 3s\n  max_gap: 2s\n  min_samples: 3\n"
    "  store_every: 1s\n";

class TelemetryE2eTest : public ::testing::Test {
 protected:
  void Begin(int gpus, const std::string& config) {
    dir_ = testing::MakeTempDir("telemetry");
    daemon_ = std::make_unique<DaemonProcess>(dir_, gpus, config);
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
  }
  void TearDown() override {
    if (!daemon_) return;
    // The jobs' processes outlive a killed daemon (re-adoption): stop them first.
    for (const std::string& id : submitted_) {
      (void)http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
    }
    for (const std::string& id : submitted_) {
      for (int i = 0; i < 100; ++i) {
        auto r = http_->Get(("/v1/jobs/" + id).c_str(), Auth(token_));
        if (!r || json::parse(r->body).value("ended_at", json()).is_string()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }
  std::string Submit(const std::string& name, std::vector<std::string> command,
                     json extra = json::object()) {
    json spec = {{"name", name},
                 {"kind", "data-science"},
                 {"resources", {{"gpus", 1}, {"gpu_models", {"T4"}}, {"vcpus", 1}}},
                 {"command", command}};
    spec.update(extra);
    auto r = http_->Post("/v1/jobs", Auth(token_), spec.dump(), "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    const std::string id = r ? json::parse(r->body).value("id", "") : "";
    submitted_.push_back(id);
    return id;
  }
  json Utilization(const std::string& id) {
    auto r = http_->Get(("/v1/jobs/" + id + "/utilization").c_str(), Auth(token_));
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r ? json::parse(r->body) : json();
  }
  // Polls until the job's class is `want` with stored rows (or 15 s pass).
  json WaitForClass(const std::string& id, const std::string& want) {
    json u;
    for (int i = 0; i < 150; ++i) {
      u = Utilization(id);
      if (u["class"] == want && !u["series"].empty() && u["samples"].size() >= 3) return u;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << id << " never classified " << want << ": " << u.dump(1) << "\n" << daemon_->Log();
    return u;
  }

  std::string dir_, token_;
  std::vector<std::string> submitted_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(TelemetryE2eTest, BusyAndSleepingJobsAreToldApart) {
  Begin(4, kTelemetry);
  const std::string busy = Submit("busy", {"/bin/sh", "-c", "while :; do :; done"});
  const std::string sleeper = Submit("sleeper", {"/bin/sleep", "60"});
  json b = WaitForClass(busy, "healthy");
  json s = WaitForClass(sleeper, "idle");
  EXPECT_GT(b["figures"]["cpu_cores"].get<double>(), 0.2) << b.dump(1);
  EXPECT_LT(s["figures"]["cpu_cores"].get<double>(), 0.05) << s.dump(1);
  EXPECT_EQ(s["recommendation"]["action"], "check-job");
  bool idle_evidence = false;
  for (const json& e : s["evidence"]) {
    if (e["figure"] == "cpu_cores" && e["op"] == "<" && e["threshold"] == "cpu_idle_cores") {
      idle_evidence = true;
    }
  }
  EXPECT_TRUE(idle_evidence) << s["evidence"].dump();
  // No NVML on this machine: said once, in the answer and the log.
  EXPECT_NE(b["gpu_status"].get<std::string>().find("NVML"), std::string::npos) << b.dump(1);
  EXPECT_EQ(b["interval_s"], 0.2);
  const std::string log = daemon_->Log();
  EXPECT_EQ(log.find("telemetry: NVML"), log.rfind("telemetry: NVML")) << log;
  // The stored series: one row a second, classes from the live classifier.
  EXPECT_EQ(b["series"].back()["class"], "healthy");

  // Per-job series are an admin's (docs/api.md, "/metrics").
  auto m = http_->Get("/metrics", Auth(daemon_->Token("ops", true)));
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("meridian_job_class{job=\"" + busy + "\",class=\"healthy\"} 1"),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("meridian_job_class{job=\"" + sleeper + "\",class=\"idle\"} 1"),
            std::string::npos);
  EXPECT_NE(m->body.find("meridian_job_cpu_cores{job=\"" + busy + "\"}"), std::string::npos);
  EXPECT_NE(m->body.find("meridian_node_load1 "), std::string::npos);
  EXPECT_NE(m->body.find("meridian_telemetry_gpu_available 0"), std::string::npos);

  // `meridian top --once`: one frame with both jobs, their classes and actions.
  setenv("MERIDIAN_URL", ("http://127.0.0.1:" + std::to_string(daemon_->port())).c_str(), 1);
  setenv("MERIDIAN_TOKEN", token_.c_str(), 1);
  int rc = 0;
  std::string top = testing::RunCommand({MERIDIAN_BINARY, "top", "--once"}, &rc);
  EXPECT_EQ(rc, 0) << top;
  EXPECT_NE(top.find("meridian top: 2 running jobs"), std::string::npos) << top;
  EXPECT_NE(top.find("GPU figures: NVML"), std::string::npos) << top;
  for (const std::string& want : {busy, sleeper, std::string("healthy"), std::string("idle"),
                                  std::string("check-job"), std::string("stuck or sleeping")}) {
    EXPECT_NE(top.find(want), std::string::npos) << want << " not in:\n" << top;
  }
  std::string bad = testing::RunCommand(
      {"/bin/sh", "-c", std::string(MERIDIAN_BINARY) + " top --once --interval 0s 2>&1"}, &rc);
  EXPECT_EQ(rc, 2) << bad;
  EXPECT_NE(bad.find("--interval: \"0s\" must be a duration from 1s to 1h"), std::string::npos) << bad;

  // Cancelled, the job keeps its stored series.
  auto c = http_->Post(("/v1/jobs/" + sleeper + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(c);
  for (int i = 0; i < 100 && Utilization(sleeper)["state"] != "cancelled"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  json after = Utilization(sleeper);
  EXPECT_EQ(after["state"], "cancelled");
  EXPECT_TRUE(after["samples"].empty());
  EXPECT_FALSE(after["series"].empty());
  EXPECT_EQ(after["class"], "idle");
}

// Two busy processes on 1 vCPU: they run on two cores, or queue for one, so
// the measured profile asks for more; preempted, the job's next attempt gets
// them. (The saturation threshold is lowered so that a loaded test machine,
// where a busy loop gets a fraction of a core, still shows it.)
TEST_F(TelemetryE2eTest, PreemptedJobsNextAttemptGetsTheVcpusItMeasured) {
  Begin(1, std::string(kTelemetry) + "  cpu_saturated_frac: 0.05\n");
  const std::string a =
      Submit("two-loops", {"/bin/sh", "-c", "(while :; do :; done) & while :; do :; done"},
             {{"priority", "low"}, {"preemptible", true}, {"grace_period", "5s"}});
  json u;
  for (int i = 0; i < 150; ++i) {
    u = Utilization(a);
    if (u["recommendation"].is_object() && u["recommendation"]["action"] == "more-vcpus") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(u["recommendation"]["action"], "more-vcpus") << u.dump(1);
  ASSERT_GE(u["recommendation"]["vcpus"].get<int>(), 2) << u.dump(1);
  const std::string urgent = Submit("urgent", {"/bin/sleep", "0.5"}, {{"priority", "critical"}});
  // A is preempted, requeued, and placed again once the urgent job is done.
  json again;
  for (int i = 0; i < 200; ++i) {
    again = Utilization(a);
    auto j = http_->Get(("/v1/jobs/" + a).c_str(), Auth(token_));
    if (j && json::parse(j->body)["attempts"] == 2 && again["state"] == "running" &&
        again["figures"].is_object()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto ev = http_->Get(("/v1/jobs/" + a + "/events").c_str(), Auth(token_));
  ASSERT_TRUE(ev);
  std::string note;
  const json events = json::parse(ev->body)["events"];
  for (const json& e : events) {
    const std::string m = e.value("message", "");
    if (m.starts_with("next attempt: measured healthy")) note = m;
  }
  EXPECT_NE(note.find("vcpus 1 -> "), std::string::npos) << ev->body;
  // The second attempt holds the vCPUs (its allocation), and is measured against them.
  ASSERT_TRUE(again["figures"].is_object()) << again.dump(1) << daemon_->Log();
  EXPECT_GE(again["figures"]["vcpus"].get<int>(), 2) << again.dump(1);
  (void)urgent;
}

TEST(TelemetryConfigE2e, BadThresholdIsRefusedWithTheField) {
  const std::string dir = testing::MakeTempDir("telemetry-bad");
  std::ofstream(dir + "/serve.yaml") << "telemetry:\n  gpu_busy_sm_pct: 150\n";
  int rc = 0;
  std::string out = testing::RunCommand(
      {"/bin/sh", "-c",
       std::string(MERIDIAN_BINARY) + " serve --listen 127.0.0.1:0 --db " + dir +
           "/m.db --config " + dir + "/serve.yaml 2>&1"},
      &rc);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("serve.yaml:2:20: telemetry.gpu_busy_sm_pct: \"150\" must be a number from 0 to 100"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace meridian::control
