// The scheduling core at fleet scale: one complete decision of a profile for
// one queued job against the live ledger, placed or not, placements committed.
//
// Fleet: 1,000 / 10,000 / 50,000 generated nodes of 8 GPUs, one owned cluster
// in each of 40 catalog regions (the first 40 in catalog order that sell
// GPUs), 20% of the nodes (so of the GPUs) MIG-partitioned: A100-80GB as
// 3g.40gb + 2g.20gb + 2g.20gb, H100-80GB as 7 x 1g.10gb; the rest H100-80GB,
// A100-80GB, L40S and L4 whole; elastic offerings from the embedded catalog.
// Queue: 100,000 jobs of every workload kind (training gangs, fine-tunes,
// batch inference, real-time services with users, MIG-sized data science,
// rendering, scientific), 1 to 16 GPUs, some preemptible, some with
// deadlines, residency, input data or CPU needs, over 8 tenants; built from
// 256 templates sized once by the estimator (MakeQueuedJob) and copied.
//
// An item is Decide + Commit for the next job of the queue, timed on its own
// with a steady clock (p50_us, p99_us). One benchmark iteration is 20,000
// items (the same job sequence for every profile), so with a small
// --benchmark_min_time each benchmark runs exactly once; items_per_second is
// per CPU second of the one thread. To keep the fleet from filling for
// good, the oldest placements are released (outside the per-item timing, in
// the items/s figure) whenever fleet GPUs held pass 70% or live placements
// pass 4 per node. Counters: placed (place, defer, preempt), waiting,
// rejected, p50/p99 per decision, candidates examined and feasible per
// decision (examined_avg, feasible_avg), peak RSS (getrusage ru_maxrss),
// x_scan: one decision's time over one BM_LedgerScan item's at the same size,
// and digest: a hash of what every decision chose and counted (exact in
// --benchmark_format=json), equal before and after a change that must not
// alter decisions.
//
// BM_Cycle/<profile>/<nodes>: whole cycles as the simulator and the daemon
// run them (Scheduler::RunCycle: sort, decide in order, commit, head-of-line
// blocking, backfill reservations, kept verdicts) over a queue of the
// 100,000 jobs, all waiting at the start. Between cycles the clock advances
// 30 minutes and the placements whose expected end has come are released;
// placed and rejected jobs leave the queue, preempted ones rejoin it. One
// iteration = 12 cycles (6 hours). Counters: decided (full decisions) and
// kept per cycle, placed, waiting at the end, p50/max ms per cycle, digest
// (as BM_Schedule's, over the full decisions).
//
// BM_LedgerScan/<nodes> is the baseline measured in the same run: a plain
// linear scan, from node 0, for the first node with the job's GPUs free, over
// the same fleet half full (20,000 scans an iteration; 2,000 at 50,000 nodes).
//
//   build/bench/sched_bench --benchmark_min_time=0.01 [--benchmark_format=json]
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <deque>
#include <map>
#include <memory>

#include "catalog/catalog.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/profile.h"
#include "sched/queued_job.h"
#include "sched/rng.h"
#include "sched/scheduler.h"
#include "spec/spec.h"

