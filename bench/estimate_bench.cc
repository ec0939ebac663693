// MakePlan for one 7B fine-tune over the test catalog and the embedded one,
// and for every bundled example (examples/*.yaml) over the embedded catalog,
// against a baseline measured in the same run: the memory fit of the 7B job on
// every GPU model alone. The ratio says what pricing every (offering x count x
// pricing model) costs on top of the arithmetic that decides the GPU count.
// A plan of a bundled example should take under 5 ms (issue 18).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "estimate/memory.h"
#include "estimate/plan.h"
#include "estimate/test_catalog.h"
#include "spec/spec.h"

namespace meridian::estimate {
namespace {

JobSpec FineTune7B() {
  JobSpec j;
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 7;
  j.model.seq_len = 2048;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 1e9;
  j.preemptible = true;
  j.deadline.after_submit_s = 72 * 3600;
  return j;
}

const catalog::Catalog& BenchCatalog() {
  static const auto cat = testing::TestCatalog();
  return *cat;
}

void BM_MemoryFitAllGpus(benchmark::State& state) {
  const catalog::Catalog& cat = BenchCatalog();
  ResolvedJob job = Resolve(FineTune7B());
  for (auto _ : state) {
    for (const auto& gpu : cat.gpus()) benchmark::DoNotOptimize(FitMemory(job, gpu));
  }
}
BENCHMARK(BM_MemoryFitAllGpus);

void BM_MakePlan(benchmark::State& state) {
  const catalog::Catalog& cat = BenchCatalog();
  JobSpec job = FineTune7B();
  const UnixSeconds at = FromCivil({2024, 3, 1, 0, 0, 0});
  size_t options = 0;
  for (auto _ : state) {
    Result<Plan> plan = MakePlan(job, cat, {at, 0});
    options = plan->options.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["options"] = static_cast<double>(options);
}
BENCHMARK(BM_MakePlan);

// The same job over the real embedded catalog (thousands of offerings).
void BM_MakePlanEmbedded(benchmark::State& state) {
  auto cat = catalog::Catalog::LoadEmbedded();
  if (!cat.ok()) {
    state.SkipWithError(cat.status().ToString().c_str());
    return;
  }
  JobSpec job = FineTune7B();
  const UnixSeconds at = FromCivil({2024, 3, 1, 0, 0, 0});
  size_t options = 0;
  for (auto _ : state) {
    Result<Plan> plan = MakePlan(job, **cat, {at, 0});
    options = plan->options.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["options"] = static_cast<double>(options);
}
BENCHMARK(BM_MakePlanEmbedded)->Unit(benchmark::kMillisecond);

const catalog::Catalog* EmbeddedCatalog() {
  static const auto cat = catalog::Catalog::LoadEmbedded();
  return cat.ok() ? cat->get() : nullptr;
}

// `meridian plan examples/NAME.yaml` without reading the catalog and the file:
// the first job of the example, planned at 2026-01-01T00:00:00Z (before every
// absolute deadline in the examples).
void BM_PlanExample(benchmark::State& state, const std::string& path) {
  const catalog::Catalog* cat = EmbeddedCatalog();
  Result<std::vector<JobSpec>> jobs = spec::LoadJobSpecFile(path);
  if (!cat || !jobs.ok() || jobs->empty()) {
    state.SkipWithError(("cannot load the embedded catalog or " + path).c_str());
    return;
  }
  const UnixSeconds at = FromCivil({2026, 1, 1, 0, 0, 0});
  size_t options = 0;
  for (auto _ : state) {
    Result<Plan> plan = MakePlan(jobs->front(), *cat, {at, 0});
    options = plan->options.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["options"] = static_cast<double>(options);
}

void RegisterExamples() {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(MERIDIAN_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    benchmark::RegisterBenchmark(("BM_PlanExample/" + f.stem().string()).c_str(), BM_PlanExample,
                                 f.string())
        ->Unit(benchmark::kMillisecond);
  }
}

// Console output plus the ratio of each benchmark to the baseline.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.iterations > 0) {  // seconds per iteration, whatever the display unit
        seconds_[r.benchmark_name()] = r.real_accumulated_time / static_cast<double>(r.iterations);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto base = seconds_.find("BM_MemoryFitAllGpus");
    if (base == seconds_.end() || base->second <= 0) return;
    for (const auto& [name, t] : seconds_) {
      if (name == base->first) continue;
      std::cout << name << " / BM_MemoryFitAllGpus = " << t / base->second << "x\n";
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace
}  // namespace meridian::estimate

int main(int argc, char** argv) {
  meridian::estimate::RegisterExamples();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  meridian::estimate::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
