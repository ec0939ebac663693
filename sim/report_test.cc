// The outputs of a simulation (summary.json, jobs.csv, report.html), and the
// openb replay: every GPU pod of the real trace placed on its own node list.
#include "sim/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/sanitizers.h"
#include "sim/readers/test_files.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;
using testing::FixedJob;

struct Fixture {
  Trace trace;
  World world;
  Simulation sim;
};

std::unique_ptr<Fixture> Simulated(const std::vector<std::string>& policies) {
  auto f = std::make_unique<Fixture>();
  AddJob(f->trace, FixedJob(4, "H100-80GB"), "a", 0, 7200);
  AddJob(f->trace, FixedJob(8, "H100-80GB"), "b,with comma", 60, 3600, 86400);
  AddJob(f->trace, FixedJob(2, "H100-80GB"), "c", 120, 1800);
  f->trace.source = "test.jsonl";
  f->world = testing::TestWorld(testing::OneCluster(1, 8, true));
  f->sim.trace = &f->trace;
  f->sim.world = &f->world;
  f->sim.fleet_source = "test fleet";
  for (const std::string& p : policies) {
    f->sim.runs.push_back(testing::RunPolicy(f->trace, f->world, p));
    f->sim.runs.back().policy = p;
    f->sim.summaries.push_back(Summarize(f->trace, f->world, f->sim.runs.back()));
  }
  return f;
}

// Job "b,with comma" (index 1) is submitted at 60 s with a deadline 86,400 s
// later: due at 86,460 s. Outcomes and totals set by hand: default finishes
// it at 80,000 s (met) for $10; fifo-greedy at 90,000 s (missed) for $7;
// skypilot-like at exactly 86,460 s (met) for $12. Only fifo-greedy spent
// less, by $3, and b is the deadline default met that it missed.
TEST(Report, ExtraSpendListsTheDeadlinesOnlyTheDearerPolicyMet) {
  auto f = Simulated({"default", "fifo-greedy", "skypilot-like"});
  const int64_t ends[] = {80000, 90000, 86460};
  const int64_t costs[] = {10'000'000, 7'000'000, 12'000'000};
  for (size_t p = 0; p < 3; ++p) {
    f->sim.runs[p].jobs[1].state = JobState::kDone;
    f->sim.runs[p].jobs[1].end_s = ends[p];
    f->sim.summaries[p].cost_micros = costs[p];
  }
  std::vector<ExtraSpend> e = WhatExtraSpendBought(f->sim);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].other, 1u);
  EXPECT_EQ(e[0].extra_cost_micros, 3'000'000);
  EXPECT_EQ(e[0].met_only_first, std::vector<size_t>{1});
  EXPECT_TRUE(e[0].met_only_other.empty());
  const std::string html = ReportHtml(f->sim);
  EXPECT_NE(html.find("What default's extra spend bought"), std::string::npos);
  EXPECT_NE(html.find("<td>fifo-greedy</td><td>3.00</td><td>1 (b,with comma)</td><td>0</td>"),
            std::string::npos);

  // The other way round: the cheaper policy met it, default did not.
  f->sim.runs[0].jobs[1].end_s = 90000;
  f->sim.runs[1].jobs[1].end_s = 80000;
  e = WhatExtraSpendBought(f->sim);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(e[0].met_only_first.empty());
  EXPECT_EQ(e[0].met_only_other, std::vector<size_t>{1});

  // Default the cheapest: nothing to show.
  f->sim.summaries[0].cost_micros = 5'000'000;
  EXPECT_TRUE(WhatExtraSpendBought(f->sim).empty());
  EXPECT_EQ(ReportHtml(f->sim).find("extra spend bought"), std::string::npos);
}

TEST(Report, SummaryJsonHasTheIssuesFieldsPerPolicyInOrder) {
  auto f = Simulated({"fifo-greedy", "default"});
  auto j = nlohmann::json::parse(SummaryJson(f->sim.summaries));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["policy"], "fifo-greedy");
  EXPECT_EQ(j[1]["policy"], "default");
  for (const char* k : {"jobs_done", "avg_jct_s", "p50_jct_s", "p99_jct_s", "avg_wait_s", "makespan_s",
                        "cost_usd", "cost_by_pricing", "gpu_hours", "co2_kg", "deadline_met_frac",
                        "preemptions", "lost_gpu_hours", "utilization", "slo_met_frac", "replica_reclaims",
                        "replicas_replaced_on_spot", "replicas_replaced_on_demand"}) {
    EXPECT_TRUE(j[0].contains(k)) << k;
  }
  EXPECT_EQ(j[0]["jobs_done"], 3);
  EXPECT_EQ(j[0]["deadline_met_frac"], 1.0);
  EXPECT_TRUE(j[0]["slo_met_frac"].is_null());  // no real-time services
  EXPECT_EQ(j[0]["replica_reclaims"], 0);         // nor replica sets
  for (const char* p : {"owned", "reserved", "on-demand", "spot", "flex-start"}) {
    EXPECT_TRUE(j[0]["cost_by_pricing"].contains(p)) << p;
  }
}