namespace meridian::sched {
namespace {

constexpr int kRegions = 40;
constexpr size_t kJobs = 100000;
constexpr int kTemplates = 256;
constexpr int64_t kDecisions = 20000;  // items per BM_Schedule run
constexpr UnixSeconds kAt = 1772442000;  // 2026-03-02T09:00:00Z

std::shared_ptr<const catalog::Catalog> BenchCatalog() {
  static auto cat = [] {
    auto c = catalog::Catalog::LoadEmbedded();
    if (!c.ok()) std::abort();
    return *c;
  }();
  return cat;
}

// The first kRegions regions (catalog order) with a GPU offering.
std::vector<std::string> GpuRegions(const catalog::Catalog& cat) {
  std::vector<std::string> out;
  for (const catalog::Region& r : cat.regions()) {
    bool sells = false;
    for (const catalog::Offering& o : cat.offerings()) sells |= o.region == r.id && o.gpu_count > 0;
    if (sells) out.push_back(r.id);
    if (out.size() == kRegions) break;
  }
  return out;
}

NodeGroup Group(int count, const char* gpu, int vcpus, double ram_gib,
               std::vector<std::string> mig, const char* prefix) {
  NodeGroup g;
  g.count = count;
  g.gpu = gpu;
  g.gpus = 8;
  g.vcpus = vcpus;
  g.ram_gib = ram_gib;
  g.mig = std::move(mig);
  g.name_prefix = prefix;
  return g;
}

FleetSpec GeneratedFleet(int nodes, const std::vector<std::string>& regions) {
  FleetSpec f;
  const int per = nodes / static_cast<int>(regions.size());
  for (size_t r = 0; r < regions.size(); ++r) {
    ClusterSpec c;
    c.name = "dc" + std::to_string(r);
    c.region = regions[r];
    c.gpu_hour = Money::FromDollars(1.0 + 0.05 * static_cast<double>(r % 10));
    // 20% MIG (half A100, half H100), 30% H100, 25% A100, 15% L40S, the rest L4.
    const int mig_a = per / 10, mig_h = per / 10, h100 = per * 3 / 10, a100 = per / 4,
              l40s = per * 3 / 20;
    const int l4 = per - mig_a - mig_h - h100 - a100 - l40s;
    c.nodes.push_back(Group(h100, "H100-80GB", 192, 2048, {}, "h100-"));
    c.nodes.push_back(Group(a100, "A100-80GB", 96, 1024, {}, "a100-"));
    c.nodes.push_back(Group(mig_a, "A100-80GB", 96, 1024, {"3g.40gb", "2g.20gb", "2g.20gb"}, "a100-mig-"));
    c.nodes.push_back(Group(mig_h, "H100-80GB", 192, 2048, std::vector<std::string>(7, "1g.10gb"),
                            "h100-mig-"));
    c.nodes.push_back(Group(l40s, "L40S", 64, 512, {}, "l40s-"));
    c.nodes.push_back(Group(l4, "L4", 48, 384, {}, "l4-"));
    f.clusters.push_back(std::move(c));
  }
  return f;
}

JobSpec TemplateJob(Rng& rng, int i, const std::vector<std::string>& regions) {
  static const WorkloadKind kinds[] = {
      WorkloadKind::kTraining,       WorkloadKind::kFineTuning,  WorkloadKind::kBatchInference,
      WorkloadKind::kRealtimeInference, WorkloadKind::kDataScience, WorkloadKind::kRendering,
      WorkloadKind::kScientific};
  JobSpec j;
  j.name = "t" + std::to_string(i);
  j.kind = kinds[i % 7];
  const int sizes[] = {1, 1, 1, 2, 4, 8, 8, 16};
  int gpus = sizes[rng.Below(8)];
  if (j.kind == WorkloadKind::kDataScience) gpus = 1;
  j.resources.gpus = gpus;
  j.resources.vram_gib = j.kind == WorkloadKind::kDataScience ? 6 + static_cast<double>(rng.Below(30))
                                                              : 16 + static_cast<double>(rng.Below(56));
  j.resources.mig = gpus == 1 && rng.Below(2) == 0;
  const char* models[] = {"H100-80GB", "A100-80GB", "L40S", "L4"};
  if (rng.Below(3) == 0) j.resources.gpu_models = {models[rng.Below(4)]};
  if (rng.Below(3) == 0) j.resources.vcpus = 4 * (1 + static_cast<int>(rng.Below(8)));
  if (rng.Below(3) == 0) j.resources.ram_gib = 16 * (1 + static_cast<double>(rng.Below(8)));
  j.work.duration_s = 900 * (1 + static_cast<int64_t>(rng.Below(32)));
  j.preemptible = j.kind != WorkloadKind::kRealtimeInference && rng.Below(2) == 0;
  j.priority = static_cast<Priority>(rng.Below(4));
  if (rng.Below(4) == 0) j.deadline.after_submit_s = 3600 * (4 + static_cast<int64_t>(rng.Below(48)));
  if (rng.Below(5) == 0) j.residency = {rng.Below(2) ? "eu" : "us"};
  if (rng.Below(3) == 0) j.data = {regions[rng.Below(regions.size())], 10.0 * (1 + rng.Below(50))};
  if (j.kind == WorkloadKind::kRealtimeInference) {
    j.latency.users = {regions[rng.Below(regions.size())]};
    j.latency.slo_ms = 80 + static_cast<double>(rng.Below(120));
  }
  j.tenant = "tenant" + std::to_string(rng.Below(8));
  return j;
}

struct World {
  std::shared_ptr<const Fleet> fleet;
  std::unique_ptr<CatalogMarket> market;
  std::unique_ptr<ElasticIndex> elastic;
  std::vector<QueuedJob> jobs;
  int64_t fleet_gpus = 0;
};

const World& WorldOf(int nodes) {
  static std::map<int, std::unique_ptr<World>> worlds;
  auto it = worlds.find(nodes);
  if (it != worlds.end()) return *it->second;
  auto cat = BenchCatalog();
  auto w = std::make_unique<World>();
  std::vector<std::string> regions = GpuRegions(*cat);
  auto fleet = Fleet::Build(GeneratedFleet(nodes, regions), cat);
  if (!fleet.ok()) std::abort();
  w->fleet = *fleet;
  for (const Node& n : w->fleet->nodes()) w->fleet_gpus += n.gpus;
  w->market = std::make_unique<CatalogMarket>(cat);
  w->elastic = std::make_unique<ElasticIndex>(*cat);
  Rng rng(42);
  std::vector<QueuedJob> templates;
  for (int i = 0; i < kTemplates; ++i) {
    JobSpec spec = TemplateJob(rng, i, regions);
    if (!spec::ValidateAgainstCatalog(spec, *cat, kAt).ok()) continue;
    auto q = MakeQueuedJob(std::make_shared<JobSpec>(spec), *cat, {JobId(0), TenantId(0), kAt, 0});
    if (q.ok()) templates.push_back(std::move(q).value());
  }
  w->jobs.reserve(kJobs);
  for (size_t i = 0; i < kJobs; ++i) {
    QueuedJob q = templates[rng.Below(templates.size())];
    q.id = JobId(static_cast<uint32_t>(i + 1));
    q.sequence = i;
    q.tenant = TenantId(static_cast<uint32_t>(q.spec->tenant.back() - '0'));
    w->jobs.push_back(std::move(q));
  }
  return *worlds.emplace(nodes, std::move(w)).first->second;
}

int64_t FleetGpusOf(const Allocation& a) {
  int64_t eighths = 0;
  for (const NodeShare& s : a.nodes) eighths += std::popcount(s.gpus) * 8 + (s.mig ? s.mig->shape.span : 0);
  return eighths;
}

double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

std::map<int, double>& ScanSeconds() {
  static std::map<int, double> s;
  return s;
}

// Baseline: linear scan from node 0 for the first node with the job's GPUs free.
void BM_LedgerScan(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const World& w = WorldOf(nodes);
  Ledger ledger = std::move(w.fleet->NewLedger()).value();
  Rng rng(7);
  for (const Node& n : w.fleet->nodes()) {  // half the whole GPUs taken, at random
    if (n.mig_gpus != 0 || rng.Below(2) == 0) continue;
    Allocation a;
    a.job = JobId(static_cast<uint32_t>(kJobs + 1 + n.id.value()));
    a.nodes.push_back({n.id, (1ull << n.gpus) - 1, std::nullopt, 0, 0});
    (void)ledger.Reserve(a);
  }
  size_t i = 0, found = 0;
  const int64_t per = nodes >= 50000 ? 2000 : kDecisions;  // scans per iteration
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int64_t k = 0; k < per; ++k) {
      const QueuedJob& job = w.jobs[i++ % w.jobs.size()];
      const int need = job.demands.empty() ? 1 : job.demands.front().gpus;
      for (uint32_t n = 0; n < ledger.node_count(); ++n) {
        if (ledger.free_gpu_count(NodeId(n)) >= need) {
          ++found;
          break;
        }
      }
    }
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  benchmark::DoNotOptimize(found);
  const int64_t items = state.iterations() * per;
  state.SetItemsProcessed(items);
  if (items > 0) ScanSeconds()[nodes] = took.count() / static_cast<double>(items);
}

// One profile deciding the queue against a live ledger: decide, commit,
// release the oldest placements past the fill limits.
class LiveRun {
 public:
  LiveRun(const World& w, Scheduler* s, int nodes)
      : w_(w), s_(*s), ledger_(std::move(w.fleet->NewLedger()).value()),
        cap_(w.fleet_gpus * 8 * 7 / 10), max_live_(static_cast<size_t>(nodes) * 4) {
    snap_.now = kAt;
    snap_.fleet = w.fleet.get();
    snap_.ledger = &ledger_;
    snap_.market = w.market.get();
    snap_.elastic = w.elastic.get();
    ns_.reserve(static_cast<size_t>(kDecisions));
  }

