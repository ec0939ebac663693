// sim_bench: `meridian simulate`'s engine on real and generated traces.
//
//   BM_Openb/<policy>    the full Alibaba openb trace (7,255 pods, 6,203 with
//                        GPUs, 149 days) on its own node list (1,523 nodes),
//                        under each shipped profile; one iteration = one
//                        whole replay
//   BM_Generated/default a generated 1,000,000-job workload (meridian
//                        workload generate --like helios --seed 1, read back
//                        through the JSONL reader) on the catalog's elastic
//                        capacity under default, run once
//   BM_EventQueue        the baseline, measured in the same run: the same
//                        trace's arrivals and ends through a bare priority
//                        queue, every job started at submission (no
//                        scheduler, no market, no accounting); `x queue` is a
//                        run's time over it
//
// Counters: events/s (arrivals + popped events, per CPU second), jobs,
// decisions; for the generated run, memory per job: the Trace (RSS after
// reading it, less before) and the simulation's peak above that (VmHWM reset
// through /proc/self/clear_refs before the run). The openb trace is read from
// MERIDIAN_DATA_DIR (../shared/data by default); its benchmarks are skipped
// when it is absent.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <sstream>

#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/profile.h"
#include "sim/engine.h"
#include "sim/spot_traces.h"
#include "sim/trace.h"
#include "sim/workload/generator.h"

namespace meridian::sim {
namespace {

constexpr UnixSeconds kStart = 1704067200;  // 2024-01-01T00:00:00Z
const char* kProfiles[] = {"default", "fifo-strict", "fifo-greedy", "fifo-backfill", "kueue-like",
                           "skypilot-like"};

std::shared_ptr<const catalog::Catalog> Catalog() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

struct Loaded {
  Trace trace;
  World world;
  std::unique_ptr<JobShapes> shapes;
  double trace_bytes_per_job = 0;
};

int64_t StatusKib(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::string(field).size()));
  }
  return 0;
}

World WorldFor(const FleetSpec& spec) {
  World w;
  w.catalog = Catalog();
  w.fleet = *sched::Fleet::Build(spec, w.catalog);
  ReplayMarketOptions mo;
  mo.start = kStart;
  mo.seed = 1;
  w.market = std::make_shared<ReplayMarket>(w.catalog, EmbeddedSpotTraces(), mo);
  if (w.fleet->elastic()) w.elastic = std::make_shared<sched::ElasticIndex>(*w.catalog);
  return w;
}

const Loaded* Openb() {
  static std::unique_ptr<Loaded> l = [] {
    const std::string path = std::string(MERIDIAN_DATA_DIR) +
                             "/traces/alibaba-gpu-v2023/csv/openb_pod_list_default.csv";
    auto t = ReadTrace(path, TraceFormat::kOpenb, *Catalog());
    if (!t.ok()) return std::unique_ptr<Loaded>();
    auto l = std::make_unique<Loaded>();
    l->trace = std::move(t).value();
    l->world = WorldFor(*l->trace.fleet);
    l->shapes = std::make_unique<JobShapes>(JobShapes::Make(l->trace, *Catalog()));
    return l;
  }();
  return l.get();
}

const Loaded& Generated() {
  static std::unique_ptr<Loaded> l = [] {
    const auto path = std::filesystem::temp_directory_path() / "meridian-sim-bench-1m.jsonl";
    {
      WorkloadOptions o;
      o.jobs = 1000000;
      o.seed = 1;
      o.like = WorkloadLike::kHelios;
      std::ofstream out(path);
      (void)GenerateWorkload(o, out);
    }
    malloc_trim(0);
    const int64_t before = StatusKib("VmRSS:");
    auto t = ReadTrace(path.string(), TraceFormat::kJsonl, *Catalog());
    std::filesystem::remove(path);
    auto l = std::make_unique<Loaded>();
    l->trace = std::move(t).value();
    malloc_trim(0);
    l->trace_bytes_per_job = static_cast<double>(StatusKib("VmRSS:") - before) * 1024.0 /
                             static_cast<double>(l->trace.jobs.size());
    FleetSpec elastic_only;
    elastic_only.elastic = true;
    l->world = WorldFor(elastic_only);
    l->shapes = std::make_unique<JobShapes>(JobShapes::Make(l->trace, *Catalog()));
    return l;
  }();
  return *l;
}

