// Replays that tell the truth (older GPUs, recorded run times): trace jobs
// on V100 and T4 run (a defaulted bf16 runs at fp16 there), a recorded run
// time belongs to the model it was measured on and scales to another by the
// estimator's roofline, and FIFO on the real openb pods agrees with a plain
// FIFO loop written here as the independent reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <sstream>

#include "estimate/run_time.h"
#include "sim/readers/test_files.h"
#include "sim/workload/generator.h"
#include "spec/fleet.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto cat = catalog::Catalog::LoadEmbedded();
  if (!cat.ok()) throw std::runtime_error(cat.status().ToString());
  return *cat;
}

FleetSpec Nodes(int count, int gpus, const std::string& model) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "onprem";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.00);
  c.nodes.push_back({count, model, gpus, 16 * gpus, 128.0 * gpus, {}, "", {}, {}});
  f.clusters = {c};
  f.elastic = false;
  return f;
}

Trace ReadJsonl(const std::string& text) {
  Result<Trace> t = ReadTrace(ScratchFile(text), TraceFormat::kJsonl, *Embedded());
  if (!t.ok()) throw std::runtime_error(t.status().ToString());
  return std::move(t).value();
}

// Effective dense TFLOPS of a catalog model for training, derived here from
// the catalog's columns (docs/simulate.md): bf16, else fp16, else fp32 peak,
// times the measured matmul efficiency where the catalog has one, else 0.75.
double TrainingTflops(const catalog::GpuModel& g) {
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp32}) {
    if (std::optional<double> peak = g.PeakTflops(p)) {
      return *peak * g.matmul_efficiency.value_or(0.75);
    }
  }
  return 0;
}

TEST(OlderGpus, DefaultPrecisionJobsRunOnV100AndT4) {
  // Trace jobs default to training at bf16, which V100 and T4 lack: they run
  // at fp16 there (they ran there).
  Trace t = ReadJsonl(
      "{\"name\":\"v\",\"submit_s\":0,\"duration_s\":600,\"gpus\":4,\"gpu_model\":\"V100-32GB\"}\n"
      "{\"name\":\"t\",\"submit_s\":0,\"duration_s\":600,\"gpus\":1,\"gpu_model\":\"T4\"}\n");
  for (const char* model : {"V100-32GB", "T4"}) {
    World w = testing::MakeWorld(Embedded(), Nodes(1, 8, model));
    PolicyRun run = testing::RunPolicy(t, w, "default");
    const size_t mine = std::string(model) == "T4" ? 1 : 0;
    EXPECT_EQ(run.jobs[mine].state, JobState::kDone) << model;
    EXPECT_EQ(run.jobs[mine].end_s - run.jobs[mine].start_s, 600) << model;  // its own model
  }
}

TEST(RecordedRunTimes, ScaleFromTheRecordedModelToThePlacedOne) {
  // Recorded 3,600 s on a V100-32GB (fp16: 125 TFLOPS x 0.75 = 93.75
  // effective); allowed on A100-80GB too, where the fleet has only A100s.
  const catalog::Catalog& cat = *Embedded();
  const double v100 = TrainingTflops(*cat.FindGpu("V100-32GB"));
  const double a100 = TrainingTflops(*cat.FindGpu("A100-80GB"));
  ASSERT_DOUBLE_EQ(v100, 125 * 0.75);
  Trace t = ReadJsonl(
      "{\"name\":\"a\",\"submit_s\":0,\"duration_s\":3600,\"gpus\":1,"
      "\"gpu_models\":[\"V100-32GB\",\"A100-80GB\"],\"recorded_on\":\"V100-32GB\"}\n"
      "{\"name\":\"b\",\"submit_s\":0,\"duration_s\":3600,\"gpus\":1,\"kind\":\"batch-inference\","
      "\"gpu_models\":[\"V100-32GB\",\"A100-80GB\"],\"recorded_on\":\"V100-32GB\"}\n"
      "{\"name\":\"c\",\"submit_s\":0,\"duration_s\":3600,\"gpus\":1,"
      "\"gpu_models\":[\"V100-32GB\",\"A100-80GB\"]}\n");
  World w = testing::MakeWorld(Embedded(), Nodes(1, 8, "A100-80GB"));
  PolicyRun run = testing::RunPolicy(t, w, "fifo-greedy");
  // Training by effective TFLOPS: 3600 x 93.75 / (312 x 0.869 = 271.128) = 1244.8 s.
  const double training = 3600 * v100 / a100;
  EXPECT_NEAR(training, 1244.8, 0.1);
  EXPECT_EQ(run.jobs[0].end_s - run.jobs[0].start_s, static_cast<int64_t>(std::ceil(training - 1e-6)));
  EXPECT_EQ(run.jobs[0].run_s, std::llround(training));
  // Batch inference by memory bandwidth: 3600 x 900 / 2000 GB/s = 1620 s.
  const double bw = cat.FindGpu("V100-32GB")->memory_bandwidth_gbps /
                    cat.FindGpu("A100-80GB")->memory_bandwidth_gbps;
  EXPECT_DOUBLE_EQ(3600 * bw, 1620);
  EXPECT_EQ(run.jobs[1].end_s - run.jobs[1].start_s, 1620);
  // No recorded model: the recorded time runs unchanged anywhere.
  EXPECT_EQ(run.jobs[2].end_s - run.jobs[2].start_s, 3600);
}