  void DecideNext() {
    const QueuedJob& job = w_.jobs[next_++ % w_.jobs.size()];
    auto t0 = std::chrono::steady_clock::now();
    Decision d = s_.Decide(job, snap_);
    Digest(d);
    feasible_ += d.feasible;
    examined_ += d.candidates;
    if (d.allocation && s_.Commit(d, snap_, &ledger_).ok()) {
      ++placed_;
      held_ += FleetGpusOf(*d.allocation);
      live_.push_back(job.id);
      for (JobId v : d.victims) std::erase(live_, v);
    } else if (d.kind == DecisionKind::kReject) {
      ++rejected_;
    } else {
      ++waiting_;
    }
    auto t1 = std::chrono::steady_clock::now();
    ns_.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    while (!live_.empty() && (held_ > cap_ || live_.size() > max_live_)) {
      if (const Allocation* a = ledger_.Find(live_.front())) held_ -= FleetGpusOf(*a);
      s_.Release(live_.front(), snap_, &ledger_);
      live_.pop_front();
    }
  }

  void Report(benchmark::State& state) {
    if (!ns_.empty()) {
      state.counters["p50_us"] = Percentile(0.50);
      state.counters["p99_us"] = Percentile(0.99);
    }
    state.counters["placed"] = static_cast<double>(placed_);
    state.counters["waiting"] = static_cast<double>(waiting_);
    state.counters["rejected"] = static_cast<double>(rejected_);
    const double n = std::max<double>(1, static_cast<double>(ns_.size()));
    state.counters["feasible_avg"] = static_cast<double>(feasible_) / n;
    state.counters["examined_avg"] = static_cast<double>(examined_) / n;
    state.counters["digest"] = static_cast<double>(static_cast<uint32_t>(digest_ ^ (digest_ >> 32)));
  }

