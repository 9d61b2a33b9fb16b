// The selectors evaluated next to the learned models (definitions in cks/models.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include "cks/models.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace {

std::span<const double> group_tflops(const Dataset& d, const DataGroup& g) {
  return std::span<const double>(d.tflops).subspan(g.begin, g.size());
}

// Identity of a configuration across groups: kernel ID (layout included) and knobs.
std::string config_key(const Dataset& d, size_t row, Layout layout) {
  const Candidate& c = d.candidates[row];
  return Catalogue::get(layout).kernels()[c.kernel].id() + "/" + c.knobs.canonical();
}

}  // namespace

MethodOutcomes model_outcomes(const std::string& name, const Model& model, const Dataset& eval) {
  MethodOutcomes m{name, "", {}};
  std::vector<float> scores(eval.rows());
  model.predict(eval.x, scores);
  for (const DataGroup& g : eval.groups)
    m.groups.push_back(outcome_of_scores(group_tflops(eval, g), std::span<const float>(scores).subspan(g.begin, g.size()),
                                         g.cublas_tflops));
  return m;
}

MethodOutcomes static_score_baseline(const Dataset& eval) {
  MethodOutcomes m{"static-score", "", {}};
  const HardwareDesc hw = hw_preset(eval.hw_preset);
  for (const DataGroup& g : eval.groups) {
    const auto& kernels = Catalogue::get(g.problem.layout).kernels();
    const GemmShape shape{g.problem.m, g.problem.n, g.problem.k};
    // (score, catalogue position) per row: the order of cks select --fallback static (higher
    // score first, ties by the lower catalogue position), in double precision as it ranks. A
    // measured candidate the catalogue does not enumerate (an exploration knob variant) still
    // counts for the group's best, but is never ranked: cks select cannot return it.
    std::vector<std::pair<double, uint32_t>> key(g.size());
    std::vector<uint32_t> order;
    for (size_t r = 0; r < g.size(); ++r) {
      const Candidate& c = eval.candidates[g.begin + r];
      const auto position = find_catalogue_position(g.problem.layout, c);
      if (!position) continue;
      key[r] = {static_score(shape, kernels[c.kernel], c.knobs, hw), *position};
      order.push_back(static_cast<uint32_t>(r));
    }
    const size_t k = std::min<size_t>(order.size(), kTopK.back());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](uint32_t a, uint32_t b) {
      return key[a].first > key[b].first || (key[a].first == key[b].first && key[a].second < key[b].second);
    });
    order.resize(k);
    m.groups.push_back(outcome_of_order(group_tflops(eval, g), order, g.cublas_tflops));
  }
  return m;
}

MethodOutcomes best_single_baseline(const Dataset& train, const Dataset& eval) {
  MethodOutcomes m{"best-single-config", "", {}};
  // Mean regret and support of every configuration over the training groups.
  struct Stats {
    double regret_sum = 0;
    size_t groups = 0;
    Layout layout = Layout::tn;
  };
  std::unordered_map<std::string, Stats> stats;
  std::map<Layout, size_t> groups_of_layout;
  for (const DataGroup& g : train.groups) {
    ++groups_of_layout[g.problem.layout];
    for (size_t r = g.begin; r < g.end; ++r) {
      Stats& s = stats[config_key(train, r, g.problem.layout)];
      s.regret_sum += 1.0 - train.y[r];
      ++s.groups;
      s.layout = g.problem.layout;
    }
  }
  // Eligible: measured in at least half of the training groups of the layout.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [key, s] : stats)
    if (2 * s.groups >= groups_of_layout[s.layout]) ranked.emplace_back(s.regret_sum / s.groups, key);
  std::sort(ranked.begin(), ranked.end());
  std::unordered_map<std::string, uint32_t> position;
  for (size_t i = 0; i < ranked.size(); ++i) position.emplace(ranked[i].second, static_cast<uint32_t>(i));
  if (ranked.empty()) m.note = "no configuration measured in half of the training groups";

  for (const DataGroup& g : eval.groups) {
    // The group's measured configurations in the global order.
    std::vector<std::pair<uint32_t, uint32_t>> present;  // (global position, row offset)
    for (size_t r = g.begin; r < g.end; ++r) {
      auto it = position.find(config_key(eval, r, g.problem.layout));
      if (it != position.end()) present.emplace_back(it->second, static_cast<uint32_t>(r - g.begin));
    }
    std::sort(present.begin(), present.end());
    std::vector<uint32_t> order;
    for (auto& p : present) order.push_back(p.second);
    m.groups.push_back(outcome_of_order(group_tflops(eval, g), order, g.cublas_tflops));
  }
  return m;
}

MethodOutcomes random_baseline(const Dataset& eval) {
  MethodOutcomes m{"random", "expected value of a uniform pick", {}};
  for (const DataGroup& g : eval.groups) m.groups.push_back(outcome_of_random(group_tflops(eval, g), g.cublas_tflops));
  return m;
}

MethodOutcomes cublas_baseline(const Dataset& eval) {
  MethodOutcomes m{"cublas", "regret = 1 - T_cuBLAS / T*_g", {}};
  for (const DataGroup& g : eval.groups) {
    GroupOutcome o;
    if (g.cublas_tflops > 0) {
      const auto t = group_tflops(eval, g);
      const double best = *std::max_element(t.begin(), t.end());
      o.covered = true;
      o.regret = 1.0 - g.cublas_tflops / best;
      o.topk_regret.fill(o.regret);
      o.rank = 1.0 + static_cast<double>(std::count_if(t.begin(), t.end(), [&](double x) { return x > g.cublas_tflops; }));
      o.hit = g.cublas_tflops >= best ? 1.0 : 0.0;
      o.vs_cublas = o.top4_or_cublas = 1.0;
    }
    m.groups.push_back(o);
  }
  if (std::none_of(m.groups.begin(), m.groups.end(), [](const GroupOutcome& o) { return o.covered; }))
    m.note = "no cuBLAS measurements in these groups";
  return m;
}

std::vector<int> shape_folds(std::span<const DataGroup> groups, int folds, uint64_t seed) {
  if (folds < 2) throw Error("--folds must be >= 2");
  // Distinct shapes in a seeded pseudo-random order, dealt round-robin: balanced folds, and
  // every layout of one shape in the same fold.
  std::map<std::tuple<long, long, long>, int> fold_of;
  for (const DataGroup& g : groups) fold_of.emplace(std::make_tuple(g.problem.m, g.problem.n, g.problem.k), 0);
  if (fold_of.size() < static_cast<size_t>(folds))
    throw Error("cross-validation needs at least " + std::to_string(folds) + " distinct shapes (got " +
                std::to_string(fold_of.size()) + ")");
  std::vector<std::pair<uint64_t, std::tuple<long, long, long>>> order;
  for (const auto& [shape, fold] : fold_of) {
    const auto& [m, n, k] = shape;
    order.emplace_back(fnv1a64(std::to_string(seed) + ":" + std::to_string(m) + "x" + std::to_string(n) + "x" +
                               std::to_string(k)),
                       shape);
  }
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) fold_of[order[i].second] = static_cast<int>(i % folds);
  std::vector<int> out;
  for (const DataGroup& g : groups) out.push_back(fold_of[std::make_tuple(g.problem.m, g.problem.n, g.problem.k)]);
  return out;
}

}  // namespace cks
