// Selection latency for the full catalogue of one problem (issue 5, deployment): cold (a problem
// not seen before: phi of every candidate + the model, one thread) and cached (a repeat).
// The models are trained on an in-memory synthetic data set of the size of a small corpus
// (their latency depends on their size, not on what they learned); pass a real model file in
// CKS_BENCH_MODEL to measure it instead.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>

#include "cks/models.hpp"
#include "cks/selector.hpp"

namespace {

using namespace cks;

// 40 tn groups x 300 candidates, throughput a smooth function of two features.
Dataset synthetic_data() {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  const FeatureComputer fc(cat.kernels(), default_hw());
  const size_t wave = FeatureSchema::get().index("sched_wave_eff"), reuse = FeatureSchema::get().index("tile_intensity");
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<size_t> pick(0, cat.candidates().size() - 1);
  std::uniform_int_distribution<int> dim(2, 128);
  Dataset d;
  d.hw_preset = default_hw().preset;
  d.x.cols = FeatureSchema::get().size();
  for (int g = 0; g < 40; ++g) {
    const Problem p{64L * dim(rng), 64L * dim(rng), 64L * dim(rng), Layout::tn};
    std::vector<Candidate> c;
    for (int i = 0; i < 300; ++i) c.push_back(cat.candidates()[pick(rng)]);
    FeatureMatrix x;
    fc.compute(p, c, x);
    std::vector<double> t(c.size()), s(c.size(), 0.5);
    for (size_t i = 0; i < c.size(); ++i) t[i] = 1 + 500 * std::min(1.0f, x.at(i, wave)) * std::min(1.0f, x.at(i, reuse) / 96);
    const GroupLabels l = label_group(t, s);
    DataGroup dg;
    dg.key = std::to_string(g);
    dg.problem = p;
    dg.begin = d.rows();
    dg.end = dg.begin + c.size();
    d.groups.push_back(dg);
    d.x.data.insert(d.x.data.end(), x.data.begin(), x.data.end());
    d.x.rows += c.size();
    d.candidates.insert(d.candidates.end(), c.begin(), c.end());
    d.tflops.insert(d.tflops.end(), t.begin(), t.end());
    d.sigma.insert(d.sigma.end(), s.begin(), s.end());
    d.y.insert(d.y.end(), l.y.begin(), l.y.end());
    d.relevance.insert(d.relevance.end(), l.relevance.begin(), l.relevance.end());
    d.grade.insert(d.grade.end(), l.grade.begin(), l.grade.end());
  }
  return d;
}

const Selector& selector(ModelKind kind) {
  static std::map<ModelKind, std::unique_ptr<Selector>> cache;
  auto& s = cache[kind];
  if (!s) {
    if (const char* path = std::getenv("CKS_BENCH_MODEL")) {
      s = std::make_unique<Selector>(path);
    } else {
      static const Dataset d = synthetic_data();
      TrainOptions o;
      o.kind = kind;
      o.threads = 2;
      s = std::make_unique<Selector>(std::shared_ptr<const Model>(train_model(d, o)));
    }
    s->prepare(Layout::tn);
  }
  return *s;
}

void BM_SelectCold(benchmark::State& state) {
  const Selector& s = selector(static_cast<ModelKind>(state.range(0)));
  long m = 1024;
  for (auto _ : state) benchmark::DoNotOptimize(s.select_uncached(Problem{m += 8, 4096, 4096, Layout::tn}, 8));
  state.counters["candidates"] = static_cast<double>(Catalogue::get(Layout::tn).candidates().size());
}
BENCHMARK(BM_SelectCold)->Arg(static_cast<int>(ModelKind::ridge))->Arg(static_cast<int>(ModelKind::xgboost))
    ->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SelectCached(benchmark::State& state) {
  const Selector& s = selector(ModelKind::ridge);
  const Problem p{4096, 4096, 4096, Layout::tn};
  s.select(p, 8);
  for (auto _ : state) benchmark::DoNotOptimize(s.select(p, 8));
}
BENCHMARK(BM_SelectCached)->Unit(benchmark::kNanosecond);

}  // namespace

// main() comes from bench_features.cpp (one cks_bench binary for tests/bench/).
