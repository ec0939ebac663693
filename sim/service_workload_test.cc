// 40 generated real-time services (L4, A10G, A100-80GB, H100-80GB; users in
// Europe, the US or Japan; SLOs of 40-100 ms; 2-6 days each; a daily load
// profile) on the catalog's cloud capacity and the replayed spot traces,
// under `default` and `skypilot-like`, with the services preemptible and
// not, scored by the SLO as users see it (sim/service_slo.h). The table in
// docs/simulate.md ("Real-time services") is this test's output:
//   build/sim/sim_service_test --gtest_filter='ServiceWorkload.*'
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "estimate/serving.h"
#include "sched/rng.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

struct Users {
  std::string area;
  std::vector<std::string> regions;
  int utc_offset_h;  // local noon - 12 h, for the daily peak
};

const std::vector<Users>& UserAreas() {
  static const std::vector<Users> users = {{"Europe", {"gcp:europe-west4", "aws:eu-central-1"}, 1},
                                           {"US", {"aws:us-east-1", "gcp:us-east4"}, -5},
                                           {"Japan", {"aws:ap-northeast-1", "gcp:asia-northeast1"}, 9}};
  return users;
}

// A model that answers within tens of milliseconds on `gpu` (shapes from the
// models' published configs): 1B on L4 and A10G, 3B or 8B on A100 and H100.
void SetModel(JobSpec& s, const std::string& gpu, sched::Rng& rng) {
  const bool big = gpu == "A100-80GB" || gpu == "H100-80GB";
  const int pick = static_cast<int>(rng.Below(2));
  if (big && pick == 1) {  // Llama-3.1-8B
    s.model.params_b = 8;
    s.model.layers = 32;
    s.model.hidden = 4096;
    s.model.heads = 32;
    s.model.kv_heads = 8;
  } else if (big) {  // Llama-3.2-3B
    s.model.params_b = 3.2;
    s.model.layers = 28;
    s.model.hidden = 3072;
    s.model.heads = 24;
    s.model.kv_heads = 8;
  } else {  // Llama-3.2-1B on the 24 GB GPUs
    s.model.params_b = 1.2;
    s.model.layers = 16;
    s.model.hidden = 2048;
    s.model.heads = 32;
    s.model.kv_heads = 8;
  }
  s.model.precision = Precision::kBf16;
  s.model.seq_len = 4096;
  s.model.batch = 16;
  s.model.output_tokens = 128;
  s.latency.tokens_in = 128;
  s.latency.tokens_out = 128;
}

Trace Services(int n, bool preemptible, uint64_t seed) {
  const std::vector<std::string> gpus = {"L4", "A10G", "A100-80GB", "H100-80GB"};
  const std::vector<Users>& users = UserAreas();
  sched::Rng rng(seed);
  Trace t;
  for (int i = 0; i < n; ++i) {
    JobSpec s;
    s.name = "svc-" + std::to_string(i);
    s.tenant = "product";
    s.kind = WorkloadKind::kRealtimeInference;
    s.priority = Priority::kCritical;
    s.preemptible = preemptible;
    const std::string& gpu = gpus[static_cast<size_t>(i) % gpus.size()];
    s.resources.gpu_models = {gpu};
    s.resources.gpus = 1;
    SetModel(s, gpu, rng);
    const Users& u = users[rng.Below(users.size())];
    s.latency.users = u.regions;
    s.latency.slo_ms = 40 + 10 * static_cast<double>(rng.Below(7));  // 40..100
    // Busiest at 14:00 local: peak x (0.55 + 0.45 cos(2 pi (h - peak) / 24)).
    const double peak = 2 + static_cast<double>(rng.Below(19));  // 2..20 req/s
    const int peak_utc = ((14 - u.utc_offset_h) % 24 + 24) % 24;
    s.latency.rps_by_hour.resize(24);
    for (int h = 0; h < 24; ++h) {
      const double x = 2 * M_PI * (h - peak_utc) / 24.0;
      s.latency.rps_by_hour[static_cast<size_t>(h)] = std::round(peak * (0.55 + 0.45 * std::cos(x)) * 10) / 10;
    }
    const int64_t days = 2 + static_cast<int64_t>(rng.Below(5));  // 2..6
    const int64_t submit = static_cast<int64_t>(rng.Below(24 * 3600));
    testing::AddJob(t, s, s.name, submit, days * 86400);
  }
  return t;
}

