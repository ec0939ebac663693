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
//   BM_Congested/<policy>/openb-2x8   openb's 6,203 GPU pods (a fractional
//                        pod as one GPU) pinned to A100-80GB with their
//                        recorded durations, on 2 nodes x 8 A100-80GB: 149
//                        days of queue, thousands waiting
//   BM_Congested/<policy>/philly-20k  20,000 generated Philly-like jobs
//                        (workload generate --like philly --gpu-model
//                        H100-80GB --seed 3) on 32 nodes x 8 H100-80GB
//   BM_Congested/default/1m  1,000,000 generated Philly-like jobs pinned to
//                        H100-80GB on 72 x 8: over 90% busy with about a
//                        thousand waiting on average and thousands at the
//                        peaks (the baseline's `busy` and `avg waiting`
//                        counters say how much; run with
//                        --benchmark_filter=1m; skipped otherwise)
//   .../every-decision   the same replay deciding every waiting job at every
//                        cycle (EngineOptions::keep_waits false, what the
//                        scheduler did before it kept verdicts)
//   BM_Moves/default/<moves|no-migrations>  3,000 generated Philly-like
//                        jobs, all preemptible, on H100-80GB with deadlines
//                        at twice their duration (workload generate --jobs
//                        3000 --like philly --gpu-model H100-80GB
//                        --preemptible-frac 1 --deadline-slack 2 --seed 7),
//                        on examples/fleets/follow-the-sun.yaml's clusters
//                        (owned H100, L40S and A100 nodes in us-central1 at
//                        $1.80/GPU-h, europe-west4 at $2.10, asia-northeast1
//                        at $2.30) plus the catalog's cloud capacity, from
//                        2024-01-01 on hourly carbon: `moves` asks the core at every checkpoint
//                        of every running job (Scheduler::Reconsider);
//                        `no-migrations`, the baseline in the same run, never
//                        asks; `x no-migrations` is a run's time over it
//   BM_FifoLoop/<trace>  the baseline of the congested rows, in the same run:
//                        a plain greedy FIFO loop over the same jobs and nodes
//                        (start, in submission order, every waiting job that
//                        fits the first node with room; no scheduler); `x
//                        loop` is a replay's time over it
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

FleetSpec Nodes(int count, const char* model) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "onprem";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.00);
  c.nodes.push_back({count, model, 8, 128, 1024.0, {}, "", {}, {}});
  f.clusters = {c};
  f.elastic = false;
  return f;
}

std::unique_ptr<Loaded> FromJsonl(const std::string& text, const FleetSpec& fleet) {
  const auto path = std::filesystem::temp_directory_path() / "meridian-sim-bench-congested.jsonl";
  std::ofstream(path) << text;
  auto t = ReadTrace(path.string(), TraceFormat::kJsonl, *Catalog());
  std::filesystem::remove(path);
  if (!t.ok()) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->trace = std::move(t).value();
  l->world = WorldFor(fleet);
  l->shapes = std::make_unique<JobShapes>(JobShapes::Make(l->trace, *Catalog()));
  return l;
}

const Loaded* OpenbTwoByEight() {
  static std::unique_ptr<Loaded> l = []() -> std::unique_ptr<Loaded> {
    const Loaded* openb = Openb();
    if (!openb) return nullptr;
    std::ostringstream jsonl;
    for (const TraceJob& j : openb->trace.jobs) {
      const int gpus = openb->trace.specs[j.spec]->resources.gpus.value_or(0);
      if (gpus == 0) continue;
      jsonl << "{\"name\":\"" << j.name << "\",\"submit_s\":" << j.submit_s
            << ",\"duration_s\":" << j.duration_s << ",\"gpus\":" << gpus
            << ",\"gpu_model\":\"A100-80GB\",\"kind\":\"training\"}\n";
    }
    return FromJsonl(jsonl.str(), Nodes(2, "A100-80GB"));
  }();
  return l.get();
}

