// Moves of running work in the simulator (sim/engine_migrate.cc): a job
// worth moving moves once at a checkpoint and loses no work, one that is not
// stays put, --no-migrations never moves, and summary.json and jobs.csv
// count moves alike. Test catalog: H100-80GB; 0.05 $/GB of egress from
// gcp:us-central1 to gcp:europe-west4; migrate at its defaults (25 Gbit/s).
#include <gtest/gtest.h>

#include <optional>
#include <sstream>

#include "sched/plugin_args.h"
#include "sim/report.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;
using testing::FixedJob;

// Two owned clusters of one node of 8 H100s: "onprem" in us-central1 at
// $2.00/GPU-h (testing::OneCluster) and "there" at `there_usd` in `there_region`.
FleetSpec TwoClusters(const std::string& there_region, double there_usd) {
  FleetSpec f = testing::OneCluster(1, 8);
  ClusterSpec there = f.clusters.front();
  there.name = "there";
  there.region = there_region;
  there.gpu_hour = Money::FromDollars(there_usd);
  f.clusters.push_back(there);
  return f;
}

// At second 0 a job that may not be stopped takes the cheaper cluster for
// `blocker_s` (2 h); at second 1 a preemptible 8-GPU job of 10 h (checkpoints every
// 30 min, 5 min restart, 1B parameters: a 16 GB checkpoint unless
// `checkpoint_gb` states its size) starts on the dearer one.
Trace BlockedThenFreed(std::optional<double> checkpoint_gb = std::nullopt,
                       int64_t blocker_s = 7200) {
  Trace t;
  AddJob(t, FixedJob(8, "H100-80GB", 30), "blocker", 0, blocker_s);
  JobSpec mover = FixedJob(8, "H100-80GB", 30);
  mover.preemptible = true;
  mover.checkpoint.interval_s = 1800;
  mover.checkpoint.restart_overhead_s = 300;
  mover.model.params_b = 1;
  mover.checkpoint.size_gb = checkpoint_gb;
  AddJob(t, mover, "mover", 1, 36000);
  return t;
}

PolicyRun RunDefault(const Trace& trace, const World& world, bool migrations) {
  auto profile = sched::EmbeddedProfile("default");
  if (!profile.ok()) throw std::runtime_error(profile.status().ToString());
  const JobShapes shapes = JobShapes::Make(trace, *world.catalog);
  EngineOptions o;
  o.migrations = migrations;
  auto run = Simulate(trace, shapes, world, *profile, "default", o);
  if (!run.ok()) throw std::runtime_error(run.status().ToString());
  return std::move(run).value();
}

RegionId Region(const World& w, const std::string& id) {
  const auto& regions = w.catalog->regions();
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].id == id) return RegionId(static_cast<uint32_t>(i));
  }
  return RegionId();
}

TEST(SimMigrateTest, AJobWorthMovingMovesOnceAtACheckpointAndLosesNoWork) {
  const World w = testing::TestWorld(TwoClusters("gcp:europe-west4", 1.00));
  const Trace trace = BlockedThenFreed();
  const PolicyRun run = RunDefault(trace, w, true);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.start_s, 1);
  // The blocker ends at 7200; the mover's 4th checkpoint is at 1 + 4 x 1800
  // = 7201 with 7200 s of its 36000 s done. Staying: 8 h x 8 x $2 = $128;
  // moving: 8 h x 8 x $1 = $64 plus 16 GB x $0.05 = $0.80 egress and
  // (5 min + 16 x 8 / 25 s) at $8/h: it moves, once (it never moves back to
  // the dearer place).
  EXPECT_EQ(o.moves, 1);
  EXPECT_EQ(o.region, Region(w, "gcp:europe-west4"));
  // The transfer: 16 GB x 8 / 25 Gbit/s = 5.12 s, 6 s whole; the new run
  // begins with 300 + 6 s and then runs the 28800 s left: nothing is lost.
  EXPECT_EQ(o.end_s, 7201 + 306 + 28800);
  EXPECT_EQ(o.lost_gpu_ms, 0);
  // $16/h x 7200 s = $32.00 here; $8/h x 29106 s = $64.68 there; $0.80 egress.
  EXPECT_EQ(o.cost_micros, 32000000 + 64680000 + 800000);
  // The move's cost: egress $0.80 + $8/h x 306 s = $0.68; 8 GPUs x 306 s.
  EXPECT_EQ(o.move_cost_micros, 800000 + 680000);
  EXPECT_EQ(o.move_gpu_ms, 8000 * 306);
}

