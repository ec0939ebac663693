// A leader deposed by a newer one, on the real local backend and a real
// SQLite store: once the backend's launch fence records a newer epoch
// (backends/local/launch_fence.h), the old leader's reconciler starts no
// attempt, neither retries nor fails the job, and reports itself deposed;
// and a leader whose epoch is already below the fence does not start.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "control/local_store_test.h"
#include "control/reconciler.h"
#include "control/store.h"
#include "control/store_test_kinds.h"
#include "control/test_postgres.h"
#include "sched/profile.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;

class DeposedLaunchTest : public testing::LocalStoreTest {
 protected:
  void SetUp() override {
    OpenStore("deposed");
    backend_ = OneT4Backend();
  }
  void TearDown() override {
    reconciler_.reset();
    backend_.reset();
    store_.reset();
    EndJobsAndRemoveDir();
  }
  // A reconciler leading at `epoch`, counting the times it is told it was deposed.
  void MakeReconciler(int64_t epoch) {
    ReconcilerOptions o;
    o.catalog = catalog::Catalog::LoadEmbedded().value();
    o.profile = sched::EmbeddedProfile("default").value();
    o.state_dir = dir_ + "/state";
    o.epoch = [epoch] { return epoch; };
    o.deposed = [this] { ++deposed_; };
    reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, o);
  }
  std::string Submit() {
    NewJob job;
    job.tenant = "t";
    job.name = "once";
    job.kind = "data-science";
    job.priority = "normal";
    job.submitted_at = 1'800'000'000;
    job.spec_json = R"({"name": "once", "kind": "data-science", "tenant": "t",
                        "priority": "normal", "resources": {"gpus": 1, "gpu_models": ["T4"]},
                        "command": ["/bin/true"]})";
    auto r = store_->Submit(job);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->job_id : "";
  }
  // Attempt records (.run, .status) in the shared state directory.
  int AttemptFiles() const {
    const fs::path a = fs::path(dir_) / "state" / "attempts";
    if (!fs::exists(a)) return 0;
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(a)) ++n;
    return n;
  }

  std::unique_ptr<Backend> backend_;
  Metrics metrics_;
  std::unique_ptr<Reconciler> reconciler_;
  std::atomic<int> deposed_{0};
};

TEST_F(DeposedLaunchTest, LaunchAfterANewerLeaderFencedIsNeitherMadeNorRetriedNorFailed) {
  MakeReconciler(1);
  ASSERT_TRUE(backend_->Fence(1).ok());  // this leader's own fencing, as Start makes it
  ASSERT_TRUE(reconciler_->Recover().ok());
  ASSERT_TRUE(backend_->Fence(2).ok());  // a newer leader took over meanwhile
  const std::string id = Submit();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reconciler_->RunCycle().ok());

  EXPECT_GE(deposed_, 1);
  EXPECT_EQ(metrics_.launches, 0u);
  EXPECT_EQ(AttemptFiles(), 0);
  auto row = store_->GetJob(id);
  ASSERT_TRUE(row.ok()) << row.status().message();
  // Left for the new leader: not failed, not started.
  EXPECT_NE(row->state, JobState::kFailed);
  EXPECT_NE(row->state, JobState::kStarting);
  EXPECT_NE(row->state, JobState::kRunning);
}

TEST_F(DeposedLaunchTest, LeaderBelowTheFenceDoesNotStart) {
  ASSERT_TRUE(backend_->Fence(3).ok());
  MakeReconciler(2);
  Status st = reconciler_->Start();
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(IsDeposed(st)) << st.message();
}

// On PostgreSQL, with a backend that keeps no fence of its own (as Slurm
// and Kubernetes keep none; here the local backend, whose fence file no newer
// leader ever wrote): a leader whose lease another replica took after the
// job was written "scheduled" makes no launch. The store's launch hold
// (Store::HoldLaunches) refuses it, and the leader is told it was deposed.
TEST_F(DeposedLaunchTest, OnPostgresADeposedLeaderLaunchesNothingThroughABackendWithoutAFence) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  std::unique_ptr<Store> newer = testing::OpenStoreOn(*db);
  store_ = testing::OpenStoreOn(*db);
  ASSERT_TRUE(store_ && newer);
  ASSERT_EQ(*store_->TakeLease("old", 300), 1);
  MakeReconciler(1);
  ASSERT_TRUE(reconciler_->Recover().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the old lease lapsed
  ASSERT_EQ(*newer->TakeLease("new", 60000), 2);
  // The job comes; the old leader's writes are not fenced here, so only the
  // launch hold stands between it and a launch.
  const std::string id = Submit();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reconciler_->RunCycle().ok());

  EXPECT_GE(deposed_, 1);
  EXPECT_EQ(metrics_.launches, 0u);
  EXPECT_EQ(AttemptFiles(), 0);
  auto row = newer->GetJob(id);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_TRUE(row->handle.empty()) << row->handle;
  EXPECT_NE(row->state, JobState::kFailed);
  EXPECT_NE(row->state, JobState::kRunning);

  // The same reconciler at the current epoch launches it.
  MakeReconciler(2);
  ASSERT_TRUE(reconciler_->Recover().ok());
  for (int i = 0; i < 3 && metrics_.launches == 0; ++i) ASSERT_TRUE(reconciler_->RunCycle().ok());
  EXPECT_EQ(metrics_.launches, 1u);
}

}  // namespace
}  // namespace meridian::control
