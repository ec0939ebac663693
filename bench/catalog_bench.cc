// Catalog::LoadEmbedded against a baseline that only scans the embedded bytes
// (counting lines), so the ratio shows what parsing and building cost on top
// of touching the data once.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "catalog/catalog.h"
#include "catalog/embedded.h"

namespace {

using meridian::catalog::Catalog;
using meridian::catalog::EmbeddedCatalogFiles;

void BM_ScanEmbeddedBytes(benchmark::State& state) {
  size_t bytes = 0;
  for (auto _ : state) {
    size_t lines = 0;
    bytes = 0;
    for (const auto& [name, text] : EmbeddedCatalogFiles()) {
      lines += static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
      bytes += text.size();
    }
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ScanEmbeddedBytes)->Unit(benchmark::kMillisecond);

void BM_LoadEmbedded(benchmark::State& state) {
  for (auto _ : state) {
    auto cat = Catalog::LoadEmbedded();
    if (!cat.ok()) {
      state.SkipWithError(cat.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(cat);
  }
}
BENCHMARK(BM_LoadEmbedded)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
