// Moves of running work in the daemon (control/reconciler_move.cc) with real
// processes on the local backend and a real SQLite store. This machine is
// offered as two nodes (testing::SameMachineNodes): gpu0 with one T4 and
// cpu0 without GPUs. A high-priority job holds the T4 for an expected 40 h;
// a preemptible job with cpu_fallback starts on cpu0 because no GPU frees
// before its deadline; the T4's job then ends early. At the mover's
// checkpoint the core decides again for the work left: worth it, the job is
// stopped at its checkpoint and resumes on the GPU from its checkpoint
// directory; not worth it, it stays, and its reason says why.
//
// Figures (gpu_hour_usd 0.35; the fleet's default CPU rates, $0.031611 per
// vCPU-hour and $0.004237 per GiB-hour, so 8 vCPUs and 16 GiB cost
// 8 x 0.031611 + 16 x 0.004237 = $0.32068 per hour; the mover checkpoints
// every 10 min and restarts in 1 min):
//   worth it   5 h on a T4, 4x slower on CPU: 20 h = 72000 s planned on
//              cpu0. At checkpoint 1 (600 s) 1/120 is done and 119/120 is
//              left: staying costs 20 h x 119/120 x $0.32068 = $6.3602,
//              moving 5 h x 119/120 x $0.35 = $1.7354; it saves $4.62,
//              for a 1 min restart ($1.7354 x 1 min / 4.9583 h = $0.0058).
//   not worth  30 min on a T4, 2 h on CPU. At checkpoint 1, 11/12 left:
//              $0.5879 against $0.1604, $0.4275 saved less $0.0058: $0.42
//              net, below migrate's min_saving_usd of $1.00.
//   deadline   24 h: the latest GPU start, 24 h less the GPU run, is before
//              the T4's expected free time (40 h), so cpu_fallback's
//              "scarce" rule runs it on the CPU.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "control/local_store_test.h"
#include "control/reconciler.h"
#include "control/same_machine_nodes.h"
#include "control/store.h"
#include "sched/profile.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;
using testing::SameMachineNodes;

