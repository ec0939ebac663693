// Helpers for sim/ tests: traces built in code (a JobSpec per shape, jobs
// with fixed durations), a World over a fleet spec and the embedded spot
// traces, and a run of one shipped profile.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "estimate/test_catalog.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/profile.h"
#include "sim/engine.h"
#include "sim/market_replay.h"
#include "sim/spot_traces.h"
#include "sim/trace.h"

namespace meridian::sim::testing {

inline constexpr UnixSeconds kStart = 1767225600;  // 2026-01-01T00:00:00Z

// A batch job of `gpus` GPUs of `model` that runs as long as the trace says.
inline JobSpec FixedJob(int gpus, const std::string& model, double vram_gib = 10) {
  JobSpec j;
  j.name = "shape";
  j.kind = WorkloadKind::kBatchInference;
  j.resources.gpus = gpus;
  j.resources.vram_gib = vram_gib;
  j.resources.gpu_models = {model};
  return j;
}

// Adds a job of a new shape (one spec per job keeps tests simple).
inline void AddJob(Trace& t, JobSpec spec, std::string name, int64_t submit_s, int64_t duration_s,
                   int64_t deadline_s = -1) {
  spec.name = name;
  if (deadline_s >= 0) spec.deadline.after_submit_s = deadline_s;
  t.specs.push_back(std::make_shared<const JobSpec>(std::move(spec)));
  TraceJob j;
  j.name = std::move(name);
  j.spec = static_cast<uint32_t>(t.specs.size() - 1);
  j.submit_s = submit_s;
  j.duration_s = duration_s;
  j.deadline_s = deadline_s;
  t.jobs.push_back(std::move(j));
}

// One owned cluster in gcp:us-central1 of `count` nodes x `gpus` H100-80GB.
inline FleetSpec OneCluster(int count, int gpus, bool elastic = false) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "onprem";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(2.00);
  c.nodes.push_back({count, "H100-80GB", gpus, 96, 1024, {}, "", {}, {}});
  f.clusters = {c};
  f.elastic = elastic;
  return f;
}

inline World MakeWorld(std::shared_ptr<const catalog::Catalog> catalog, const FleetSpec& spec,
                       uint64_t seed = 1, UnixSeconds start = kStart) {
  World w;
  w.catalog = catalog;
  auto fleet = sched::Fleet::Build(spec, catalog);
  if (!fleet.ok()) throw std::runtime_error(fleet.status().ToString());
  w.fleet = *fleet;
  ReplayMarketOptions mo;
  mo.start = start;
  mo.seed = seed;
  w.market = std::make_shared<ReplayMarket>(catalog, EmbeddedSpotTraces(), mo);
  w.elastic = std::make_shared<sched::ElasticIndex>(*catalog);
  return w;
}

inline World TestWorld(const FleetSpec& spec) {
  return MakeWorld(estimate::testing::TestCatalog(), spec);
}

inline PolicyRun RunPolicy(const Trace& trace, const World& world, const std::string& policy,
                           const EngineOptions& o) {
  auto profile = sched::EmbeddedProfile(policy);
  if (!profile.ok()) throw std::runtime_error(profile.status().ToString());
  JobShapes shapes = JobShapes::Make(trace, *world.catalog);
  auto run = Simulate(trace, shapes, world, *profile, policy, o);
  if (!run.ok()) throw std::runtime_error(run.status().ToString());
  return std::move(run).value();
}

inline PolicyRun RunPolicy(const Trace& trace, const World& world, const std::string& policy,
                           uint64_t seed = 1, bool keep_waits = true) {
  EngineOptions o;
  o.seed = seed;
  o.keep_waits = keep_waits;
  return RunPolicy(trace, world, policy, o);
}

}  // namespace meridian::sim::testing
