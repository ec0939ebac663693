// Quotas hold across the daemon's ledger rebuilds: a tenant runs jobs up to
// its GPU quota; after kill -9 and a restart, and after a fleet change (a
// node registered at runtime), the daemon counts the same usage and a further
// job of the tenant still waits on the quota. Against the real `meridian
// serve` on loopback.
#include <fstream>
#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using testing::GetJob;
using testing::SubmitJob;

// alice may hold 2 GPUs; the test node has 4 T4s, so only the quota keeps a
// third 1-GPU job waiting.
constexpr const char* kProfile = R"(name: quota-restart
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: cpu_ram
  - name: quota
    args: {tenants: {alice: 2}}
  - name: first_fit
)";

// The quota filter's reason for a 1-GPU job on the test node while alice
// holds 2 of her 2 (16 eighths held + 8 > 16).
constexpr const char* kOverQuota =
    "testnode 1 GPU(s): the tenant's GPU quota would be exceeded: holds 2 + 1 > 2 GPUs";

class QuotaRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("quota");
    std::ofstream(dir_ + "/quota.yaml") << kProfile;
    daemon_ = std::make_unique<DaemonProcess>(dir_, 4, "profile: " + dir_ + "/quota.yaml\n");
    daemon_->Start();
    token_ = daemon_->Token("alice");
    admin_ = daemon_->Token("ops", true);
    http_ = daemon_->Client();
  }
  void TearDown() override {
    std::ofstream(dir_ + "/go") << "go\n";  // lets any job still running end
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }

  // A 1-GPU T4 job that runs until the test creates `go`.
  std::string SubmitHolder(const std::string& name) {
    const std::string go = dir_ + "/go";
    return SubmitJob(*http_, token_,
                     {{"name", name},
                      {"kind", "data-science"},
                      {"resources", {{"gpus", 1}, {"gpu_models", {"T4"}}}},
                      {"command", {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done"}}});
  }
  json WaitFor(const std::string& id, const std::string& state) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = GetJob(*http_, token_, id);
      if (j["state"] == state) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << j.dump() << "\n" << daemon_->Log();
    return j;
  }
  // The quota filter's reasons for waiting job `id` in /v1/waiting ("" until
  // a cycle has decided it with quota turning a candidate away).
  std::string QuotaReason(const std::string& id) {
    auto r = http_->Get("/v1/waiting", Auth(token_));
    if (!r || r->status != 200) return "";
    const json waiting = json::parse(r->body);
    for (const json& j : waiting["jobs"]) {
      if (j["id"] != id) continue;
      for (const json& f : j["filters"]) {
        if (f["plugin"] == "quota" && !f["examples"].empty()) return f["examples"][0];
      }
    }
    return "";
  }
  // Polls until the reason names `want` (5 s at most); returns the last one.
  std::string WaitForQuotaReason(const std::string& id, const std::string& want) {
    std::string got;
    for (int i = 0; i < 100; ++i) {
      got = QuotaReason(id);
      if (got.find(want) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return got;
  }
  // The job stays queued over `cycles` reconcile cycles (50 ms each).
  void StaysQueued(const std::string& id, int cycles) {
    for (int i = 0; i < cycles; ++i) {
      json j = GetJob(*http_, token_, id);
      ASSERT_EQ(j["state"], "queued") << j.dump() << "\n" << daemon_->Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // GPUs alice's jobs hold by their placements (running or starting).
  int GpusHeld() {
    auto r = http_->Get("/v1/jobs", Auth(token_));
    if (!r || r->status != 200) return -1;
    int n = 0;
    const json jobs = json::parse(r->body);
    for (const json& j : jobs["jobs"]) {
      if (j["state"] == "running" || j["state"] == "starting") n += static_cast<int>(j["placement"]["gpus"].size());
    }
    return n;
  }
  void Runs2AndHoldsTheThird() {
    a_ = SubmitHolder("a");
    b_ = SubmitHolder("b");
    WaitFor(a_, "running");
    WaitFor(b_, "running");
    c_ = SubmitHolder("c");
    // 2 GPUs held (16 eighths) + 1 (8) = 24 > 16: the quota's reason, with
    // the usage it counted.
    EXPECT_EQ(WaitForQuotaReason(c_, kOverQuota), kOverQuota) << daemon_->Log();
    StaysQueued(c_, 10);
    EXPECT_EQ(GpusHeld(), 2);
  }
  void AllEnd() {
    std::ofstream(dir_ + "/go") << "go\n";
    WaitFor(a_, "succeeded");
    WaitFor(b_, "succeeded");
    WaitFor(c_, "succeeded");  // once a and b release, c is within the quota
  }

  std::string dir_, token_, admin_, a_, b_, c_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(QuotaRestartTest, UsageAfterKillNineAndRestartEqualsUsageBefore) {
  Runs2AndHoldsTheThird();
  daemon_->Kill(SIGKILL);
  daemon_->Start();
  http_ = daemon_->Client();
  WaitFor(a_, "running");
  WaitFor(b_, "running");
  // The rebuilt ledger counts a's and b's GPUs for alice again: the same
  // reason, the same 2 GPUs held, and c still waits (20 cycles, 1 s).
  EXPECT_EQ(WaitForQuotaReason(c_, kOverQuota), kOverQuota) << daemon_->Log();
  StaysQueued(c_, 20);
  EXPECT_EQ(GpusHeld(), 2);
  AllEnd();
}

TEST_F(QuotaRestartTest, UsageAfterAFleetChangeEqualsUsageBefore) {
  Runs2AndHoldsTheThird();
  // A CPU node registered at runtime changes the fleet: the daemon builds a
  // new scheduler and ledger and puts a and b back into them.
  auto r = http_->Post("/v1/nodes", Auth(admin_),
                       json{{"name", "cpu-1"}, {"gpus", 0}, {"vcpus", 4}, {"ram_gib", 8}}.dump(),
                       "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status / 100, 2) << r->body;
  bool listed = false;
  for (int i = 0; i < 100 && !listed; ++i) {
    auto f = http_->Get("/v1/fleet", Auth(admin_));
    listed = f && f->body.find("\"cpu-1\"") != std::string::npos;
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(listed) << daemon_->Log();
  StaysQueued(c_, 20);
  EXPECT_EQ(QuotaReason(c_), kOverQuota) << daemon_->Log();
  EXPECT_EQ(GpusHeld(), 2);
  AllEnd();
}

}  // namespace
}  // namespace meridian::control
