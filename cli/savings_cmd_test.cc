// `meridian report savings` on the real slurmdbd capture
// (backends/slurm/testdata/sacct-history.txt) and the hand-written Berlin
// fixture (sim/readers/testdata/sacct_berlin.txt), on a small fleet
// (examples/fleets/cpu-tight.yaml: 4 nodes of 8 A100-80GB in
// gcp:us-central1, owned at $1.50 per GPU-hour).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "catalog/catalog.h"
#include "cli/savings_cmd.h"
#include "cli/simulate_cmd.h"
#include "cli/test_cli.h"
#include "sim/html.h"
#include "sim/savings.h"
#include "spec/fleet.h"

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;
using testutil::Meridian;
using testutil::ReadFile;

const std::string kSource = MERIDIAN_SOURCE_DIR;
const std::string kCapture = kSource + "/backends/slurm/testdata/sacct-history.txt";
const std::string kBerlin = kSource + "/sim/readers/testdata/sacct_berlin.txt";
const std::string kFleet = kSource + "/examples/fleets/cpu-tight.yaml";

fs::path Scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("meridian-savings-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The history as it ran on the fleet, read as the command reads it.
struct AsItRan {
  std::shared_ptr<const catalog::Catalog> catalog;
  sim::Trace trace;
  sim::World world;
  sim::History history;
  sim::Summary summary;
};

AsItRan ReadHistory(const TraceFlags& flags) {
  AsItRan a;
  a.catalog = *catalog::Catalog::LoadEmbedded();
  auto trace = ReadTraceFlags(flags, *a.catalog);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  a.trace = std::move(trace).value();
  auto fleet = BuildFleet(*spec::LoadFleetFile(kFleet), a.catalog);
  EXPECT_TRUE(fleet.ok()) << fleet.status().message();
  sim::ReplayMarketOptions market;
  market.start = *ParseRfc3339("2024-01-01T00:00:00Z");
  a.world = MakeWorld(a.catalog, *fleet, market);
  a.history = sim::AsItRan(a.trace, a.world);
  a.summary = sim::Summarize(a.trace, a.world, a.history.run);
  return a;
}

TEST(ReportSavings, CaptureAsItRanIsTheRecordedArithmetic) {
  const AsItRan a = ReadHistory({kCapture, "sacct", "", "", "UTC"});
  // 10 rows; 11 was cancelled before it started: 9 jobs, all recorded.
  ASSERT_EQ(a.history.recorded, 9);
  EXPECT_EQ(a.summary.jobs_done, 9);
  // Every Submit is 03:23:45. Jobs 1, 2, 3 started 03:23:48 (wait 3 s);
  // 4, 6, 7, 9, 10, 5 started 03:23:51 (e.g. job 4: 03:23:51 - 03:23:45 =
  // 6 s). Sum 3 x 3 + 6 x 6 = 45 s over 9 jobs: 5 s.
  EXPECT_DOUBLE_EQ(a.summary.avg_wait_s, 5.0);
  // Sorted waits 3 3 3 6 6 6 6 6 6: p50 is the 5th (6 s), p99 the 9th (6 s).
  const sim::WaitSpread w = sim::WaitsOf(a.trace, a.history.run.jobs);
  EXPECT_EQ(w.p50_s, 6);
  EXPECT_EQ(w.p99_s, 6);
  // JCT = wait + Elapsed: 1: 3 + 87 = 90; 2, 3: 3 + 2 = 5; 4: 6 + 5 = 11;
  // 6, 7, 9, 10, 5: 6 + 1 = 7. Sum 90 + 10 + 11 + 35 = 146 s over 9.
  EXPECT_DOUBLE_EQ(a.summary.avg_jct_s, 146.0 / 9);
  // GPU-seconds = GPUs x Elapsed: 1 x 87 + 2 x 2 + 1 x 2 + 2 x 5 + 5 x (1 x 1)
  // = 108: 0.03 GPU-h; at $1.50 per GPU-hour $0.045 (each job rounded to the
  // micro-dollar once, as the engine charges).
  EXPECT_DOUBLE_EQ(a.summary.gpu_hours, 108.0 / 3600);
  EXPECT_NEAR(static_cast<double>(a.summary.cost_micros), 45000, 5);
  EXPECT_GT(a.summary.co2_g, 0);
}

TEST(ReportSavings, BerlinAsItRanIsTheRecordedArithmetic) {
  const AsItRan a = ReadHistory({kBerlin, "sacct", "", "", "Europe/Berlin"});
  ASSERT_EQ(a.history.recorded, 6);
  // Waits: 4100 10:05 - 10:00 = 300; 4101 11:00 - 10:30 = 1800; 4102
  // 11:00:10 - 11:00:00 = 10; 4106 13:10 - 13:00 = 600; 4107, 4108 0.
  // Sum 2710 s over 6 jobs.
  EXPECT_DOUBLE_EQ(a.summary.avg_wait_s, 2710.0 / 6);
  // JCT = wait + Elapsed: 300 + 5400, 1800 + 93600, 10 + 600, 600 + 3600,
  // 0 + 1200, 0 + 300: 107410 s over 6.
  EXPECT_DOUBLE_EQ(a.summary.avg_jct_s, 107410.0 / 6);
  // GPU-s: 4 x 5400 + 16 x 93600 + 1 x 600 + 2 x 3600 + 8 x 1200 + 1 x 300
  // = 1536900: 426.9167 GPU-h, every GPU-hour at $1.50 (the fleet has no
  // H100 or V100: 4101 and 4106 are priced on its only cluster, and the
  // note says so; 4102 and 4108 may run on any model).
  EXPECT_DOUBLE_EQ(a.summary.gpu_hours, 1536900.0 / 3600);
  EXPECT_NEAR(static_cast<double>(a.summary.cost_micros), 1536900.0 / 3600 * 1.5e6, 10);
  ASSERT_EQ(a.history.notes.size(), 1u);
  EXPECT_NE(a.history.notes[0].find("2 recorded jobs ran on GPU models the fleet does not have"),
            std::string::npos)
      << a.history.notes[0];
}

// The validation's arithmetic on three jobs, all submitted at 0: recorded
// waits 60 s, 7200 s, 0 s; replayed 0 s, 600 s, and the third never started
// (left out). Errors |0 - 60| = 60 and |600 - 7200| = 6600: MAE 3330 s;
// averages 3630 s recorded, 300 s replayed; one of two within 10 minutes
// and within the hour: far apart.
TEST(ReportSavings, ValidationArithmetic) {
  sim::Trace trace;
  trace.jobs.resize(3);
  sim::PolicyRun history, replay;
  history.jobs.resize(3);
  replay.jobs.resize(3);
  const int64_t recorded[] = {60, 7200, 0}, replayed[] = {0, 600, -1};
  for (size_t i = 0; i < 3; ++i) {
    history.jobs[i].start_s = recorded[i];
    replay.jobs[i].start_s = replayed[i];
  }
  replay.policy = "fifo-backfill";
  const sim::Validation v = sim::Validate(trace, history, replay);
  EXPECT_EQ(v.jobs, 2);
  EXPECT_DOUBLE_EQ(v.mean_abs_error_s, 3330);
  EXPECT_DOUBLE_EQ(v.recorded_avg_s, 3630);
  EXPECT_DOUBLE_EQ(v.replayed_avg_s, 300);
  ASSERT_TRUE(v.ratio.has_value());
  EXPECT_DOUBLE_EQ(*v.ratio, 300.0 / 3630);
  EXPECT_DOUBLE_EQ(v.within_10min, 0.5);
  EXPECT_DOUBLE_EQ(v.within_1h, 0.5);
  EXPECT_FALSE(v.close);
}

// The policy columns are what `meridian simulate` gives for the same inputs.
TEST(ReportSavings, PolicyColumnsEqualSimulate) {
  const fs::path dir = Scratch("policies");
  testutil::CliRun sim = Meridian({"simulate", "--trace", kCapture, "--format", "sacct", "--tz", "UTC", "--fleet",
                                   kFleet, "--policy", "fifo-backfill,default", "--out", (dir / "sim").string(), "-q"});
  ASSERT_EQ(sim.code, kExitOk) << sim.err;
  testutil::CliRun rep = Meridian({"report", "savings", "--trace", kCapture, "--format", "sacct", "--tz", "UTC",
                                   "--fleet", kFleet, "--policy", "fifo-backfill,default", "-o",
                                   (dir / "rep").string(), "-q"});
  ASSERT_EQ(rep.code, kExitOk) << rep.err;
  const std::string text = ReadFile((dir / "rep" / "savings.txt").string());
  EXPECT_EQ(rep.out.substr(0, text.size()), text);
  const auto summary = nlohmann::json::parse(ReadFile((dir / "sim" / "summary.json").string()));
  for (const auto& s : summary) {
    const std::string policy = s["policy"];
    const size_t row = text.find("\n" + policy + " ");
    ASSERT_NE(row, std::string::npos) << policy << "\n" << text;
    const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
    for (const std::string& want :
         {std::to_string(s["jobs_done"].get<int64_t>()), sim::html::Duration(s["avg_wait_s"]),
          sim::html::Duration(s["avg_jct_s"]), sim::html::Fmt(s["gpu_hours"], 1),
          sim::html::Fmt(s["cost_usd"], 2), sim::html::Fmt(s["co2_kg"], 1)}) {
      EXPECT_NE(line.find(" " + want), std::string::npos) << want << " in " << line;
    }
  }
}

TEST(ReportSavings, WritesThePageAndNamesTheBiggestDifferences) {
  const fs::path dir = Scratch("page");
  testutil::CliRun r = Meridian({"report", "savings", "--trace", kBerlin, "--format", "sacct", "--tz",
                                 "Europe/Berlin", "--fleet", kFleet, "-o", dir.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("trace: 2 jobs never started"), std::string::npos) << r.err;
  const std::string html = ReadFile((dir / "savings.html").string());
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = html.find(what); p != std::string::npos; p = html.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_GE(count("<table>"), 3u);  // the comparison, the differences, the burst spend
  EXPECT_EQ(count("<table>"), count("</table>"));
  EXPECT_EQ(count("<tr>"), count("</tr>"));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\b(nan|inf)\\b", std::regex::icase)));
  for (const char* external : {"<script", "<link", "src=", "href="}) {  // no external assets
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  for (const char* part : {"as it ran", "fifo-backfill", "default + cloud", "The biggest differences",
                           "The largest change, job ", "Validation: As it ran vs fifo-backfill"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(ReportSavings, TraceWithoutRecordedStarts) {
  const fs::path dir = Scratch("jsonl");
  std::ofstream(dir / "t.jsonl")
      << R"({"name": "a", "submit_s": 0, "duration_s": 3600, "gpus": 8, "gpu_model": "A100-80GB"})" << "\n"
      << R"({"name": "b", "submit_s": 60, "duration_s": 1800, "gpus": 32, "gpu_model": "A100-80GB"})" << "\n";
  testutil::CliRun r = Meridian({"report", "savings", "--trace", (dir / "t.jsonl").string(), "--format", "jsonl",
                                 "--fleet", kFleet, "--policy", "fifo-backfill,fifo-strict", "-o",
                                 (dir / "out").string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("no recorded starts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No validation: the trace has no recorded starts"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "savings.html"));
}

// The Kubernetes history: its 3 finished Jobs waited 30 s, 600 s and 5 s
// (startTime - creationTimestamp): avg (30 + 600 + 5) / 3 = 211.67 s.
TEST(ReportSavings, K8sJobsHistory) {
  const fs::path dir = Scratch("k8s");
  const std::string trace = kSource + "/sim/readers/testdata/k8s_jobs.json";
  const AsItRan a = ReadHistory({trace, "k8s-jobs", "", "", ""});
  EXPECT_EQ(a.history.recorded, 3);
  EXPECT_DOUBLE_EQ(a.summary.avg_wait_s, 635.0 / 3);
  testutil::CliRun r = Meridian({"report", "savings", "--trace", trace, "--format", "k8s-jobs", "--fleet", kFleet,
                                 "-q", "-o", dir.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("3 jobs (3 with a recorded start)"), std::string::npos) << r.out;
}

TEST(ReportSavings, BadInputIsExitTwoWithTheReason) {
  const fs::path dir = Scratch("bad");
  testutil::CliRun policy = Meridian({"report", "savings", "--trace", kCapture, "--format", "sacct", "--tz", "UTC",
                                      "--fleet", kFleet, "--policy", "nope", "-o", dir.string()});
  EXPECT_EQ(policy.code, kExitBadInput);
  EXPECT_NE(policy.err.find("meridian report savings: --policy nope: profile \"nope\""), std::string::npos)
      << policy.err;
  testutil::CliRun zone = Meridian({"report", "savings", "--trace", kCapture, "--format", "sacct", "--tz",
                                    "Europe/Berln", "--fleet", kFleet, "-o", dir.string()});
  EXPECT_EQ(zone.code, kExitBadInput);
  EXPECT_NE(zone.err.find("--tz: \"Europe/Berln\""), std::string::npos) << zone.err;
  testutil::CliRun burst = Meridian({"report", "savings", "--trace", kCapture, "--format", "sacct", "--tz", "UTC",
                                     "--fleet", kFleet, "--burst-policy", "nope", "-o", dir.string()});
  EXPECT_EQ(burst.code, kExitBadInput);
  EXPECT_NE(burst.err.find("--burst-policy nope"), std::string::npos) << burst.err;
}

}  // namespace
}  // namespace meridian::cli
