// Deciding again only what an event could change (Scheduler::DecideInCycle):
// every shipped profile replays congested traces to the same outcomes with
// kept verdicts as with every waiting job decided at every cycle (the
// reference, EngineOptions::keep_waits = false), and keeps most verdicts
// where thousands wait.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "core/sanitizers.h"
#include "sim/readers/test_files.h"
#include "sim/test_world.h"
#include "sim/workload/generator.h"
#include "spec/fleet.h"

namespace meridian::sim {
namespace {

// Under the sanitizers (-O0, about 80x slower) the traces are cut short and
// only the equality of outcomes is checked: the full sizes run in the
// optimized build.
constexpr bool kSanitized = kUnderSanitizers;

const char* kProfiles[] = {"default",    "fifo-strict",   "fifo-greedy", "fifo-backfill",
                           "kueue-like", "skypilot-like", "cbl-greedy",  "cbl-up"};

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto cat = catalog::Catalog::LoadEmbedded();
  return *cat;
}

Trace ReadJsonl(const std::string& text, const std::string& suffix) {
  Result<Trace> t = ReadTrace(ScratchFile(text, suffix + ".jsonl"), TraceFormat::kJsonl, *Embedded());
  if (!t.ok()) throw std::runtime_error(t.status().ToString());
  return std::move(t).value();
}

Trace Generated(WorkloadLike like, int64_t jobs, double rate_scale, const std::string& name,
                const std::string& gpu_model = "") {
  WorkloadOptions o;
  o.gpu_model = gpu_model;
  o.jobs = jobs;
  o.seed = 7;
  o.like = like;
  o.rate_scale = rate_scale;
  o.deadline_slack = 2;
  o.preemptible_frac = 0.5;
  std::ostringstream out;
  Status st = GenerateWorkload(o, out);
  if (!st.ok()) throw std::runtime_error(st.ToString());
  return ReadJsonl(out.str(), name);
}

FleetSpec ExampleFleet(const std::string& name) {
  Result<FleetSpec> f = spec::LoadFleetFile(std::string(MERIDIAN_SOURCE_DIR) + "/examples/fleets/" + name);
  if (!f.ok()) throw std::runtime_error(f.status().ToString());
  return std::move(f).value();
}

// Both runs of `policy`, job by job: every outcome the reports read.
struct Compared {
  int64_t kept = 0, decisions_kept = 0, decisions_all = 0, waited = 0;
};
Compared Compare(const Trace& t, const World& w, const std::string& policy) {
  SCOPED_TRACE(policy);
  PolicyRun kept = testing::RunPolicy(t, w, policy, 1, true);
  PolicyRun all = testing::RunPolicy(t, w, policy, 1, false);
  EXPECT_EQ(all.kept_verdicts, 0);
  Compared c{kept.kept_verdicts, kept.decisions, all.decisions, 0};
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const JobOutcome& a = kept.jobs[i];
    const JobOutcome& b = all.jobs[i];
    const bool same = a.state == b.state && a.start_s == b.start_s && a.end_s == b.end_s &&
                      a.region == b.region && a.gpu_model == b.gpu_model && a.gpus == b.gpus &&
                      a.mig_profile == b.mig_profile && a.cpu == b.cpu && a.pay == b.pay &&
                      a.cost_micros == b.cost_micros && a.co2_g == b.co2_g &&
                      a.preemptions == b.preemptions && a.flex_cancels == b.flex_cancels;
    if (!same) {  // the first job that differs says enough
      ADD_FAILURE() << t.jobs[i].name << ": kept start " << a.start_s << " end " << a.end_s
                    << " state " << ToString(a.state) << " cost " << a.cost_micros
                    << "; every decision: start " << b.start_s << " end " << b.end_s << " state "
                    << ToString(b.state) << " cost " << b.cost_micros;
      return c;
    }
    if (a.start_s > t.jobs[i].submit_s) ++c.waited;
  }
  EXPECT_EQ(kept.cost_by_pricing, all.cost_by_pricing);
  EXPECT_EQ(kept.end_s, all.end_s);
  EXPECT_EQ(kept.mig.drains, all.mig.drains);
  // Every verdict is either decided in full or kept.
  EXPECT_LE(kept.decisions, all.decisions);
  return c;
}