// docs/simulate.md's table of generation ratios, from the embedded catalog:
// effective training TFLOPS (bf16, else fp16, x matmul efficiency or 0.75)
// and memory bandwidth, each derived here from the catalog's columns.
TEST(RecordedRunRatio, DocumentedGenerationRatios) {
  const catalog::Catalog& cat = *Embedded();
  struct Row {
    const char *from, *to;
    double training, inference;  // as printed in the docs, 2 decimals
  };
  const Row rows[] = {
      {"V100-32GB", "A100-80GB", 2.89, 2.22}, {"A100-80GB", "H100-80GB", 2.93, 1.68},
      {"V100-32GB", "H100-80GB", 8.47, 3.72}, {"T4", "L4", 1.86, 0.94},
      {"L4", "A10G", 1.03, 2.00},             {"T4", "A10G", 1.92, 1.88},
  };
  for (const Row& r : rows) {
    const catalog::GpuModel& from = *cat.FindGpu(r.from);
    const catalog::GpuModel& to = *cat.FindGpu(r.to);
    const double training = TrainingTflops(to) / TrainingTflops(from);
    const double inference = to.memory_bandwidth_gbps / from.memory_bandwidth_gbps;
    EXPECT_NEAR(training, r.training, 0.0051) << r.from << " -> " << r.to;
    EXPECT_NEAR(inference, r.inference, 0.0051) << r.from << " -> " << r.to;
    // The engine's ratio is the inverse speedup (time on `to` over time on `from`).
    auto job = [&](WorkloadKind k) {
      JobSpec s;
      s.kind = k;
      return estimate::Resolve(s);
    };
    for (WorkloadKind k : {WorkloadKind::kTraining, WorkloadKind::kBatchInference}) {
      const estimate::ResolvedJob j = job(k);
      const double ratio = estimate::RecordedRunRatio(k, from, *estimate::RunPrecision(j, from), to,
                                                      *estimate::RunPrecision(j, to));
      EXPECT_NEAR(1.0 / ratio, k == WorkloadKind::kTraining ? training : inference, 1e-9)
          << r.from << " -> " << r.to;
    }
  }
}

Trace Generated(WorkloadLike like, int64_t jobs, uint64_t seed, double slack, double preemptible) {
  WorkloadOptions o;
  o.jobs = jobs;
  o.seed = seed;
  o.like = like;
  o.deadline_slack = slack;
  o.preemptible_frac = preemptible;
  std::ostringstream out;
  if (Status s = GenerateWorkload(o, out); !s.ok()) throw std::runtime_error(s.ToString());
  return ReadJsonl(out.str());
}