TEST(Report, JobsCsvHasOneRowPerJobPerPolicy) {
  auto f = Simulated({"fifo-greedy", "fifo-strict"});
  std::ostringstream out;
  WriteJobsCsv(f->sim, out);
  std::istringstream in(out.str());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1u + 2 * 3);
  EXPECT_EQ(lines[0].substr(0, 42), "policy,job,submit_s,start_s,end_s,state,re");
  // fifo-greedy: a at 0 on the 8-GPU node, so b (8 GPUs) waits; the fleet
  // may overflow to the catalog's H100 offerings (elastic: true).
  EXPECT_EQ(lines[1].substr(0, 19), "fifo-greedy,a,0,0,7");
  EXPECT_NE(lines[2].find("\"b,with comma\""), std::string::npos) << lines[2];
  EXPECT_EQ(lines[4].substr(0, 12), "fifo-strict,");
}

TEST(Report, HtmlIsOneSelfContainedFile) {
  auto f = Simulated({"fifo-greedy", "default"});
  const std::string html = ReportHtml(f->sim);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  size_t at = 0;
  while ((at = html.find("http", at)) != std::string::npos) {
    EXPECT_EQ(html.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(at, 60);
    ++at;
  }
  for (const char* want : {"Cost per policy", "CO2 per policy", "Job completion time, CDF",
                           "Jobs waiting in the queue", "utilization", "Spend rate by pricing model",
                           "Where work ran", "fifo-greedy", "default", "<svg"}) {
    EXPECT_NE(html.find(want), std::string::npos) << want;
  }
}

TEST(Report, WritesTheThreeFilesIntoANewFolder) {
  auto f = Simulated({"fifo-greedy"});
  const auto dir = std::filesystem::temp_directory_path() / "meridian-sim-report-test" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  ASSERT_TRUE(WriteSimulation(f->sim, dir.string()).ok());
  for (const char* name : {"summary.json", "jobs.csv", "report.html"}) {
    EXPECT_GT(std::filesystem::file_size(dir / name), 100u) << name;
  }
  ASSERT_TRUE(WriteSimulation(f->sim, dir.string()).ok());  // overwritten
  std::filesystem::remove_all(dir.parent_path());
}

// default runs a GPU job on CPU where no GPU of its model exists
// (cpu_fallback, "scarce": its deadline cannot wait for an A100 the fleet
// does not have); fifo-strict rejects it. The common figures are over the
// other three, which both run alike on the one 8 x H100 node at $2.00/GPU-h:
//   a  8 GPUs, submit 0,   runs 0..3600:     JCT 3600, wait 0,    $16 (8 x 1 h x 2)
//   b  4 GPUs, submit 60,  runs 3600..7200:  JCT 7140, wait 3540, $8  (4 x 1 h x 2)
//   d  2 GPUs, submit 120, runs 3600..5400:  JCT 5280, wait 3480, $2  (2 x 0.5 h x 2)
//   avg JCT (3600 + 7140 + 5280) / 3 = 5340 s, avg wait (0 + 3540 + 3480) / 3 = 2340 s, $26
TEST(Report, CommonFiguresCompareTheJobsEveryPolicyFinished) {
  Trace trace;
  AddJob(trace, FixedJob(8, "H100-80GB"), "a", 0, 3600);
  JobSpec cpu_ok = FixedJob(1, "A100-80GB");
  cpu_ok.resources.cpu_fallback = meridian::CpuFallback{4};
  AddJob(trace, cpu_ok, "c", 30, 3600, 86400);
  AddJob(trace, FixedJob(4, "H100-80GB"), "b", 60, 3600);
  AddJob(trace, FixedJob(2, "H100-80GB"), "d", 120, 1800);
  FleetSpec fleet = testing::OneCluster(1, 8);
  fleet.clusters[0].nodes.push_back({1, "", 0, 64, 256, {}, "", {}, {}});
  World world = testing::TestWorld(fleet);
  Simulation sim;
  sim.trace = &trace;
  sim.world = &world;
  for (const char* p : {"default", "fifo-strict"}) {
    sim.runs.push_back(testing::RunPolicy(trace, world, p));
    sim.summaries.push_back(Summarize(trace, world, sim.runs.back()));
  }
  ASSERT_EQ(sim.runs[0].jobs[1].state, JobState::kDone);
  EXPECT_TRUE(sim.runs[0].jobs[1].cpu);
  ASSERT_EQ(sim.runs[1].jobs[1].state, JobState::kRejected);
  EXPECT_EQ(sim.summaries[0].jobs_done, 4);
  EXPECT_EQ(sim.summaries[1].jobs_done, 3);

  SetCommonFigures(sim);
  for (const Summary& s : sim.summaries) {
    SCOPED_TRACE(s.policy);
    EXPECT_EQ(s.common.jobs, 3);
    EXPECT_DOUBLE_EQ(s.common.avg_jct_s, 5340);
    EXPECT_DOUBLE_EQ(s.common.avg_wait_s, 2340);
    EXPECT_EQ(s.common.cost_micros, 26'000'000);
  }
  // default's own average also counts c's run on CPU: not the same jobs.
  EXPECT_NE(sim.summaries[0].avg_jct_s, sim.summaries[0].common.avg_jct_s);

  auto j = nlohmann::json::parse(SummaryJson(sim.summaries));
  EXPECT_EQ(j[1]["common"]["jobs"], 3);
  EXPECT_DOUBLE_EQ(j[1]["common"]["avg_jct_s"].get<double>(), 5340);
  EXPECT_DOUBLE_EQ(j[1]["common"]["cost_usd"].get<double>(), 26);
  for (const char* k : {"avg_wait_s", "co2_kg"}) EXPECT_TRUE(j[0]["common"].contains(k)) << k;
  // fifo-strict's notes say in full why c never ran.
  ASSERT_EQ(j[1]["notes"].size(), 1u);
  EXPECT_EQ(j[1]["notes"][0],
            "1 x rejected: no node or offering of an allowed GPU model in an allowed region; "
            "the fleet has no node of A100-80GB");
  const std::string html = ReportHtml(sim);
  EXPECT_NE(html.find("Over the 3 jobs every policy finished"), std::string::npos);
  EXPECT_NE(html.find("the fleet has no node of A100-80GB"), std::string::npos);
}

// The real openb trace (MERIDIAN_DATA_DIR) onto its own node list: every pod
// that ran is placed, for as long as its recorded model says, and so are the
// 1,052 CPU-only pods, on CPU nodes, under every shipped profile (cpu_fallback;
// the baselines with jobs: cpu-only).
TEST(Openb, EveryPodThatRanIsPlacedOnTheNodeList) {
  const std::string path = DataFile(kOpenbPods);
  auto cat = catalog::Catalog::LoadEmbedded();
  auto trace = ReadTrace(path, TraceFormat::kOpenb, **cat);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_TRUE(trace->fleet.has_value());
  ASSERT_EQ(trace->jobs.size(), 7255u);  // docs/trace-format.md: 6,203 with GPUs, 1,052 CPU-only
  World w = testing::MakeWorld(*cat, *trace->fleet);
  // Under the sanitizers (-O0, many times slower), the core's profile and one
  // baseline; the optimized build runs all six.
  for (const char* policy : {"default", "fifo-backfill", "fifo-strict", "fifo-greedy", "kueue-like", "skypilot-like"}) {
    if (kUnderSanitizers && std::string(policy) != "default" && std::string(policy) != "fifo-backfill") continue;
    SCOPED_TRACE(policy);
    PolicyRun run = testing::RunPolicy(*trace, w, policy);
    int64_t gpu_placed = 0, cpu_placed = 0;
    for (size_t i = 0; i < trace->jobs.size(); ++i) {
      const JobOutcome& o = run.jobs[i];
      const bool cpu_only = trace->specs[trace->jobs[i].spec]->resources.gpus.value_or(1) == 0;
      if (o.state != JobState::kDone) continue;
      (cpu_only ? cpu_placed : gpu_placed) += 1;
      if (cpu_only) {
        EXPECT_TRUE(o.cpu) << trace->jobs[i].name;
      }
      // A recorded pod runs as long as it did in the trace on the model it
      // was recorded on (the node list's dominant A100-40GB: no pod names a
      // gpu_spec), and scaled by effective training TFLOPS elsewhere:
      // bf16 (else fp16) peak x measured matmul efficiency (else 0.75).
      if (o.preemptions == 0 && !cpu_only && o.gpu_model.valid()) {
        const catalog::GpuModel& rec = *(*cat)->FindGpu("A100-40GB");
        const catalog::GpuModel& ran = (*cat)->gpus()[o.gpu_model.index()];
        auto tflops = [](const catalog::GpuModel& g) {
          std::optional<double> p = g.PeakTflops(Precision::kBf16);
          if (!p) p = g.PeakTflops(Precision::kFp16);
          return *p * g.matmul_efficiency.value_or(0.75);
        };
        const double want = static_cast<double>(trace->jobs[i].duration_s) * tflops(rec) / tflops(ran);
        // Whole seconds, and the ratio is held in single precision (2^-24
        // relative): a pod of 2 years may be a few seconds off.
        EXPECT_NEAR(static_cast<double>(o.end_s - o.start_s), want, 1.0 + want * 1.2e-7)
            << trace->jobs[i].name;
      }
    }
    EXPECT_EQ(gpu_placed, 6203);
    EXPECT_EQ(cpu_placed, 1052);
  }
}

}  // namespace
}  // namespace meridian::sim