const Loaded* Philly(int64_t jobs, int nodes) {
  static std::map<int64_t, std::unique_ptr<Loaded>> cache;
  auto& l = cache[jobs];
  if (!l) {
    WorkloadOptions o;
    o.jobs = jobs;
    o.seed = 3;
    o.like = WorkloadLike::kPhilly;
    o.gpu_model = "H100-80GB";
    std::ostringstream out;
    (void)GenerateWorkload(o, out);
    l = FromJsonl(out.str(), Nodes(nodes, "H100-80GB"));
  }
  return l.get();
}

// What the baseline saw: how congested the replay is.
struct LoopResult {
  double avg_jct_s = 0;
  double busy = 0;         // GPU-seconds used over the fleet's GPU-seconds to the last end
  double avg_waiting = 0;  // jobs waiting, averaged over time
  size_t max_waiting = 0;
};

// The congested rows' baseline: greedy FIFO over the trace's jobs on its
// fleet's whole nodes (all of one size), first node with room, in
// submission order.
LoopResult FifoLoop(const Loaded& l) {
  const Trace& t = l.trace;
  std::vector<int> free;
  for (const sched::Node& n : l.world.fleet->nodes()) free.push_back(n.gpus);
  struct End {
    int64_t at;
    int node, gpus;
    bool operator>(const End& o) const { return at > o.at; }
  };
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
  std::vector<size_t> waiting;
  LoopResult r;
  double jct = 0, gpu_s = 0, waiting_s = 0;
  int64_t last = t.jobs.empty() ? 0 : t.jobs.front().submit_s, used = 0, total = 0;
  for (int f : free) total += f;
  const int node_gpus = free.empty() ? 1 : free.front();
  size_t next = 0;
  while (next < t.jobs.size() || !ends.empty()) {
    const int64_t now = ends.empty() ? t.jobs[next].submit_s
                        : next < t.jobs.size() ? std::min(ends.top().at, t.jobs[next].submit_s)
                                               : ends.top().at;
    gpu_s += static_cast<double>(used) * static_cast<double>(now - last);
    waiting_s += static_cast<double>(waiting.size()) * static_cast<double>(now - last);
    last = now;
    while (!ends.empty() && ends.top().at == now) {
      free[static_cast<size_t>(ends.top().node)] += ends.top().gpus;
      used -= ends.top().gpus;
      ends.pop();
    }
    while (next < t.jobs.size() && t.jobs[next].submit_s == now) waiting.push_back(next++);
    r.max_waiting = std::max(r.max_waiting, waiting.size());
    std::vector<size_t> still;
    for (size_t j : waiting) {
      const int gpus = std::max(1, t.specs[t.jobs[j].spec]->resources.gpus.value_or(1));
      // A job larger than a node is a gang spread evenly over the fewest
      // nodes; one that fits a node takes the first node with room.
      const int nodes = (gpus + node_gpus - 1) / node_gpus;
      const int per_node = (gpus + nodes - 1) / nodes;
      std::vector<size_t> picked;
      for (size_t n = 0; n < free.size() && static_cast<int>(picked.size()) < nodes; ++n) {
        if (free[n] >= per_node) picked.push_back(n);
      }
      if (static_cast<int>(picked.size()) < nodes) {
        still.push_back(j);
        continue;
      }
      const int64_t d = std::max<int64_t>(1, t.jobs[j].duration_s);
      for (size_t n : picked) {
        free[n] -= per_node;
        ends.push({now + d, static_cast<int>(n), per_node});
      }
      used += per_node * nodes;
      jct += static_cast<double>(now + d - t.jobs[j].submit_s);
    }
    waiting.swap(still);
  }
  const double span = static_cast<double>(last - (t.jobs.empty() ? 0 : t.jobs.front().submit_s));
  r.avg_jct_s = jct / static_cast<double>(std::max<size_t>(1, t.jobs.size()));
  r.busy = span > 0 && total > 0 ? gpu_s / (span * static_cast<double>(total)) : 0;
  r.avg_waiting = span > 0 ? waiting_s / span : 0;
  return r;
}

std::map<const Trace*, double>& LoopSeconds() {
  static std::map<const Trace*, double> s;
  return s;
}