class MoveTest : public testing::LocalStoreTest {
 protected:
  void SetUp() override {
    OpenStore("move");
    BackendNode gpu{"gpu0", "T4", 1, 8, 32, {}, true, ""};
    BackendNode cpu{"cpu0", "", 0, 16, 64, {}, true, ""};
    auto backend = std::make_unique<SameMachineNodes>(OneT4Backend(), std::vector{gpu, cpu});
    nodes_ = backend.get();
    backend_ = std::move(backend);
    ReconcilerOptions o;
    o.catalog = catalog::Catalog::LoadEmbedded().value();
    o.profile = sched::EmbeddedProfile("default").value();
    o.state_dir = dir_ + "/state";
    o.interval_ms = 50;
    o.gpu_hour_usd = 0.35;
    o.clock = [this] { return clock_.load(); };
    o.retention.retention_s = int64_t{10} * 365 * 86400;  // the clock is in 2027
    reconciler_ = std::make_unique<Reconciler>(store_.get(), backend_.get(), &metrics_, o);
  }
  void TearDown() override {
    std::ofstream(dir_ + "/go") << "go\n";
    std::ofstream(dir_ + "/finish") << "finish\n";
    reconciler_.reset();
    backend_.reset();
    store_.reset();
    EndJobsAndRemoveDir();
  }
  std::string Submit(const std::string& spec_json, const std::string& name,
                     const std::string& priority) {
    NewJob job;
    job.tenant = "t";
    job.name = name;
    job.kind = "training";
    job.priority = priority;
    job.submitted_at = kStart;
    job.spec_json = spec_json;
    auto r = store_->Submit(job);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->job_id : "";
  }
  // Holds the T4, expected for 40 h, until the test writes `go`.
  std::string SubmitBlocker() {
    return Submit(R"({"name": "blocker", "kind": "training", "tenant": "t", "priority": "high",
        "resources": {"gpus": 1, "gpu_models": ["T4"]}, "work": {"gpu_hours": 40, "on": "T4"},
        "command": ["/bin/sh", "-c", "while [ ! -e )" + dir_ + R"(/go ]; do sleep 0.05; done"]})",
                  "blocker", "high");
  }
  // `gpu_hours` on one T4, 4x slower on 8 vCPUs and 16 GiB. Each start appends
  // "attempt N devices [CUDA_VISIBLE_DEVICES]" to starts; a start that
  // finds a checkpoint appends "resumed from STEP" and exits 0; SIGTERM
  // saves the step it counted to and exits; it ends by itself once the test
  // writes `finish`.
  std::string SubmitMover(double gpu_hours, const std::string& priority = "normal",
                          const std::string& interval = "10m") {
    const std::string script =
        "d=\"$MERIDIAN_CHECKPOINT_DIR\"; o=" + dir_ + "/starts; " +
        "echo \"attempt $MERIDIAN_ATTEMPT devices [$CUDA_VISIBLE_DEVICES]\" >> $o; "
        "if [ -f \"$d/step\" ]; then echo \"resumed from $(cat \"$d/step\")\" >> $o; exit 0; fi; "
        "n=0; trap 'echo $n > \"$d/step\"; exit 0' TERM; "
        "while [ ! -e " + dir_ + "/finish ]; do n=$((n+1)); sleep 0.05; done";
    nlohmann::json spec = {
        {"name", "mover"},
        {"kind", "training"},
        {"tenant", "t"},
        {"priority", priority},
        {"preemptible", true},
        {"deadline", "24h"},
        {"resources",
         {{"gpus", 1}, {"gpu_models", {"T4"}}, {"vcpus", 8}, {"ram_gib", 16},
          {"cpu_fallback", {{"slowdown", 4}}}}},
        {"work", {{"gpu_hours", gpu_hours}, {"on", "T4"}}},
        {"checkpoint", {{"interval", interval}, {"restart_overhead", "1m"}}},
        {"grace_period", "10s"},
        {"command", {"/bin/sh", "-c", script}}};
    return Submit(spec.dump(), "mover", priority);
  }
  std::string Starts() {
    std::ifstream f(dir_ + "/starts");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // Both jobs placed and running (the mover on cpu0), then, at `free_at` on
  // the daemon's clock, the blocker ends and its GPU is free on the daemon's
  // ledger.
  void RunOnCpuThenFreeTheGpu(const std::string& blocker, const std::string& mover,
                              int64_t free_at = kStart) {
    ASSERT_TRUE(reconciler_->Start().ok());
    ASSERT_TRUE(WaitFor([&] {
      return Row(blocker).state == JobState::kRunning && Row(mover).state == JobState::kRunning;
    })) << Events(blocker) << Events(mover);
    ASSERT_EQ(Row(blocker).placement.node, "gpu0");
    ASSERT_EQ(Row(mover).placement.node, "cpu0") << Events(mover);
    clock_ = free_at;
    std::ofstream(dir_ + "/go") << "go\n";
    ASSERT_TRUE(WaitFor([&] { return Row(blocker).state == JobState::kSucceeded; }))
        << Events(blocker);
  }

  static constexpr int64_t kStart = 1'799'971'200;  // a midnight in 2027
  std::atomic<int64_t> clock_{kStart};
  std::unique_ptr<Backend> backend_;
  SameMachineNodes* nodes_ = nullptr;  // backend_
  Metrics metrics_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(MoveTest, AJobOnTheCpuMovesToAFreedGpuAtItsCheckpointAndResumesThere) {
  const std::string blocker = SubmitBlocker();
  const std::string mover = SubmitMover(5);
  RunOnCpuThenFreeTheGpu(blocker, mover);
  ASSERT_FALSE(HasFailure());
  // Not yet at its checkpoint: it stays where it runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Row(mover).state, JobState::kRunning);
  clock_ = kStart + 600;  // checkpoint 1
  ASSERT_TRUE(WaitFor([&] { return Row(mover).state == JobState::kSucceeded; })) << Events(mover);
  const JobRow row = Row(mover);
  EXPECT_EQ(row.attempts, 2);
  EXPECT_EQ(row.placement.node, "gpu0");
  EXPECT_EQ(row.placement.gpus, std::vector<int>{0});
  EXPECT_EQ(metrics_.moves.load(), 1u);
  // The blocker's launch, then the mover's two.
  EXPECT_EQ(nodes_->LaunchedNodes(), (std::vector<std::string>{"gpu0", "cpu0", "gpu0"}));
  // The first attempt saw no GPU, the second the T4 and the checkpoint the
  // first one saved when it was stopped.
  const std::string starts = Starts();
  EXPECT_NE(starts.find("attempt 1 devices []\n"), std::string::npos) << starts;
  EXPECT_NE(starts.find("attempt 2 devices [0]\nresumed from "), std::string::npos) << starts;
  const size_t at = starts.find("resumed from ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stoi(starts.substr(at + 13)), 0) << starts;
  const std::string events = Events(mover);
  EXPECT_NE(events.find("moves from cpu0 CPU to gpu0 1 GPU(s) after checkpoint 1: saves $4.62, "),
            std::string::npos) << events;
  EXPECT_NE(events.find("costs $0.00 egress and 1 min restart ($0.01)"), std::string::npos)
      << events;
  EXPECT_NE(events.find("stopped at its checkpoint to move"), std::string::npos) << events;
  EXPECT_NE(events.find("moved to gpu0 GPUs 0 (owned)"), std::string::npos) << events;
}

// Asked when the GPU frees, not only at checkpoints: the T4 frees 300 s
// into the mover's run, before its first checkpoint (600 s), and the mover
// is asked then and moves, saving its state when stopped. At 300 s, 1/240 of
// its 72000 s on the CPU is done and 239/240 left: staying costs 20 h x
// 239/240 x $0.32068 = $6.3869, moving 5 h x 239/240 x $0.35 = $1.7427;
// it saves $4.64.
TEST_F(MoveTest, AJobOnTheCpuIsAskedWhenTheGpuFreesBetweenItsCheckpoints) {
  const std::string blocker = SubmitBlocker();
  const std::string mover = SubmitMover(5);
  RunOnCpuThenFreeTheGpu(blocker, mover, kStart + 300);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WaitFor([&] { return Row(mover).state == JobState::kSucceeded; })) << Events(mover);
  EXPECT_EQ(clock_.load(), kStart + 300);  // no checkpoint came
  const JobRow row = Row(mover);
  EXPECT_EQ(row.attempts, 2);
  EXPECT_EQ(row.placement.node, "gpu0");
  EXPECT_EQ(metrics_.moves.load(), 1u);
  const std::string starts = Starts();
  const size_t at = starts.find("attempt 2 devices [0]\nresumed from ");
  ASSERT_NE(at, std::string::npos) << starts;
  const std::string events = Events(mover);
  EXPECT_NE(events.find("moves from cpu0 CPU to gpu0 1 GPU(s) when GPUs freed, after checkpoint 0: "
                        "saves $4.64, "),
            std::string::npos) << events;
}

// The queue has a freed GPU first: a job waiting for the T4 (not
// preemptible, 40 h of work) takes it when the blocker ends, and the mover,
// asked after that scheduling step, stays: the T4 is then held for 40 h,
// past the mover's latest GPU start (its 24 h deadline less its 5 h on the
// T4), so cpu_fallback's "scarce" rule keeps it on the CPU, where it runs.
TEST_F(MoveTest, AFreedGpuGoesToTheQueueBeforeAJobOnTheCpuMovesThere) {
  const std::string blocker = SubmitBlocker();
  const std::string mover = SubmitMover(5);
  const std::string waiter =
      Submit(R"({"name": "waiter", "kind": "training", "tenant": "t", "priority": "normal",
        "resources": {"gpus": 1, "gpu_models": ["T4"]}, "work": {"gpu_hours": 40, "on": "T4"},
        "command": ["/bin/sh", "-c", "while [ ! -e )" + dir_ + R"(/finish ]; do sleep 0.05; done"]})",
             "waiter", "normal");
  RunOnCpuThenFreeTheGpu(blocker, mover, kStart + 300);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WaitFor([&] { return Row(waiter).state == JobState::kRunning; })) << Events(waiter);
  EXPECT_EQ(Row(waiter).placement.node, "gpu0");
  ASSERT_TRUE(WaitFor([&] { return Row(mover).reason.find("when GPUs freed") != std::string::npos; }))
      << Row(mover).reason;
  const JobRow row = Row(mover);
  EXPECT_EQ(row.state, JobState::kRunning);
  EXPECT_EQ(row.placement.node, "cpu0");
  EXPECT_NE(row.reason.find("stays on cpu0 CPU when GPUs freed, after checkpoint 0: the best "
                            "placement for the work left is where it runs"),
            std::string::npos) << row.reason;
  EXPECT_EQ(metrics_.moves.load(), 0u);
}