// No generated workload has a job its recorded GPU turns away for precision:
// each shape with a recorded model has a demand on it.
TEST(OlderGpus, NoGeneratedJobIsRejectedForPrecisionOnItsRecordedGpu) {
  const catalog::Catalog& cat = *Embedded();
  for (WorkloadLike like : {WorkloadLike::kPhilly, WorkloadLike::kHelios, WorkloadLike::kPai,
                            WorkloadLike::kAcmeSeren}) {
    const Trace t = Generated(like, 2000, 11, 2, 0.5);
    const JobShapes shapes = JobShapes::Make(t, cat);
    int recorded = 0;
    for (size_t i = 0; i < t.specs.size(); ++i) {
      const std::string& model = t.specs[i]->work.recorded_on;
      if (model.empty()) continue;
      ++recorded;
      const sched::QueuedJob* q = shapes.Of(static_cast<uint32_t>(i));
      ASSERT_NE(q, nullptr) << ToString(like) << ": " << shapes.refusal(static_cast<uint32_t>(i));
      EXPECT_NE(q->DemandFor(sched::FindGpuModelId(cat, model)), nullptr)
          << ToString(like) << " shape " << i << " on " << model << ": "
          << sched::UnfitReason(*q, sched::FindGpuModelId(cat, model), cat);
    }
    EXPECT_GT(recorded, 0) << ToString(like);
  }
}

// On generated mixed cloud workloads (deadlines at twice the run, half the
// jobs preemptible) over owned, reserved and elastic capacity, default meets
// at least as many deadlines as skypilot-like, which takes the cheapest list
// price, spot first, with no deadline rule, and pays no more in all (the
// summary's cost: every run, plus the reservation's idle hours over the run).
TEST(SameJobs, DefaultMeetsAsManyDeadlinesAsSkypilotLikeForNoMore) {
  auto fleet = spec::LoadFleetFile("examples/fleets/reserved-plus-cloud.yaml");
  ASSERT_TRUE(fleet.ok()) << fleet.status().ToString();
  World w = testing::MakeWorld(Embedded(), *fleet);
  for (WorkloadLike like : {WorkloadLike::kPhilly, WorkloadLike::kHelios, WorkloadLike::kAcmeSeren}) {
    SCOPED_TRACE(std::string(ToString(like)));
    const Trace t = Generated(like, 600, 5, 2, 0.5);
    struct Totals {
      int met = 0;
      int64_t cost = 0;
    };
    auto totals = [&](const PolicyRun& run) {
      Totals s;
      for (size_t i = 0; i < t.jobs.size(); ++i) {
        const JobOutcome& o = run.jobs[i];
        const std::optional<int64_t> d = DeadlineS(t.jobs[i], *t.specs[t.jobs[i].spec], testing::kStart);
        if (d && o.state == JobState::kDone && o.end_s <= *d) ++s.met;
      }
      s.cost = Summarize(t, w, run).cost_micros;
      return s;
    };
    const Totals def = totals(testing::RunPolicy(t, w, "default", 7));
    const Totals sky = totals(testing::RunPolicy(t, w, "skypilot-like", 7));
    EXPECT_GE(def.met, sky.met);
    EXPECT_LE(def.cost, sky.cost);
  }
}

// ---- FIFO on the real openb pods against a plain FIFO loop ----

struct PlainJob {
  int64_t submit = 0, duration = 0;
  int gpus = 0;
};

