// Google Benchmark: feature rows per second (items_per_second) over the whole catalogue of one
// problem, on one thread. Target: >= 2,000,000 rows/s.
#include <benchmark/benchmark.h>

#include "cks/features.hpp"

namespace {

void features_for_problem(benchmark::State& state, cks::Problem p) {
  const cks::Catalogue& cat = cks::Catalogue::get(p.layout);
  const cks::FeatureComputer fc(cat.kernels(), cks::default_hw());
  cks::FeatureMatrix x;
  fc.compute(p, cat.candidates(), x);  // allocate once
  for (auto _ : state) {
    fc.compute(p, cat.candidates(), x);
    benchmark::DoNotOptimize(x.data.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cat.candidates().size()));
  state.counters["candidates"] = static_cast<double>(cat.candidates().size());
}

// Includes the per-kernel setup (resources, residency, stage times) that compute_matrix caches.
void features_with_setup(benchmark::State& state) {
  const cks::Catalogue& cat = cks::Catalogue::get(cks::Layout::tn);
  cks::FeatureMatrix x;
  for (auto _ : state) {
    const cks::FeatureComputer fc(cat.kernels(), cks::default_hw());
    fc.compute({4096, 4096, 4096, cks::Layout::tn}, cat.candidates(), x);
    benchmark::DoNotOptimize(x.data.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cat.candidates().size()));
}

}  // namespace

BENCHMARK_CAPTURE(features_for_problem, square_4096_tn, cks::Problem{4096, 4096, 4096, cks::Layout::tn})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(features_for_problem, small_m_16x4096x4096_tn, cks::Problem{16, 4096, 4096, cks::Layout::tn})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(features_with_setup)->Unit(benchmark::kMillisecond);