// The queue has what frees first, at a checkpoint too: the blocker runs
// 7201 s, so the cheaper cluster frees at 7201, the instant of the mover's
// 4th checkpoint, while a job of 8 GPUs (not preemptible, 3600 s) has
// waited since second 100. The instant's cycle places the waiter there
// (1 h x 8 x $1 = $8.00); the mover, asked after it, finds nothing better
// free and stays. At 10801 the waiter ends, at the mover's 6th checkpoint:
// it moves then, with 10800 s of 36000 done: $16/h x 10800 s = $48.00 on
// onprem, then 306 s of restart and transfer and the 25200 s left at $8/h
// ($56.68) and $0.80 egress, ending at 10801 + 306 + 25200 = 36307.
TEST(SimMigrateTest, AJobAtACheckpointMovesOnlyAfterTheQueueHadWhatFreed) {
  const World w = testing::TestWorld(TwoClusters("gcp:europe-west4", 1.00));
  Trace trace = BlockedThenFreed(std::nullopt, 7201);
  AddJob(trace, FixedJob(8, "H100-80GB", 30), "waiter", 100, 3600);
  const PolicyRun run = RunDefault(trace, w, true);
  const JobOutcome& waiter = run.jobs[2];
  ASSERT_EQ(waiter.state, JobState::kDone);
  EXPECT_EQ(waiter.start_s, 7201);
  EXPECT_EQ(waiter.region, Region(w, "gcp:europe-west4"));
  EXPECT_EQ(waiter.cost_micros, 8000000);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.moves, 1);
  EXPECT_EQ(o.end_s, 10801 + 306 + 25200);
  EXPECT_EQ(o.cost_micros, 48000000 + 56680000 + 800000);
}

TEST(SimMigrateTest, AJobNotWorthMovingStaysPut) {
  // The freed cluster is in the same region (same carbon, no egress) at
  // $1.99: 8 h x 8 x $0.01 = $0.64 saved against a restart of 5 min + 6 s
  // at $15.92/h = $1.35, under the hysteresis bar ($1.35 x 1.5): it stays.
  const World w = testing::TestWorld(TwoClusters("gcp:us-central1", 1.99));
  const PolicyRun run = RunDefault(BlockedThenFreed(), w, true);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.moves, 0);
  EXPECT_EQ(o.end_s, 1 + 36000);
  EXPECT_EQ(o.cost_micros, 160000000);  // 10 h x $16/h where it started
  EXPECT_EQ(o.move_cost_micros, 0);
}

TEST(SimMigrateTest, NoMigrationsNeverMoves) {
  const World w = testing::TestWorld(TwoClusters("gcp:europe-west4", 1.00));
  const Trace trace = BlockedThenFreed();
  const PolicyRun run = RunDefault(trace, w, false);
  const Summary s = Summarize(trace, w, run);
  EXPECT_EQ(s.migrations, 0);
  EXPECT_EQ(run.jobs[1].end_s, 1 + 36000);          // 10 h where it started
  EXPECT_EQ(run.jobs[1].cost_micros, 160000000);    // x $16/h
}

