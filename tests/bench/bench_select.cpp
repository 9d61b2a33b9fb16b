// Selection latency for one problem (issue 5, deployment), one thread:
//   cold   select_uncached() of a problem not seen before (M changes every iteration): the
//          prefilter, phi and the model (or phi and the model for every candidate, exhaustive);
//   cached select() of a repeated problem.
// Arguments: layout (0 = tn, 1 = nt) and mode (0 = two-stage, the default; 1 = exhaustive;
// 2 = static-score fallback). The model is CKS_BENCH_MODEL, else the shipped default model
// (Selector::default_model_path()), else an XGBoost model trained on an in-memory synthetic
// data set (latency depends on the model's size, not on what it learned). The one-time layout
// set-up (catalogue, features, static classes, prior) runs before timing.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
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

std::shared_ptr<const Model> bench_model() {
  static const std::shared_ptr<const Model> model = []() -> std::shared_ptr<const Model> {
    if (const char* path = std::getenv("CKS_BENCH_MODEL")) return Model::load(path);
    if (std::filesystem::exists(Selector::default_model_path())) return Model::load(Selector::default_model_path());
    static const Dataset d = synthetic_data();
    TrainOptions o;
    o.threads = 2;
    return train_model(d, o);
  }();
  return model;
}

enum Mode { kTwoStage = 0, kExhaustive = 1, kStatic = 2 };

const Selector& selector(Layout layout, int mode) {
  static std::map<std::pair<Layout, int>, std::unique_ptr<Selector>> cache;
  auto& s = cache[{layout, mode}];
  if (!s) {
    SelectorOptions o;
    if (mode == kExhaustive) o.prefilter = 0;
    s = mode == kStatic ? std::make_unique<Selector>(Selector::static_score(default_hw(), o))
                        : std::make_unique<Selector>(bench_model(), o);
    s->prepare(layout);
  }
  return *s;
}

void label(benchmark::State& state, Layout layout, const Selector& s) {
  state.SetLabel(std::string(to_string(layout)) + ", " + s.mode());
  state.counters["candidates"] = static_cast<double>(Catalogue::get(layout).candidates().size());
}

void BM_SelectCold(benchmark::State& state) {
  const Layout layout = state.range(0) ? Layout::nt : Layout::tn;
  const Selector& s = selector(layout, static_cast<int>(state.range(1)));
  long m = 1024;
  for (auto _ : state) benchmark::DoNotOptimize(s.select_uncached(Problem{m += 8, 4096, 4096, layout}, 8));
  label(state, layout, s);
}
BENCHMARK(BM_SelectCold)
    ->ArgsProduct({{0, 1}, {kTwoStage, kStatic}})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.5);
BENCHMARK(BM_SelectCold)->ArgsProduct({{0, 1}, {kExhaustive}})->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SelectCached(benchmark::State& state) {
  const Layout layout = state.range(0) ? Layout::nt : Layout::tn;
  const Selector& s = selector(layout, kTwoStage);
  const Problem p{4096, 4096, 4096, layout};
  s.select(p, 8);
  for (auto _ : state) benchmark::DoNotOptimize(s.select(p, 8));
  label(state, layout, s);
}
BENCHMARK(BM_SelectCached)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

}  // namespace

// main() comes from bench_main.cpp (one cks_bench binary for tests/bench/).