TEST_F(MoveTest, AJobNotWorthMovingStaysWhereItRunsAndSaysWhy) {
  const std::string blocker = SubmitBlocker();
  const std::string mover = SubmitMover(0.5);
  RunOnCpuThenFreeTheGpu(blocker, mover);
  ASSERT_FALSE(HasFailure());
  clock_ = kStart + 600;  // checkpoint 1
  ASSERT_TRUE(WaitFor([&] { return Row(mover).reason.find("after checkpoint 1") != std::string::npos; }))
      << Row(mover).reason;
  JobRow row = Row(mover);
  EXPECT_EQ(row.state, JobState::kRunning);
  EXPECT_NE(row.reason.find("stays on cpu0 CPU after checkpoint 1 rather than move to gpu0 1 GPU(s): "
                            "it saves $0.42 net, below min_saving_usd $1.00"),
            std::string::npos) << row.reason;
  clock_ = kStart + 1200;  // checkpoint 2: still not worth it
  ASSERT_TRUE(WaitFor([&] { return Row(mover).reason.find("after checkpoint 2") != std::string::npos; }))
      << Row(mover).reason;
  std::ofstream(dir_ + "/finish") << "finish\n";
  ASSERT_TRUE(WaitFor([&] { return Row(mover).state == JobState::kSucceeded; })) << Events(mover);
  row = Row(mover);
  EXPECT_EQ(row.attempts, 1);
  EXPECT_EQ(row.placement.node, "cpu0");
  EXPECT_EQ(metrics_.moves.load(), 0u);
  EXPECT_EQ(Starts(), "attempt 1 devices []\n");
  EXPECT_EQ(Events(mover).find("moves from"), std::string::npos) << Events(mover);
}