// openb's GPU pods of days 115-124 (whole GPUs; a fractional pod as one
// GPU), pinned to A100-80GB with their recorded durations; with `tenants`,
// pod k belongs to tenant "t<k mod tenants>" and asks for an H100-80GB when
// k is odd.
Trace OpenbDays(int tenants = 0) {
  Result<Trace> openb = ReadTrace(std::string(MERIDIAN_DATA_DIR) +
                                      "/traces/alibaba-gpu-v2023/csv/openb_pod_list_default.csv",
                                  TraceFormat::kOpenb, *Embedded());
  if (!openb.ok()) throw std::runtime_error(openb.status().ToString());
  const int64_t kFrom = 115 * 86400, kTo = (kSanitized ? 117 : 125) * 86400;
  std::ostringstream jsonl;
  int k = 0;
  for (const TraceJob& j : openb->jobs) {
    const int gpus = openb->specs[j.spec]->resources.gpus.value_or(0);
    if (gpus == 0 || j.submit_s < kFrom || j.submit_s >= kTo) continue;
    jsonl << "{\"name\":\"" << j.name << "\",\"submit_s\":" << j.submit_s - kFrom
          << ",\"duration_s\":" << j.duration_s << ",\"gpus\":" << gpus
          << ",\"gpu_model\":\"" << (tenants > 0 && k % 2 == 1 ? "H100-80GB" : "A100-80GB")
          << "\",\"kind\":\"training\"";
    if (tenants > 0) jsonl << ",\"tenant\":\"t" << k++ % tenants << "\"";
    jsonl << "}\n";
  }
  return ReadJsonl(jsonl.str(), tenants > 0 ? "openb-tenants" : "openb");
}

// Two 8-GPU nodes of A100-80GB, or one of each with `mixed`.
World TwoNodes(bool mixed = false) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "onprem";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.00);
  if (mixed) {
    c.nodes.push_back({1, "A100-80GB", 8, 128, 1024.0, {}, "", {}, {}});
    c.nodes.push_back({1, "H100-80GB", 8, 128, 1024.0, {}, "", {}, {}});
  } else {
    c.nodes.push_back({2, "A100-80GB", 8, 128, 1024.0, {}, "", {}, {}});
  }
  f.clusters = {c};
  f.elastic = false;
  return testing::MakeWorld(Embedded(), f);
}

// The same on 2 x 8 A100.
TEST(KeptVerdicts, OpenbOnTwoNodesDecidesAsEveryDecision) {
  Trace t = OpenbDays();
  World w = TwoNodes();
  for (const char* p : kProfiles) {
    Compared r = Compare(t, w, p);
    // fifo-strict stops at the head (little to keep); the Can't Be Late
    // baselines' progress rule reads the clock (asked every time).
    if (kSanitized || std::string(p) == "fifo-strict" || std::string(p).rfind("cbl-", 0) == 0) continue;
    // Jobs queue (over a quarter start after their submission), and over a
    // third of the reference run's decisions are kept rather than made again.
    EXPECT_GT(r.waited, static_cast<int64_t>(t.jobs.size()) / 4) << p;
    EXPECT_GT(r.kept, r.decisions_all / 3) << p;
    EXPECT_EQ(r.kept + r.decisions_kept, r.decisions_all) << p;
  }
}

// Three tenants share an A100 node and an H100 node (half the jobs on each)
// under kueue-like with quotas (4, 6 and 8 GPUs): a waiting job is decided
// again when its own tenant releases (on either node: its quota counts
// both), or capacity it fits frees; the outcome is the every-decision run's.
TEST(KeptVerdicts, TenantQuotasDecideAsEveryDecision) {
  Trace t = OpenbDays(3);
  World w = TwoNodes(/*mixed=*/true);
  auto profile = sched::ParseProfile(R"(name: kueue-quotas
options: {elastic: false, head_of_line_blocking: false, tie_break: first}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: gang_permit
  - name: quota
    args: {tenants: {t0: 4, t1: 6}, default_gpus: 8}
  - name: first_fit
)",
                                     "kueue-quotas.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  JobShapes shapes = JobShapes::Make(t, *w.catalog);
  PolicyRun runs[2];
  for (int keep = 0; keep < 2; ++keep) {
    EngineOptions o;
    o.seed = 1;
    o.keep_waits = keep == 1;
    auto run = Simulate(t, shapes, w, *profile, "kueue-quotas", o);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    runs[keep] = std::move(run).value();
  }
  const PolicyRun& all = runs[0];
  const PolicyRun& kept = runs[1];
  ASSERT_EQ(kept.jobs.size(), all.jobs.size());
  int64_t waited = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    ASSERT_EQ(kept.jobs[i].start_s, all.jobs[i].start_s) << t.jobs[i].name;
    ASSERT_EQ(kept.jobs[i].end_s, all.jobs[i].end_s) << t.jobs[i].name;
    ASSERT_EQ(kept.jobs[i].state, all.jobs[i].state) << t.jobs[i].name;
    if (all.jobs[i].start_s > t.jobs[i].submit_s) ++waited;
  }
  // The quotas bind: jobs wait, and verdicts are kept rather than made again
  // (on the whole ten days; the sanitizers' two days barely queue).
  if (!kSanitized) {
    EXPECT_GT(waited, static_cast<int64_t>(t.jobs.size()) / 4);
    EXPECT_GT(kept.kept_verdicts, 0);
    EXPECT_LT(kept.decisions, all.decisions);
  }
}