TEST(SimMigrateTest, SummaryAndJobsCsvCountMovesAlike) {
  const World w = testing::TestWorld(TwoClusters("gcp:europe-west4", 1.00));
  const Trace trace = BlockedThenFreed();
  Simulation sim;
  sim.trace = &trace;
  sim.world = &w;
  sim.runs.push_back(RunDefault(trace, w, true));
  sim.summaries.push_back(Summarize(trace, w, sim.runs.back()));
  const Summary& s = sim.summaries.back();
  // The one move above: $1.48, 8 GPUs x 306 s = 0.68 GPU-h.
  EXPECT_EQ(s.migrations, 1);
  EXPECT_EQ(s.migration_cost_micros, 1480000);
  EXPECT_DOUBLE_EQ(s.migration_gpu_hours, 8.0 * 306 / 3600);
  std::ostringstream csv;
  WriteJobsCsv(sim, csv);
  std::istringstream in(csv.str());
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line.substr(line.rfind(',') + 1), "moves");
  int64_t moves = 0;
  while (std::getline(in, line)) moves += std::stoll(line.substr(line.rfind(',') + 1));
  EXPECT_EQ(moves, s.migrations);
}

// The stated checkpoint.size_gb, not the 16 GB the 1B parameters give, is
// what a move carries: the trace above with europe-west4 at $1.00 (8 h left
// there: $64 against $128 staying, a gross saving of $64) and egress at the
// test catalog's $0.05/GB from us-central1 to europe-west4.
//   2000 GB  egress 2000 x $0.05 = $100; transfer 2000 x 8 / 25 = 640 s, so
//            (300 + 640) s x $8/h = $2.09: a move costs $102.09 > $64: stays
//   100 GB   egress 100 x $0.05 = $5; transfer 100 x 8 / 25 = 32 s, so
//            (300 + 32) s x $8/h = $0.737778: $5.74 x 1.5 (hysteresis) <
//            $64 and the net $58.26 > 5% of $128: it moves at 7201 and ends
//            at 7201 + 332 + 28800
TEST(SimMigrateTest, ALargeStatedCheckpointStaysWhereASmallOneMovesAcrossRegions) {
  const World w = testing::TestWorld(TwoClusters("gcp:europe-west4", 1.00));
  const PolicyRun large = RunDefault(BlockedThenFreed(2000), w, true);
  const JobOutcome& stays = large.jobs[1];
  ASSERT_EQ(stays.state, JobState::kDone);
  EXPECT_EQ(stays.moves, 0);
  EXPECT_EQ(stays.end_s, 1 + 36000);
  EXPECT_EQ(stays.cost_micros, 160000000);  // 10 h x $16/h where it started

  const PolicyRun small = RunDefault(BlockedThenFreed(100), w, true);
  const JobOutcome& moves = small.jobs[1];
  ASSERT_EQ(moves.state, JobState::kDone);
  EXPECT_EQ(moves.moves, 1);
  EXPECT_EQ(moves.region, Region(w, "gcp:europe-west4"));
  EXPECT_EQ(moves.end_s, 7201 + 332 + 28800);
  // $5.00 egress + $8/h x 332 s = $0.737778.
  EXPECT_NEAR(static_cast<double>(moves.move_cost_micros), 5000000 + 737778, 1);
  // $16/h x 7200 s = $32 here; $8/h x 29132 s = $64.737778 there; $5 egress.
  EXPECT_NEAR(static_cast<double>(moves.cost_micros), 32000000 + 64737778 + 5000000, 1);
}