void BM_FifoLoop(benchmark::State& state, const Loaded* (*load)()) {
  const Loaded* l = load();
  if (!l) {
    state.SkipWithError("trace not found");
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  LoopResult r;
  for (auto _ : state) r = FifoLoop(*l);
  LoopSeconds()[&l->trace] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                             static_cast<double>(state.iterations());
  state.counters["jobs"] = static_cast<double>(l->trace.jobs.size());
  state.counters["avg JCT h"] = r.avg_jct_s / 3600;
  state.counters["busy"] = r.busy;
  state.counters["avg waiting"] = r.avg_waiting;
  state.counters["max waiting"] = static_cast<double>(r.max_waiting);
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

void Replay(benchmark::State& state, const Loaded& l, const std::string& policy, bool memory,
            bool keep_waits = true) {
  auto profile = sched::EmbeddedProfile(policy);
  int64_t events = 0, decisions = 0, kept = 0;
  double peak = 0, jct = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    malloc_trim(0);
    const int64_t base = StatusKib("VmRSS:");
    if (memory) std::ofstream("/proc/self/clear_refs") << "5";
    EngineOptions o;
    o.keep_waits = keep_waits;
    auto run = Simulate(l.trace, *l.shapes, l.world, *profile, policy, o);
    if (!run.ok()) {
      state.SkipWithError(run.status().ToString().c_str());
      return;
    }
    events += run->events;
    decisions += run->decisions;
    kept += run->kept_verdicts;
    jct = 0;
    for (size_t i = 0; i < run->jobs.size(); ++i) {
      jct += static_cast<double>(run->jobs[i].JctS(l.trace.jobs[i].submit_s));
    }
    peak = std::max(peak, static_cast<double>(StatusKib("VmHWM:") - base) * 1024.0);
    benchmark::DoNotOptimize(run->jobs.data());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      static_cast<double>(state.iterations());
  const double jobs = static_cast<double>(l.trace.jobs.size());
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["jobs"] = jobs;
  state.counters["decisions"] = static_cast<double>(decisions) / static_cast<double>(state.iterations());
  state.counters["kept"] = static_cast<double>(kept) / static_cast<double>(state.iterations());
  state.counters["avg JCT h"] = jct / jobs / 3600;
  if (auto q = QueueSeconds().find(&l.trace); q != QueueSeconds().end() && q->second > 0) {
    state.counters["x queue"] = secs / q->second;
  }
  if (auto q = LoopSeconds().find(&l.trace); q != LoopSeconds().end() && q->second > 0) {
    state.counters["x loop"] = secs / q->second;
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

void BM_Congested(benchmark::State& state, const Loaded* (*load)(), std::string policy, bool keep_waits) {
  const Loaded* l = load();
  if (!l) {
    state.SkipWithError("trace not found (-DMERIDIAN_DATA_DIR)");
    return;
  }
  Replay(state, *l, policy, policy == "default" && l->trace.jobs.size() > 100000, keep_waits);
}

const Loaded* Philly20k() { return Philly(20000, 32); }
// 72 nodes: the fewest whole nodes that keep the million's queue in the
// thousands (on 64 the loop's average queue is 8,000 and still growing at
// the weekly peaks; on 32 it grows without bound, to 440,000).
const Loaded* Philly1m() { return Philly(1000000, 72); }

// examples/fleets/follow-the-sun.yaml with elastic capacity, built in code.
FleetSpec FollowTheSun() {
  auto cluster = [](const char* name, const char* region, double usd, std::vector<NodeGroup> nodes) {
    ClusterSpec c;
    c.name = name;
    c.region = region;
    c.gpu_hour = Money::FromDollars(usd);
    c.nodes = std::move(nodes);
    return c;
  };
  FleetSpec f;
  f.clusters = {
      cluster("us-iowa", "gcp:us-central1", 1.80, {{8, "H100-80GB", 8, 192, 2048.0, {}, "", {}, {}}}),
      cluster("eu-eemshaven", "gcp:europe-west4", 2.10,
              {{8, "H100-80GB", 8, 192, 2048.0, {}, "", {}, {}}, {4, "L40S", 4, 64, 512.0, {}, "", {}, {}}}),
      cluster("asia-tokyo", "gcp:asia-northeast1", 2.30, {{6, "A100-80GB", 8, 96, 1024.0, {}, "", {}, {}}}),
  };
  f.elastic = true;
  return f;
}

const Loaded* Preemptible3k() {
  static std::unique_ptr<Loaded> l = [] {
    WorkloadOptions o;
    o.jobs = 3000;
    o.seed = 7;
    o.like = WorkloadLike::kPhilly;
    o.gpu_model = "H100-80GB";
    o.preemptible_frac = 1;
    o.deadline_slack = 2;
    std::ostringstream out;
    (void)GenerateWorkload(o, out);
    return FromJsonl(out.str(), FollowTheSun());
  }();
  return l.get();
}

std::map<bool, double>& MovesSeconds() {
  static std::map<bool, double> m;
  return m;
}

// One replay under default with moves at checkpoints on or off; the `moves`
// row reports its time over the `no-migrations` row's, run before it.
void BM_Moves(benchmark::State& state, bool migrations) {
  const Loaded* l = Preemptible3k();
  if (!l) {
    state.SkipWithError("generated workload not read");
    return;
  }
  auto profile = sched::EmbeddedProfile("default");
  int64_t moves = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    EngineOptions o;
    o.migrations = migrations;
    auto run = Simulate(l->trace, *l->shapes, l->world, *profile, "default", o);
    if (!run.ok()) {
      state.SkipWithError(run.status().ToString().c_str());
      return;
    }
    moves = 0;
    for (const JobOutcome& j : run->jobs) moves += j.moves;
    benchmark::DoNotOptimize(run->jobs.data());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                      static_cast<double>(state.iterations());
  MovesSeconds()[migrations] = secs;
  state.counters["moves"] = static_cast<double>(moves);
  if (auto base = MovesSeconds().find(false); migrations && base != MovesSeconds().end()) {
    state.counters["x no-migrations"] = secs / base->second;
  }
}

const Trace* OpenbTrace() { return Openb() ? &Openb()->trace : nullptr; }
const Trace* GeneratedTrace() { return &Generated().trace; }

}  // namespace
}  // namespace meridian::sim

int main(int argc, char** argv) {
  using namespace meridian::sim;
  bool million = false;  // only when the filter asks for it: generating it takes a while
  for (int i = 1; i < argc; ++i) million = million || std::string(argv[i]).find("1m") != std::string::npos;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RegisterBenchmark("BM_EventQueue/openb", BM_EventQueue, OpenbTrace)->Unit(benchmark::kMillisecond);
  for (const char* p : kProfiles) {
    benchmark::RegisterBenchmark((std::string("BM_Openb/") + p).c_str(), BM_Openb, std::string(p))
        ->Unit(benchmark::kMillisecond);
  }
  struct Congested {
    const char* name;
    const Loaded* (*load)();
  } congested[] = {{"openb-2x8", OpenbTwoByEight}, {"philly-20k", Philly20k}};
  for (const Congested& c : congested) {
    benchmark::RegisterBenchmark((std::string("BM_FifoLoop/") + c.name).c_str(), BM_FifoLoop, c.load)
        ->Unit(benchmark::kMillisecond);
    for (const char* p : kProfiles) {
      benchmark::RegisterBenchmark((std::string("BM_Congested/") + p + "/" + c.name).c_str(),
                                   BM_Congested, c.load, std::string(p), true)
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((std::string("BM_Congested/fifo-greedy/") + c.name + "/every-decision").c_str(),
                                 BM_Congested, c.load, std::string("fifo-greedy"), false)
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  }
  if (million) {
    benchmark::RegisterBenchmark("BM_FifoLoop/1m", BM_FifoLoop, Philly1m)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_Congested/default/1m", BM_Congested, Philly1m, std::string("default"), true)
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  }
  benchmark::RegisterBenchmark("BM_Moves/default/no-migrations", BM_Moves, false)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Moves/default/moves", BM_Moves, true)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_EventQueue/generated-1m", BM_EventQueue, GeneratedTrace)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Generated/default", BM_Generated)
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