// A plain FIFO batch queue, written from the textbook definition and nothing
// of meridian's: at each instant, jobs that end release their GPUs, arrivals
// join the queue's tail, then the queue is scanned in order and each job
// starts on the first node (in node order) with enough free GPUs; strict
// stops the scan at the first job that does not fit. Returns the average JCT.
double PlainFifoAverageJct(const std::vector<PlainJob>& jobs, int nodes, int gpus_per_node,
                           bool strict) {
  std::vector<int> free(nodes, gpus_per_node);
  // Running jobs' ends: (time, node, GPUs).
  std::priority_queue<std::tuple<int64_t, int, int>, std::vector<std::tuple<int64_t, int, int>>,
                      std::greater<>> ends;
  std::vector<size_t> queue;
  size_t next = 0;
  double jct = 0;
  while (next < jobs.size() || !ends.empty() || !queue.empty()) {
    int64_t t = INT64_MAX;
    if (next < jobs.size()) t = jobs[next].submit;
    if (!ends.empty()) t = std::min(t, std::get<0>(ends.top()));
    if (t == INT64_MAX) return -1;  // a job that never fits
    bool changed = true;
    while (changed) {  // zero-length runs end at the instant they start
      changed = false;
      while (!ends.empty() && std::get<0>(ends.top()) == t) {
        free[std::get<1>(ends.top())] += std::get<2>(ends.top());
        ends.pop();
      }
      while (next < jobs.size() && jobs[next].submit == t) queue.push_back(next++);
      std::vector<size_t> waiting;
      bool blocked = false;
      for (size_t j : queue) {
        int node = -1;
        for (int n = 0; n < nodes && !blocked && node < 0; ++n) {
          if (free[n] >= jobs[j].gpus) node = n;
        }
        if (node < 0) {  // does not fit, or waits behind a blocked head
          waiting.push_back(j);
          blocked = blocked || strict;
          continue;
        }
        free[node] -= jobs[j].gpus;
        ends.emplace(t + jobs[j].duration, node, jobs[j].gpus);
        jct += static_cast<double>(t + jobs[j].duration - jobs[j].submit);
        changed = changed || jobs[j].duration == 0;
      }
      queue.swap(waiting);
    }
  }
  return jct / static_cast<double>(jobs.size());
}

// openb's whole-GPU pods of its busiest ten days (days 115-124 of the trace,
// when its submissions begin in earnest), pinned to V100-32GB as a JSONL
// trace with their recorded durations, in submission order.
struct Slice {
  std::string jsonl;
  std::vector<PlainJob> jobs;
};

Slice OpenbV100Slice() {
  Result<Trace> openb = ReadTrace(DataFile(kOpenbPods), TraceFormat::kOpenb, *Embedded());
  if (!openb.ok()) throw std::runtime_error(openb.status().ToString());
  Slice s;
  constexpr int64_t kFrom = 115 * 86400, kTo = 125 * 86400;
  for (const TraceJob& j : openb->jobs) {
    const int gpus = openb->specs[j.spec]->resources.gpus.value_or(0);
    if (gpus == 0 || j.gpu_fraction > 0 || j.submit_s < kFrom || j.submit_s >= kTo) continue;
    std::ostringstream line;
    line << "{\"name\":\"" << j.name << "\",\"submit_s\":" << j.submit_s - kFrom
         << ",\"duration_s\":" << j.duration_s << ",\"gpus\":" << gpus
         << ",\"gpu_model\":\"V100-32GB\",\"tenant\":\"openb\",\"kind\":\"training\"}\n";
    s.jsonl += line.str();
    s.jobs.push_back({j.submit_s - kFrom, j.duration_s, gpus});
  }
  return s;
}

double AverageJct(const Trace& t, const PolicyRun& run) {
  double sum = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) sum += static_cast<double>(run.jobs[i].JctS(t.jobs[i].submit_s));
  return sum / static_cast<double>(t.jobs.size());
}