// A job with cpu_fallback starts on the CPU node while every GPU is busy
// and moves to a GPU when one frees up. Fleet: testing::OneCluster (one node
// of 8 H100s at $2.00/GPU-h) and one CPU node of 64 vCPUs. At second 0 a job
// that may not be stopped takes all 8 GPUs for 7200 s; at second 1 comes a
// preemptible 1-GPU job of 36000 s on a GPU (10 h), 4 times slower on CPU
// (40 h on CPU: CycleContext::CpuRunHours), 64 vCPUs, checkpoints every
// `interval_s`, 5 min restart, no model size (an empty checkpoint: no
// transfer, no egress), deadline 43000 s after submission.
//   start     no GPU now; the latest GPU start is 43001 - 36000 = 7001,
//             before the GPUs free at 7200: "scarce", so the CPU at 1
//   GPUs free at 7200: nothing is queued; the job is asked then, between
//             checkpoints, and saves its state when stopped: 7199 s of
//             144000 s on CPU done; left on the GPU 36000 x (1 - 7199 /
//             144000) = 34200.25 s
//   the move  stay: about 38 h x 64 x $0.031611 = $76.88 on CPU; there:
//             9.5 h x $2 = $19 + the restart, 300 s x $2/h = $0.17: it moves
//   end       7200 + 300 + 34201 (the run's seconds rounded up) = 41701,
//             before the deadline; on the GPU it never moves back (the CPU
//             would cost 4 x 64 x $0.031611 = $8.09 per GPU-hour of work
//             against $2)
Trace CpuThenGpu(int64_t interval_s) {
  Trace trace;
  AddJob(trace, FixedJob(8, "H100-80GB", 30), "blocker", 0, 7200);
  JobSpec mover = FixedJob(1, "H100-80GB", 30);
  mover.resources.cpu_fallback = meridian::CpuFallback{4};
  mover.resources.vcpus = 64;
  mover.preemptible = true;
  mover.checkpoint.interval_s = interval_s;
  mover.checkpoint.restart_overhead_s = 300;
  AddJob(trace, mover, "mover", 1, 36000, 43000);
  return trace;
}

World CpuAndGpuWorld() {
  FleetSpec fleet = testing::OneCluster(1, 8);
  fleet.clusters[0].nodes.push_back({1, "", 0, 64, 256, {}, "", {}, {}});
  return testing::TestWorld(fleet);
}

TEST(SimMigrateTest, ACpuFallbackJobMovesFromCpuToAGpuWhenOneFrees) {
  const World w = CpuAndGpuWorld();
  const Trace trace = CpuThenGpu(1800);
  const PolicyRun run = RunDefault(trace, w, true);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.start_s, 1);
  EXPECT_EQ(o.moves, 1);
  EXPECT_FALSE(o.cpu);  // where it ended: the GPU
  EXPECT_EQ(o.gpus, 1);
  // The 7199 s on CPU are kept, none lost at the move.
  EXPECT_EQ(o.end_s, 7200 + 300 + 34201);
  EXPECT_EQ(o.lost_gpu_ms, 0);
  // The move's own cost: the GPU's 300 s restart at $2/h = $0.166667.
  EXPECT_EQ(o.move_cost_micros, 166667);
  EXPECT_EQ(o.move_gpu_ms, 1000 * 300);

  // Without moves it stays on the CPU for all its 40 h.
  const PolicyRun stay = RunDefault(trace, w, false);
  EXPECT_EQ(stay.jobs[1].moves, 0);
  EXPECT_TRUE(stay.jobs[1].cpu);
  EXPECT_EQ(stay.jobs[1].end_s, 1 + 4 * 36000);
}

// A run on CPUs is billed at its cluster's CPU rates from the fleet file, the
// rates `cpu_fallback` and `migrate` weighed (sched::RunCost), not at $0.
// With migrations off the mover runs its 40 h on the CPU node; at $0.10 per
// vCPU-hour and $0.01 per GiB-hour, 64 vCPUs and 16 GiB cost $6.56/h:
// 40 h x $6.56 = $262.40. The blocker's 8 GPUs for 2 h at $2 are $32.
TEST(SimMigrateTest, ARunOnCpusIsBilledAtTheFleetsCpuRates) {
  FleetSpec fleet = testing::OneCluster(1, 8);
  fleet.clusters[0].nodes.push_back({1, "", 0, 64, 256, {}, "", {}, {}});
  fleet.clusters[0].vcpu_hour = Money::FromDollars(0.10);
  fleet.clusters[0].ram_gib_hour = Money::FromDollars(0.01);
  const World w = testing::TestWorld(fleet);
  Trace trace;
  AddJob(trace, FixedJob(8, "H100-80GB", 30), "blocker", 0, 7200);
  JobSpec mover = FixedJob(1, "H100-80GB", 30);
  mover.resources.cpu_fallback = meridian::CpuFallback{4};
  mover.resources.vcpus = 64;
  mover.resources.ram_gib = 16;
  AddJob(trace, mover, "mover", 1, 36000, 43000);
  const PolicyRun stay = RunDefault(trace, w, false);
  const JobOutcome& o = stay.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  ASSERT_TRUE(o.cpu);
  EXPECT_EQ(o.end_s - o.start_s, 4 * 36000);
  EXPECT_EQ(o.cost_micros, 262400000);
  EXPECT_EQ(stay.jobs[0].cost_micros, 32000000);
}

