// Synthetic measurement registries for the model tests: real SQLite registries written through
// the Registry API, whose throughputs are a known function of the features, so a good ranker
// provably learns them.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cks/features.hpp"
#include "cks/models.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"

namespace cks::test {

struct SyntheticGroup {
  long m, n, k;
  Layout layout = Layout::tn;
  std::string set = "train";
};

// The ground truth, in TFLOP/s: a wave-quantisation x tile-reuse x padding model with a bonus
// for the cooperative schedule. sigma is 0.2% of the time.
inline double synthetic_tflops(const float* row) {
  const FeatureSchema& s = FeatureSchema::get();
  static const size_t wave = s.index("sched_wave_eff"), reuse = s.index("tile_intensity"),
                      pad = s.index("padded_work_frac"), mainloop = s.index("mainloop");
  const double w = std::clamp<double>(row[wave], 0.05, 1.0);
  const double r = std::min(1.0, row[reuse] / 96.0);
  const double p = 1.0 - std::clamp<double>(row[pad], 0.0, 0.95);
  const double coop = row[mainloop] == 2.0f ? 1.15 : 1.0;
  return 600.0 * w * r * p * coop;
}

// Writes `per_group` uniformly drawn catalogue candidates of every group, plus a cuBLAS row at
// 90% of the group's best. Deterministic for a seed.
inline void write_synthetic_registry(const std::string& path, const std::vector<SyntheticGroup>& groups,
                                     size_t per_group, uint64_t seed) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  std::mt19937_64 rng(seed);
  for (const SyntheticGroup& sg : groups) {
    GroupInfo gi = test_group(sg.m, sg.n, sg.k, sg.set, sg.layout);
    reg.upsert_group(gi);
    const Catalogue& cat = Catalogue::get(sg.layout);
    std::vector<Candidate> picked;
    std::uniform_int_distribution<size_t> pick(0, cat.candidates().size() - 1);
    while (picked.size() < per_group) picked.push_back(cat.candidates()[pick(rng)]);
    FeatureMatrix x;
    FeatureComputer(cat.kernels(), default_hw()).compute(Problem{sg.m, sg.n, sg.k, sg.layout}, picked, x);
    const std::string key = group_key(sg.m, sg.n, sg.k, sg.layout);
    const double flops = 2.0 * sg.m * sg.n * sg.k;
    std::vector<MeasurementRow> rows;
    double best = 0;
    for (size_t i = 0; i < picked.size(); ++i) {
      const double t = std::max(1.0, synthetic_tflops(x.row(i)));
      best = std::max(best, t);
      MeasurementRow mr = test_row(run, key, cat.kernels()[picked[i].kernel].id(), "ok");
      mr.knobs = picked[i].knobs.canonical();
      mr.tflops = t;
      mr.mean_us = flops / (t * 1e12) * 1e6;
      mr.std_us = mr.mean_us * 0.002;
      rows.push_back(mr);
    }
    MeasurementRow cublas = test_row(run, key, "cublas", "ok");
    cublas.tflops = 0.9 * best;
    cublas.mean_us = flops / (cublas.tflops * 1e12) * 1e6;
    rows.push_back(cublas);
    reg.insert_measurements(std::move(rows));
  }
  reg.end_run(run);
}

// `count` shapes log-uniform over [64, 8192] (multiples of 64), in the given set.
inline std::vector<SyntheticGroup> synthetic_shapes(size_t count, uint64_t seed, const std::string& set,
                                                    Layout layout = Layout::tn) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> e(6.0, 13.0);
  auto dim = [&] { return std::max(64L, static_cast<long>(std::exp2(e(rng)) / 64) * 64); };
  std::vector<SyntheticGroup> out;
  while (out.size() < count) {
    SyntheticGroup g{dim(), dim(), dim(), layout, set};
    const bool dup = std::any_of(out.begin(), out.end(), [&](const SyntheticGroup& o) {
      return o.m == g.m && o.n == g.n && o.k == g.k;
    });
    if (!dup) out.push_back(g);
  }
  return out;
}

// A registry of `train` training and `eval` evaluation groups (tn), opened as a Dataset.
inline Dataset synthetic_dataset(const std::string& path, size_t train, size_t eval, size_t per_group, uint64_t seed) {
  auto groups = synthetic_shapes(train + eval, seed, "train");
  for (size_t i = train; i < groups.size(); ++i) groups[i].set = "eval";
  write_synthetic_registry(path, groups, per_group, seed);
  Registry reg(path);
  return load_dataset(reg, default_hw());
}

// A small XGBoost model (40 trees on 10 synthetic groups, with evidence), trained and saved once
// per test process; its path.
inline const std::string& small_xgboost_file() {
  static ScratchDir dir;
  static const std::string path = [] {
    const Dataset d = synthetic_dataset(dir.file("syn.db"), 10, 0, 80, 7);
    TrainOptions o;
    o.rounds = 40;
    o.threads = 2;
    train_model(d, o)->save(dir.file("xgb.json"));
    return dir.file("xgb.json");
  }();
  return path;
}

}  // namespace cks::test