// A job that checkpoints every 3 h is asked at each turn of a UTC hour too
// (the grid's carbon changes hourly), between its checkpoints. The T4 stays
// held, so the answer is to stay, and the reason says when it was asked.
// Half an hour in, nothing has asked it; at 01:00 the hour has.
TEST_F(MoveTest, AJobCheckpointingLessOftenThanHourlyIsAskedWhenTheHourTurns) {
  const std::string blocker = SubmitBlocker();
  const std::string mover = SubmitMover(20, "normal", "3h");
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] {
    return Row(blocker).state == JobState::kRunning && Row(mover).state == JobState::kRunning;
  })) << Events(blocker) << Events(mover);
  ASSERT_EQ(Row(mover).placement.node, "cpu0") << Events(mover);
  clock_ = kStart + 1800;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several cycles
  EXPECT_EQ(Row(mover).reason.find("carbon hour"), std::string::npos) << Row(mover).reason;
  clock_ = kStart + 3600;
  ASSERT_TRUE(WaitFor([&] {
    return Row(mover).reason.find("at a new carbon hour, after checkpoint 0") != std::string::npos;
  })) << Row(mover).reason;
  EXPECT_NE(Row(mover).reason.find("stays on cpu0 CPU at a new carbon hour"), std::string::npos)
      << Row(mover).reason;
  EXPECT_EQ(Row(mover).state, JobState::kRunning);
  EXPECT_EQ(Starts(), "attempt 1 devices []\n");
}

// And back to the CPU: the mover (5 h on the T4, priority low) starts on the
// free T4 ($1.75 there against $6.41 on the CPU). At kStart + 16300 s a
// critical job that holds the T4 for an expected 40 h preempts it; its last
// checkpoint, the 27th (27 x 600 = 16200 s of the 18000 s it was planned
// for on the T4), holds 90% of its work. It is queued for the 10% left:
// 0.5 h on the T4, 2 h on the CPU. The T4 frees at 16300 + 144000, past its
// latest GPU start (86400 s deadline less 0.5 h), so cpu_fallback's
// "scarce" rule puts it on cpu0 for 2 h, where it resumes from its
// checkpoint. Queued for all its work it would ask cpu0 for 20 h, ending at
// 16300 + 72000 = 88300, past its deadline.
TEST_F(MoveTest, AJobWhoseGpuIsTakenNearItsEndFinishesOnTheCpuForTheWorkLeft) {
  const std::string mover = SubmitMover(5, "low");
  ASSERT_TRUE(reconciler_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return Row(mover).state == JobState::kRunning; })) << Events(mover);
  ASSERT_EQ(Row(mover).placement.node, "gpu0") << Events(mover);
  clock_ = kStart + 16300;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its checkpoints: it stays
  const std::string critical =
      Submit(R"({"name": "critical", "kind": "training", "tenant": "t", "priority": "critical",
        "resources": {"gpus": 1, "gpu_models": ["T4"]}, "work": {"gpu_hours": 40, "on": "T4"},
        "command": ["/bin/sh", "-c", "while [ ! -e )" + dir_ + R"(/go ]; do sleep 0.05; done"]})",
             "critical", "critical");
  reconciler_->Notify();
  ASSERT_TRUE(WaitFor([&] { return Row(mover).state == JobState::kSucceeded; })) << Events(mover);
  EXPECT_EQ(Row(critical).state, JobState::kRunning);
  const JobRow row = Row(mover);
  EXPECT_EQ(row.attempts, 2);
  EXPECT_EQ(row.placement.node, "cpu0") << Events(mover);
  const nlohmann::json alloc = nlohmann::json::parse(row.allocation_json);
  EXPECT_EQ(alloc["end"].get<int64_t>() - alloc["start"].get<int64_t>(), 7200) << alloc.dump();
  const std::string starts = Starts();
  EXPECT_NE(starts.find("attempt 1 devices [0]\nattempt 2 devices []\nresumed from "),
            std::string::npos) << starts;
  const std::string events = Events(mover);
  EXPECT_NE(events.find("preempted for " + critical), std::string::npos) << events;
  EXPECT_NE(events.find("placed on cpu0 (owned)"), std::string::npos) << events;
}

}  // namespace
}  // namespace meridian::control