// The same with checkpoints every 4 h: asked when the GPUs free at 7200, it
// moves then, 7200 s before its first checkpoint, and ends at 41701 as
// above. Asked at checkpoints only, it would have moved at the first,
// 1 + 14400 = 14401, with 10% done (14400 s of 144000): 32400 s left on the
// GPU, ending at 14401 + 300 + 32400 = 47101, past its deadline (43000).
TEST(SimMigrateTest, AJobIsAskedWhenGpusFreeNotOnlyAtItsCheckpoints) {
  const PolicyRun run = RunDefault(CpuThenGpu(14400), CpuAndGpuWorld(), true);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.start_s, 1);
  EXPECT_EQ(o.moves, 1);
  EXPECT_FALSE(o.cpu);
  EXPECT_EQ(o.end_s, 7200 + 300 + 34201);
  EXPECT_LE(o.end_s, 43000);
  EXPECT_EQ(o.lost_gpu_ms, 0);
  EXPECT_EQ(o.move_cost_micros, 166667);  // 300 s x $2/h
}

// Freed GPUs go to the queue first: a job waiting for all 8 GPUs (from
// second 100, 600 s of work) takes them at 7200, and the job on the CPU,
// asked after that cycle, finds none free and stays (migrate's max_wait is
// 0: a place that starts later is not a move). At 7800 they free again; it
// is asked again and moves: 7799 s of 144000 done, 36000 x (1 - 7799 /
// 144000) = 34050.25 s left on the GPU, ending at 7800 + 300 + 34051 =
// 42151, before its deadline.
TEST(SimMigrateTest, FreedGpusGoToTheQueueBeforeARunningJobMovesThere) {
  Trace trace = CpuThenGpu(14400);
  AddJob(trace, FixedJob(8, "H100-80GB", 30), "waiter", 100, 600);
  const PolicyRun run = RunDefault(trace, CpuAndGpuWorld(), true);
  const JobOutcome& waiter = run.jobs[2];
  ASSERT_EQ(waiter.state, JobState::kDone);
  EXPECT_EQ(waiter.start_s, 7200);
  const JobOutcome& o = run.jobs[1];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.moves, 1);
  EXPECT_FALSE(o.cpu);
  EXPECT_EQ(o.end_s, 7800 + 300 + 34051);
}