// Every example fleet under a generated workload (deadlines at twice the
// run time, half the jobs preemptible) arriving faster than it drains:
// spot, flex-start, reservations, MIG, CPU nodes and elastic capacity.
TEST(KeptVerdicts, ExampleFleetsUnderGeneratedLoadDecideAsEveryDecision) {
  struct Case {
    const char* fleet;
    WorkloadLike like;
    double rate_scale;
  } cases[] = {
      {"onprem-mixed.yaml", WorkloadLike::kPhilly, 20},
      {"reserved-plus-cloud.yaml", WorkloadLike::kPhilly, 20},
      {"cpu-tight.yaml", WorkloadLike::kHelios, 20},
      {"mig-repartition.yaml", WorkloadLike::kPai, 20},
      {"follow-the-sun.yaml", WorkloadLike::kAcmeSeren, 20},
  };
  // Under the sanitizers each fleet runs two of the eight profiles, in turn
  // (fleet i: profiles 2i and 2i+1, mod 8), so the five fleets still cover
  // every profile; the optimized build runs every pair.
  constexpr size_t kNumProfiles = std::size(kProfiles);
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.fleet);
    Trace t = Generated(c.like, kSanitized ? 100 : 400, c.rate_scale, c.fleet);
    World w = testing::MakeWorld(Embedded(), ExampleFleet(c.fleet));
    int64_t kept = 0, waited = 0;
    for (size_t k = 0; k < kNumProfiles; ++k) {
      if (kSanitized && k != (2 * i) % kNumProfiles && k != (2 * i + 1) % kNumProfiles) continue;
      const char* p = kProfiles[k];
      Compared r = Compare(t, w, p);
      kept += r.kept;
      waited += r.waited;
    }
    std::printf("%-26s waited %6lld kept %8lld\n", c.fleet, static_cast<long long>(waited),
                static_cast<long long>(kept));
  }
}

// Gangs under congestion: Philly-like jobs pinned to H100-80GB (a sixth ask
// for more than one 8-GPU node) on 4 x 8 H100, arriving ten times faster
// than usual. A release wakes a waiting gang only where the freed node has
// its member's share free (MayFitOn); every profile places as it does when
// every job is decided at every cycle.
TEST(KeptVerdicts, GangsOnAFullFleetDecideAsEveryDecision) {
  Trace t = Generated(WorkloadLike::kPhilly, kSanitized ? 100 : 600, 10, "gangs", "H100-80GB");
  int64_t gangs = 0;
  for (const TraceJob& j : t.jobs) gangs += t.specs[j.spec]->resources.gpus.value_or(0) > 8 ? 1 : 0;
  ASSERT_GT(gangs, 0);
  Result<FleetSpec> fleet = spec::LoadFleetFile(ScratchFile(R"(clusters:
  - name: onprem
    region: gcp:us-central1
    pricing: owned
    gpu_hour_usd: 1.00
    nodes:
      - {count: 4, gpu: H100-80GB, gpus: 8, vcpus: 128, ram_gib: 1024}
elastic: false
)", "gangs-fleet.yaml"));
  ASSERT_TRUE(fleet.ok()) << fleet.status().ToString();
  World w = testing::MakeWorld(Embedded(), *fleet);
  int64_t waited = 0;
  for (const char* p : kProfiles) waited += Compare(t, w, p).waited;
  if (!kSanitized) {
    EXPECT_GT(waited, static_cast<int64_t>(t.jobs.size()));  // over all profiles
  }
}

}  // namespace
}  // namespace meridian::sim
