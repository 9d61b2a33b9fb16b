// Regret metrics of the paper's evaluation section and their per-regime summary table.
// Definitions next to the declarations in cks/models.hpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <numeric>

#include "cks/models.hpp"
#include "cks/shapes.hpp"

namespace cks {

namespace {

double group_best(std::span<const double> tflops) { return *std::max_element(tflops.begin(), tflops.end()); }

// 1 + number of candidates strictly faster than t (minimum-rank tie breaking).
double rank_of(std::span<const double> tflops, double t) {
  return 1.0 + static_cast<double>(std::count_if(tflops.begin(), tflops.end(), [&](double x) { return x > t; }));
}

}  // namespace

GroupOutcome outcome_of_order(std::span<const double> tflops, std::span<const uint32_t> order, double cublas_tflops) {
  GroupOutcome o;
  if (tflops.empty() || order.empty()) return o;
  const double best = group_best(tflops);
  const double pick = tflops[order[0]];
  o.covered = true;
  o.pick = order[0];
  o.regret = 1.0 - pick / best;
  o.rank = rank_of(tflops, pick);
  o.hit = pick >= best ? 1.0 : 0.0;
  double best_of_k = 0;
  size_t taken = 0;
  for (size_t j = 0; j < kTopK.size(); ++j) {
    // A method with fewer picks than k keeps the best of all its picks.
    for (; taken < std::min<size_t>(kTopK[j], order.size()); ++taken) best_of_k = std::max(best_of_k, tflops[order[taken]]);
    o.topk_regret[j] = 1.0 - best_of_k / best;
    if (kTopK[j] == 4 && cublas_tflops > 0) o.top4_or_cublas = std::max(best_of_k, cublas_tflops) / cublas_tflops;
  }
  if (cublas_tflops > 0) o.vs_cublas = pick / cublas_tflops;
  return o;
}

GroupOutcome outcome_of_scores(std::span<const double> tflops, std::span<const float> scores, double cublas_tflops) {
  std::vector<uint32_t> order(tflops.size());
  std::iota(order.begin(), order.end(), 0u);
  const size_t k = std::min<size_t>(order.size(), kTopK.back());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](uint32_t a, uint32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  order.resize(k);
  return outcome_of_order(tflops, order, cublas_tflops);
}

GroupOutcome outcome_of_random(std::span<const double> tflops, double cublas_tflops) {
  GroupOutcome o;
  const size_t n = tflops.size();
  if (n == 0) return o;
  std::vector<double> sorted(tflops.begin(), tflops.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  const double best = sorted[0];
  o.covered = true;
  double mean_ratio = 0, mean_rank = 0, hits = 0;
  size_t first_equal = 0;  // rank - 1 of sorted[i]: the first position holding its value
  for (size_t i = 0; i < n; ++i) {
    if (sorted[i] != sorted[first_equal]) first_equal = i;
    mean_ratio += sorted[i] / best;
    mean_rank += 1.0 + static_cast<double>(first_equal);
    hits += sorted[i] >= best ? 1 : 0;
  }
  o.regret = 1.0 - mean_ratio / n;
  o.rank = mean_rank / n;
  o.hit = hits / n;
  // Best of k draws without replacement: the i-th fastest (0-based) is the best drawn with
  // probability C(n-1-i, k-1) / C(n, k); computed as a running product to stay finite.
  for (size_t j = 0; j < kTopK.size(); ++j) {
    const size_t k = std::min<size_t>(kTopK[j], n);
    double p = static_cast<double>(k) / n;  // i = 0: C(n-1, k-1) / C(n, k) = k / n
    double expected = 0;
    for (size_t i = 0; i + k <= n; ++i) {
      expected += p * sorted[i];
      // C(n-2-i, k-1) / C(n-1-i, k-1) = (n-1-i-(k-1)) / (n-1-i)
      if (n - 1 - i > 0) p *= static_cast<double>(n - i - k) / static_cast<double>(n - 1 - i);
    }
    o.topk_regret[j] = 1.0 - expected / best;
  }
  // E[T(pick)] / T_cuBLAS (the ratio of the expected throughput).
  if (cublas_tflops > 0) o.vs_cublas = mean_ratio / n * best / cublas_tflops;
  return o;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// M buckets of the report: decode-like (<= 16 tokens), small batches (<= 256), larger.
std::vector<std::string> regime_slices(const Problem& p, const HardwareDesc& hw) {
  const ShapeTags t = tags_for(p.m, p.n, p.k, hw);
  return {"size=" + std::string(to_string(t.size)), "geometry=" + std::string(to_string(t.geometry)),
          p.m <= 16 ? "m<=16" : p.m <= 256 ? "m<=256" : "m>256"};
}

Table summarize(const std::vector<MethodOutcomes>& methods, std::span<const DataGroup> groups, const HardwareDesc& hw) {
  std::vector<std::string> columns{"method", "slice", "groups", "covered", "regret_mean", "regret_median",
                                   "regret_p95", "regret_max", "top1_hit", "rank_mean"};
  for (int k : kTopK) columns.push_back("top" + std::to_string(k) + "_regret");
  columns.push_back("vs_cublas_geomean");
  columns.push_back("top4_or_cublas_geomean");
  columns.push_back("note");
  Table table(std::move(columns));

  // Slice -> group indices; "all" first, then the regime slices in name order.
  std::map<std::string, std::vector<size_t>> slices;
  std::set<Layout> layouts;
  for (const DataGroup& g : groups) layouts.insert(g.problem.layout);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (auto& s : regime_slices(groups[g].problem, hw)) slices[s].push_back(g);
    // Groups of several layouts: one slice per layout as well.
    if (layouts.size() > 1) slices["layout=" + std::string(to_string(groups[g].problem.layout))].push_back(g);
  }
  std::vector<std::pair<std::string, std::vector<size_t>>> ordered;
  std::vector<size_t> all(groups.size());
  std::iota(all.begin(), all.end(), 0);
  ordered.emplace_back("all", std::move(all));
  for (auto& [name, idx] : slices) ordered.emplace_back(name, idx);

  auto num = [](double v) -> Cell { return std::isfinite(v) ? Cell{v} : Cell{}; };
  for (const MethodOutcomes& m : methods) {
    for (const auto& [slice, idx] : ordered) {
      std::vector<double> regrets;
      double hits = 0, ranks = 0, log_cublas = 0, log_top4 = 0;
      size_t n_cublas = 0, n_top4 = 0;
      std::array<double, kTopK.size()> topk{};
      for (size_t g : idx) {
        if (g >= m.groups.size() || !m.groups[g].covered) continue;
        const GroupOutcome& o = m.groups[g];
        regrets.push_back(o.regret);
        hits += o.hit;
        ranks += o.rank;
        for (size_t j = 0; j < topk.size(); ++j) topk[j] += o.topk_regret[j];
        if (std::isfinite(o.vs_cublas) && o.vs_cublas > 0) {
          log_cublas += std::log(o.vs_cublas);
          ++n_cublas;
        }
        if (std::isfinite(o.top4_or_cublas) && o.top4_or_cublas > 0) {
          log_top4 += std::log(o.top4_or_cublas);
          ++n_top4;
        }
      }
      const double n = static_cast<double>(regrets.size());
      const double nan = std::numeric_limits<double>::quiet_NaN();
      std::vector<Cell> row{m.method, slice, static_cast<int64_t>(idx.size()), static_cast<int64_t>(regrets.size())};
      if (regrets.empty()) {
        for (size_t c = 0; c < 6 + topk.size(); ++c) row.emplace_back();
      } else {
        row.push_back(std::accumulate(regrets.begin(), regrets.end(), 0.0) / n);
        row.push_back(quantile(regrets, 0.5));
        row.push_back(quantile(regrets, 0.95));
        row.push_back(*std::max_element(regrets.begin(), regrets.end()));
        row.push_back(hits / n);
        row.push_back(ranks / n);
        for (double v : topk) row.push_back(v / n);
      }
      row.push_back(num(n_cublas ? std::exp(log_cublas / static_cast<double>(n_cublas)) : nan));
      row.push_back(num(n_top4 ? std::exp(log_top4 / static_cast<double>(n_top4)) : nan));
      row.push_back(m.note);
      table.add_row(std::move(row));
    }
  }
  return table;
}

Table per_group_table(const std::vector<MethodOutcomes>& methods, const Dataset& eval) {
  Table table({"method", "group", "set", "layout", "m", "n", "k", "covered", "regret", "top4_regret", "rank",
               "vs_cublas", "pick_kernel", "pick_knobs", "pick_tflops", "best_kernel", "best_knobs", "best_tflops",
               "cublas_tflops", "pick_score"});
  // kernel_id and canonical knobs of a row; empty cells for none.
  auto describe = [&](const DataGroup& g, int64_t offset) -> std::pair<Cell, Cell> {
    if (offset < 0) return {Cell{}, Cell{}};
    const Candidate& c = eval.candidates[g.begin + static_cast<size_t>(offset)];
    return {Catalogue::get(g.problem.layout).kernels()[c.kernel].id(), c.knobs.canonical()};
  };
  auto num = [](double v) { return std::isfinite(v) ? Cell(v) : Cell{}; };
  for (const auto& m : methods) {
    if (m.groups.size() != eval.groups.size()) throw Error("per-group table: outcomes of " + m.method + " do not match the groups");
    for (size_t gi = 0; gi < eval.groups.size(); ++gi) {
      const DataGroup& g = eval.groups[gi];
      const GroupOutcome& o = m.groups[gi];
      int64_t best = -1;
      for (size_t r = g.begin; r < g.end; ++r)
        if (best < 0 || eval.tflops[r] > eval.tflops[g.begin + static_cast<size_t>(best)]) best = static_cast<int64_t>(r - g.begin);
      const auto [pk, pn] = describe(g, o.pick);
      const auto [bk, bn] = describe(g, best);
      table.add_row({m.method, g.key, g.set, std::string(to_string(g.problem.layout)), g.problem.m, g.problem.n,
                     g.problem.k, static_cast<int64_t>(o.covered), o.covered ? num(o.regret) : Cell{},
                     o.covered ? num(o.topk_regret[2]) : Cell{}, o.covered ? num(o.rank) : Cell{},
                     num(o.vs_cublas), pk, pn,
                     o.pick >= 0 ? num(eval.tflops[g.begin + static_cast<size_t>(o.pick)]) : Cell{}, bk, bn,
                     best >= 0 ? num(eval.tflops[g.begin + static_cast<size_t>(best)]) : Cell{},
                     num(g.cublas_tflops), num(o.pick_score)});
    }
  }
  return table;
}

}  // namespace cks