// And back: a cpu_fallback job on a GPU whose GPU is taken near its end by
// a higher tier finishes on the CPU instead of waiting past its deadline.
//   fleet     one node of 8 H100s at $2/GPU-h and one CPU node (64 vCPUs)
//   mover     1 GPU, 10 h (36000 s), 4x slower on CPU, preemptible,
//             checkpoints every 1800 s, 300 s restart, deadline 50000 s;
//             at second 0 the GPU is free and cheaper than the CPU
//             ($2/h against 4 x 64 x $0.031611 = $8.09/h of GPU work)
//   wanter    8 H100s, high priority, 30000 s, at second 34300: it preempts
//             the mover, whose last checkpoint (the 19th, 19 x 1800 =
//             34200 s) holds 95% of its work; the 100 s since are lost
//   then      the work left, 1800 s on a GPU, is 7200 s on the CPU; no GPU
//             frees before 34300 + 30000 = 64300, past the deadline less
//             the GPU's 1800 s (48200): cpu_fallback's "scarce" rule puts it
//             on the CPU, where it ends before its deadline. Without its
//             cpu_fallback it waits for the GPU and ends at 64300 + 300 +
//             1800 = 66400, after the deadline.
TEST(SimMigrateTest, ACpuFallbackJobWhoseGpuIsTakenNearItsEndFinishesOnTheCpu) {
  const World w = CpuAndGpuWorld();
  auto trace_with = [](bool fallback) {
    Trace trace;
    JobSpec mover = FixedJob(1, "H100-80GB", 30);
    if (fallback) mover.resources.cpu_fallback = meridian::CpuFallback{4};
    mover.resources.vcpus = 64;
    mover.preemptible = true;
    mover.checkpoint.interval_s = 1800;
    mover.checkpoint.restart_overhead_s = 300;
    AddJob(trace, mover, "mover", 0, 36000, 50000);
    JobSpec wanter = FixedJob(8, "H100-80GB", 30);
    wanter.priority = Priority::kHigh;
    AddJob(trace, wanter, "wanter", 34300, 30000);
    return trace;
  };
  const PolicyRun run = RunDefault(trace_with(true), w, true);
  const JobOutcome& o = run.jobs[0];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.start_s, 0);
  EXPECT_EQ(o.preemptions, 1);
  EXPECT_TRUE(o.cpu);  // where it ended
  const JobOutcome& wanter = run.jobs[1];
  ASSERT_EQ(wanter.state, JobState::kDone);
  EXPECT_EQ(wanter.start_s, 34300);
  // It restarts on the CPU and runs the 5% left at a quarter of the speed,
  // 300 s + 7200 s, no sooner than 34300 + 7500 = 41800 and (time_shift may
  // start it at a later hour within its slack) by its deadline.
  EXPECT_GE(o.end_s, 34300 + 300 + 7200);
  EXPECT_LE(o.end_s, 50000);
  // Lost: the 100 s of one GPU after its last checkpoint.
  EXPECT_EQ(o.lost_gpu_ms, 1000 * 100);
  // Paid: the GPU from 0 to 34300 at $2/h = $19.055556, then the CPU node
  // at the fleet's default CPU rate, 64 vCPUs x $0.031611 (no RAM asked) =
  // $2.023104/h, over its 300 s restart and 7,200 s run: 2.083333 h x
  // $2.023104 = $4.2148. $23.270356 in all.
  EXPECT_EQ(o.cost_micros, 19055556 + 4214800);

  const PolicyRun wait = RunDefault(trace_with(false), w, true);
  const JobOutcome& waited = wait.jobs[0];
  ASSERT_EQ(waited.state, JobState::kDone);
  EXPECT_FALSE(waited.cpu);
  EXPECT_EQ(waited.end_s, wait.jobs[1].end_s + 300 + 1800);
  EXPECT_GT(waited.end_s, 50000);
}