 private:
  // FNV-1a over what each decision chose and counted (outside the timing):
  // a change that must not alter decisions must leave `digest` as it was.
  void Mix(uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) digest_ = (digest_ ^ (v & 0xff)) * 0x100000001b3ull;
  }
  void Digest(const Decision& d) {
    Mix(static_cast<uint64_t>(d.kind));
    Mix(static_cast<uint64_t>(d.start));
    Mix(d.candidates);
    Mix(d.feasible);
    for (const FilterLine& f : d.filters) Mix(f.rejected);
    if (d.chosen) Mix(static_cast<uint64_t>(d.chosen->total));
    if (!d.allocation) return;
    for (const NodeShare& s : d.allocation->nodes) {
      Mix(s.node.value());
      Mix(s.gpus);
      if (s.mig) Mix(uint64_t{s.mig->gpu} << 16 | uint64_t{s.mig->shape.start} << 8 | s.mig->shape.span);
    }
    if (const auto& e = d.allocation->elastic) {
      Mix(e->offering.value());
      Mix(static_cast<uint64_t>(e->pricing));
      Mix(static_cast<uint64_t>(e->instances));
    }
  }

  double Percentile(double q) {
    size_t k = std::min(ns_.size() - 1, static_cast<size_t>(q * static_cast<double>(ns_.size())));
    std::nth_element(ns_.begin(), ns_.begin() + static_cast<ptrdiff_t>(k), ns_.end());
    return static_cast<double>(ns_[k]) / 1000.0;
  }

  const World& w_;
  Scheduler& s_;
  Ledger ledger_;
  Snapshot snap_;
  std::deque<JobId> live_;
  int64_t held_ = 0;  // fleet GPUs held, in eighths
  const int64_t cap_;
  const size_t max_live_;
  std::vector<int64_t> ns_;
  int64_t placed_ = 0, waiting_ = 0, rejected_ = 0, feasible_ = 0, examined_ = 0;
  size_t next_ = 0;
  uint64_t digest_ = 0xcbf29ce484222325ull;
};