// Services of one GPU model and one users' area under one run.
struct Group {
  int services = 0;
  double cost = 0;
  double on_demand_h = 0, spot_h = 0;  // replica-hours billed
};

// "A100-80GB, Japan": the services' GPU model and where their users are.
std::string GroupOf(const JobSpec& s) {
  for (const Users& u : UserAreas()) {
    if (u.regions == s.latency.users) return s.resources.gpu_models.front() + ", " + u.area;
  }
  return s.resources.gpu_models.front();
}

struct Row {
  std::string policy;
  bool preemptible;
  double cost;
  double slo;
  int64_t preemptions;
  int64_t rejected;
  double spot_cost;
  int64_t replica_reclaims, replaced_on_spot, replaced_on_demand;
  std::map<std::string, double> cost_by_gpu;  // by the services' GPU model
  std::map<std::string, Group> by_group;      // by GPU model and users' area
};

Row RunServices(const std::string& policy, bool preemptible) {
  FleetSpec elastic_only;
  elastic_only.elastic = true;
  World w = testing::MakeWorld(Embedded(), elastic_only, 1, 1704067200);  // 2024-01-01, the spot traces
  Trace t = Services(40, preemptible, 25);
  PolicyRun run = testing::RunPolicy(t, w, policy);
  Summary s = Summarize(t, w, run);
  Row r{policy, preemptible, static_cast<double>(s.cost_micros) / 1e6, s.slo_met_frac.value_or(0),
        s.preemptions, s.jobs_rejected,
        static_cast<double>(run.cost_by_pricing[static_cast<size_t>(PayKind::kSpot)]) / 1e6,
        run.replica_reclaims, run.replaced_on_spot, run.replaced_on_demand, {}, {}};
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const JobSpec& spec = *t.specs[t.jobs[i].spec];
    const JobOutcome& o = run.jobs[i];
    r.cost_by_gpu[spec.resources.gpu_models.front()] += static_cast<double>(o.cost_micros) / 1e6;
    Group& g = r.by_group[GroupOf(spec)];
    ++g.services;
    g.cost += static_cast<double>(o.cost_micros) / 1e6;
    g.on_demand_h += static_cast<double>(o.replica_on_demand_s) / 3600;
    g.spot_h += static_cast<double>(o.replica_spot_s) / 3600;
  }
  return r;
}

void Print(const std::vector<Row>& rows) {
  std::cout << "| policy | services preemptible | cost | slo_met_frac | preemptions | replica reclaims"
               " (replaced on spot / on-demand) | spot spend | rejected |\n"
            << "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    char line[300];
    std::snprintf(line, sizeof line, "| %s | %s | $%.0f | %.4f | %lld | %lld (%lld / %lld) | $%.0f | %lld |\n",
                  r.policy.c_str(), r.preemptible ? "yes" : "no", r.cost, r.slo,
                  static_cast<long long>(r.preemptions), static_cast<long long>(r.replica_reclaims),
                  static_cast<long long>(r.replaced_on_spot), static_cast<long long>(r.replaced_on_demand),
                  r.spot_cost, static_cast<long long>(r.rejected));
    std::cout << line;
  }
  std::cout << "\n| GPU model | default, on-demand replicas | default, preemptible | ratio |\n"
            << "|---|---:|---:|---:|\n";
  for (const auto& [gpu, od] : rows[0].cost_by_gpu) {
    const double pre = rows[1].cost_by_gpu.at(gpu);
    char line[200];
    std::snprintf(line, sizeof line, "| %s | $%.0f | $%.0f | %.2f |\n", gpu.c_str(), od, pre, pre / od);
    std::cout << line;
  }
}

// Where the preemptible services' cost stays: by GPU model and users'
// area, the on-demand set's cost, the preemptible set's, their ratio, and
// the preemptible set's replica-hours on on-demand and on spot.
void PrintGroups(const Row& on_demand, const Row& preemptible) {
  std::cout << "\n| GPU model, users | services | default, on-demand replicas | default, preemptible | ratio"
               " | replica-h on-demand | replica-h spot |\n"
            << "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [name, od] : on_demand.by_group) {
    const Group& pre = preemptible.by_group.at(name);
    char line[240];
    std::snprintf(line, sizeof line, "| %s | %d | $%.0f | $%.0f | %.2f | %.0f | %.0f |\n", name.c_str(),
                  od.services, od.cost, pre.cost, pre.cost / od.cost, pre.on_demand_h, pre.spot_h);
    std::cout << line;
  }
}