// A job whose checkpoints are 8 h apart is asked at each UTC hour too.
// Two clusters of 8 H100s (700 W each: 5.6 kW a job of 8) at the same
// $2.00/GPU-h ($16/h a job): "onprem" in gcp:us-central1 at 430 g/kWh every
// hour and "there" in aws:us-east-1, whose test series is 300 g/kWh for UTC
// hours 0-11 of each day and 500 for 12-23. A preemptible 8-GPU job of 20 h
// (72,000 s; 5 min restart; no model: a 0 GB checkpoint) comes at second 0
// (00:00 UTC) and starts on "there" (over 20 h it averages (12 x 300 + 8 x
// 500) / 20 = 380 g/kWh against 430). `migrate` weighs CO2 at k = 5 $/kg;
// a move costs the 300 s restart, $1.333 + 5.6 x 300 / 3600 x 430 g x k =
// $2.337, and must save more than 1.5 times that (hysteresis 0.5) and, net
// of it, 5% of staying (min_relative_saving).
//   At 12:00 (43,200) 28,800 s are left: staying emits 5.6 x 8 x 500 =
//   22.4 kg ($128 + $112), moving 5.6 x 8 x 430 = 19.264 kg ($128 + $96.32):
//   $15.68 saved, $13.34 net, 5.6% of $240. At 11:00 the 9 h left save
//   5.6 x (1 x 300 + 8 x 500 - 9 x 430) g = 2.408 kg, $12.04, $9.70 net,
//   3.7% of $264.40 ($144 + 24.08 kg x k), and earlier hours less. So it moves at 12:00 and ends at 43,200 + 300 +
//   28,800 = 72,300, having emitted 5.6 x 12 x 300 = 20,160 g there and
//   5.6 x 8.0833 x 430 = 19,465 g on onprem: 39,625 g.
//   Asked at its checkpoints only (08:00, 16:00) it stays: at 08:00 the 12 h
//   left save 5.6 x (4 x 300 + 8 x 500 - 12 x 430) g = 0.224 kg, $1.12,
//   not above 1.5 x $2.337 = $3.51;
//   at 16:00 the 4 h left save $7.84, $5.50 net, 4.6% of $120. It would emit
//   5.6 x (12 x 300 + 8 x 500) = 42,560 g.
TEST(SimMigrateTest, AJobCheckpointingLessOftenThanHourlyIsAskedWhenTheCarbonHourTurns) {
  const World w = testing::TestWorld(TwoClusters("aws:us-east-1", 2.00));
  Trace trace;
  JobSpec mover = FixedJob(8, "H100-80GB", 30);
  mover.preemptible = true;
  mover.checkpoint.interval_s = 8 * 3600;
  mover.checkpoint.restart_overhead_s = 300;
  AddJob(trace, mover, "mover", 0, 72000);
  auto profile = sched::EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok());
  for (sched::PluginConfig& p : profile->plugins) {
    if (p.name != "migrate") continue;
    auto args = sched::PluginArgs::FromYaml("{usd_per_kg_co2: 5.0}");
    ASSERT_TRUE(args.ok());
    p.args = *args;
  }
  EngineOptions o;
  o.migrations = true;
  auto run = Simulate(trace, JobShapes::Make(trace, *w.catalog), w, *profile, "carbon-moves", o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const JobOutcome& j = run->jobs[0];
  ASSERT_EQ(j.state, JobState::kDone);
  EXPECT_EQ(j.start_s, 0);
  EXPECT_EQ(j.moves, 1);
  EXPECT_EQ(j.region, Region(w, "gcp:us-central1"));
  EXPECT_EQ(j.end_s, 72300);
  EXPECT_NEAR(static_cast<double>(j.co2_g), 39625, 1);
  EXPECT_EQ(j.lost_gpu_ms, 0);
}