void BM_Cycle(benchmark::State& state, std::string profile_name) {
  const int nodes = static_cast<int>(state.range(0));
  const World& w = WorldOf(nodes);
  auto profile = EmbeddedProfile(profile_name);
  if (!profile.ok()) {
    state.SkipWithError(profile.status().ToString().c_str());
    return;
  }
  constexpr int kCycles = 12;
  constexpr int64_t kStep = 1800;
  int64_t decided = 0, kept = 0, placed = 0, cycles = 0;
  size_t waiting = 0;
  std::vector<double> ms;
  uint64_t digest = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) digest = (digest ^ (v & 0xff)) * 0x100000001b3ull;
  };
  for (auto _ : state) {
    state.PauseTiming();
    auto made = Scheduler::Create(*profile, w.fleet, {1, ExplainLevel::kCounts});
    if (!made.ok()) {
      state.SkipWithError(made.status().ToString().c_str());
      return;
    }
    Scheduler& s = **made;
    Ledger ledger = std::move(w.fleet->NewLedger()).value();
    std::vector<const QueuedJob*> queue;
    for (const QueuedJob& j : w.jobs) queue.push_back(&j);
    std::vector<const QueuedJob*> by_id(w.jobs.size() + 1);
    for (const QueuedJob& j : w.jobs) by_id[j.id.value()] = &j;
    Snapshot snap;
    snap.fleet = w.fleet.get();
    snap.market = w.market.get();
    snap.elastic = w.elastic.get();
    state.ResumeTiming();
    for (int c = 0; c < kCycles; ++c) {
      snap.now = kAt + c * kStep;
      for (auto ends = ledger.EarliestEnds(256); !ends.empty() && ends.front().first <= snap.now;
           ends = ledger.EarliestEnds(256)) {
        for (const auto& [end, job] : ends) {
          if (end > snap.now) break;
          s.Release(job, snap, &ledger);
        }
      }
      std::vector<char> leaves(w.jobs.size() + 1, 0);
      std::vector<const QueuedJob*> back;
      const auto t0 = std::chrono::steady_clock::now();
      s.RunCycle(snap, queue, &ledger, [&](Decision& d) {
        if (d.kept) {
          ++kept;
          return;
        }
        ++decided;
        mix(static_cast<uint64_t>(d.kind));
        mix(d.feasible);
        if (d.allocation) {
          ++placed;
          leaves[d.job.value()] = 1;
          for (const NodeShare& sh : d.allocation->nodes) mix(sh.node.value());
          for (JobId v : d.victims) back.push_back(by_id[v.value()]);
        } else if (d.kind == DecisionKind::kReject) {
          leaves[d.job.value()] = 1;
        }
      });
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::erase_if(queue, [&](const QueuedJob* j) { return leaves[j->id.value()] != 0; });
      queue.insert(queue.end(), back.begin(), back.end());
      ++cycles;
    }
    waiting = queue.size();
  }
  std::sort(ms.begin(), ms.end());
  state.counters["decided_per_cycle"] = static_cast<double>(decided) / static_cast<double>(cycles);
  state.counters["kept_per_cycle"] = static_cast<double>(kept) / static_cast<double>(cycles);
  state.counters["placed"] = static_cast<double>(placed) / static_cast<double>(state.iterations());
  state.counters["waiting_end"] = static_cast<double>(waiting);
  state.counters["p50_ms"] = ms.empty() ? 0 : ms[ms.size() / 2];
  state.counters["max_ms"] = ms.empty() ? 0 : ms.back();
  state.counters["digest"] = static_cast<double>(static_cast<uint32_t>(digest ^ (digest >> 32)));
  state.counters["nodes"] = nodes;
}

void BM_Schedule(benchmark::State& state, std::string profile_name) {
  const int nodes = static_cast<int>(state.range(0));
  const World& w = WorldOf(nodes);
  auto profile = EmbeddedProfile(profile_name);
  if (!profile.ok()) {
    state.SkipWithError(profile.status().ToString().c_str());
    return;
  }
  auto made = Scheduler::Create(*profile, w.fleet, {1, ExplainLevel::kCounts});
  if (!made.ok()) {
    state.SkipWithError(made.status().ToString().c_str());
    return;
  }
  LiveRun run(w, made->get(), nodes);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int64_t k = 0; k < kDecisions; ++k) run.DecideNext();
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  const int64_t items = state.iterations() * kDecisions;
  state.SetItemsProcessed(items);
  if (auto scan = ScanSeconds().find(nodes); scan != ScanSeconds().end() && scan->second > 0) {
    state.counters["x_scan"] = took.count() / static_cast<double>(items) / scan->second;
  }
  run.Report(state);
  state.counters["peak_rss_mib"] = PeakRssMib();
  state.counters["nodes"] = nodes;
}

}  // namespace
}  // namespace meridian::sched

namespace {

const int kSizes[] = {1000, 10000, 50000};

int RegisterAll() {
  using meridian::sched::BM_LedgerScan;
  using meridian::sched::BM_Cycle;
  using meridian::sched::BM_Schedule;
  for (int n : kSizes) {
    benchmark::RegisterBenchmark("BM_LedgerScan", BM_LedgerScan)->Arg(n)->Unit(benchmark::kMillisecond);
  }
  for (const std::string& p : meridian::sched::EmbeddedProfileNames()) {
    for (int n : kSizes) {
      benchmark::RegisterBenchmark(("BM_Schedule/" + p).c_str(), BM_Schedule, p)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const std::string& p : meridian::sched::EmbeddedProfileNames()) {
    for (int n : {1000, 10000}) {
      benchmark::RegisterBenchmark(("BM_Cycle/" + p).c_str(), BM_Cycle, p)
          ->Arg(n)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
