// The launch fence against real files, locks and processes: a launch at an
// epoch below the recorded one is refused and starts nothing, a newer or
// equal epoch launches, epoch 0 (a SQLite daemon) is not fenced, and a new
// leader's fencing waits for a launch under way.
#include "backends/local/launch_fence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "backends/local/local.h"
#include "backends/local/shim.h"

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;
using control::LaunchRequest;

class LaunchFenceTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(testing::TempDir()) /
            ("meridian_fence_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    LocalBackendOptions o;
    o.state_dir = State();
    // The real monitor, counted: a refused launch must not reach it.
    o.spawn = [this](const ShimLaunch& l) {
      ++spawned_;
      return SpawnShim(l);
    };
    backend_ = MakeLocalBackend(o);
  }
  void TearDown() override {
    backend_.reset();
    // The monitors of the attempts launched (/bin/true) may still be writing
    // their status files while the directory goes: remove until it is gone.
    for (int i = 0; i < 250; ++i) {
      std::error_code ec;
      fs::remove_all(root_, ec);
      if (!ec && !fs::exists(root_)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string State() const { return (root_ / "state").string(); }
  std::string FenceFile() const { return (root_ / "state" / kLaunchFenceFile).string(); }
  bool AttemptRecorded(const std::string& job, int attempt) const {
    const fs::path a = root_ / "state" / "attempts";
    const std::string stem = job + "." + std::to_string(attempt);
    return fs::exists(a / (stem + ".run")) || fs::exists(a / (stem + ".status"));
  }
  LaunchRequest Request(const std::string& job, int64_t epoch) const {
    LaunchRequest r;
    r.job_id = job;
    r.argv = {"/bin/true"};
    r.epoch = epoch;
    return r;
  }

  fs::path root_;
  std::atomic<int> spawned_{0};
  std::unique_ptr<control::Backend> backend_;
};

TEST_F(LaunchFenceTest, StaleEpochAfterNewerIsRefusedAndStartsNothing) {
  auto newer = backend_->Launch(Request("j-00000001", 2));
  ASSERT_TRUE(newer.ok()) << newer.status().message();
  ASSERT_TRUE(AttemptRecorded("j-00000001", 1));
  ASSERT_EQ(spawned_, 1);

  auto stale = backend_->Launch(Request("j-00000002", 1));
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(control::IsDeposed(stale.status())) << stale.status().message();
  EXPECT_NE(stale.status().message().find("epoch 1"), std::string::npos);
  EXPECT_NE(stale.status().message().find("epoch 2"), std::string::npos);
  // Nothing of the refused attempt exists: no monitor, no record, no job dir.
  EXPECT_EQ(spawned_, 1);
  EXPECT_FALSE(AttemptRecorded("j-00000002", 1));
  EXPECT_FALSE(fs::exists(root_ / "state" / "jobs" / "j-00000002"));
  // The refusal does not lower what is recorded.
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 2);
}

TEST_F(LaunchFenceTest, FencedBackendRefusesOlderEpochAndLaunchesNewerOrEqual) {
  ASSERT_TRUE(backend_->Fence(5).ok());
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 5);

  auto old = backend_->Launch(Request("j-00000001", 4));
  EXPECT_TRUE(control::IsDeposed(old.status())) << old.status().message();
  EXPECT_FALSE(AttemptRecorded("j-00000001", 1));
  EXPECT_EQ(spawned_, 0);

  auto same = backend_->Launch(Request("j-00000002", 5));  // the fencing leader's own
  ASSERT_TRUE(same.ok()) << same.status().message();
  auto later = backend_->Launch(Request("j-00000003", 6));  // a still newer leader
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ(spawned_, 2);
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 6);
  // Now the fencing leader's epoch 5 is the stale one.
  EXPECT_TRUE(control::IsDeposed(backend_->Launch(Request("j-00000004", 5)).status()));
}

TEST_F(LaunchFenceTest, EpochZeroIsNotFenced) {
  // A SQLite daemon's launches carry no epoch: no fence file is made or read.
  auto first = backend_->Launch(Request("j-00000001", 0));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE(fs::exists(FenceFile()));
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 0);
}

TEST_F(LaunchFenceTest, FencingWaitsForALaunchUnderWay) {
  fs::create_directories(State());
  // Another replica's launch at epoch 3 holds the fence for 300 ms.
  auto held = EnterLaunchFence(FenceFile(), 3, 1000);
  ASSERT_TRUE(held.ok()) << held.status().message();
  std::thread release([h = std::move(held).value()]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    LaunchFenceHold drop = std::move(h);
  });
  const auto t0 = std::chrono::steady_clock::now();
  Status fenced = backend_->Fence(4);
  const auto waited = std::chrono::steady_clock::now() - t0;
  release.join();
  ASSERT_TRUE(fenced.ok()) << fenced.message();
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 4);
}

TEST_F(LaunchFenceTest, HeldFenceTimesOutWithAnError) {
  fs::create_directories(State());
  auto held = EnterLaunchFence(FenceFile(), 3, 1000);
  ASSERT_TRUE(held.ok()) << held.status().message();
  // flock locks belong to the open file description: a second open, even in
  // this process, waits as another process would.
  auto second = EnterLaunchFence(FenceFile(), 4, 100);
  ASSERT_FALSE(second.ok());
  EXPECT_FALSE(control::IsDeposed(second.status()));
  EXPECT_NE(second.status().message().find("still held after 100 ms"), std::string::npos);
  EXPECT_EQ(*RecordedLaunchEpoch(FenceFile()), 3);
}

}  // namespace
}  // namespace meridian::backends