TEST(OlderGpus, OpenbOnV100RunsEveryJobAsAPlainFifoLoopDoes) {
  const Slice slice = OpenbV100Slice();
  // Counted by hand from the CSV: whole-GPU pods (num_gpu > 1, or 1 with
  // gpu_milli 1000) created in [115 d, 125 d), scheduled and deleted.
  ASSERT_EQ(slice.jobs.size(), 1023u);
  // 4,679 GPU-hours of work submitted in 240 hours to 16 GPUs: jobs queue,
  // so FIFO's rules decide the starts (average waits of 3.6 h under
  // fifo-strict on 2 x 8, 20 min under fifo-greedy, 4 min on 1 x 16).
  double mean_run = 0;
  for (const PlainJob& j : slice.jobs) mean_run += static_cast<double>(j.duration) / slice.jobs.size();
  Trace t = ReadJsonl(slice.jsonl);
  struct Fleet {
    int nodes, gpus;
  };
  for (Fleet f : {Fleet{2, 8}, Fleet{1, 16}}) {
    World w = testing::MakeWorld(Embedded(), Nodes(f.nodes, f.gpus, "V100-32GB"));
    for (const char* policy : {"fifo-strict", "fifo-greedy"}) {
      SCOPED_TRACE(std::string(policy) + " on " + std::to_string(f.nodes) + " x " +
                   std::to_string(f.gpus));
      PolicyRun run = testing::RunPolicy(t, w, policy);
      int64_t done = 0;
      for (const JobOutcome& o : run.jobs) done += o.state == JobState::kDone ? 1 : 0;
      EXPECT_EQ(done, static_cast<int64_t>(t.jobs.size()));
      const double want = PlainFifoAverageJct(slice.jobs, f.nodes, f.gpus,
                                              std::string(policy) == "fifo-strict");
      EXPECT_DOUBLE_EQ(AverageJct(t, run), want);
      EXPECT_GT(want - mean_run, 60.0) << "jobs wait";
    }
  }
}

// The history's scheduler planned with time limits, not with the run times
// nobody knew yet, and so does a sacct replay. One node of 4 A100-80GB,
// fifo-backfill; job 1 (2 GPUs) runs 100 s, job 2 (4 GPUs, submitted at 1 s)
// 100 s, job 3 (2 GPUs, at 2 s) 300 s.
// With limits of 1 h, 1 h and 30 min: job 2 waits and reserves the node at
// job 1's expected end, 0 + 3600 s; job 3 would end at 2 + 1800 < 3600, so it
// backfills at 2 s; job 1 ends at 100 s, leaving 2 GPUs, so job 2 starts
// when job 3 ends, at 2 + 300 = 302 s (as Slurm started it).
// Without limits (UNLIMITED: the recorded run time is the estimate): job 2
// reserves at 100 s; job 3 would end at 302 > 100, so it waits; job 2 runs
// 100..200 s and job 3 starts at 200 s.
TEST(Replay, SacctTimeLimitsAreTheBackfillEstimate) {
  auto history = [](const char* limit_1h, const char* limit_30m) {
    return std::string("JobIDRaw|Submit|Start|End|Elapsed|Timelimit|State|AllocTRES\n") +
           "1|2026-03-02T00:00:00|2026-03-02T00:00:00|2026-03-02T00:01:40|00:01:40|" + limit_1h +
           "|COMPLETED|gres/gpu:a100-80gb=2,node=1\n" +
           "2|2026-03-02T00:00:01|2026-03-02T00:05:02|2026-03-02T00:06:42|00:01:40|" + limit_1h +
           "|COMPLETED|gres/gpu:a100-80gb=4,node=1\n" +
           "3|2026-03-02T00:00:02|2026-03-02T00:00:02|2026-03-02T00:05:02|00:05:00|" + limit_30m +
           "|COMPLETED|gres/gpu:a100-80gb=2,node=1\n";
  };
  TraceOptions utc;
  utc.time_zone = "UTC";
  World w = testing::MakeWorld(Embedded(), Nodes(1, 4, "A100-80GB"));
  struct Case {
    const char* limit_1h;
    const char* limit_30m;
    std::vector<int64_t> starts;
  };
  for (const Case& c : {Case{"01:00:00", "00:30:00", {0, 302, 2}},
                        Case{"UNLIMITED", "UNLIMITED", {0, 100, 200}}}) {
    SCOPED_TRACE(c.limit_1h);
    Result<Trace> t = ReadTrace(ScratchFile(history(c.limit_1h, c.limit_30m)), TraceFormat::kSacct,
                                *Embedded(), utc);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_EQ(t->jobs.size(), 3u);
    PolicyRun run = testing::RunPolicy(*t, w, "fifo-backfill");
    std::vector<int64_t> starts;
    for (const JobOutcome& o : run.jobs) starts.push_back(o.start_s);
    EXPECT_EQ(starts, c.starts);
    for (const JobOutcome& o : run.jobs) EXPECT_EQ(o.state, JobState::kDone);
  }
}

}  // namespace
}  // namespace meridian::sim