// A run on on-demand cloud capacity is asked when cheaper spot returns,
// between its checkpoints. Cloud only (the embedded catalog); p3.2xlarge in
// use1-az1 (1 x V100-16GB) replays a trace written here, 30-min ticks over
// 48 h, no instance for its first 9,000 s and one after; no other offering
// has spot. A preemptible 1-GPU job of 24 h (86,400 s; fp16; checkpoints
// every hour; 3 min restart; no deadline, so it does not wait for spot;
// data kept in aws:us-east-1) comes at second 0, finds no spot and runs on
// on-demand. At 9,000 the instance is there: it is asked then, 1,800 s
// after its 2nd checkpoint, and moves to spot. Its 9,000 s are kept; the
// 77,400 s left plus the 180 s restart end at 9,000 + 180 + 77,400 =
// 86,580, billed at the offering's on-demand rate to 9,000 and its spot
// rate after (read from the market below: $3.06 and $0.5197 an hour,
// $7.65 + $11.20 = $18.85). Asked at checkpoints only it would have moved
// at 10,800: $9.18 + 75,780 s on spot, $10.94, $20.12.
TEST(SimMigrateTest, ARunOnOnDemandIsAskedWhenCheaperSpotReturnsBetweenItsCheckpoints) {
  World w;
  w.catalog = *catalog::Catalog::LoadEmbedded();
  FleetSpec cloud;
  cloud.elastic = true;
  w.fleet = *sched::Fleet::Build(cloud, w.catalog);
  OfferingId p3;
  for (size_t i = 0; i < w.catalog->offerings().size(); ++i) {
    const auto& o = w.catalog->offerings()[i];
    if (o.zone == "use1-az1" && o.instance_type == "p3.2xlarge") p3 = OfferingId(static_cast<uint32_t>(i));
  }
  ASSERT_TRUE(p3.valid());
  SpotTrace back;
  back.name = "test/back-after-9000s";
  back.kind = "availability";
  back.region = "aws:us-east-1";
  back.zone = "use1-az1";
  back.instance_type = "p3.2xlarge";
  back.gpu_model = "V100-16GB";
  back.gap_s = 1800;
  back.ticks = 96;
  back.run_end = {5, 96};  // ticks 0-4 (0-9,000 s): none; then one
  back.count = {0, 1};
  back.IndexRuns();
  ReplayMarketOptions mo;
  mo.start = testing::kStart;
  mo.other_spot = OtherSpot::kNone;
  mo.mapped.push_back({p3, back, std::nullopt});
  w.market = std::make_shared<ReplayMarket>(w.catalog, EmbeddedSpotTraces(), mo);
  w.elastic = std::make_shared<sched::ElasticIndex>(*w.catalog);

  Trace trace;
  JobSpec job = FixedJob(1, "V100-16GB", 12);
  job.model.precision = Precision::kFp16;
  job.preemptible = true;
  job.checkpoint.interval_s = 3600;
  job.checkpoint.restart_overhead_s = 180;
  job.residency = {"aws:us-east-1"};
  AddJob(trace, job, "mover", 0, 86400);
  // Spot's expected rework makes its hours, so its CO2, 37% more than
  // on-demand's: beyond migrate's max_worse (2%), which would keep it on
  // on-demand whenever asked. A team that counts dollars first lifts it.
  auto profile = sched::EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok());
  for (sched::PluginConfig& p : profile->plugins) {
    if (p.name == "migrate") p.args = *sched::PluginArgs::FromYaml("{max_worse: 1}");
  }
  EngineOptions eo;
  eo.migrations = true;
  auto simulated = Simulate(trace, JobShapes::Make(trace, *w.catalog), w, *profile, "default", eo);
  ASSERT_TRUE(simulated.ok()) << simulated.status().ToString();
  const PolicyRun& run = *simulated;
  const JobOutcome& o = run.jobs[0];
  ASSERT_EQ(o.state, JobState::kDone);
  EXPECT_EQ(o.start_s, 0);
  EXPECT_EQ(o.moves, 1);
  EXPECT_EQ(o.pay, PayKind::kSpot);
  EXPECT_EQ(o.preemptions, 0);
  EXPECT_EQ(o.end_s, 9000 + 180 + 77400);
  const UnixSeconds t0 = testing::kStart;
  const double on_demand = w.market->PricePerHour(p3, PricingModel::kOnDemand, t0)->dollars();
  const double spot = w.market->PricePerHour(p3, PricingModel::kSpot, t0 + 9000)->dollars();
  EXPECT_EQ(w.market->PricePerHour(p3, PricingModel::kSpot, t0 + 86000)->dollars(), spot);
  EXPECT_NEAR(static_cast<double>(o.cost_micros) / 1e6, on_demand * 9000 / 3600 + spot * 77580 / 3600,
              1e-4);
}

}  // namespace
}  // namespace meridian::sim