// Seconds of one baseline replay, by trace.
std::map<const Trace*, double>& QueueSeconds() {
  static std::map<const Trace*, double> s;
  return s;
}

int64_t BareReplay(const Trace& t) {
  struct Ev {
    int64_t at;
    uint32_t job;
    bool operator>(const Ev& o) const { return at != o.at ? at > o.at : job > o.job; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  int64_t events = 0, sum = 0;
  size_t next = 0;
  while (next < t.jobs.size() || !q.empty()) {
    if (next < t.jobs.size() && (q.empty() || t.jobs[next].submit_s <= q.top().at)) {
      const TraceJob& j = t.jobs[next];
      q.push({j.submit_s + std::max<int64_t>(j.duration_s, 3600), static_cast<uint32_t>(next++)});
    } else {
      sum += q.top().at;
      q.pop();
    }
    ++events;
  }
  benchmark::DoNotOptimize(sum);
  return events;
}

void BM_EventQueue(benchmark::State& state, const Trace* (*trace)()) {
  const Trace* t = trace();
  if (!t) {
    state.SkipWithError("trace not found");
    return;
  }
  int64_t events = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) events += BareReplay(*t);
  QueueSeconds()[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      static_cast<double>(state.iterations());
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["jobs"] = static_cast<double>(t->jobs.size());
}

void Replay(benchmark::State& state, const Loaded& l, const std::string& policy, bool memory) {
  auto profile = sched::EmbeddedProfile(policy);
  int64_t events = 0, decisions = 0;
  double peak = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    malloc_trim(0);
    const int64_t base = StatusKib("VmRSS:");
    if (memory) std::ofstream("/proc/self/clear_refs") << "5";
    auto run = Simulate(l.trace, *l.shapes, l.world, *profile, policy);
    if (!run.ok()) {
      state.SkipWithError(run.status().ToString().c_str());
      return;
    }
    events += run->events;
    decisions += run->decisions;
    peak = std::max(peak, static_cast<double>(StatusKib("VmHWM:") - base) * 1024.0);
    benchmark::DoNotOptimize(run->jobs.data());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      static_cast<double>(state.iterations());
  const double jobs = static_cast<double>(l.trace.jobs.size());
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["jobs"] = jobs;
  state.counters["decisions"] = static_cast<double>(decisions) / static_cast<double>(state.iterations());
  if (auto q = QueueSeconds().find(&l.trace); q != QueueSeconds().end() && q->second > 0) {
    state.counters["x queue"] = secs / q->second;
  }
  if (memory) {
    state.counters["trace B/job"] = l.trace_bytes_per_job;
    state.counters["sim peak B/job"] = peak / jobs;
  }
}

void BM_Openb(benchmark::State& state, std::string policy) {
  const Loaded* l = Openb();
  if (!l) {
    state.SkipWithError(MERIDIAN_DATA_DIR "/traces/alibaba-gpu-v2023 not found (-DMERIDIAN_DATA_DIR)");
    return;
  }
  Replay(state, *l, policy, false);
}

void BM_Generated(benchmark::State& state) { Replay(state, Generated(), "default", true); }

const Trace* OpenbTrace() { return Openb() ? &Openb()->trace : nullptr; }
const Trace* GeneratedTrace() { return &Generated().trace; }

}  // namespace
}  // namespace meridian::sim

int main(int argc, char** argv) {
  using namespace meridian::sim;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RegisterBenchmark("BM_EventQueue/openb", BM_EventQueue, OpenbTrace)->Unit(benchmark::kMillisecond);
  for (const char* p : kProfiles) {
    benchmark::RegisterBenchmark((std::string("BM_Openb/") + p).c_str(), BM_Openb, std::string(p))
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_EventQueue/generated-1m", BM_EventQueue, GeneratedTrace)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Generated/default", BM_Generated)
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