// How many services on each GPU model need more than one replica up at
// their peak hour and at their quietest (estimate::ReplicasForLoad of the
// hour's rps at one replica's capacity): only those change size by the hour.
void PrintLoads() {
  const Trace t = Services(40, false, 25);
  const JobShapes shapes = JobShapes::Make(t, *Embedded());
  std::map<std::string, std::array<int, 3>> by_gpu;  // services, peak k > 1, quietest k > 1
  for (const TraceJob& tj : t.jobs) {
    const JobSpec& s = *t.specs[tj.spec];
    const sched::QueuedJob* q = shapes.Of(tj.spec);
    if (!q || q->demands.empty()) continue;
    const double cap = q->demands.front().replica_rps;
    double low = s.latency.PeakRps();
    for (double v : s.latency.rps_by_hour) low = std::min(low, v);
    std::array<int, 3>& n = by_gpu[s.resources.gpu_models.front()];
    ++n[0];
    n[1] += estimate::ReplicasForLoad(s.latency.PeakRps(), cap) > 1;
    n[2] += estimate::ReplicasForLoad(low, cap) > 1;
  }
  std::cout << "\n| GPU model | services | k > 1 at the peak | k > 1 at the quietest hour |\n"
            << "|---|---:|---:|---:|\n";
  for (const auto& [gpu, n] : by_gpu) {
    std::cout << "| " << gpu << " | " << n[0] << " | " << n[1] << " | " << n[2] << " |\n";
  }
}

// The rules the table must follow, derived without running it:
// - services not marked preemptible keep on-demand replicas: no spot spend,
//   no replica reclaims, under `default`;
// - preemptible services under `default` meet slo_met_frac >= 0.999 (the
//   issue's target, and the availability target the mix is sized for), cost
//   less than the same services on on-demand replicas (a spot replica is
//   used only where it is cheaper than an on-demand one, and the mix is the
//   cheapest that meets the target), and every spot replica reclaimed is
//   replaced, on spot or on-demand.
// - the catalog sells A10G (AWS g5) with no spot price
//   (data/catalog/offerings.csv), so the A10G services, preemptible or not,
//   hold on-demand replicas only and cost the same.
// The cost target, at most 0.6 x the on-demand cost, is printed as
// the ratio and not asserted: on this catalog it is not reached
// (docs/simulate.md, "Real-time services", works out why per GPU model).
TEST(ServiceWorkload, CostAndSloByPolicy) {
  std::vector<Row> rows;
  for (const char* policy : {"default", "skypilot-like"}) {
    for (bool preemptible : {false, true}) rows.push_back(RunServices(policy, preemptible));
  }
  Print(rows);
  PrintGroups(rows[0], rows[1]);
  PrintLoads();
  const Row& on_demand = rows[0];
  const Row& preemptible = rows[1];
  std::cout << "\ndefault, preemptible / on-demand cost: " << preemptible.cost / on_demand.cost << "\n";
  EXPECT_EQ(on_demand.spot_cost, 0);
  EXPECT_EQ(on_demand.replica_reclaims, 0);
  EXPECT_GE(preemptible.slo, 0.999);
  EXPECT_LT(preemptible.cost, on_demand.cost);
  EXPECT_GT(preemptible.spot_cost, 0);
  EXPECT_GT(preemptible.replica_reclaims, 0);
  EXPECT_EQ(preemptible.replica_reclaims, preemptible.replaced_on_spot + preemptible.replaced_on_demand);
  EXPECT_EQ(preemptible.rejected, 0);
  for (const auto& [name, g] : on_demand.by_group) {
    EXPECT_EQ(g.spot_h, 0) << name;
    if (name.rfind("A10G", 0) != 0) continue;
    const Group& pre = preemptible.by_group.at(name);
    EXPECT_EQ(pre.spot_h, 0) << name;
    EXPECT_EQ(pre.on_demand_h, g.on_demand_h) << name;
    EXPECT_NEAR(pre.cost, g.cost, 1e-6) << name;
  }
}

}  // namespace
}  // namespace meridian::sim
